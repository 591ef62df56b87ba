"""The plain data the index hands to its callers (the CLI and the TUI)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class SearchHit:
    path: str
    id: str | None
    title: str  # untrusted page text: render it through textsafety
    status: str  # "current" | "superseded" | "stale"
    trust: str  # "reviewed" | "unreviewed" | "quarantined" | "unknown" (no review record)
    score: float
    snippet: str  # one line, hazards already made visible, no markup
    highlights: list[tuple[int, int]] = field(default_factory=list)  # spans of matched words in snippet
    partial: bool = False  # holds some of the query's words, not all (ranked below the pages that hold all)
    line: int | None = None  # the snippet's line in the file (1-based); None when the snippet is the summary

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "id": self.id,
            "title": self.title,
            "status": self.status,
            "trust": self.trust,
            "score": round(self.score, 4),
            "snippet": self.snippet,
            "partial": self.partial,
            "line": self.line,
        }


class SearchResults(list):
    """A list of ``SearchHit``; ``timed_out`` says the time limit cut the search short;
    ``notes`` say what else the user should know about these results (one line each)."""

    timed_out: bool = False

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.notes: list[str] = []


@dataclass(slots=True)
class ChangeBatch:
    """What one committed batch changed. ``rescanned`` = the whole folder was compared again;
    ``notice``: something the user should be told (the field folder went away, came back)."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    moved: list[tuple[str, str]] = field(default_factory=list)
    rescanned: bool = False
    notice: str = ""

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.removed or self.moved or self.rescanned or self.notice)

    def paths(self) -> list[str]:
        return self.added + self.changed + self.removed + [p for move in self.moved for p in move]


@dataclass(frozen=True, slots=True)
class SyncState:
    """How current the index is, for a status bar.

    mode: "watching" (inotify), "polling", "rescanning", "down" (not kept current;
    ``message`` says why), "stopped" (not watching), "read-only" (another memtui
    writes this index, or the field is a zip), "gone" (the field folder was moved
    away or deleted), "starting" (the writer helper process of a large field is
    opening the index: ``writer_helper.py``).
    """

    mode: str
    last_sync: float | None
    pending: int
    indexed_pages: int
    message: str = ""


@dataclass(slots=True)
class OpenReport:
    """What ``IndexService.open`` found and did."""

    location: str
    generation: str | None = None
    pages: int = 0
    added: int = 0
    changed: int = 0
    removed: int = 0
    touched: int = 0
    status_updates: int = 0
    rebuilt: bool = False
    rebuild_reason: str = ""
    read_only: bool = False
    seconds: float = 0.0
    golden: dict | None = None  # recall-test result when a rebuild was checked against golden.yaml
    notes: list[str] = field(default_factory=list)

    @property
    def up_to_date(self) -> bool:
        return not (self.rebuilt or self.added or self.changed or self.removed or self.status_updates)

    def to_json(self) -> dict:
        return {
            "location": self.location,
            "generation": self.generation,
            "pages": self.pages,
            "added": self.added,
            "changed": self.changed,
            "removed": self.removed,
            "touched": self.touched,
            "status_updates": self.status_updates,
            "rebuilt": self.rebuilt,
            "rebuild_reason": self.rebuild_reason,
            "read_only": self.read_only,
            "seconds": round(self.seconds, 3),
            "golden": self.golden,
            "notes": self.notes,
        }
