"""The review ledger: every decision a reviewer makes, one JSON line each.

The ledger lives at ``FIELD/.memtui/ledger.jsonl`` and is only ever appended to
(``safe_write.append_line``: one ``write`` + ``fsync`` per line). Each line is
one object with these keys (all present, ``null`` where they do not apply)::

    {"ts": "2026-11-29T10:51:00Z",          # UTC, when the decision was made
     "who": "Maya",                          # the reviewer (see reviewer_name)
     "action": "proposal-approve",           # one of ACTIONS
     "target": "2026-11-27-dedupe-01",       # proposal id, or the page path
     "job": "dedupe",                        # proposal job kind (null for pages)
     "carrier": "staging",                   # "staging" | "git" (null for pages)
     "pages": [{"path": "notes/a.md",        # every page the decision changed
                "before": "<sha256>|null",   # null: the page did not exist
                "after": "<sha256>|null",    # null: the page was retired/archived
                "moved_to": "notes/x.md"}],  # only when the page moved
     "reason": "duplicate of ...",           # the reviewer's words, or null
     "commit": "<git sha>|null"}             # the commit made, in a git field

Proposal state is derived from the ledger, never stored beside the proposal:
the last proposal decision for an id wins (approved, rejected, reverted).
The *regret rate* of a job kind is approved proposals later reverted divided by
approved proposals.

A ``decision-undo`` line cancels the latest decision still in force on the same
target (a reviewer's slip, undone with ``z`` in the TUI or ``memtui ... undo``):
both lines stay in the ledger, and ``in_force`` replays them, so an undone
approval is neither a decision nor an approval for the regret rate.

A line that does not parse (a torn write after a power cut, a hand edit) is
skipped and counted in ``LedgerRead.bad_lines``; it never stops the reader.

The ledger is tamper-evident. Each line also carries ``prev`` (sha256 of the
line before it, ``""`` for the first) and ``mac`` (HMAC-SHA256 of the rest of
the line with the user's key, ``store.signing``). A line whose ``mac`` does not
verify was not written by memtui for this user (appended by an agent, edited by
hand, written under another account): it is listed in ``LedgerRead.problems``
and ignored, so it cannot decide a proposal. A ``prev`` that does not match
means a line before it was changed or removed: reported, the line itself still
counts. Lines without a ``mac`` before the first signed line were written by
memtui versions that did not sign; they are trusted as before. The file is
reached without following links (``store.state``) and appended under a lock.
"""

from __future__ import annotations

import datetime as _dt
import getpass
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtui.errors import MemtuiError
from memtui.store import gitrepo, locations, signing, state
from memtui.store.files import MAX_LINE_BYTES, size_text

if TYPE_CHECKING:
    from memtui.field.field import Field

LEDGER_FILE = "ledger.jsonl"

QUARANTINE_APPROVE = "quarantine-approve"
QUARANTINE_REJECT = "quarantine-reject"
PROPOSAL_APPROVE = "proposal-approve"
PROPOSAL_REJECT = "proposal-reject"
PROPOSAL_REVERT = "proposal-revert"
DECISION_UNDO = "decision-undo"  # cancels the latest decision in force on the same target (see ``in_force``)
ACTIONS = (QUARANTINE_APPROVE, QUARANTINE_REJECT, PROPOSAL_APPROVE, PROPOSAL_REJECT, PROPOSAL_REVERT, DECISION_UNDO)
PROPOSAL_ACTIONS = (PROPOSAL_APPROVE, PROPOSAL_REJECT, PROPOSAL_REVERT)
QUARANTINE_ACTIONS = (QUARANTINE_APPROVE, QUARANTINE_REJECT)
UNDOABLE_ACTIONS = (QUARANTINE_APPROVE, QUARANTINE_REJECT, PROPOSAL_APPROVE, PROPOSAL_REJECT)

# Proposal states the ledger decides.
APPROVED = "approved"
REJECTED = "rejected"
REVERTED = "reverted"
_STATE_OF_ACTION = {PROPOSAL_APPROVE: APPROVED, PROPOSAL_REJECT: REJECTED, PROPOSAL_REVERT: REVERTED}

REVIEWER_ENV = "MEMTUI_REVIEWER"


