"""Undo a review decision: the reviewer's slip, taken back without losing a byte.

Four decisions can be undone (``ledger.UNDOABLE_ACTIONS``):

- *quarantine approve*: the page returns to where it was with the bytes it had
  (the approved version is kept in ``.memtui/archive/undone/`` when the approval
  had moved it, and in ``.memtui/blobs/`` in any case); a pointer the approval
  added to ``MEMORY.md`` is taken out again;
- *quarantine reject*: the page comes back from ``.memtui/archive/rejected/``
  to its path, unchanged (the archived copy stays as a record);
- *proposal approve*: the pages return to their bytes from before the approval,
  all or none, like a revert, but the proposal becomes pending again and the
  approval no longer counts toward the job's regret rate;
- *proposal reject*: the proposal becomes pending again (no page changes).

Each undo is one ``decision-undo`` ledger line; the undone decision stays in the
ledger and ``ledger.in_force`` leaves it out. Undo again to go further back.

- ``candidates(root, kind=...)``: decisions that can be undone now, newest first;
- ``plan_undo(root, decision)``: what undoing it would change (nothing changes);
- ``undo(root, decision=..., kind=...)``: do it; refused when the decision is no
  longer the one in force, or (without ``force``) when a page changed since.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.errors import MemtuiError, ReadOnlyFieldError, StaleWriteError
from memtui.review import apply_journal, ledger
from memtui.review import proposals as proposals_mod
from memtui.review.diffs import PageDiff, page_diff
from memtui.store import safe_write
from memtui.store.files import read_file, sha256_bytes

QUARANTINE = "quarantine"
PROPOSALS = "proposals"
KIND_ACTIONS = {
    QUARANTINE: ledger.QUARANTINE_ACTIONS,
    PROPOSALS: (ledger.PROPOSAL_APPROVE, ledger.PROPOSAL_REJECT),
    None: ledger.UNDOABLE_ACTIONS,
}
VERB = {
    ledger.QUARANTINE_APPROVE: "approved",
    ledger.QUARANTINE_REJECT: "rejected",
    ledger.PROPOSAL_APPROVE: "approved",
    ledger.PROPOSAL_REJECT: "rejected",
    ledger.PROPOSAL_REVERT: "reverted",
}


def describe(decision: ledger.LedgerEntry) -> str:
    """``approved quarantine/x.md (maya, 2026-11-29T10:00:00Z)``: one line for prompts and lists."""
    return f"{VERB.get(decision.action, decision.action)} {decision.target} ({decision.who}, {decision.ts})"


@dataclass(slots=True)
class UndoPage:
    """One page an undo changes."""

    path: str
    what: str  # "restore" | "bring back" | "retire" | "unlink from MEMORY.md"
    current: str | None  # sha256 on disk now (None: absent)
    data: bytes | None  # the bytes written (None: the page is retired to the archive)
    conflict: bool  # changed since the decision: undoing drops those later edits (kept in .memtui/blobs/)
    diff: PageDiff | None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "what": self.what,
            "current": self.current,
            "after": sha256_bytes(self.data) if self.data is not None else None,
            "conflict": self.conflict,
            "diff": self.diff.to_json() if self.diff else None,
        }


@dataclass(slots=True)
class UndoPlan:
    decision: ledger.LedgerEntry
    pages: list[UndoPage] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # the undo cannot be done (e.g. the old bytes are gone)

    @property
    def conflicts(self) -> list[UndoPage]:
        return [page for page in self.pages if page.conflict]

    @property
    def summary(self) -> str:
        return describe(self.decision)

    def to_json(self) -> dict[str, Any]:
        return {
            "decision": self.decision.to_json(),
            "summary": self.summary,
            "pages": [page.to_json() for page in self.pages],
            "conflicts": [page.path for page in self.conflicts],
            "problems": list(self.problems),
        }


def candidates(root: Path, *, kind: str | None = None) -> list[ledger.LedgerEntry]:
    """Decisions of ``kind`` ("quarantine", "proposals" or None for both) that can be undone, newest first."""
    return ledger.undo_candidates(ledger.read(Path(root)).entries, KIND_ACTIONS[kind])


def latest(root: Path, *, kind: str | None = None, target: str | None = None) -> ledger.LedgerEntry | None:
    """The decision ``z`` would undo: the newest candidate (on ``target`` when given)."""
    for entry in candidates(root, kind=kind):
        if target is None or entry.target == target or any(p.get("moved_to") == target for p in entry.pages):
            return entry
    return None


def _disk(root: Path, path: str) -> bytes | None:
    try:
        return read_file(safe_write.resolve_in_field(root, path), under=root)  # bounded, no FIFO
    except FileNotFoundError:
        return None


def _blob(root: Path, digest: str | None) -> bytes | None:
    if not digest:
        return None
    try:
        return safe_write.read_blob(root, digest)
    except (MemtuiError, OSError):
        return None


def _without_pointer(data: bytes, where: str) -> bytes | None:
    """MEMORY.md without the last ``- <where>`` line an approval added (None: no such line)."""
    lines = data.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    for index in range(len(lines) - 1, -1, -1):
        if lines[index].rstrip("\r\n") == f"- {where}":
            del lines[index]
            return "".join(lines).encode("utf-8", "surrogateescape")
    return None


def _plan_quarantine(root: Path, decision: ledger.LedgerEntry) -> UndoPlan:
    plan = UndoPlan(decision)
    page = decision.pages[0] if decision.pages else {}
    path = str(page.get("path") or decision.target)
    before, after, moved_to = page.get("before"), page.get("after"), page.get("moved_to")
    if decision.action == ledger.QUARANTINE_REJECT:
        archived = moved_to
        data = _disk(root, path)
        if data is not None:
            plan.problems.append(f"{path} exists again; move it away first")
            return plan
        kept = None
        if archived:
            try:
                kept = safe_write.read_state_file(root, archived)  # never through a link, bounded
            except (OSError, MemtuiError):
                kept = None
        if kept is None or sha256_bytes(kept) != before:
            kept = _blob(root, before)
        if kept is None:
            plan.problems.append(f"the rejected copy of {path} is no longer in {archived or 'the archive'}")
            return plan
        plan.pages.append(UndoPage(path, "bring back", None, kept, False, page_diff(path, None, kept)))
        return plan
    # quarantine approve
    where = moved_to or path
    original = _blob(root, before)
    if original is None:
        plan.problems.append(f"the version of {path} before the approval is not kept in .memtui/blobs/")
        return plan
    now = _disk(root, where)
    now_hash = sha256_bytes(now) if now is not None else None
    if now is None:
        plan.problems.append(f"{where} no longer exists")
        return plan
    conflict = now_hash != after
    if moved_to and moved_to != path:
        if _disk(root, path) is not None:
            plan.problems.append(f"{path} exists again; move it away first")
            return plan
        plan.pages.append(UndoPage(where, "set aside (to .memtui/archive/undone/)", now_hash, None, conflict, None))
        plan.pages.append(UndoPage(path, "restore", None, original, False, page_diff(path, now, original)))
    else:
        plan.pages.append(UndoPage(path, "restore", now_hash, original, conflict, page_diff(path, now, original)))
    for extra in decision.pages[1:]:
        memory = _disk(root, "MEMORY.md") if extra.get("path") == "MEMORY.md" else None
        if memory is None:
            continue
        memory_hash = sha256_bytes(memory)
        unchanged = memory_hash == extra.get("after")
        if unchanged and not extra.get("before"):  # the approval created MEMORY.md
            plan.pages.append(UndoPage("MEMORY.md", "retire", memory_hash, None, False, None))
            continue
        restored = _blob(root, extra.get("before")) if unchanged else None
        if restored is None:
            restored = _without_pointer(memory, where)  # edited since: take out only the pointer line
        if restored is not None:
            diff = page_diff("MEMORY.md", memory, restored)
            plan.pages.append(UndoPage("MEMORY.md", "unlink from MEMORY.md", memory_hash, restored, False, diff))
    return plan


def _plan_proposal(root: Path, decision: ledger.LedgerEntry) -> UndoPlan:
    plan = UndoPlan(decision)
    if decision.action == ledger.PROPOSAL_REJECT:
        return plan  # the proposal becomes pending again; no page changes
    try:
        revert = proposals_mod.plan_revert(root, decision.target)
    except MemtuiError as exc:
        plan.problems.append(exc.message)
        return plan
    for page in revert.missing:
        plan.problems.append(f"the previous version of {page.path} is not kept anywhere")
    for page in revert.pages:
        if page.done:
            continue
        what = "retire" if page.restore_hash is None else ("bring back" if page.current is None else "restore")
        plan.pages.append(UndoPage(page.path, what, page.current, page.restore, page.conflict, page.diff))
    return plan


def plan_undo(root: Path, decision: ledger.LedgerEntry) -> UndoPlan:
    """What undoing ``decision`` would change now (nothing is changed)."""
    root = Path(root)
    if decision.action in ledger.QUARANTINE_ACTIONS:
        return _plan_quarantine(root, decision)
    if decision.action in (ledger.PROPOSAL_APPROVE, ledger.PROPOSAL_REJECT):
        return _plan_proposal(root, decision)
    raise MemtuiError(f"a {decision.action} decision cannot be undone", "undo approvals and rejections")


def undo(
    root: Path,
    *,
    decision: ledger.LedgerEntry | None = None,
    kind: str | None = None,
    reviewer: str | None = None,
    reason: str | None = None,
    force: bool = False,
    readonly: bool = False,
) -> tuple[ledger.LedgerEntry, ledger.LedgerEntry]:
    """Undo ``decision`` (default: the latest of ``kind``); return (the undone decision, the undo entry).

    The decision must still be an undo candidate (nothing decided on its target
    since), so a reviewer never undoes something other than what was shown.
    Pages changed since the decision are refused unless ``force``: their later
    edits are then replaced (and kept in ``.memtui/blobs/``).
    """
    root = Path(root)
    if readonly:
        raise ReadOnlyFieldError("this field is read-only (opened from a zip)", "extract it to change decisions")
    apply_journal.recover_interrupted(root)
    found = candidates(root, kind=kind)
    if decision is None:
        if not found:
            raise MemtuiError("no decision to undo", "only approvals and rejections still in force can be undone")
        decision = found[0]
    elif not any(entry.to_json() == decision.to_json() for entry in found):
        raise StaleWriteError(
            f"the decision {describe(decision)} is no longer the latest on {decision.target}",
            "list the decisions again; something was decided on it since",
        )
    plan = plan_undo(root, decision)
    if plan.problems:
        raise MemtuiError(
            f"cannot undo: {plan.problems[0]}", "put the page back by hand from .memtui/archive/ or .memtui/blobs/"
        )
    if plan.conflicts and not force:
        raise StaleWriteError(
            f"{', '.join(p.path for p in plan.conflicts)} changed since it was {VERB[decision.action]}",
            "look at the difference first; undo with --force to replace those later edits (they are kept in .memtui/blobs/)",
        )
    if decision.action == ledger.PROPOSAL_APPROVE:
        entry = proposals_mod.restore_before_approval(
            root, decision.target, action=ledger.DECISION_UNDO, reviewer=reviewer, reason=reason, force=force
        )
        return decision, entry
    entry = ledger.LedgerEntry(
        ts=ledger.now_iso(),
        who=ledger.reviewer_name(reviewer, root),
        action=ledger.DECISION_UNDO,
        target=decision.target,
        job=decision.job,
        carrier=decision.carrier,
        reason=reason.strip() if reason and reason.strip() else None,
    )
    if not plan.pages:
        ledger.append(root, entry)
        return decision, entry
    writes = [
        apply_journal.PageWrite(page.path, page.current, page.data, archive_bucket="undone") for page in plan.pages
    ]
    result = apply_journal.apply_atomically(
        root, writes, entry=entry, label=f"undo {decision.action} {decision.target}"
    )
    return decision, result.entry


__all__ = ["QUARANTINE", "PROPOSALS", "UndoPage", "UndoPlan", "candidates", "latest", "plan_undo", "undo", "describe"]
