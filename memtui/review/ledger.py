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
the line with the user's key, ``store.signing``). A decision counts only if
memtui can verify it: a line without a ``mac`` (an older memtui's, or one any
program appended or prepended) and a line whose ``mac`` does not verify
(forged, edited, or signed with a key this machine does not have: another
machine, a lost ``~/.config/memtui``) decide nothing. They are never silently
dropped: each is in ``LedgerRead.unverified`` and ``problems`` says so, and a
reviewer who knows them to be real adopts them (``adopt``): one signed
``ledger-adopt`` line names the sha256 of each adopted line, which then counts
in its place. A ``prev`` that does not match means a line before it was
changed or removed: reported, the line itself still counts.

Truncating or emptying the file would erase decisions silently, so its head is
anchored outside the field (``store.signing.write_record``, kind ``ledger-head``,
beside the key): the number of non-empty lines and the sha256 of the last one
memtui wrote, signed. A ledger shorter than that, or whose line at that count no
longer hashes to it, yields the problem "the ledger lost N decisions"; the loss
is carried into the next anchor so a later decision does not hide it, until
the reviewer accepts it (``accept_loss``).

No decision is recorded with a key that does not persist (it would vanish as
unverifiable in the next run): ``append`` and ``check_writable`` refuse. The
file is reached without following links (``store.state``) and appended under a
lock. The line an apply writes ends that apply's journal (``apply_journal``).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import getpass
import hashlib
import json
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtui.errors import MemtuiError, UnsafePathError
from memtui.store import gitrepo, locations, signing, state
from memtui.store.files import MAX_LINE_BYTES, sha256_bytes, size_text, tail
from memtui.textsafety import plural

try:  # POSIX advisory locks; elsewhere the lock is a no-op.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from memtui.field.field import Field

LEDGER_FILE = "ledger.jsonl"

QUARANTINE_APPROVE = "quarantine-approve"
QUARANTINE_REJECT = "quarantine-reject"
PROPOSAL_APPROVE = "proposal-approve"
PROPOSAL_REJECT = "proposal-reject"
PROPOSAL_REVERT = "proposal-revert"
DECISION_UNDO = "decision-undo"  # cancels the latest decision in force on the same target (see ``in_force``)
LEDGER_ADOPT = "ledger-adopt"  # a reviewer vouches for unverified lines (``adopt``); never an entry itself
ACTIONS = (
    QUARANTINE_APPROVE,
    QUARANTINE_REJECT,
    PROPOSAL_APPROVE,
    PROPOSAL_REJECT,
    PROPOSAL_REVERT,
    DECISION_UNDO,
    LEDGER_ADOPT,
)
PROPOSAL_ACTIONS = (PROPOSAL_APPROVE, PROPOSAL_REJECT, PROPOSAL_REVERT)
QUARANTINE_ACTIONS = (QUARANTINE_APPROVE, QUARANTINE_REJECT)
UNDOABLE_ACTIONS = (QUARANTINE_APPROVE, QUARANTINE_REJECT, PROPOSAL_APPROVE, PROPOSAL_REJECT)

# Proposal states the ledger decides.
APPROVED = "approved"
REJECTED = "rejected"
REVERTED = "reverted"
_STATE_OF_ACTION = {PROPOSAL_APPROVE: APPROVED, PROPOSAL_REJECT: REJECTED, PROPOSAL_REVERT: REVERTED}

REVIEWER_ENV = "MEMTUI_REVIEWER"
HEAD_RECORD = "ledger-head"  # the anchor's kind (``signing.record_path``)
_SHA_RE = re.compile(r"[0-9a-f]{64}")
MAX_LINE_PROBLEMS = 20  # per-line problems listed; the rest are counted in one line
MAX_UNVERIFIED_KEPT = 10_000  # unverified lines kept for adoption in one read (the rest are counted)
_ADOPT_HINT = "memtui quarantine decided FIELD --adopt LINE|all"


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
    adopts: list[str] = field(default_factory=list)  # ledger-adopt only: sha256 of each adopted line
    signed: bool = True  # False: not verified by this machine's key (not in to_json)
    offset: int = field(default=-1, compare=False)  # where its line starts in the file, as read (not in to_json)

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
        } | ({"adopts": list(self.adopts)} if self.adopts else {})

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

        adopts = data.get("adopts") or []
        if not isinstance(adopts, list) or not all(isinstance(a, str) and _SHA_RE.fullmatch(a) for a in adopts):
            raise ValueError("adopts is not a list of sha256 hashes")

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
            adopts=list(adopts),
        )


