"""The quarantine queue: pages waiting for a human to review them.

Two lists (``trust``): *quarantined* pages (``reviewed`` not true and tainted:
``taint: external``, ``origin: external`` or living under ``quarantine/``),
grouped by the session or source that tainted them, oldest first; and
*unreviewed* pages (``reviewed: false``, not tainted). Pages under ``sessions/``
are raw evidence (a session that read the web is tainted by nature) and are
never in the queue: they are never edited.

- ``quarantine_queue(field)`` -> ``QuarantineQueue`` (groups + unreviewed);
- ``inspect_page(root, path)`` -> ``PageReview``: the raw text with nothing
  hidden (control, bidi and zero-width characters as placeholders, HTML
  comments and long lines flagged), the frontmatter, the sources, the lines that
  look like instructions aimed at an agent (``injection``), where approving
  would move the page, and the content hash the decision is bound to;
- ``approve_pages(root, [(path, sha256), ...])`` / ``reject_pages(...)``: each
  page is checked against the hash the reviewer saw before anything is changed
  (one changed page refuses the whole batch: look again).

Approve edits only ``reviewed: true``, ``reviewed_by`` and ``reviewed_at``
(every other byte stays, comments and unknown keys included; ``move_to`` and
``taint`` are kept as provenance, so the approval is the smallest possible edit)
and moves the page out of ``quarantine/`` to the folder its ``move_to:`` key or
the reviewer names; without either it stays where it is. It never adds the page
to ``MEMORY.md`` unless the reviewer asks (``add_to_memory``: one pointer line,
and only when the checks on the result find no pointer at an untrusted page).
Each page's approval (the move, the review keys, the pointer, the ledger line)
is one ``apply_journal`` change: all of it or none, across a crash, a full disk
or an agent editing the page meanwhile. A page whose name holds a control
character is never approved (its name would be written into the ledger and
``MEMORY.md``); it can be rejected.
Reject moves the page to ``.memtui/archive/rejected/<path>`` and records why, as
one ``apply_journal`` change too (a kill between the move and the ledger line is recovered).
Every decision is one ledger line (``quarantine-approve`` / ``quarantine-reject``).
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from memtui.dialects.detect import instruction_path
from memtui.errors import (
    MemtuiError,
    ReadOnlyFieldError,
    StaleWriteError,
    UnsafePathError,
)
from memtui.field import frontmatter as fm_mod
from memtui.field import trust
from memtui.field.page import MAX_PARSE_BYTES, parse_bytes
from memtui.review import apply_journal, injection, ledger
from memtui.review.injection import Flag
from memtui.store import locations, safe_write
from memtui.store.files import FileTooLarge, read_bytes, sha256_bytes
from memtui.textsafety import find_hazards, visible

if TYPE_CHECKING:
    from memtui.field.field import Field
    from memtui.field.page import PageInfo

REVIEW_KEYS = ("reviewed", "reviewed_by", "reviewed_at")
MOVE_KEY = "move_to"
SESSIONS_PREFIX = locations.SESSIONS_DIR + "/"
MIN_HASH_PREFIX = 12


# --------------------------------------------------------------------------- the queue


@dataclass(slots=True)
class QueueItem:
    """One page waiting for review (text values are untrusted: render them safely)."""

    path: str
    title: str
    state: str  # quarantined | unreviewed
    source: str  # what tainted it (taint_source); "" for unreviewed pages
    created: str | None
    sha256: str
    size: int
    flags: dict[str, int]  # {"danger": n, "notice": n}
    move_to: str | None
    destination: str | None  # where approving would move it (None: stays); see destination_for
    destination_problem: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "title": self.title,
            "state": self.state,
            "source": self.source,
            "created": self.created,
            "sha256": self.sha256,
            "size": self.size,
            "flags": dict(self.flags),
            "move_to": self.move_to,
            "destination": self.destination,
            "destination_problem": self.destination_problem,
        }


@dataclass(slots=True)
class QueueGroup:
    source: str
    items: list[QueueItem]

    @property
    def oldest(self) -> str | None:
        return min((i.created for i in self.items if i.created), default=None)

    def bound(self) -> list[tuple[str, str]]:
        """``(path, sha256)`` of every page in the group: pass to approve_pages/reject_pages."""
        return [(item.path, item.sha256) for item in self.items]

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "oldest": self.oldest, "pages": [i.to_json() for i in self.items]}


@dataclass(slots=True)
class QuarantineQueue:
    groups: list[QueueGroup]  # quarantined pages by source, oldest group first
    unreviewed: list[QueueItem]  # untainted pages with reviewed: false, oldest first

    @property
    def quarantined(self) -> list[QueueItem]:
        return [item for group in self.groups for item in group.items]

    def group(self, source: str) -> QueueGroup | None:
        return next((g for g in self.groups if g.source == source), None)

    def find(self, path: str) -> QueueItem | None:
        return next((i for i in self.quarantined + self.unreviewed if i.path == path), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "quarantined": [g.to_json() for g in self.groups],
            "unreviewed": [i.to_json() for i in self.unreviewed],
            "counts": {"quarantined": len(self.quarantined), "unreviewed": len(self.unreviewed)},
        }


def _created(info: PageInfo) -> str | None:
    value = info.meta.get("created") or info.meta.get("updated")
    return value if isinstance(value, str) else None


def _move_to(meta: dict[str, Any]) -> str | None:
    value = meta.get(MOVE_KEY)
    return value.strip() if isinstance(value, str) and value.strip() else None


def queue_order(item: QueueItem) -> tuple[str, str]:
    return (item.created or "9999", item.path)


def quarantine_queue(field: Field) -> QuarantineQueue:
    """Every page waiting for review, from an already loaded field."""
    groups: dict[str, list[QueueItem]] = {}
    unreviewed: list[QueueItem] = []
    for info in field:
        if info.path.startswith(SESSIONS_PREFIX):
            continue  # raw session logs are evidence: tainted by nature, never edited
        state = field.trust(info.path)
        if state in (trust.REVIEWED, trust.UNKNOWN):
            continue  # reviewed, or no review record at all (counted apart, not queued)
        item = _item(field.root, info, state)
        if state == trust.QUARANTINED:
            groups.setdefault(item.source, []).append(item)
        else:
            unreviewed.append(item)
    ordered = [QueueGroup(source, sorted(items, key=queue_order)) for source, items in groups.items()]
    ordered.sort(key=lambda g: (g.oldest or "9999", g.source))
    unreviewed.sort(key=queue_order)
    return QuarantineQueue(ordered, unreviewed)


def _item(root: Path, info: PageInfo, state: str) -> QueueItem:
    flags = {injection.DANGER: 0, injection.NOTICE: 0}
    try:
        data = _read(root, info.path)
    except MemtuiError:
        data = None  # too large to read: listed with what the field knows
    if data is not None:
        flags = injection.counts(injection.find_instructions(data.decode("utf-8", "surrogateescape")))
    move_to = _move_to(info.meta)
    destination, problem = _destination_or_problem(root, info.path, move_to, None)
    return QueueItem(
        path=info.path,
        title=info.title,
        state=state,
        source=trust.taint_source(info.meta, info.path) if state == trust.QUARANTINED else "",
        created=_created(info),
        sha256=sha256_bytes(data) if data is not None else info.sha256,
        size=len(data) if data is not None else info.size,
        flags=flags,
        move_to=move_to,
        destination=destination,
        destination_problem=problem,
    )


def _read(root: Path, path: str) -> bytes | None:
    """A page's bytes, None when it is gone or unreadable; ``MemtuiError`` when it is too large.

    The size is checked before reading: a page over the parse limit is never loaded.
    """
    try:
        result = read_bytes(safe_write.resolve_in_field(Path(root), path, naming=False), max_bytes=MAX_PARSE_BYTES)
    except FileTooLarge as exc:
        raise MemtuiError(
            f"{path} is {exc.size:,} bytes, too large to review",
            "memtui reads pages of at most 2 MB; look at it elsewhere",
        ) from None
    except (OSError, MemtuiError):
        return None
    return result[0] if result else None


# --------------------------------------------------------------------------- where approval moves a page


def destination_for(
    root: Path, path: str, move_to: str | None, to: str | None, *, allow_instruction_path: bool = False
) -> str | None:
    """The path an approved page moves to, or None when it stays.

    ``to`` (the reviewer's choice) wins over ``move_to`` (the page's own wish).
    The folder must be inside the field and not ``sessions/``, ``.git``,
    memtui's folders or ``quarantine/``; ``.`` means the top of the field.
    A path an agent loads as instructions (``dialects.detect.instruction_path``: ``CLAUDE.md``,
    ``.claude/**``, ``AGENTS.md`` ...) is never chosen by the page's own ``move_to``
    (the agent wrote it), and the reviewer's ``to`` reaches one only with
    ``allow_instruction_path``, the confirmation naming what the page becomes.
    Raises ``UnsafePathError`` otherwise.
    """
    folder = to if to is not None else move_to
    if folder is None:
        return None
    clean = folder.strip().replace("\\", "/")
    if clean.startswith("/") or (len(clean) > 1 and clean[1] == ":"):
        raise UnsafePathError(f"absolute folder refused: {folder}", "name a folder inside the field")
    clean = clean.rstrip("/")
    name = PurePosixPath(path).name
    target = name if clean in ("", ".") else f"{clean}/{name}"
    target = safe_write.check_relpath(target)
    if target.split("/")[0] == trust.QUARANTINE_FOLDER:
        raise UnsafePathError(f"{folder} is inside quarantine/", "name a folder outside quarantine/")
    safe_write.resolve_in_field(Path(root), target)
    if target == path:
        return None
    becomes = instruction_path(target)
    if becomes is not None and to is None:
        raise UnsafePathError(
            f"the page's own move_to would install it as {visible(becomes)}",
            "a page never chooses an instruction path; approve with --to a memory folder",
        )
    if becomes is not None and not allow_instruction_path:
        raise UnsafePathError(
            f"approving into {visible(to or '')} makes the page {visible(becomes)}",
            "add --allow-instruction-path to confirm, or name a memory folder",
        )
    if os.path.lexists(Path(root).joinpath(*target.split("/"))):
        raise UnsafePathError(f"{target} already exists", "approve with --to another folder")
    return target


def _becomes(destination: str | None) -> str | None:
    """What an agent makes of the destination, shown inert, when it loads it as instructions."""
    found = instruction_path(destination) if destination else None
    return visible(found) if found else None


def _destination_or_problem(
    root: Path, path: str, move_to: str | None, to: str | None, *, allow_instruction_path: bool = False
) -> tuple[str | None, str | None]:
    try:
        return destination_for(root, path, move_to, to, allow_instruction_path=allow_instruction_path), None
    except UnsafePathError as exc:
        return None, exc.message


# --------------------------------------------------------------------------- one page, in full


@dataclass(slots=True)
class PageReview:
    """Everything the reviewer must see before deciding on one page.

    ``raw`` is the whole file as display-safe text (``textsafety.visible``:
    control, bidi and zero-width characters are placeholders; CR shows as
    ``␍``); ``lines`` the same split into lines, numbered from 1.
    """

    path: str
    sha256: str
    state: str
    source: str
    raw: str
    lines: list[str]
    frontmatter: dict[str, Any]
    frontmatter_error: str | None
    sources: list[str]
    flags: list[Flag]
    hazards: list[tuple[int, int, str, str]]  # line, column, kind, placeholder
    move_to: str | None
    destination: str | None
    destination_problem: str | None
    becomes: str | None = None  # what the destination is to an agent (detect.instruction_path), when it loads it

    def flagged_lines(self) -> dict[int, list[Flag]]:
        out: dict[int, list[Flag]] = {}
        for flag in self.flags:
            out.setdefault(flag.line, []).append(flag)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "sha256": self.sha256,
            "state": self.state,
            "source": self.source,
            "frontmatter": self.frontmatter,
            "frontmatter_error": self.frontmatter_error,
            "sources": list(self.sources),
            "move_to": self.move_to,
            "destination": self.destination,
            "destination_problem": self.destination_problem,
            "becomes": self.becomes,
            "flags": [f.to_json() for f in self.flags],
            "hazards": [
                {"line": line, "column": column, "kind": kind, "label": label}
                for line, column, kind, label in self.hazards
            ],
            "raw": self.raw,
        }


def inspect_page(root: Path, path: str, *, to: str | None = None, allow_instruction_path: bool = False) -> PageReview:
    """Read one page for review; ``to`` previews the reviewer's destination folder
    (``allow_instruction_path``: as confirmed to be an instruction path, see ``destination_for``)."""
    root = Path(root)
    data = _read(root, path)
    if data is None:
        raise MemtuiError(f"no page {path}", "list the queue with: memtui quarantine list FIELD")
    parsed = parse_bytes(path, data)
    text = parsed.text
    meta = parsed.meta
    state = trust.trust_state(meta, path)
    sources = meta.get("sources")
    if isinstance(sources, list):
        source_list = [s if isinstance(s, str) else str(s) for s in sources]
    elif sources is None:
        source_list = []
    else:
        source_list = [str(sources)]
    move_to = _move_to(meta)
    destination, problem = _destination_or_problem(
        root, path, move_to, to, allow_instruction_path=allow_instruction_path
    )
    raw = visible(text)
    return PageReview(
        path=path,
        sha256=sha256_bytes(data),
        state=state,
        source=trust.taint_source(meta, path) if state == trust.QUARANTINED else "",
        raw=raw,
        lines=raw.split("\n"),
        frontmatter=dict(meta),
        frontmatter_error=parsed.frontmatter.error,
        sources=source_list,
        flags=injection.find_instructions(text),
        hazards=[(h.line, h.column, h.kind, h.label) for h in find_hazards(text)],
        move_to=move_to,
        destination=destination,
        destination_problem=problem,
        becomes=_becomes(destination),
    )


# --------------------------------------------------------------------------- decisions


@dataclass(slots=True)
class QuarantineDecision:
    path: str  # where the page was
    moved_to: str | None  # where it is now (approve: destination; reject: the archive)
    before: str
    after: str
    entry: ledger.LedgerEntry

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "moved_to": self.moved_to,
            "before": self.before,
            "after": self.after,
            "ledger": self.entry.to_json(),
        }


def parse_bound(arg: str) -> tuple[str, str | None]:
    """Split a CLI page argument ``PATH`` or ``PATH@SHA256`` (a prefix of 12+ hex digits)."""
    path, sep, digest = arg.rpartition("@")
    if sep and len(digest) >= MIN_HASH_PREFIX and all(c in "0123456789abcdef" for c in digest.lower()):
        return path, digest.lower()
    return arg, None


def _verify(root: Path, items: Sequence[tuple[str, str | None]]) -> list[tuple[str, bytes]]:
    """Read every page and check it against the hash the reviewer saw; refuse all if one changed."""
    seen = set()
    out = []
    changed = []
    for path, expected in items:
        if path in seen:
            continue
        seen.add(path)
        safe_write.resolve_in_field(root, path, naming=False)
        data = _read(root, path)
        if data is None:
            raise MemtuiError(f"no page {path}", "it was moved or deleted; list the queue again")
        digest = sha256_bytes(data)
        if expected is not None and not digest.startswith(expected):
            changed.append(path)
        out.append((path, data))
    if changed:
        raise StaleWriteError(
            f"{', '.join(changed)} changed since it was shown",
            "look at it again (memtui quarantine show) and decide on what is there now",
        )
    return out


def _review_state(data: bytes, path: str) -> str:
    return trust.trust_state(parse_bytes(path, data).meta, path)


def approve_pages(
    root: Path,
    items: Sequence[tuple[str, str | None]],
    *,
    reviewer: str | None = None,
    to: str | None = None,
    add_to_memory: bool = False,
    reason: str | None = None,
    now: _dt.datetime | None = None,
    readonly: bool = False,
    field: Field | None = None,
    allow_instruction_path: bool = False,
) -> list[QuarantineDecision]:
    """Approve pages, each bound to the sha256 (or prefix) the reviewer saw.

    ``items`` are ``(path, sha256_or_None)``; None binds to what is on disk now.
    Every page is checked (hash, review state, name, destination, and with
    ``add_to_memory`` the checks on the resulting ``MEMORY.md``) before the
    first one changes. Per page, as one all-or-nothing change: the page moves
    to its destination (``to``, else its ``move_to:``), ``reviewed`` /
    ``reviewed_by`` / ``reviewed_at`` are set, a pointer line ``- <path>`` is
    appended to ``MEMORY.md`` (with ``add_to_memory``) and one ledger line is
    written. ``field`` (as the reviewer's session reads it) is needed with ``add_to_memory``:
    the checks run on it. ``allow_instruction_path``: the reviewer confirmed that ``to`` makes
    the pages instructions an agent loads (``destination_for``).
    """
    root = Path(root)
    if readonly:
        raise ReadOnlyFieldError("this field is read-only (opened from a zip)", "extract it to review pages")
    if add_to_memory and field is None:
        raise TypeError("approve_pages(add_to_memory=True) needs the field the checks run on")
    if not items:
        raise MemtuiError("no page to approve", "name pages, or a session with --session")
    apply_journal.recover_interrupted(root)
    who = ledger.reviewer_name(reviewer, root)
    stamp = (now or _dt.datetime.now(_dt.UTC)).astimezone(_dt.UTC).replace(microsecond=0)
    keys = {"reviewed": True, "reviewed_by": who, "reviewed_at": stamp}
    plans: list[tuple[str, bytes, str | None, bytes]] = []
    targets: set[str] = set()
    for path, data in _verify(root, items):
        if _review_state(data, path) == trust.REVIEWED:
            raise MemtuiError(f"{path} is already reviewed", "only quarantined or unreviewed pages are approved")
        safe_write.check_relpath(path)  # a name memtui would write into the ledger (and MEMORY.md)
        parsed = parse_bytes(path, data)
        if parsed.frontmatter.error:
            raise MemtuiError(
                f"{path}: the frontmatter does not parse, so it cannot be marked reviewed",
                f"fix line {parsed.frontmatter.error_line} first" if parsed.frontmatter.error_line else "fix it first",
            )
        # The edit is made in memory first, so a page that cannot take it stops the batch early.
        new = fm_mod.set_keys(parsed.text, keys).encode("utf-8", "surrogateescape")
        destination = destination_for(
            root, path, _move_to(parsed.meta), to, allow_instruction_path=allow_instruction_path
        )
        if destination is not None:
            if destination in targets:
                raise UnsafePathError(f"two pages would move to {destination}", "approve them separately with --to")
            targets.add(destination)
        plans.append((path, data, destination, new))
    if add_to_memory:
        assert field is not None
        _refuse_untrusted_pointers(root, plans, field)
    decisions = []
    for path, data, destination, new in plans:
        before = sha256_bytes(data)
        writes = [apply_journal.PageWrite(path, before, new, move_to=destination)]
        if add_to_memory:
            writes.append(_memory_pointer_write(root, destination or path))
        entry = ledger.LedgerEntry(
            ts=ledger.now_iso(),
            who=who,
            action=ledger.QUARANTINE_APPROVE,
            target=path,
            reason=reason.strip() if reason and reason.strip() else None,
        )
        result = apply_journal.apply_atomically(root, writes, entry=entry, label=f"approve {path}")
        decisions.append(QuarantineDecision(path, destination, before, sha256_bytes(new), result.entry))
    return decisions


def _memory_with_pointers(data: bytes | None, paths: list[str]) -> bytes:
    """``MEMORY.md`` (None: a new one) with a line ``- <path>`` appended for each path."""
    text = data.decode("utf-8", "surrogateescape") if data is not None else ""
    nl = "\r\n" if "\r\n" in text else "\n"
    if text and not text.endswith("\n"):
        text += nl
    return (text + "".join(f"- {path}{nl}" for path in paths)).encode("utf-8", "surrogateescape")


def _memory_pointer_write(root: Path, path: str) -> apply_journal.PageWrite:
    """The change to ``MEMORY.md`` that adds one pointer to ``path`` (created if missing)."""
    data = _read(root, "MEMORY.md")
    before = sha256_bytes(data) if data is not None else None
    return apply_journal.PageWrite("MEMORY.md", before, _memory_with_pointers(data, [path]))


def _refuse_untrusted_pointers(root: Path, plans: list[tuple[str, bytes, str | None, bytes]], field: Field) -> None:
    """Run the checks on the field as it would be after these approvals with their pointers added.

    ``MEMORY.md`` must never route to a quarantined or unreviewed page; a
    pointer that would (a page whose approval does not take, a name that is
    read as another page) refuses the whole batch before anything is written.
    """
    from memtui.review import proposals
    from memtui.review.proposal_model import (
        CARRIER_STAGING,
        CREATE,
        DELETE,
        MODIFY,
        PageChange,
        Proposal,
    )

    changes = []
    for path, data, destination, new in plans:
        if destination is None:
            changes.append(PageChange(path, MODIFY, sha256_bytes(data), new))
        else:
            changes.append(PageChange(path, DELETE, sha256_bytes(data), None))
            changes.append(PageChange(destination, CREATE, None, new))
    memory = _read(root, "MEMORY.md")
    pointers = [destination or path for path, _, destination, _ in plans]
    changes.append(PageChange("MEMORY.md", MODIFY, None, _memory_with_pointers(memory, pointers)))
    result = Proposal(id="quarantine-approval", carrier=CARRIER_STAGING, location="", changes=changes)
    new_findings, _ = proposals.check_delta(field, result)
    blocking = [f for f in new_findings if f.rule in proposals.BLOCKING_RULES]
    if blocking:
        raise MemtuiError(
            f"adding the page to MEMORY.md would make it point at an untrusted page ({blocking[0].message})",
            "nothing was changed; approve without --add-to-memory and add the pointer by hand",
        )


def reject_pages(
    root: Path,
    items: Sequence[tuple[str, str | None]],
    *,
    reason: str,
    reviewer: str | None = None,
    readonly: bool = False,
) -> list[QuarantineDecision]:
    """Reject pages (bound to the hashes the reviewer saw): each moves to
    ``.memtui/archive/rejected/<path>`` (``name.2.md`` ... when taken), unchanged,
    and the reason goes to the ledger. Nothing is deleted."""
    root = Path(root)
    if readonly:
        raise ReadOnlyFieldError("this field is read-only (opened from a zip)", "extract it to review pages")
    if not reason or not reason.strip():
        raise MemtuiError("a rejection needs a reason", "say why, e.g. --reason 'prompt injection'")
    if not items:
        raise MemtuiError("no page to reject", "name pages, or a session with --session")
    apply_journal.recover_interrupted(root)
    who = ledger.reviewer_name(reviewer, root)
    pages = _verify(root, items)
    for path, data in pages:
        if _review_state(data, path) == trust.REVIEWED:
            raise MemtuiError(f"{path} is already reviewed", "only quarantined or unreviewed pages are rejected")
    ledger.check_writable(root)  # before any page moves
    decisions = []
    for path, data in pages:
        # One journaled change per page (issue 40, #14): a kill between archiving the page and
        # the ledger line is rolled back (or forward) by recovery, never left as an unrecorded move.
        digest = sha256_bytes(data)
        entry = ledger.LedgerEntry(
            ts=ledger.now_iso(), who=who, action=ledger.QUARANTINE_REJECT, target=path, reason=reason.strip()
        )
        write = apply_journal.PageWrite(path, digest, None, archive_bucket="rejected")
        result = apply_journal.apply_atomically(root, [write], entry=entry, label=f"reject {path}")
        archived = result.pages[0].get("moved_to")
        decisions.append(QuarantineDecision(path, archived, digest, digest, result.entry))
    return decisions


def approve_page(root: Path, path: str, expected_hash: str | None, **kwargs: Any) -> QuarantineDecision:
    """One page: see ``approve_pages``."""
    return approve_pages(root, [(path, expected_hash)], **kwargs)[0]


def reject_page(root: Path, path: str, expected_hash: str | None, *, reason: str, **kwargs: Any) -> QuarantineDecision:
    """One page: see ``reject_pages``."""
    return reject_pages(root, [(path, expected_hash)], reason=reason, **kwargs)[0]


__all__ = [
    "QueueItem",
    "QueueGroup",
    "QuarantineQueue",
    "PageReview",
    "QuarantineDecision",
    "quarantine_queue",
    "inspect_page",
    "destination_for",
    "approve_pages",
    "reject_pages",
    "approve_page",
    "reject_page",
    "parse_bound",
    "REVIEW_KEYS",
]
