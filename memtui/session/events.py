"""What a session tells its user (the TUI, a test, a script) as the field, its analysis or its index change.

Each event is a frozen dataclass, delivered on the session's owner thread through
``Host.emit``; a user branches on the type (``isinstance`` or ``match``), never on a
string. ``SessionEvent`` is their union.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memtui.errors import MemtuiError

if TYPE_CHECKING:
    from memtui.session.analysis import Analysis


@dataclass(frozen=True, slots=True)
class Progress:
    """How far a long step is: ``phase`` in words, ``done`` of ``total`` (0: not counted)."""

    phase: str = "starting"
    done: int = 0
    total: int = 0


@dataclass(frozen=True, slots=True)
class RowsPreviewed:
    """The page list as it was last shown (the row cache) is ready, before any page is read."""


@dataclass(frozen=True, slots=True)
class FieldLoaded:
    """The field is open: ``complete`` False when the cached pages are in and the rest are
    being read (``PagesChanged`` follows for each batch), True once every page is read."""

    complete: bool


@dataclass(frozen=True, slots=True)
class LoadFailed:
    """The field could not be opened (``error`` says why, with a hint)."""

    error: MemtuiError


@dataclass(frozen=True, slots=True)
class PagesChanged:
    """Pages were read (``on_disk`` False: the first load) or changed on disk since."""

    changed: tuple[str, ...]
    removed: tuple[str, ...]
    on_disk: bool = True

    def touches(self, path: str) -> bool:
        return path in self.changed or path in self.removed


@dataclass(frozen=True, slots=True)
class AnalysisReady:
    """A new analysis (checks, statuses, rows, counts) is ``Session.analysis``."""

    analysis: Analysis


@dataclass(frozen=True, slots=True)
class IndexStateChanged:
    """The search index opened, committed, failed or made progress (``Session.index_state``)."""


@dataclass(frozen=True, slots=True)
class ProposalsChanged:
    """The pending proposals changed (a job wrote one, a reviewer decided one)."""

    ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the user should be told once (a recovery, pages changed on disk)."""

    message: str
    title: str = ""
    severity: str = "information"  # "information" | "warning" | "error"
    timeout: float | None = None


SessionEvent = (
    RowsPreviewed
    | FieldLoaded
    | LoadFailed
    | PagesChanged
    | AnalysisReady
    | IndexStateChanged
    | ProposalsChanged
    | Notice
)