@dataclass(slots=True)
class Unverified:
    """A line that reads as a decision but that memtui cannot verify: it decides nothing."""

    number: int  # 1-based line number
    digest: str  # sha256 of the line's bytes (what ``adopt`` signs)
    entry: LedgerEntry
    why: str  # UNSIGNED | FOREIGN


UNSIGNED = "unsigned"  # no mac: an older memtui's line, or any program's
FOREIGN = "foreign"  # a mac this machine's key does not verify: another key, or forged


@dataclass(slots=True)
class LedgerRead:
    entries: list[LedgerEntry]  # the decisions that count
    bad_lines: list[int]  # 1-based numbers of lines that did not parse or do not verify
    problems: list[str] = field(default_factory=list)  # what is wrong with the ledger, for the reviewer
    unverified: list[Unverified] = field(default_factory=list)  # decisions that do not count (adoptable)
    lost: int = 0  # decisions the ledger lost since memtui anchored its head (see ``accept_loss``)


def _link(previous: bytes | None) -> str:
    """The ``prev`` of the line after ``previous`` (its raw bytes; None: there is none)."""
    return hashlib.sha256(previous).hexdigest() if previous else ""


def _last_line(data: bytes) -> bytes | None:
    lines = [line for line in data.split(b"\n") if line.strip()]
    return lines[-1] if lines else None


def _require_persistent_key() -> None:
    """Refuse to record a decision signed with a key for this process only.

    It would be reported done now, then ignored as unverifiable in the next
    run: the decision would vanish.
    """
    status = signing.key_status()
    if not status.persistent:
        raise MemtuiError(
            f"memtui cannot record a decision: its signing key does not persist ({status.problem})",
            f"memtui signs every decision with the key at {status.path}; a key for this run only would make "
            "the decision count as unverified from the next run on. Fix that file or its folder, then decide again",
        )


# --------------------------------------------------------------------------- the head anchor


@dataclass(frozen=True, slots=True)
class Head:
    """The ledger as memtui last wrote it: non-empty lines, the last one's sha256, decisions lost before."""

    count: int
    last: str
    lost: int = 0


def _load_head(root: Path) -> tuple[Head | None, str | None]:
    body, problem = signing.read_record(root, HEAD_RECORD)
    if body is None:
        return None, (f"the ledger's anchor cannot be used: {problem}" if problem else None)
    count, last, lost = body.get("count"), body.get("last"), body.get("lost", 0)
    if not (isinstance(count, int) and count >= 0 and isinstance(last, str) and isinstance(lost, int)):
        return None, "the ledger's anchor is damaged"
    return Head(count, last, max(0, lost)), None


def _save_head(root: Path, head: Head) -> None:
    signing.write_record(root, HEAD_RECORD, {"count": head.count, "last": head.last, "lost": head.lost})


def _nonblank(line: Any) -> bool:
    return bool(line.size) and (line.data is None or bool(line.data.strip()))


class _HeadCheck:
    """Follows the non-empty lines of a ledger read against its anchor."""

    def __init__(self, head: Head | None) -> None:
        self.head = head
        self.count = 0
        self.at_count = False  # the line at the anchored count hashes to the anchored hash
        self.found_at = 0  # a later position where the anchored line is (0: nowhere)

    def see(self, digest: str | None) -> None:
        self.count += 1
        if self.head is None or digest != self.head.last:
            return
        if self.count == self.head.count:
            self.at_count = True
        elif not self.found_at or self.count < self.head.count:
            self.found_at = self.count

    def lost_now(self) -> int:
        """Decisions missing since the anchor was written (lines added after it are not a loss)."""
        head = self.head
        if head is None or head.count == 0 or self.at_count:
            return 0
        if self.found_at:
            return 0  # lines before the anchored one were removed: the chain says so, for good (``prev``)
        return max(1, head.count - self.count)  # the anchored line itself is gone: truncated or rewritten

    def lost(self) -> int:
        return (self.head.lost if self.head else 0) + self.lost_now()


def _scan(root: Path, head: Head | None) -> _HeadCheck:
    check = _HeadCheck(head)
    lines = state.read_lines(root, LEDGER_FILE)
    if lines is not None:
        with lines:
            for line in lines:
                if _nonblank(line):
                    check.see(line.digest)
    return check


