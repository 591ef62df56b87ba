"""What the app hands down to its screens and widgets: the session and the app's own settings.

Screens and widgets read the field, the analysis and the index from ``Context.session``
(typed), listen to ``Context.events`` (the session's events and the theme's changes), and
ask the app for navigation with messages (``memtui.tui.messages``): attributes down,
messages up. None of them reads the app's attributes.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.screen import Screen

from memtui.session.events import SessionEvent
from memtui.session.session import Session
from memtui.tui.messages import Navigation
from memtui.tui.settings import Settings

if TYPE_CHECKING:
    from textual.signal import Signal


@dataclass(frozen=True, slots=True)
class ThemeChanged:
    """The theme changed: whatever is drawn in its colours is drawn again."""


AppEvent = SessionEvent | ThemeChanged


def _now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


@dataclass(eq=False)
class Context:
    session: Session
    events: Signal[AppEvent]
    settings: Settings
    palette: Callable[[], dict[str, str]]  # the theme's colours by name, and the source tags'
    clock: Callable[[], _dt.datetime] = _now  # proposal ages (fixed in snapshot tests)
    show_timings: bool = True  # search says how long it took (off in snapshot tests)


class SessionScreen(Navigation, Screen[Any]):
    """A screen of the app: it is given the ``Context`` (``self.ctx``, ``self.session``)."""

    def __init__(self, ctx: Context, *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.ctx = ctx
        self.session = ctx.session
