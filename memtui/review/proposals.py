"""Review maintenance-job proposals: list, inspect, approve, reject, revert, measure.

This is the one module the TUI and the CLI call for proposals. Both carriers
(staging trees, ``proposal_staging``; git branches ``dream/<id>``,
``proposal_git``) give the same ``Proposal`` (``proposal_model``).

Reading (never writes, never raises for a malformed proposal):

- ``load_proposals(root)`` -> ``Loaded``: every proposal of both carriers and
  problems with the carriers themselves;
- ``proposal_queue(root, field=..., include_decided=False, with_checks=True)``
  -> ``Queue`` (the checks on each result run on ``field``, as the caller's session
  reads it; without one they are not run): one ``QueueEntry`` per proposal with its state
  (``ready`` / ``stale`` / ``conflicting`` / ``invalid`` while pending;
  ``approved`` / ``rejected`` / ``reverted`` once decided, from the ledger), every
  flag that applies, the ids it conflicts with, its age and its validation;
- ``review_proposal(root, id, field=...)`` -> ``Review``: per-page diffs
  (``diffs.PageDiff``: unified + side by side with word spans), the three-way
  difference for stale pages, the checks that are new or resolved on the field as
  it would be after applying, and the fingerprint to approve with.

Deciding (each appends one ledger line; see ``ledger``):

- ``approve(root, id, field=..., reviewer=..., accept_stale=False, fingerprint=None)``:
  all pages or none (``apply_journal``), one commit in a git field;
- ``reject(root, id, reviewer=..., reason=...)``: nothing on disk changes;
- ``plan_revert(root, id)`` / ``revert(root, id, force=False)``: pages return to
  their previous bytes where they still hold what the approval wrote;
- ``stats(root)``: approvals, rejections, reverts and the regret rate per job.

Decided proposals stay where they are (folder or branch); the ledger says what
happened to them.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import re
import tempfile
import weakref
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtui.dialects.report import reading_after
from memtui.errors import MemtuiError, ReadOnlyFieldError, StaleWriteError
from memtui.field.checks import ERROR, Finding, run_checks
from memtui.review import apply_journal, ledger
from memtui.review.diffs import PageDiff, page_diff
from memtui.review.proposal_git import load_git
from memtui.review.proposal_model import (
    CARRIER_GIT,
    DELETE,
    MAX_PROPOSED_BYTES,
    PageChange,
    Proposal,
)
from memtui.review.proposal_staging import load_staging
from memtui.review.tag_changes import TagChange, proposal_tag_changes, removed_claims
from memtui.store import gitrepo, safe_write
from memtui.store.files import sha256_bytes
from memtui.textsafety import one_line, visible

if TYPE_CHECKING:
    from memtui.field.claims import LineClaim
    from memtui.field.field import Field

READY = "ready"
STALE = "stale"
CONFLICTING = "conflicting"
INVALID = "invalid"
PENDING_STATES = (READY, STALE, CONFLICTING, INVALID)
DECIDED_STATES = (ledger.APPROVED, ledger.REJECTED, ledger.REVERTED)
# A result that adds one of these findings is never applied by memtui.
BLOCKING_RULES = frozenset({"memory-untrusted-target"})


class ProposalNotFoundError(MemtuiError):
    """No proposal has that id."""


# --------------------------------------------------------------------------- loading


@dataclass(slots=True)
class Loaded:
    proposals: list[Proposal]
    problems: list[str]  # carrier-level problems (a symlinked .dream/, git errors)


def load_proposals(root: Path, *, also: str | None = None) -> Loaded:
    """Every proposal of both carriers, sorted by creation time then id.

    An id used by both a staging folder and a branch makes both invalid: a
    decision must name exactly one proposal. Git branches beyond what a listing
    reads (``proposal_git.MAX_BRANCHES``) are counted in the problems; ``also``
    names one to read whatever its place (the proposal being shown or decided).
    """
    root = Path(root)
    staged, problems = load_staging(root, also=also)
    branches, git_problems = load_git(root, also=also)
    proposals = staged + branches
    counts = Counter(p.id for p in proposals)
    for proposal in proposals:
        if counts[proposal.id] > 1:
            proposal.errors.append(f"id {proposal.id} is used by both a staging folder and a branch")
    proposals.sort(key=lambda p: (p.created or "", p.id, p.carrier))
    return Loaded(proposals, problems + git_problems)


def get_proposal(root: Path, proposal_id: str) -> Proposal:
    """The proposal with that id; ``ProposalNotFoundError`` if there is none."""
    for proposal in load_proposals(root, also=proposal_id).proposals:
        if proposal.id == proposal_id:
            return proposal
    raise ProposalNotFoundError(f"no proposal {proposal_id!r}", "list them with: memtui proposals list FIELD --all")


# --------------------------------------------------------------------------- checks on the result


@contextlib.contextmanager
def result_field(current: Field, proposal: Proposal) -> Iterator[Field]:
    """The field as it would be after applying ``proposal`` (an in-memory overlay).

    Pages the proposal changes are re-summarised from the proposed bytes, deleted
    pages are dropped, every other page is shared with ``current``. The checks
    read only ``MEMORY.md`` from disk, so the overlay's root is a temporary
    folder holding the resulting ``MEMORY.md`` (a test compares this overlay with
    a real applied copy).
    """
    from memtui.field.field import Field

    with tempfile.TemporaryDirectory(prefix="memtui-overlay-") as tmp:
        overlay = Field(Path(tmp), readonly=True, source=current.root, reader=current.reader)
        overlay.content_root = current.content_root
        overlay.page_root = current.page_root
        overlay.pages = dict(current.pages)
        overlay.files = set(current.files)
        overlay.approvals = dict(current.approvals)
        overlay.scan_problems = list(current.scan_problems)
        for change in proposal.changes:
            if change.problem:
                continue
            if change.action == DELETE:
                overlay.pages.pop(change.path, None)
            elif change.proposed is not None:
                data = change.proposed
                overlay.pages[change.path] = current.reader.from_bytes(current.root, change.path, data, 0)
                overlay.page_overrides[change.path] = data
        memory = _memory_bytes(current, proposal)
        if memory is not None:
            (Path(tmp) / "MEMORY.md").write_bytes(memory)
        yield overlay


def _memory_bytes(current: Field, proposal: Proposal) -> bytes | None:
    change = proposal.change("MEMORY.md")
    if change is not None and not change.problem:
        return change.proposed
    try:
        return (current.root / "MEMORY.md").read_bytes()
    except OSError:
        return None


def _finding_key(finding: Finding) -> tuple[str, str, str, str]:
    return (finding.rule, finding.severity, finding.path, finding.message)


# Checks cost about one full ``run_checks`` per proposal, so results are memoised
# per Field object (weakly) and invalidated when its generation or MEMORY.md changes.
_CHECK_MEMO: weakref.WeakKeyDictionary[Any, dict[Any, Any]] = weakref.WeakKeyDictionary()


def _memo(current: Field) -> dict[Any, Any]:
    stamp = (current.generation, safe_write.current_hash(current.root / "MEMORY.md"))
    memo = _CHECK_MEMO.get(current)
    if memo is None or memo.get("stamp") != stamp:
        memo = {"stamp": stamp}
        _CHECK_MEMO[current] = memo
    return memo


def field_findings(current: Field) -> list[Finding]:
    """``run_checks(current)``, memoised while the field does not change."""
    memo = _memo(current)
    if "before" not in memo:
        memo["before"] = run_checks(current)
    return memo["before"]


def check_delta(
    current: Field, proposal: Proposal, *, before: list[Finding] | None = None
) -> tuple[list[Finding], list[Finding]]:
    """``(new, resolved)``: findings the result would add, and findings it would remove.

    Findings are compared by rule, severity, page and message (not line number,
    which an edit shifts). The cost is about one ``run_checks`` over the field;
    results are memoised per (field generation, proposal fingerprint), so a TUI
    can call this per row from a worker and again on every repaint for free.
    """
    memo = _memo(current)
    key = ("delta", proposal.carrier, proposal.id, proposal.fingerprint())
    if key in memo:
        return memo[key]
    if before is None:
        before = field_findings(current)
    with result_field(current, proposal) as overlay:
        after = run_checks(overlay)
    result = (_difference(after, before), _difference(before, after))
    memo[key] = result
    return result


def _difference(left: list[Finding], right: list[Finding]) -> list[Finding]:
    remaining = Counter(_finding_key(f) for f in right)
    out = []
    for finding in left:
        key = _finding_key(finding)
        if remaining[key]:
            remaining[key] -= 1
        else:
            out.append(finding)
    return out


# --------------------------------------------------------------------------- the queue


@dataclass(slots=True)
class Validation:
    """Can the proposal be applied, and what would the checks say afterwards?"""

    errors: list[str]
    warnings: list[str]
    new_findings: list[Finding] | None = None  # None: checks not run
    resolved_findings: list[Finding] | None = None

    @property
    def ok(self) -> bool:
        """No proposal error and no new error-severity finding."""
        return not self.errors and not any(f.severity == ERROR for f in self.new_findings or [])

    @property
    def blocking(self) -> list[Finding]:
        """New findings memtui never applies (a quarantined page routed from MEMORY.md)."""
        return [f for f in self.new_findings or [] if f.rule in BLOCKING_RULES]

    def to_json(self) -> dict[str, Any]:
        def count(findings: list[Finding] | None) -> dict[str, int] | None:
            if findings is None:
                return None
            c = Counter(f.severity for f in findings)
            return {"error": c.get("error", 0), "warning": c.get("warning", 0), "info": c.get("info", 0)}

        return {
            "ok": self.ok,
            "errors": list(self.errors),
            "warnings": list(self.warnings),
            "new_findings": count(self.new_findings),
            "resolved_findings": count(self.resolved_findings),
        }


@dataclass(slots=True)
class QueueEntry:
    proposal: Proposal
    state: str  # ready | stale | conflicting | invalid | approved | rejected | reverted
    flags: list[str]  # every pending condition that holds: invalid, stale, conflicting
    conflicts_with: list[str]
    decision: ledger.LedgerEntry | None
    age_days: float | None
    validation: Validation

    @property
    def pending(self) -> bool:
        return self.decision is None or self.state in PENDING_STATES

    def to_json(self) -> dict[str, Any]:
        p = self.proposal
        return {
            "id": p.id,
            "carrier": p.carrier,
            "location": p.location,
            "job": p.job,
            "created": p.created,
            "age_days": None if self.age_days is None else round(self.age_days, 2),
            "state": self.state,
            "flags": list(self.flags),
            "conflicts_with": list(self.conflicts_with),
            "pages": [{"path": c.path, "action": c.action, "stale": c.stale, "problem": c.problem} for c in p.changes],
            "validation": self.validation.to_json(),
            "decision": self.decision.to_json() if self.decision else None,
        }


@dataclass(slots=True)
class Queue:
    entries: list[QueueEntry]
    problems: list[str]
    ledger_bad_lines: list[int]

    def get(self, proposal_id: str) -> QueueEntry | None:
        return next((e for e in self.entries if e.proposal.id == proposal_id), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "proposals": [entry.to_json() for entry in self.entries],
            "problems": list(self.problems),
            "ledger_bad_lines": list(self.ledger_bad_lines),
        }


def _age_days(created: str | None, now: _dt.datetime) -> float | None:
    if not created:
        return None
    text = created.strip()
    try:
        stamp = _dt.datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        try:
            stamp = _dt.datetime.fromisoformat(text[:10])
        except ValueError:
            return None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=_dt.UTC)
    return max((now - stamp).total_seconds() / 86400.0, 0.0)


def proposal_queue(
    root: Path,
    *,
    field: Field | None = None,
    include_decided: bool = False,
    with_checks: bool = True,
    now: _dt.datetime | None = None,
    also: str | None = None,
) -> Queue:
    """Every pending proposal (and decided ones with ``include_decided``), oldest first.

    Conflicts are counted among pending, valid proposals: two of them touching
    the same page conflict. ``with_checks`` runs the deterministic checks on each
    pending proposal's result (needs ``field``, loaded if not given); the TUI can
    pass ``with_checks=False`` for a fast first paint and call ``check_delta``
    per row later.
    """
    root = Path(root)
    now = now or _dt.datetime.now(_dt.UTC)
    loaded = load_proposals(root, also=also)
    read = ledger.read(root)
    decisions = ledger.proposal_decisions(read.entries)
    pending = [p for p in loaded.proposals if p.id not in decisions]
    touching: dict[str, set[str]] = {}
    for proposal in pending:
        if proposal.valid:
            for path in proposal.pages:
                touching.setdefault(path, set()).add(proposal.id)
    before: list[Finding] | None = None
    if with_checks and field is not None and any(p.valid for p in pending):
        before = field_findings(field)
    entries = []
    for proposal in loaded.proposals:
        decision = decisions.get(proposal.id)
        if decision is not None and not include_decided:
            continue
        validation = Validation(proposal.problems, list(proposal.warnings))
        conflicts: list[str] = []
        flags: list[str] = []
        if decision is None:
            if not proposal.valid:
                flags.append(INVALID)
            else:
                others = {other for path in proposal.pages for other in touching.get(path, ())}
                conflicts = sorted(others - {proposal.id})
                if with_checks and field is not None:
                    validation.new_findings, validation.resolved_findings = check_delta(field, proposal, before=before)
                    # A proposal may change how the field is read (a page that makes it another
                    # format's): the reviewer is told, computed the same way on both sides.
                    changes = {c.path: c.proposed for c in proposal.changes if not c.problem}
                    validation.warnings.extend(
                        f"after it, the field is read differently: {line}" for line in reading_after(field, changes)
                    )
            if proposal.stale:
                flags.append(STALE)
            if conflicts:
                flags.append(CONFLICTING)
            state = flags[0] if flags else READY
        else:
            state = ledger.proposal_state(decision) or READY
        entries.append(
            QueueEntry(proposal, state, flags, conflicts, decision, _age_days(proposal.created, now), validation)
        )
    return Queue(entries, loaded.problems + read.problems, read.bad_lines)


# --------------------------------------------------------------------------- review


def find_version(root: Path, path: str, digest: str | None) -> bytes | None:
    """The bytes of an earlier version of a page, by sha256, if memtui can find them.

    Looks in ``.memtui/blobs/`` (every version memtui replaced) and, in a git
    field, in the page's history on HEAD. None when the version is not kept.
    """
    if digest is None:
        return None
    with contextlib.suppress(MemtuiError, OSError):
        return safe_write.read_blob(Path(root), digest)
    if gitrepo.is_field_repo(root):
        with contextlib.suppress(MemtuiError):
            for commit in gitrepo.path_history(root, path):
                data = gitrepo.blob_at(root, commit, path, max_bytes=MAX_PROPOSED_BYTES)
                if data is not None and sha256_bytes(data) == digest:
                    return data
    return None


def base_bytes(root: Path, proposal: Proposal, change: PageChange) -> bytes | None:
    """The version a proposal was based on: from git for a branch, else ``find_version``."""
    if change.base is None:
        return None
    if proposal.carrier == CARRIER_GIT and proposal.base_commit:
        with contextlib.suppress(MemtuiError):
            data = gitrepo.blob_at(root, proposal.base_commit, change.path, max_bytes=MAX_PROPOSED_BYTES)
            if data is not None and sha256_bytes(data) == change.base:
                return data
    return find_version(root, change.path, change.base)


def _disk_bytes(root: Path, path: str) -> bytes | None:
    try:
        return safe_write.resolve_in_field(Path(root), path).read_bytes()
    except (FileNotFoundError, MemtuiError):
        return None


@dataclass(slots=True)
class ThreeWay:
    """For a stale page: what changed on disk since the base, and what the proposal changes.

    When the base version is not kept anywhere (``base_available`` False) only
    ``disk_to_proposed`` can be shown.
    """

    path: str
    base_available: bool
    base_to_disk: PageDiff | None
    base_to_proposed: PageDiff | None
    disk_to_proposed: PageDiff

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "base_available": self.base_available,
            "base_to_disk": self.base_to_disk.to_json() if self.base_to_disk else None,
            "base_to_proposed": self.base_to_proposed.to_json() if self.base_to_proposed else None,
            "disk_to_proposed": self.disk_to_proposed.to_json(),
        }


@dataclass(slots=True)
class Review:
    entry: QueueEntry
    fingerprint: str
    diffs: list[PageDiff]  # disk now -> proposed, one per page
    three_way: list[ThreeWay]  # stale pages only
    tag_changes: list[TagChange]  # claims whose source tag the job changes

    @property
    def proposal(self) -> Proposal:
        return self.entry.proposal

    def promoted_lines(self, path: str) -> set[int]:
        """Lines of ``path`` (in the proposed version) whose tag the proposal raises."""
        return {c.line for c in self.tag_changes if c.path == path and c.promotion}

    def to_json(self) -> dict[str, Any]:
        validation = self.entry.validation
        data = self.entry.to_json()
        data.update(
            {
                "rationale": self.proposal.rationale,
                "evidence": list(self.proposal.evidence),
                "fingerprint": self.fingerprint,
                "diffs": [d.to_json() for d in self.diffs],
                "three_way": [t.to_json() for t in self.three_way],
                "tag_changes": [c.to_json() for c in self.tag_changes],
                "checks": {
                    "new": [f.to_json() for f in validation.new_findings or []],
                    "resolved": [f.to_json() for f in validation.resolved_findings or []],
                },
            }
        )
        return data


def review_proposal(
    root: Path,
    proposal_id: str,
    *,
    field: Field | None = None,
    context: int | None = 3,
    now: _dt.datetime | None = None,
) -> Review:
    """Everything the review screen shows for one proposal (decided ones too)."""
    root = Path(root)
    queue = proposal_queue(root, field=field, include_decided=True, with_checks=False, now=now, also=proposal_id)
    entry = queue.get(proposal_id)
    if entry is None:
        raise ProposalNotFoundError(f"no proposal {proposal_id!r}", "list them with: memtui proposals list FIELD --all")
    proposal = entry.proposal
    if entry.pending and proposal.valid and field is not None:
        entry.validation.new_findings, entry.validation.resolved_findings = check_delta(field, proposal)
    diffs = []
    three_way = []
    versions: list[tuple[str, bytes | None, bytes | None]] = []
    for change in proposal.changes:
        disk = _disk_bytes(root, change.path) if not change.problem else None
        proposed = change.proposed
        diffs.append(page_diff(change.path, disk, proposed, context=context))
        base = disk
        if change.stale and not change.problem:
            base = base_bytes(root, proposal, change)
            available = base is not None or change.base is None
            three_way.append(
                ThreeWay(
                    change.path,
                    available,
                    page_diff(change.path, base, disk, context=context) if available else None,
                    page_diff(change.path, base, proposed, context=context) if available else None,
                    page_diff(change.path, disk, proposed, context=context),
                )
            )
            if base is None:
                base = disk  # the job's base is not kept: what approving changes is all there is
        if not change.problem:
            versions.append((change.path, base, proposed))
    outside = claims_outside(root, queue, proposal)
    return Review(entry, proposal.fingerprint(), diffs, three_way, proposal_tag_changes(versions, outside))


MAX_OUTSIDE_VERSIONS = 400  # page versions read for the claims other proposals took or take out


def claims_outside(root: Path, queue: Queue, proposal: Proposal) -> list[tuple[str, str, LineClaim]]:
    """The claims that left the field, or would, outside ``proposal``: what every other pending
    proposal removes, and what approved ones retired or rewrote (their previous versions, from
    ``.memtui/blobs/``, checked against the ledger's hashes), newest decision first.

    Why: a job that launders an idea in two proposals (one retires the draft holding
    ``[suggested]``, the other writes the ``[stated]`` line) shows no tag change in either alone.
    At most ``MAX_OUTSIDE_VERSIONS`` page versions are read (a field with 1,500 proposals)."""
    out: list[tuple[str, str, LineClaim]] = []
    budget = MAX_OUTSIDE_VERSIONS
    approved = [e for e in queue.entries if e.decision is not None and e.decision.action == ledger.PROPOSAL_APPROVE]
    approved.sort(key=lambda e: e.decision.ts if e.decision else "", reverse=True)
    for other in [e for e in queue.entries if e.pending] + approved:
        if other.proposal.id == proposal.id or budget <= 0:
            continue
        versions: list[tuple[str, bytes | None, bytes | None]] = []
        if other.pending:
            for change in other.proposal.changes[:budget]:
                if not change.problem:
                    versions.append((change.path, _disk_bytes(root, change.path), change.proposed))
            via = f"proposal {other.proposal.id}"
        else:
            assert other.decision is not None
            for item in other.decision.pages[:budget]:
                before = item.get("before")
                data = None
                with contextlib.suppress(MemtuiError, OSError):
                    data = safe_write.read_blob(root, before) if isinstance(before, str) else None
                if data is not None:
                    versions.append((str(item.get("path")), data, None))  # the claims it held then
            via = f"approved {other.proposal.id}"
        budget -= len(versions)
        out.extend((path, via, claim) for path, claim in removed_claims(versions))
    return out


# --------------------------------------------------------------------------- decisions


def _pending_proposal(root: Path, proposal_id: str) -> tuple[Proposal, list[ledger.LedgerEntry]]:
    entries = ledger.read(root).entries
    proposal = get_proposal(root, proposal_id)
    decision = ledger.proposal_decisions(entries).get(proposal_id)
    if decision is not None:
        raise MemtuiError(
            f"proposal {proposal_id} was already {ledger.proposal_state(decision)} on {decision.ts} by {decision.who}",
            "a decided proposal stays decided; revert an approved one with: memtui proposals revert",
        )
    return proposal, entries


def _check_writable(root: Path, field: Field | None) -> None:
    if field is not None and field.readonly:
        raise ReadOnlyFieldError("this field is read-only (opened from a zip)", "extract it to review proposals")


def approve(
    root: Path,
    proposal_id: str,
    *,
    reviewer: str | None = None,
    accept_stale: bool = False,
    fingerprint: str | None = None,
    reason: str | None = None,
    field: Field,
) -> ledger.LedgerEntry:
    """Apply a pending proposal: every page or none, then record it. ``field`` is the field as
    the reviewer's session reads it: the checks that refuse an unsafe result run on it.

    Refused when the proposal is invalid, already decided, stale (unless
    ``accept_stale``: the reviewer has seen the three-way difference and the
    proposed versions replace what is on disk now), when ``fingerprint`` no
    longer matches (something changed since the reviewer looked), or when the
    result would route a quarantined or unreviewed page from ``MEMORY.md``.
    Deleted pages move to ``.memtui/archive/retired/``. In a git field the
    result is one commit ``memtui: apply dream proposal <id> (<job>)``.
    Returns the ledger entry written (with hashes and commit).
    """
    root = Path(root)
    _check_writable(root, field)
    apply_journal.recover_interrupted(root)
    proposal, _ = _pending_proposal(root, proposal_id)
    if not proposal.valid:
        raise MemtuiError(
            f"proposal {proposal_id} cannot be applied: {proposal.problems[0]}",
            "reject it, or have the job write a corrected proposal",
        )
    if fingerprint is not None and fingerprint != proposal.fingerprint():
        raise StaleWriteError(
            f"proposal {proposal_id} or a page it touches changed since it was shown",
            "look at it again before approving",
        )
    if proposal.stale and not accept_stale:
        stale = ", ".join(c.path for c in proposal.changes if c.stale)
        raise StaleWriteError(
            f"proposal {proposal_id} is stale: {stale} changed since the proposal was made",
            "see what would be lost with: memtui proposals show FIELD ID, then approve with --accept-stale",
        )
    new, _resolved = check_delta(field, proposal)
    blocking = [f for f in new if f.rule in BLOCKING_RULES]
    if blocking:
        raise MemtuiError(
            f"applying {proposal_id} would make MEMORY.md point at an untrusted page ({blocking[0].message})",
            "quarantined and unreviewed pages are never routed from MEMORY.md: reject the proposal",
        )
    writes = [
        apply_journal.PageWrite(change.path, change.current, change.proposed, archive_bucket="retired")
        for change in proposal.changes
        if not change.noop
    ]
    entry = ledger.LedgerEntry(
        ts=ledger.now_iso(),
        who=ledger.reviewer_name(reviewer, root),
        action=ledger.PROPOSAL_APPROVE,
        target=proposal.id,
        job=proposal.job,
        carrier=proposal.carrier,
        reason=reason or None,
    )
    if not writes:  # the field already holds every proposed version
        ledger.append(root, entry)
        return entry
    message = f"memtui: apply dream proposal {proposal.id} ({one_line(proposal.job, 80)})\n\n"
    rationale = commit_text(proposal.rationale)
    if rationale:
        message += rationale + "\n\n"
    message += f"Memtui-Proposal: {proposal.id}\n"
    result = apply_journal.apply_atomically(
        root, writes, entry=entry, label=f"approve {proposal.id}", commit_message=message
    )
    return result.entry


_TRAILER_LIKE_RE = re.compile(r"(memtui)-(?=[A-Za-z0-9-]*[ \t]*:)", re.IGNORECASE)


def commit_text(text: str) -> str:
    """A job's rationale as it may go into memtui's own commit message: visible text only.

    The job wrote it: ESC, BEL and every other control, bidi or invisible character becomes a
    placeholder (``git log`` prints a message raw to the reviewer's terminal), a carriage return
    cannot hide a line, and a line that reads like one of memtui's trailers (``Memtui-Txn: ...``,
    which crash recovery looks for) has its hyphen made ``_`` so only memtui's own trailers are found.
    """
    shown = visible(text.replace("\r\n", "\n"), keep_newlines=True, keep_tabs=True).strip()
    return _TRAILER_LIKE_RE.sub(r"\1_", shown)


def reject(
    root: Path, proposal_id: str, *, reason: str, reviewer: str | None = None, field: Field | None = None
) -> ledger.LedgerEntry:
    """Record that a pending proposal is rejected and why; no page changes."""
    root = Path(root)
    _check_writable(root, field)
    if not reason or not reason.strip():
        raise MemtuiError("a rejection needs a reason", "say why, e.g. --reason 'keeps the older wording'")
    apply_journal.recover_interrupted(root)
    proposal, _ = _pending_proposal(root, proposal_id)
    entry = ledger.LedgerEntry(
        ts=ledger.now_iso(),
        who=ledger.reviewer_name(reviewer, root),
        action=ledger.PROPOSAL_REJECT,
        target=proposal.id,
        job=proposal.job,
        carrier=proposal.carrier,
        pages=[{"path": c.path, "before": c.current, "after": c.current} for c in proposal.changes if not c.problem],
        reason=reason.strip(),
    )
    ledger.append(root, entry)
    return entry


# --------------------------------------------------------------------------- revert


@dataclass(slots=True)
class RevertPage:
    """One page an approval changed, and what reverting it would do now."""

    path: str
    approved_hash: str | None  # what the approval wrote (None: it retired the page)
    current: str | None  # on disk now
    restore_hash: str | None  # what the revert writes back (None: the approval created the page)
    restore: bytes | None
    available: bool  # False: the previous bytes are kept nowhere
    diff: PageDiff  # disk now -> after the revert
    lost: PageDiff | None  # approved version -> disk now: edits the revert would throw away

    @property
    def done(self) -> bool:
        """Already back at its previous version."""
        return self.current == self.restore_hash

    @property
    def conflict(self) -> bool:
        """Changed since the approval (neither the approved nor the previous version)."""
        return not self.done and self.current != self.approved_hash

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "approved": self.approved_hash,
            "current": self.current,
            "restore": self.restore_hash,
            "available": self.available,
            "done": self.done,
            "conflict": self.conflict,
            "diff": self.diff.to_json(),
            "lost": self.lost.to_json() if self.lost else None,
        }


@dataclass(slots=True)
class RevertPlan:
    proposal_id: str
    approval: ledger.LedgerEntry
    pages: list[RevertPage]

    @property
    def conflicts(self) -> list[RevertPage]:
        return [p for p in self.pages if p.conflict]

    @property
    def missing(self) -> list[RevertPage]:
        return [p for p in self.pages if not p.available and not p.done]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.proposal_id,
            "approval": self.approval.to_json(),
            "pages": [p.to_json() for p in self.pages],
            "conflicts": [p.path for p in self.conflicts],
            "missing": [p.path for p in self.missing],
        }


def _previous_bytes(root: Path, approval: ledger.LedgerEntry, path: str, digest: str) -> bytes | None:
    with contextlib.suppress(MemtuiError, OSError):
        return safe_write.read_blob(root, digest)
    if approval.commit and gitrepo.is_field_repo(root):
        with contextlib.suppress(MemtuiError):
            data = gitrepo.blob_at(root, f"{approval.commit}^", path, max_bytes=MAX_PROPOSED_BYTES)
            if data is not None and sha256_bytes(data) == digest:
                return data
    return find_version(root, path, digest)


def plan_revert(root: Path, proposal_id: str, *, context: int | None = 3) -> RevertPlan:
    """What reverting an approved proposal would do, page by page (changes nothing)."""
    root = Path(root)
    entries = ledger.read(root).entries
    decision = ledger.proposal_decisions(entries).get(proposal_id)
    if decision is None or decision.action != ledger.PROPOSAL_APPROVE:
        state = ledger.proposal_state(decision) if decision else "pending"
        raise MemtuiError(
            f"proposal {proposal_id} is {state}, not approved", "only an approved proposal can be reverted"
        )
    pages = []
    for item in decision.pages:
        path = str(item.get("path"))
        before = item.get("before")
        after = item.get("after")
        disk = _disk_bytes(root, path)
        current = sha256_bytes(disk) if disk is not None else None
        restore = _previous_bytes(root, decision, path, before) if before else None
        available = before is None or restore is not None
        approved_bytes = find_version(root, path, after) if after else None
        lost = None
        if current not in (after, before) and (approved_bytes is not None or after is None):
            lost = page_diff(path, approved_bytes, disk, context=context)
        pages.append(
            RevertPage(
                path,
                after,
                current,
                before,
                restore,
                available,
                page_diff(path, disk, restore if before else None, context=context),
                lost,
            )
        )
    return RevertPlan(proposal_id, decision, pages)


def revert(
    root: Path,
    proposal_id: str,
    *,
    reviewer: str | None = None,
    reason: str | None = None,
    force: bool = False,
    field: Field | None = None,
) -> ledger.LedgerEntry:
    """Undo an approved proposal: its pages return to their previous bytes (all or none).

    A page changed since the approval is a conflict: refused unless ``force``
    (the caller has shown ``plan_revert(...).pages[i].lost``). Pages the approval
    created move to ``.memtui/archive/reverted/``; retired pages come back. In a
    git field the result is one commit ``memtui: revert dream proposal <id>``.
    """
    return restore_before_approval(
        root, proposal_id, action=ledger.PROPOSAL_REVERT, reviewer=reviewer, reason=reason, force=force, field=field
    )


def restore_before_approval(
    root: Path,
    proposal_id: str,
    *,
    action: str,
    reviewer: str | None = None,
    reason: str | None = None,
    force: bool = False,
    field: Field | None = None,
) -> ledger.LedgerEntry:
    """Put back the pages an approval changed and record ``action``: a revert (the job's
    change was wrong: it counts toward the regret rate) or an undo (the reviewer's slip:
    the proposal is pending again). See ``revert``."""
    root = Path(root)
    _check_writable(root, field)
    apply_journal.recover_interrupted(root)
    plan = plan_revert(root, proposal_id)
    if plan.missing:
        raise MemtuiError(
            f"the previous version of {plan.missing[0].path} is not kept anywhere",
            "restore it by hand (.memtui/blobs/ and git history were searched)",
        )
    if plan.conflicts and not force:
        raise StaleWriteError(
            f"{', '.join(p.path for p in plan.conflicts)} changed since {proposal_id} was approved",
            "see the difference with: memtui proposals revert FIELD ID --dry-run, then use --force to revert anyway",
        )
    undo = action == ledger.DECISION_UNDO
    writes = [
        apply_journal.PageWrite(page.path, page.current, page.restore, archive_bucket="undone" if undo else "reverted")
        for page in plan.pages
        if not page.done
    ]
    approval = plan.approval
    entry = ledger.LedgerEntry(
        ts=ledger.now_iso(),
        who=ledger.reviewer_name(reviewer, root),
        action=action,
        target=proposal_id,
        job=approval.job,
        carrier=approval.carrier,
        reason=reason or None,
    )
    if not writes:
        ledger.append(root, entry)
        return entry
    verb = "undo the approval of" if undo else "revert"
    message = f"memtui: {verb} dream proposal {proposal_id} ({one_line(approval.job or 'unknown', 80)})\n\n"
    if approval.commit:
        message += f"This reverts commit {approval.commit}.\n\n"
    message += f"Memtui-Proposal: {proposal_id}\n"
    result = apply_journal.apply_atomically(
        root, writes, entry=entry, label=f"{'undo' if undo else 'revert'} {proposal_id}", commit_message=message
    )
    return result.entry


# --------------------------------------------------------------------------- stats


@dataclass(slots=True)
class Stats:
    jobs: dict[str, ledger.JobStats]
    total: ledger.JobStats
    pending: int

    def to_json(self) -> dict[str, Any]:
        return {
            "jobs": {name: stats.to_json() for name, stats in self.jobs.items()},
            "total": self.total.to_json(),
            "pending": self.pending,
        }


def stats(root: Path) -> Stats:
    """Decisions and regret rate per job kind (``memtui proposals stats``, the overview)."""
    root = Path(root)
    entries = ledger.read(root).entries
    jobs, total = ledger.regret_stats(entries)
    decided = ledger.proposal_decisions(entries)
    pending = sum(1 for p in load_proposals(root).proposals if p.id not in decided)
    return Stats(jobs, total, pending)


__all__ = [
    "READY",
    "STALE",
    "CONFLICTING",
    "INVALID",
    "Loaded",
    "Queue",
    "QueueEntry",
    "Validation",
    "Review",
    "ThreeWay",
    "RevertPlan",
    "RevertPage",
    "Stats",
    "ProposalNotFoundError",
    "load_proposals",
    "get_proposal",
    "proposal_queue",
    "review_proposal",
    "check_delta",
    "field_findings",
    "result_field",
    "find_version",
    "base_bytes",
    "approve",
    "reject",
    "plan_revert",
    "revert",
    "restore_before_approval",
    "stats",
    "Proposal",
    "PageChange",
]