def _lost_problem(lost: int) -> str:
    return (
        f"the ledger lost {plural(lost, 'decision')} since memtui last wrote it (truncated, emptied or "
        "rewritten by someone else): restore .memtui/ledger.jsonl from a backup, or accept the loss"
    )


def append(root: Path, entry: LedgerEntry) -> None:
    """Append one decision to the field's ledger (created on first use), signed and chained; anchor the head."""
    if entry.action not in ACTIONS:
        raise ValueError(f"unknown ledger action {entry.action!r}")
    _require_persistent_key()
    with state.StateDir(root) as folder:
        fd = folder.open(LEDGER_FILE, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise UnsafePathError(f"{ledger_path(root)} is not a regular file", "move it away")
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)  # appenders, and the anchor, one at a time
            current = tail(fd)
            last = _last_line(current)
            body = dict(entry.to_json(), prev=_link(last))
            body["mac"] = signing.sign_json(body)
            json_line = json.dumps(body, ensure_ascii=True, separators=(",", ":")).encode("ascii")
            head, _ = _load_head(root)
            if head is not None and last is not None and sha256_bytes(last) == head.last and current.endswith(b"\n"):
                count, lost = head.count, head.lost  # as memtui left it: no need to read the whole file
            else:
                check = _scan(root, head)
                count, lost = check.count, check.lost()  # a loss found now is carried, never forgotten
            data = json_line + b"\n"
            os.write(fd, data if not current or current.endswith(b"\n") else b"\n" + data)  # after a torn line
            os.fsync(fd)
            with contextlib.suppress(OSError):  # recorded; an older anchor still holds (it only misses this line)
                _save_head(root, Head(count + 1, sha256_bytes(json_line), lost))
        finally:
            os.close(fd)  # closing releases the lock


