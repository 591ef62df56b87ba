"""Every use memtui makes of Textual beyond its public API, in one place (``textual==8.2.8``
is what the snapshot tests pin; the runtime range is ``textual>=8.2,<9``).

Each exists for a measured reason, told where it is used: a repaint instead of a layout of
the whole screen (``set_label_quietly``, ``scroll_to_size``), dim text kept readable
(``replace_truecolor_filter``), the unsaved-edits guard that looks at every mode's screens
(``screen_stacks``), the footer's keys (``FooterKey``). Two widgets also override Textual
hooks that are not public: ``widgets.footer.MemtuiFooter`` (``bindings_changed`` and
``_bindings_ready``, to rebuild its keys only when they change) and the editor's text area
(its document classes, swapped for subclasses that keep the text between edits). A test
reads every module: no other reaches into Textual's private names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from textual.app import App
from textual.content import Content
from textual.filter import ANSIToTruecolor, LineFilter
from textual.geometry import Size
from textual.screen import Screen
from textual.scroll_view import ScrollView
from textual.widgets import Tab
from textual.widgets._footer import FooterKey

__all__ = ["FooterKey", "replace_truecolor_filter", "screen_stacks", "scroll_to_size", "set_label_quietly"]


def set_label_quietly(tab: Tab, label: Content) -> None:
    """Give ``tab`` a new label of the same width: what ``Tab.label`` reads, without its setter
    (which asks for a layout of the screen)."""
    tab._label = label  # type: ignore[attr-defined]


def scroll_to_size(view: ScrollView, size: Size) -> None:
    """Move ``view``'s scrollbars to its new virtual size (set already), without a layout."""
    view._scroll_update(size)


def screen_stacks(app: App[Any]) -> Iterator[Screen[Any]]:
    """Every screen of every mode's stack."""
    for stack in list(app._screen_stacks.values()):
        yield from stack


def replace_truecolor_filter(app: App[Any], make: Callable[[ANSIToTruecolor], LineFilter]) -> None:
    """Swap the app's ANSI-to-true-colour filter for ``make(old)``."""
    filters = app._filters
    for number, line_filter in enumerate(filters):
        if type(line_filter) is ANSIToTruecolor:
            filters[number] = make(line_filter)


def terminal_theme(line_filter: ANSIToTruecolor) -> Any:
    """The terminal theme a true-colour filter maps ANSI colours with."""
    return line_filter._terminal_theme
