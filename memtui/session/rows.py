"""One page as the page list shows it (``PageRow``): its states and its cells, made off the UI thread."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memtui.field import trust as trust_mod
from memtui.field.checks import ERROR, WARNING, Finding
from memtui.field.history import STALE, SUPERSEDED, UNRECORDED
from memtui.render.glyphs import BADGES, PENDING, severity_counts
from memtui.textsafety import one_line

SESSIONS_PREFIX = "sessions/"
FILTERS = ("all", "quarantined", "unreviewed", "unknown", "superseded", "stale", "findings", "proposal")

Cells = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class PageRow:
    path: str
    title: str
    kind: str
    subject: str
    updated: str
    trust: str
    status: str
    errors: int
    warnings: int
    proposals: int
    # What the page list shows: (text, style name) per column, made once, off the UI thread.
    cells: Cells = field(default=(), compare=False, repr=False)
    state_names: tuple[str, ...] | None = field(default=None, compare=False, repr=False)  # states(), with the cells

    def states(self) -> tuple[str, ...]:
        """The filters this row is listed under (the page list asks for every row at each refill)."""
        if self.state_names is not None:
            return self.state_names
        return self._states()

    def _states(self) -> tuple[str, ...]:
        if self.trust == PENDING:
            return ("loading",)
        out = []
        if self.trust == trust_mod.QUARANTINED:
            # A tainted transcript is evidence, never in the review queue: counted apart.
            out.append("tainted" if self.path.startswith(SESSIONS_PREFIX) else "quarantined")
        elif self.trust == trust_mod.UNREVIEWED:
            out.append("unreviewed")
        elif self.trust == trust_mod.UNKNOWN:
            out.append("unknown")
        if self.status == SUPERSEDED:
            out.append("superseded")
        elif self.status == STALE:
            out.append("stale")
        elif self.status == UNRECORDED:
            out.append("unrecorded")
        elif self.status == PENDING:
            out.append("loading")
        if self.errors or self.warnings:
            out.append("findings")
        if self.proposals:
            out.append("proposal")
        return tuple(out)

    def matches(self, filter_name: str) -> bool:
        return filter_name == "all" or filter_name in self.states()


def badge_parts(row: PageRow) -> list[tuple[str, str]]:
    """The row's state badges, each as (text, theme colour name): ``⛔quar``, ``✖2``, ``▲1`` ..."""
    parts: list[tuple[str, str]] = []
    for state in row.states():
        if state == "findings":
            if row.errors:
                parts.append((severity_counts(row.errors, 0), BADGES["errors"].colour))
            if row.warnings:
                parts.append((severity_counts(0, row.warnings), BADGES["warnings"].colour))
        else:
            badge = BADGES[state]
            parts.append((f"{badge.glyph}{badge.word}", badge.colour))
    return parts


def row_cells(row: PageRow) -> Cells:
    """The page list's columns: state badges, title, kind, subject, updated, path."""
    parts = badge_parts(row)
    return (
        (" ".join(text for text, _ in parts) if parts else "✓ ok", parts[0][1] if parts else "success"),
        (_safe(row.title), ""),
        (_safe(row.kind), "dim"),
        (_safe(row.subject), ""),
        (_safe(row.updated), "dim"),
        (_safe(row.path), "dim"),
    )


def _safe(text: str) -> str:
    """One line of untrusted text; printable text (the usual case) is returned as is, fast."""
    return text if text.isprintable() else one_line(text)


def make_cells(row: PageRow) -> PageRow:
    """Fill in the row's display cells (done once, off the UI thread)."""
    object.__setattr__(row, "state_names", row._states())
    object.__setattr__(row, "cells", row_cells(row))
    return row


def severities(findings: list[Finding] | tuple[Finding, ...]) -> tuple[int, int]:
    """How many of ``findings`` are errors, how many warnings."""
    errors = warnings = 0
    for finding in findings:
        if finding.severity == ERROR:
            errors += 1
        elif finding.severity == WARNING:
            warnings += 1
    return errors, warnings


def _updated(info: Any) -> str:
    """The date the memory says it was updated (or written); blank without one.

    A file's modification time is when it changed on this disk (a checkout, a
    copy), not when the memory was updated: it is not shown as if it were.
    """
    value = info.updated
    if isinstance(value, str) and value:
        return value[:10]
    return ""


def make_row(
    info: Any, status: str, findings: list[Finding] | tuple[Finding, ...], proposals: int, trust: str | None = None
) -> PageRow:
    errors, warnings = severities(findings)
    return make_cells(
        PageRow(
            path=info.path,
            title=info.title,
            kind=info.kind or "",
            subject=info.subject or "",
            updated=_updated(info),
            trust=trust or trust_mod.trust_of(info),
            status=status,
            errors=errors,
            warnings=warnings,
            proposals=proposals,
        )
    )


def pending_row(path: str) -> PageRow:
    """A page found by the scan but not read yet (first load of a big field)."""
    stem = path.rsplit("/", 1)[-1][:-3] if path.endswith(".md") else path
    return make_cells(PageRow(path, stem, "", "", "", PENDING, PENDING, 0, 0, 0))


def quick_rows(pages: dict[str, Any], pending: list[str] | tuple[str, ...] = ()) -> dict[str, PageRow]:
    """Rows from page summaries alone (no checks, no statuses yet): the list is usable at once."""
    rows = {path: pending_row(path) for path in pending}
    rows.update({path: make_row(info, PENDING, [], 0) for path, info in pages.items()})
    return rows