def accept_loss(root: Path) -> int:
    """The reviewer accepts that decisions were lost: anchor the ledger as it is now; return how many."""
    _require_persistent_key()
    with state.StateDir(root) as folder:
        fd = folder.open(LEDGER_FILE, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            head, _ = _load_head(root)
            check = _scan(root, head)
            last = _last_line(tail(fd))
            _save_head(root, Head(check.count, sha256_bytes(last) if last is not None else "", 0))
            return check.lost()
        finally:
            os.close(fd)


def size(root: Path) -> int:
    """The ledger's length in bytes now (0: none yet); a decision appended later starts at or after it."""
    with state.opened(root, create=False) as folder:
        if folder is None:
            return 0
        try:
            fd = folder.open(LEDGER_FILE, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except FileNotFoundError:
            return 0
        try:
            return os.fstat(fd).st_size
        finally:
            os.close(fd)


def check_writable(root: Path) -> None:
    """Refuse now (``MemtuiError``, ``UnsafePathError``, ``OSError``) if a decision could not be appended later.

    Called before a change is made, so a symlinked or unwritable ledger, or a
    signing key that does not persist, stops it before any page moves.
    """
    _require_persistent_key()
    with state.StateDir(root) as folder:
        os.close(folder.open(LEDGER_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644))


def read(root: Path) -> LedgerRead:
    """Every decision that counts, in file order; bad and unverified lines are skipped and reported."""
    head, head_problem = _load_head(root)
    check = _HeadCheck(head)
    result = LedgerRead([], [])
    if head_problem:
        result.problems.append(head_problem)
    lines = state.read_lines(root, LEDGER_FILE)  # streamed: a huge ledger is never held whole
    ordered: list[tuple[LedgerEntry, str | None]] = []  # (entry, digest of an unverified line or None)
    adopted: set[str] = set()
    unverified: list[tuple[int, str | None, str]] = []  # (line number, digest, why), the first MAX_UNVERIFIED_KEPT
    counts = {UNSIGNED: 0, FOREIGN: 0}  # every unverified line, kept or not
    previous: str | None = ""  # sha256 of the line before (None: it was over the cap, never hashed)
    offset, start = 0, 0
    for read_line in lines if lines is not None else ():
        number, line = read_line.number, read_line.data
        start, offset = offset, offset + read_line.size + 1
        if _nonblank(read_line):
            check.see(read_line.digest)
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
            entry = LedgerEntry.from_json(data)
            entry.offset = start
        except (ValueError, UnicodeDecodeError):
            result.bad_lines.append(number)
            continue
        why: str | None = None
        if mac is None:
            why = UNSIGNED
        elif not signing.verify_json(dict(data, prev=prev), mac):
            why = FOREIGN
        if why is not None:
            entry.signed = False
            counts[why] += 1
            if len(unverified) < MAX_UNVERIFIED_KEPT:  # bounded: an agent may append millions of them
                unverified.append((number, read_line.digest, why))
                if read_line.digest is not None:
                    result.unverified.append(Unverified(number, read_line.digest, entry, why))
                    ordered.append((entry, read_line.digest))
            continue
        if expected_prev is not None and prev != expected_prev:
            result.problems.append(f"ledger line {number}: the line before it was changed or removed")
        if entry.action == LEDGER_ADOPT:
            adopted.update(entry.adopts)
            continue
        ordered.append((entry, None))
    for entry, digest in ordered:
        if digest is None or digest in adopted:
            entry.signed = True
            result.entries.append(entry)
    result.unverified = [u for u in result.unverified if u.digest not in adopted]
    for _number, digest, why in unverified:
        if digest is not None and digest in adopted:
            counts[why] -= 1
    _report_unverified(result, [u for u in unverified if u[1] is None or u[1] not in adopted], counts)
    result.lost = check.lost()
    if result.lost:
        result.problems.insert(0, _lost_problem(result.lost))
    return result


def _report_unverified(result: LedgerRead, lines: list[tuple[int, str | None, str]], counts: dict[str, int]) -> None:
    """Each unverified line (the first ``MAX_LINE_PROBLEMS``), then one line per kind, so that a
    ledger of a thousand of them stays readable and none is silently dropped."""
    for number, _digest, why in lines[:MAX_LINE_PROBLEMS]:
        result.bad_lines.append(number)
        result.problems.append(
            f"ledger line {number} is ignored: "
            + (
                "it is not signed (added by hand, by another program, or by a memtui that did not sign): "
                "it decides nothing unless a reviewer adopts it"
                if why == UNSIGNED
                else "it is not signed by memtui for this user (forged, edited, another account, "
                "or signed with a key this machine does not have)"
            )
        )
    result.bad_lines.extend(number for number, _digest, _why in lines[MAX_LINE_PROBLEMS:])
    result.bad_lines.sort()
    foreign, unsigned = counts[FOREIGN], counts[UNSIGNED]
    if foreign + unsigned > MAX_LINE_PROBLEMS:
        result.problems.append(
            f"{foreign + unsigned - min(len(lines), MAX_LINE_PROBLEMS)} more ledger lines are ignored (not listed)"
        )
    if foreign:
        status = signing.key_status()
        new_key = (
            f"; memtui made a new signing key at {status.path} in this run (a new machine, or a lost ~/.config/memtui?)"
            if status.created
            else ""
        )
        result.problems.append(
            f"{plural(foreign, 'decision')} {'is' if foreign == 1 else 'are'} signed with a key this machine "
            f"does not have: {'it does' if foreign == 1 else 'they do'} not count{new_key}. If they are yours "
            f"(another machine, an older key), a reviewer can adopt them ({_ADOPT_HINT})"
        )
    if unsigned:
        result.problems.append(
            f"{plural(unsigned, 'decision')} {'is' if unsigned == 1 else 'are'} not signed: "
            f"{'it decides' if unsigned == 1 else 'they decide'} nothing until a reviewer adopts them ({_ADOPT_HINT})"
        )


def adopt(
    root: Path, numbers: Sequence[int] | None = None, *, reviewer: str | None = None, reason: str | None = None
) -> list[Unverified]:
    """A reviewer vouches for unverified lines (all of them, or the numbered ones): one signed
    ``ledger-adopt`` line names their sha256, and each then counts in its place. Returns them."""
    found = read(root).unverified
    wanted = [u for u in found if numbers is None or u.number in set(numbers)]
    missing = sorted(set(numbers or ()) - {u.number for u in wanted})
    if missing:
        raise MemtuiError(
            f"ledger line {missing[0]} is not an unverified decision", "see them with: memtui quarantine decided FIELD"
        )
    if not wanted:
        raise MemtuiError("no unverified ledger line to adopt", "every decision in the ledger verifies")
    append(
        root,
        LedgerEntry(
            ts=now_iso(),
            who=reviewer_name(reviewer, root),
            action=LEDGER_ADOPT,
            target=LEDGER_FILE,
            reason=reason.strip() if reason and reason.strip() else None,
            adopts=sorted({u.digest for u in wanted}),
        ),
    )
    return wanted


def contains(root: Path, entry: LedgerEntry) -> bool:
    """True when an identical decision is already recorded (verified lines only)."""
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