def now_iso() -> str:
    """The current UTC time as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def ledger_path(root: Path) -> Path:
    return locations.state_dir(Path(root)) / LEDGER_FILE


@dataclass(slots=True)
class LedgerEntry:
    """One decision. ``pages`` items are dicts with ``path``, ``before``, ``after`` (and ``moved_to``)."""

    ts: str
    who: str
    action: str
    target: str
    job: str | None = None
    carrier: str | None = None
    pages: list[dict[str, Any]] = field(default_factory=list)
    reason: str | None = None
    commit: str | None = None
    signed: bool = True  # False: a line from before memtui signed its ledger (not in to_json)

    def to_json(self) -> dict[str, Any]:
        return {
            "ts": self.ts,
            "who": self.who,
            "action": self.action,
            "target": self.target,
            "job": self.job,
            "carrier": self.carrier,
            "pages": [dict(p) for p in self.pages],
            "reason": self.reason,
            "commit": self.commit,
        }

    @classmethod
    def from_json(cls, data: object) -> LedgerEntry:
        """Build an entry from a parsed line; raises ``ValueError`` if it is not a decision."""
        if not isinstance(data, dict):
            raise ValueError("not an object")
        for key in ("ts", "who", "action", "target"):
            if not isinstance(data.get(key), str):
                raise ValueError(f"missing {key}")
        pages = data.get("pages") or []
        if not isinstance(pages, list) or not all(isinstance(p, dict) for p in pages):
            raise ValueError("pages is not a list of objects")

        def opt(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) else None

        return cls(
            ts=data["ts"],
            who=data["who"],
            action=data["action"],
            target=data["target"],
            job=opt("job"),
            carrier=opt("carrier"),
            pages=[dict(p) for p in pages],
            reason=opt("reason"),
            commit=opt("commit"),
        )


@dataclass(slots=True)
class LedgerRead:
    entries: list[LedgerEntry]  # the decisions that count
    bad_lines: list[int]  # 1-based numbers of lines that did not parse or do not verify
    problems: list[str] = field(default_factory=list)  # what is wrong with the ledger, for the reviewer


def _link(previous: bytes | None) -> str:
    """The ``prev`` of the line after ``previous`` (its raw bytes; None: there is none)."""
    return hashlib.sha256(previous).hexdigest() if previous else ""


def _last_line(data: bytes) -> bytes | None:
    lines = [line for line in data.split(b"\n") if line.strip()]
    return lines[-1] if lines else None


def append(root: Path, entry: LedgerEntry) -> None:
    """Append one decision to the field's ledger (created on first use), signed and chained."""
    if entry.action not in ACTIONS:
        raise ValueError(f"unknown ledger action {entry.action!r}")

    def line_after(current: bytes) -> bytes:
        body = dict(entry.to_json(), prev=_link(_last_line(current)))
        body["mac"] = signing.sign_json(body)
        line = json.dumps(body, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"
        return line if not current or current.endswith(b"\n") else b"\n" + line  # after a torn line

    with state.StateDir(root) as folder:
        folder.append(LEDGER_FILE, b"", before=line_after)


def check_writable(root: Path) -> None:
    """Refuse now (``UnsafePathError``, ``OSError``) if a decision could not be appended later.

    Called before a change is made, so a symlinked or unwritable ledger stops
    it before any page moves rather than after.
    """
    with state.StateDir(root) as folder:
        os.close(folder.open(LEDGER_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644))


def read(root: Path) -> LedgerRead:
    """Every decision that counts, in file order; bad and unverified lines are skipped and reported."""
    lines = state.read_lines(root, LEDGER_FILE)  # streamed: a huge ledger is never held whole
    if lines is None:
        return LedgerRead([], [])
    result = LedgerRead([], [])
    previous: str | None = ""  # sha256 of the line before (None: it was over the cap, never hashed)
    signed_seen = False
    for read_line in lines:
        number, line = read_line.number, read_line.data
        if line is None:
            result.bad_lines.append(number)
            result.problems.append(
                f"ledger line {number} is ignored: it is {size_text(read_line.size)}, over memtui's cap of "
                f"{size_text(MAX_LINE_BYTES)} for a ledger line (not read)"
            )
            previous = None
            continue
        if not line.strip():
            continue
        expected_prev, previous = previous, read_line.digest
        try:
            data = json.loads(line.decode("utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not an object")
            mac = data.pop("mac", None)
            prev = data.pop("prev", None)
            if mac is None and signed_seen:
                raise _Untrusted("it is not signed (added by hand or by another program)")
            if mac is not None and not signing.verify_json(dict(data, prev=prev), mac):
                raise _Untrusted("it is not signed by memtui for this user (forged, edited, or another account)")
            entry = LedgerEntry.from_json(data)
            entry.signed = mac is not None
        except _Untrusted as exc:
            result.bad_lines.append(number)
            result.problems.append(f"ledger line {number} is ignored: {exc}")
            continue
        except (ValueError, UnicodeDecodeError):
            result.bad_lines.append(number)
            continue
        if mac is not None:
            if expected_prev is not None and prev != expected_prev:
                result.problems.append(f"ledger line {number}: the line before it was changed or removed")
            signed_seen = True
        result.entries.append(entry)
    return result


class _Untrusted(ValueError):
    """A ledger line that parses but was not written by memtui for this user."""


def contains(root: Path, entry: LedgerEntry) -> bool:
    """True when an identical decision is already recorded (used by crash recovery)."""
    wanted = entry.to_json()
    return any(e.to_json() == wanted for e in read(root).entries)


# --------------------------------------------------------------------------- reviewer


def reviewer_name(explicit: str | None = None, root: Path | None = None) -> str:
    """Who is deciding: ``explicit`` (``--reviewer``), else ``$MEMTUI_REVIEWER``,
    else ``git config user.name`` (read in the field, so a repository's own setting
    counts), else the operating-system user, else ``"unknown"``."""
    for candidate in (explicit, os.environ.get(REVIEWER_ENV)):
        if candidate and candidate.strip():
            return candidate.strip()
    name = gitrepo.user_name(Path(root) if root is not None and Path(root).is_dir() else None)
    if name:
        return name
    try:
        return getpass.getuser() or "unknown"
    except Exception:  # getpass raises various errors when no user can be found
        return "unknown"


# --------------------------------------------------------------------------- derived views


def proposal_decisions(entries: list[LedgerEntry]) -> dict[str, LedgerEntry]:
    """The last proposal decision per proposal id (approve, reject or revert)."""
    last: dict[str, LedgerEntry] = {}
    for entry in in_force(entries):
        if entry.action in PROPOSAL_ACTIONS:
            last[entry.target] = entry
    return last


def proposal_state(entry: LedgerEntry | None) -> str | None:
    """``approved`` / ``rejected`` / ``reverted`` for a decision, ``None`` when pending."""
    return None if entry is None else _STATE_OF_ACTION.get(entry.action)


def last_approval(entries: list[LedgerEntry], proposal_id: str) -> LedgerEntry | None:
    """The most recent ``proposal-approve`` entry for an id (what a revert undoes)."""
    found = None
    for entry in entries:
        if entry.action == PROPOSAL_APPROVE and entry.target == proposal_id:
            found = entry
    return found


@dataclass(slots=True)
class JobStats:
    job: str
    approved: int = 0
    rejected: int = 0
    reverted: int = 0

    @property
    def regret_rate(self) -> float | None:
        """Approved proposals later reverted / approved proposals; ``None`` before any approval."""
        return self.reverted / self.approved if self.approved else None

    def to_json(self) -> dict[str, Any]:
        return {
            "job": self.job,
            "approved": self.approved,
            "rejected": self.rejected,
            "reverted": self.reverted,
            "regret_rate": self.regret_rate,
        }


def regret_stats(entries: list[LedgerEntry]) -> tuple[dict[str, JobStats], JobStats]:
    """Per job kind and in total: approvals, rejections, reverts and the regret rate.

    A revert counts only when it follows an approval of the same proposal.
    """
    per_job: dict[str, JobStats] = {}
    total = JobStats("all")
    approved_ids: set[str] = set()
    for entry in in_force(entries):
        if entry.action not in PROPOSAL_ACTIONS:
            continue
        job = entry.job or "unknown"
        stats = per_job.setdefault(job, JobStats(job))
        if entry.action == PROPOSAL_APPROVE:
            approved_ids.add(entry.target)
            stats.approved += 1
            total.approved += 1
        elif entry.action == PROPOSAL_REJECT:
            stats.rejected += 1
            total.rejected += 1
        elif entry.action == PROPOSAL_REVERT and entry.target in approved_ids:
            approved_ids.discard(entry.target)
            stats.reverted += 1
            total.reverted += 1
    return dict(sorted(per_job.items())), total


def page_decisions(entries: list[LedgerEntry], path: str) -> list[LedgerEntry]:
    """Every decision that touched ``path`` (as target, original path or move target)."""
    out = []
    for entry in entries:
        if entry.target == path or any(p.get("path") == path or p.get("moved_to") == path for p in entry.pages):
            out.append(entry)
    return out


# --------------------------------------------------------------------------- undo


def _replay(entries: list[LedgerEntry]) -> tuple[list[LedgerEntry], dict[int, LedgerEntry]]:
    """(decisions in force, in file order; undone decision's index -> the undo that cancelled it)."""
    stacks: dict[str, list[int]] = {}
    undone: dict[int, LedgerEntry] = {}
    for index, entry in enumerate(entries):
        if entry.action == DECISION_UNDO:
            stack = stacks.get(entry.target)
            if stack:
                undone[stack.pop()] = entry
            continue
        stacks.setdefault(entry.target, []).append(index)
    kept = [entry for index, entry in enumerate(entries) if index not in undone and entry.action != DECISION_UNDO]
    return kept, undone


def in_force(entries: list[LedgerEntry]) -> list[LedgerEntry]:
    """The decisions an undo has not cancelled, in file order (undo lines themselves left out).

    Each ``decision-undo`` cancels the latest decision still in force on the same target.
    """
    if not any(entry.action == DECISION_UNDO for entry in entries):
        return list(entries)
    return _replay(entries)[0]


def page_approvals(entries: list[LedgerEntry]) -> dict[str, tuple[str, str]]:
    """Review evidence kept outside the pages: path -> (sha256 of the bytes a human
    approved, who), from the approvals still in force (a quarantined note, a dream
    proposal), the latest per page. A page counts as reviewed only while it still has
    exactly those bytes (``Field.approved``)."""
    out: dict[str, tuple[str, str]] = {}
    for entry in in_force(entries):
        if entry.action not in (QUARANTINE_APPROVE, PROPOSAL_APPROVE) or not entry.signed:
            continue  # an unsigned line (any program can write one) is no evidence
        for page in entry.pages:
            path = page.get("moved_to") or page.get("path")
            after = page.get("after")
            if isinstance(path, str) and isinstance(after, str) and after:
                out[path] = (after, entry.who)
    return out


def approvals(root: Path) -> dict[str, tuple[str, str]]:
    """``page_approvals`` of the field's ledger (lines memtui did not write are ignored)."""
    try:
        return page_approvals(read(root).entries)
    except (OSError, MemtuiError):
        return {}


def with_approvals(field: Field) -> Field:
    """``field`` with the review evidence of the ledger (``Field.approvals``) filled in."""
    field.approvals = approvals(field.root)
    return field


@dataclass(slots=True)
class DecisionRecord:
    """One decision as a reviewer sees it: who, when, why, and whether it was undone."""

    entry: LedgerEntry
    undone_by: LedgerEntry | None

    def to_json(self) -> dict[str, Any]:
        return {"decision": self.entry.to_json(), "undone_by": self.undone_by.to_json() if self.undone_by else None}


def decision_records(
    entries: list[LedgerEntry], actions: tuple[str, ...] = UNDOABLE_ACTIONS + (PROPOSAL_REVERT,)
) -> list[DecisionRecord]:
    """Every decision of ``actions``, newest first, each with the undo that cancelled it (if any)."""
    _kept, undone = _replay(entries)
    records = [
        DecisionRecord(entry, undone.get(index)) for index, entry in enumerate(entries) if entry.action in actions
    ]
    records.reverse()
    return records


def undo_candidates(entries: list[LedgerEntry], actions: tuple[str, ...] = UNDOABLE_ACTIONS) -> list[LedgerEntry]:
    """Decisions an undo may cancel now, newest first: in force, of ``actions``, and the
    latest decision in force on their target (an approval a revert followed is not one)."""
    kept = in_force(entries)
    latest: dict[str, LedgerEntry] = {}
    for entry in kept:
        latest[entry.target] = entry
    return [entry for entry in reversed(kept) if entry.action in actions and latest.get(entry.target) is entry]
