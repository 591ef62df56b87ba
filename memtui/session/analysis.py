"""What the screens show about the field, computed off the UI thread.

``analyse`` runs the checks, the supersede statuses and the proposal queue over a
snapshot of the field (a copy sharing the immutable page summaries), in a
worker thread; the session then hands the resulting ``Analysis`` to its user.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import itertools
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memtui.dialects.loading import ContextReport
from memtui.dialects.report import FieldReport, field_report
from memtui.field import trust as trust_mod
from memtui.field.check_memo import CheckMemo
from memtui.field.checks import ERROR, INFO, WARNING, Finding, field_findings
from memtui.field.claims import Claim, KeptEntry, claims_in_page_order
from memtui.field.field import Field
from memtui.field.history import STALE, SUPERSEDED, UNRECORDED, History
from memtui.field.page import PageInfo
from memtui.render.glyphs import PENDING
from memtui.session.loaded import loaded_context
from memtui.session.rows import SESSIONS_PREFIX, PageRow, make_row, severities

if TYPE_CHECKING:
    from memtui.review.proposals import QueueEntry


@dataclass
class Analysis:
    field: Field  # the snapshot analysed (its lookups, history and backlinks are built)
    history: History
    generation: int
    status: dict[str, str]
    by_path: dict[str, list[Finding]]  # each page's findings, sorted
    proposal_pages: dict[str, list[str]]
    proposals: list[QueueEntry]
    rows: dict[str, PageRow]
    counts: dict[str, int] = dataclasses.field(default_factory=dict)
    tag_totals: dict[str, int] = dataclasses.field(default_factory=dict)
    per_day: list[tuple[str, int]] = dataclasses.field(default_factory=list)
    context: ContextReport | None = None  # what agents load by themselves (session.loaded)
    hidden_by_path: dict[str, int] = dataclasses.field(default_factory=dict)  # findings memtui.toml hid, per page
    proposal_error: str | None = None
    # per job: approved, reverted, regret_rate
    regret: dict[str, dict[str, Any]] = dataclasses.field(default_factory=dict)
    report: FieldReport | None = None  # what memtui did with the field: dialects, what it left out, memtui.toml
    by_rule: dict[str, int] = dataclasses.field(default_factory=dict)  # findings per rule
    # pages written per day (per_day before it is filled in)
    day_counts: dict[str, int] = dataclasses.field(default_factory=dict)
    # each page's claims in context (claims.keep_claims)
    claim_parts: dict[str, KeptEntry] = dataclasses.field(default_factory=dict)

    def claims(self) -> list[Claim]:
        """Every claim of the field analysed, in page order (made from ``claim_parts`` when asked)."""
        return claims_in_page_order(self.field.pages, self.claim_parts)

    @property
    def findings(self) -> list[Finding]:
        """Every finding, sorted as ``run_checks`` sorts them (made when asked: 200,000 at 100,000 pages)."""
        by_path = self.by_path
        return [finding for path in sorted(by_path) for finding in by_path[path]]


def load_proposals(
    field_: Field,
) -> tuple[list[QueueEntry], dict[str, list[str]], dict[str, dict[str, Any]], str | None]:
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
        counts: Counter[str] = Counter()
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
    counts["hidden_by_settings"] = found.hidden  # every count says what memtui.toml hid
    counts["proposals"] = len(proposals)
    context = loaded_context(field_, all_files=False)
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
        context=context,
        hidden_by_path=found.hidden_by_path,
        proposal_error=proposal_error,
        regret=regret,
        report=report,
        by_rule=found.by_rule,
        day_counts=dict(per_day),
        claim_parts=dict(memo.claims),
    )


def _row(
    field_: Field,
    memo: CheckMemo,
    info: PageInfo,
    status: dict[str, str],
    by_path: dict[str, list[Finding]],
    proposal_pages: dict[str, list[str]],
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
        and (before.errors, before.warnings) == severities(found)
    ):
        return before
    return make_row(info, state, found, proposal_count, trust)


def _count(counts: Counter[str], row: PageRow, sign: int) -> None:
    """Add (``sign`` 1) or take away (-1) what a row counts for in the status bar and the overview."""
    if row.trust == trust_mod.QUARANTINED and row.path.startswith(SESSIONS_PREFIX):
        counts["tainted_sessions"] += sign  # not in the review queue (memtui quarantine list agrees)
    else:
        counts[row.trust] += sign
    if row.status in (SUPERSEDED, STALE, UNRECORDED):
        counts[row.status] += sign
    if row.errors or row.warnings:
        counts["with_findings"] += sign
    if row.proposals:
        counts["in_proposals"] += sign


def _tally(tag_totals: Counter[str], per_day: Counter[str], info: PageInfo, sign: int) -> None:
    """Add or take away a page's source tags and the day it was written."""
    if sign > 0:
        tag_totals.update(info.tag_counts)
    else:
        tag_totals.subtract(info.tag_counts)
    day = (info.created or info.updated or "")[:10]
    if len(day) == 10:
        per_day[day] += sign


def _differing(now: Mapping[str, object], before: Mapping[str, object]) -> list[str]:
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
