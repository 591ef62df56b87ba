"""What the screens show about the field, computed off the UI thread.

``analyse`` runs the checks, the supersede statuses and the proposal queue over a
snapshot of the field (a copy sharing the immutable page summaries), in a
worker thread; the app then hands the resulting ``Analysis`` down to screens.
"""

from __future__ import annotations

import datetime as _dt
import itertools
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from memtui.dialects.report import field_report
from memtui.field import trust as trust_mod
from memtui.field.check_memo import CheckMemo
from memtui.field.checks import ERROR, INFO, WARNING, Finding, field_findings
from memtui.field.field import Field
from memtui.field.history import CURRENT, STALE, SUPERSEDED
from memtui.textsafety import one_line

# Badge glyph + word: states are never shown by colour alone.
BADGES = {
    "quarantined": ("⛔", "quar", "error"),
    "unreviewed": ("◌", "unrev", "warning"),
    "unknown": ("?", "norev", "secondary"),
    "superseded": ("↷", "old", "secondary"),
    "stale": ("⌛", "stale", "warning"),
    "findings": ("▲", "find", "warning"),
    "proposal": ("✎", "prop", "accent"),
    "loading": ("…", "reading", "secondary"),
    "tainted": ("◇", "taint", "secondary"),  # a session transcript that read outside content: evidence, not reviewed
}
SESSIONS_PREFIX = "sessions/"
PENDING = "pending"  # listed, not read yet (or not analysed yet: never shown as current)
# Trust and history states as glyph, word and colour: the same everywhere, never colour alone.
TRUST_BADGES = {
    trust_mod.QUARANTINED: ("⛔", "quarantined", "error"),
    trust_mod.UNREVIEWED: ("◌", "unreviewed", "warning"),
    trust_mod.UNKNOWN: ("?", "no review record", "secondary"),
    trust_mod.REVIEWED: ("✓", "reviewed", "success"),
    PENDING: ("…", "reading", "secondary"),
}
STATUS_BADGES = {
    CURRENT: ("●", "current", "success"),
    SUPERSEDED: ("↷", "superseded", "secondary"),
    STALE: ("⌛", "stale", "warning"),
    PENDING: ("…", "not analysed yet", "secondary"),
}
FILTERS = ("all", "quarantined", "unreviewed", "unknown", "superseded", "stale", "findings", "proposal")


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
    cells: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)
    state_names: tuple[str, ...] | None = field(
        default=None, compare=False, repr=False
    )  # states(), made with the cells

    def states(self) -> tuple[str, ...] | list[str]:
        """The filters this row is listed under (the page list asks for every row at each refill)."""
        if self.state_names is not None:
            return self.state_names
        return self._states()

    def _states(self) -> list[str]:
        if self.trust == PENDING:
            return ["loading"]
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
        elif self.status == PENDING:
            out.append("loading")
        if self.errors or self.warnings:
            out.append("findings")
        if self.proposals:
            out.append("proposal")
        return out

    def matches(self, filter_name: str) -> bool:
        return filter_name == "all" or filter_name in self.states()


@dataclass
class Analysis:
    field: Field  # the snapshot analysed (its lookups, history and backlinks are built)
    history: Any
    generation: int
    status: dict[str, str]
    by_path: dict[str, list[Finding]]  # each page's findings, sorted
    proposal_pages: dict[str, list[str]]
    proposals: list[Any]
    rows: dict[str, PageRow]
    counts: dict[str, int] = field(default_factory=dict)
    tag_totals: dict[str, int] = field(default_factory=dict)
    per_day: list[tuple[str, int]] = field(default_factory=list)
    memory_chars: int | None = None
    proposal_error: str | None = None
    regret: dict[str, dict] = field(default_factory=dict)  # per job: approved, reverted, regret_rate
    report: Any = None  # what memtui did with the field: dialects, what it left out, memtui.toml
    by_rule: dict[str, int] = field(default_factory=dict)  # findings per rule
    day_counts: dict[str, int] = field(default_factory=dict)  # pages written per day (per_day before it is filled in)

    @property
    def findings(self) -> list[Finding]:
        """Every finding, sorted as ``run_checks`` sorts them (made when asked: 200,000 at 100,000 pages)."""
        by_path = self.by_path
        return [finding for path in sorted(by_path) for finding in by_path[path]]


def _updated(info) -> str:
    """The date the memory says it was updated (or written); blank without one.

    A file's modification time is when it changed on this disk (a checkout, a
    copy), not when the memory was updated: it is not shown as if it were.
    """
    value = info.updated
    if isinstance(value, str) and value:
        return value[:10]
    return ""


def row_cells(row: PageRow) -> tuple[tuple[str, str], ...]:
    """The page list's columns: state badges, title, kind, subject, updated, path."""
    states = row.states()
    parts = []
    for state in states:
        glyph, word, _ = BADGES[state]
        parts.append(f"{glyph}{row.errors + row.warnings}" if state == "findings" else f"{glyph}{word}")
    badge_style = BADGES[states[0]][2] if states else "success"
    return (
        (" ".join(parts) if parts else "✓ ok", badge_style),
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
    object.__setattr__(row, "cells", row_cells(row))
    object.__setattr__(row, "state_names", tuple(row._states()))
    return row


def _severities(findings: list[Finding]) -> tuple[int, int]:
    errors = warnings = 0
    for finding in findings:
        if finding.severity == ERROR:
            errors += 1
        elif finding.severity == WARNING:
            warnings += 1
    return errors, warnings


def make_row(info, status: str, findings: list[Finding], proposals: int, trust: str | None = None) -> PageRow:
    return make_cells(
        PageRow(
            path=info.path,
            title=info.title,
            kind=info.kind or "",
            subject=info.subject or "",
            updated=_updated(info),
            trust=trust or trust_mod.trust_of(info),
            status=status,
            errors=sum(1 for f in findings if f.severity == ERROR),
            warnings=sum(1 for f in findings if f.severity == WARNING),
            proposals=proposals,
        )
    )


def load_proposals(field_: Field) -> tuple[list[Any], dict[str, list[str]], dict[str, dict], str | None]:
    """Pending proposals (queue entries), the proposals touching each page, regret per job."""
    from memtui.errors import MemtuiError
    from memtui.review import proposals as proposals_mod

    try:
        queue = proposals_mod.proposal_queue(field_.root, field=field_, with_checks=False)
        stats = proposals_mod.stats(field_.root)
    except (MemtuiError, OSError) as exc:  # a broken proposal folder must not take the browser down
        return [], {}, {}, f"cannot read proposals: {exc}"
    pages: dict[str, list[str]] = {}
    for entry in queue.entries:
        for path in entry.proposal.pages:
            pages.setdefault(path, []).append(entry.proposal.id)
    regret = {job: job_stats.to_json() for job, job_stats in stats.jobs.items()}
    problem = "; ".join(queue.problems) if queue.problems else None
    return queue.entries, pages, regret, problem


def analyse(
    field_: Field,
    memo: CheckMemo | None = None,
    previous: Analysis | None = None,
    between: Callable[[], object] | None = None,
) -> Analysis:
    """Everything the screens need about a field snapshot. Runs in a worker thread.

    ``memo``: what the last analysis of this field learned per page (one analysis at a time
    uses it); only what a change can affect is computed again. ``previous``: the last
    analysis, whose rows, counts and totals are kept where the change did not reach them:
    the work follows the change, not the size of the field (beyond a pass over the pages in
    comprehensions). ``between`` is called between the steps: the app lets its search index
    commit there (the analysis and the index writer share the interpreter)."""
    memo = memo if memo is not None else CheckMemo()
    memo.install_tables(field_)  # before the history resolves its first reference
    found = field_findings(field_, memo, between=between)
    if between is not None:
        between()
    history = field_.history
    status = history.status
    by_path = found.by_path
    proposals, proposal_pages, regret, proposal_error = load_proposals(field_)
    pages = field_.pages
    if previous is None:
        rows = {path: _row(field_, memo, info, status, by_path, proposal_pages) for path, info in pages.items()}
        counts: Counter = Counter()
        for row in rows.values():
            _count(counts, row, 1)
        tag_totals: Counter[str] = Counter()
        per_day: Counter[str] = Counter()
        for info in pages.values():
            _tally(tag_totals, per_day, info, 1)
    else:
        old_pages = previous.field.pages
        old_rows = previous.rows
        moved = memo.moved
        if moved is not None and moved.before is old_pages and found.since_last:
            # The memo's last update was of the previous analysis's field: what it found moved.
            changed = {path for path in moved.versions if path in pages}
            removed = [path for path in moved.versions if path not in pages and path in old_pages]
            again = changed | moved.status | found.changed
        else:
            changed = {path for path, info in pages.items() if old_pages.get(path) is not info}
            removed = [path for path in old_pages if path not in pages]
            old_status, old_found = previous.status, previous.by_path
            again = set(changed)
            again.update(path for path, state in status.items() if old_status.get(path) != state)
            again.update(
                path for path in by_path.keys() | old_found.keys() if by_path.get(path) is not old_found.get(path)
            )
        again.update(_differing(field_.approvals, previous.field.approvals))
        again.update(_differing(proposal_pages, previous.proposal_pages))
        again = {path for path in again if path in pages}
        counts = Counter(previous.counts)
        tag_totals = Counter(previous.tag_totals)
        per_day = Counter(previous.day_counts)
        rows = dict(old_rows)
        for path in removed:
            _count(counts, rows.pop(path), -1)
            _tally(tag_totals, per_day, old_pages[path], -1)
        # New pages are usually the last of the field's: put their rows in that order.
        added = {path for path in changed if path not in old_pages}
        tail = list(itertools.islice(reversed(pages), len(added)))[::-1] if added else []
        for path in itertools.chain(
            (path for path in again if path not in added), tail if set(tail) == added else added
        ):
            info = pages[path]
            before = old_rows.get(path)
            row = _row(field_, memo, info, status, by_path, proposal_pages, before if path not in changed else None)
            if row is not before:
                if before is not None:
                    _count(counts, before, -1)
                _count(counts, row, 1)
                rows[path] = row
            if path in changed:
                if path in old_pages:
                    _tally(tag_totals, per_day, old_pages[path], -1)
                _tally(tag_totals, per_day, info, 1)
        if list(rows) != list(pages):
            rows = {path: rows[path] for path in pages}  # the field's order
        counts, tag_totals, per_day = +counts, +tag_totals, +per_day
    counts["pages"] = len(rows)
    by_severity = found.by_severity
    counts["errors"] = by_severity.get(ERROR, 0)
    counts["warnings"] = by_severity.get(WARNING, 0)
    counts["notes"] = by_severity.get(INFO, 0)
    counts["proposals"] = len(proposals)
    memory_chars = None
    if "MEMORY.md" in pages:
        try:
            memory_chars = len((field_.root / "MEMORY.md").read_bytes().decode("utf-8", "replace"))
        except OSError:
            memory_chars = None
    field_.backlinks("")  # build the backlink table here (if the checks did not), not on the UI thread
    report = field_report(field_)
    return Analysis(
        field=field_,
        history=history,
        generation=field_.generation,
        status=dict(status),
        by_path=by_path,
        proposal_pages=proposal_pages,
        proposals=proposals,
        rows=rows,
        counts=dict(counts),
        tag_totals=dict(tag_totals),
        per_day=daily_series(per_day),
        memory_chars=memory_chars,
        proposal_error=proposal_error,
        regret=regret,
        report=report,
        by_rule=found.by_rule,
        day_counts=dict(per_day),
    )


def _row(
    field_: Field,
    memo: CheckMemo,
    info,
    status: dict,
    by_path: dict,
    proposal_pages: dict,
    before: PageRow | None = None,
) -> PageRow:
    """The page's row (``before`` when it would be the same: the page itself did not change)."""
    path = info.path
    state = status.get(path, PENDING)
    found = by_path.get(path, ())
    proposal_count = len(proposal_pages.get(path, ()))
    trust = memo.trust(field_, path)
    if (
        before is not None
        and before.status == state
        and before.trust == trust
        and before.proposals == proposal_count
        and (before.errors, before.warnings) == _severities(found)
    ):
        return before
    return make_row(info, state, found, proposal_count, trust)


def _count(counts: Counter, row: PageRow, sign: int) -> None:
    """Add (``sign`` 1) or take away (-1) what a row counts for in the status bar and the overview."""
    if row.trust == trust_mod.QUARANTINED and row.path.startswith(SESSIONS_PREFIX):
        counts["tainted_sessions"] += sign  # not in the review queue (memtui quarantine list agrees)
    else:
        counts[row.trust] += sign
    if row.status in (SUPERSEDED, STALE):
        counts[row.status] += sign
    if row.errors or row.warnings:
        counts["with_findings"] += sign
    if row.proposals:
        counts["in_proposals"] += sign


def _tally(tag_totals: Counter, per_day: Counter, info, sign: int) -> None:
    """Add or take away a page's source tags and the day it was written."""
    if sign > 0:
        tag_totals.update(info.tag_counts)
    else:
        tag_totals.subtract(info.tag_counts)
    day = (info.created or info.updated or "")[:10]
    if len(day) == 10:
        per_day[day] += sign


def _differing(now: dict, before: dict) -> list[str]:
    """The keys whose values differ between two dicts (either may lack the key)."""
    if now is before or now == before:
        return []
    return [key for key in now.keys() | before.keys() if now.get(key) != before.get(key)]


def daily_series(per_day: Counter[str], days: int = 365) -> list[tuple[str, int]]:
    """Pages written per day over the last ``days`` days that have any (zeros filled in)."""
    if not per_day:
        return []
    try:
        last = max(_dt.date.fromisoformat(d) for d in per_day)
    except ValueError:
        return []
    series = []
    for offset in range(days - 1, -1, -1):
        day = (last - _dt.timedelta(days=offset)).isoformat()
        series.append((day, per_day.get(day, 0)))
    while series and series[0][1] == 0:
        series.pop(0)
    return series


def pending_row(path: str) -> PageRow:
    """A page found by the scan but not read yet (first load of a big field)."""
    stem = path.rsplit("/", 1)[-1][:-3] if path.endswith(".md") else path
    return make_cells(PageRow(path, stem, "", "", "", PENDING, PENDING, 0, 0, 0))


def quick_rows(pages: dict, pending: list[str] = ()) -> dict[str, PageRow]:
    """Rows from page summaries alone (no checks, no statuses yet): the list is usable at once."""
    rows = {path: pending_row(path) for path in pending}
    rows.update({path: make_row(info, PENDING, [], 0) for path, info in pages.items()})
    return rows
