"""Change several pages as one step: all of them or none, even across a crash.

``apply_atomically(root, writes, ...)`` is how a proposal is approved or
reverted, and how a quarantined page is approved or rejected:

1. every page is checked first (path confined to the field, bytes on disk still
   the ``before`` hash, a destination free); nothing is written if one fails;
2. the bytes each page has now are kept in ``.memtui/blobs/`` and a *journal*
   ``.memtui/journal/<txn>.json`` (path, before hash, after hash of each page,
   plus the ledger line to write), signed with the user's key
   (``store.signing``), is written atomically;
3. the pages are written one by one through ``safe_write`` (hash-guarded);
   a page the change retires is moved to ``.memtui/archive/<bucket>/<path>``,
   never deleted; a page that moves (``PageWrite.move_to``: quarantine approval)
   is renamed to its new place, then written there;
4. in a git field the touched pages are committed (one commit whose message
   carries a ``Memtui-Txn: <txn>`` trailer);
5. the journal is marked ``committed``, the ledger line is appended, the journal
   is removed.

If the process dies between 2 and 5, a journal is left behind.
``recover_interrupted(root)`` (the CLI calls it before every review command,
the TUI at start) finds it and either rolls back (phase ``applying`` and no
commit was made: every page returns to its before-bytes and its place, pages the
change created move to ``.memtui/archive/rolled-back/``) or rolls forward (the
journal says ``committed`` or HEAD carries the txn trailer: the ledger line is
written). Either way the field ends in the old state or the new one, never in
between.

A journal is acted on only when it verifies: signed by this user's key, and
well formed (paths memtui may write, sha256 hashes, a ledger line that is a
decision about exactly those pages). Anything else in ``.memtui/journal/`` (a
forged approval, a damaged file) is reported as needing attention and left
where it is; it is never replayed into the ledger and never rolls pages back.

A journal is also good for one use only. A signed copy taken while a change
was applying, put back after it, would otherwise roll an approval (or an
undo) back while the ledger still records it. So the signed body names the
field (``field``: ``signing.field_id``) and when it was made (``created``), the
decision it records ends it once it is in the ledger (the same line, whatever
commit it names), and memtui keeps the journals it has open for each field outside the
field (``signing.write_record``, kind ``journals``): a journal is registered
before it is written and struck off once it is finished or rolled back.
Recovery acts only on a registered journal of this field whose decision is not
in the ledger yet (or, marked committed, whose own line is: the crash came
between the ledger line and removing the journal); any other is reported as a
replay and left alone.

A lock file (``.memtui/journal/.lock``, ``flock``) keeps two memtui processes
from applying at once and keeps recovery away from a change still in progress.
Every file here is reached without following links (``store.state``).

For tests only: ``MEMTUI_TEST_CRASH=after-page-N`` in the environment makes the
process exit abruptly (``os._exit``) after writing N pages,
``after-move-N`` after moving the N-th page before writing it, and
``after-commit`` right after the git commit, before the journal is marked
committed.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from memtui.errors import MemtuiError, StaleWriteError, UnsafePathError
from memtui.review import ledger
from memtui.store import gitrepo, locations, safe_write, signing, state
from memtui.store.files import MAX_JOURNAL_BYTES, read_file, sha256_bytes
from memtui.textsafety import one_line

JOURNAL_DIR = "journal"
ARCHIVE_DIR = "archive"
LOCK_FILE = ".lock"
CRASH_ENV = "MEMTUI_TEST_CRASH"
CRASH_EXIT_CODE = 86
JOURNAL_VERSION = 2  # 2: field and created in the body, registered while open (one use)
OPEN_RECORD = "journals"  # the kind of the record of open journals (``signing.record_path``)
TXN_TRAILER = "Memtui-Txn"
PHASES = ("applying", "committed")
_TXN_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{6}Z-[0-9a-f]{8}")
_COMMIT_RE = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")

try:  # POSIX advisory locks; elsewhere the lock is a no-op.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


class BusyError(MemtuiError):
    """Another memtui process is applying a change to this field right now."""


@dataclass(slots=True)
class PageWrite:
    """One page of a multi-page change.

    ``before`` is the sha256 the page must have on disk now (None: it must not
    exist); ``data`` the new bytes, or None to retire the page into
    ``.memtui/archive/<archive_bucket>/``. With ``move_to`` the page first moves
    there (which must be free) and ``data`` is written at its new place.
    """

    path: str
    before: str | None
    data: bytes | None
    archive_bucket: str = "retired"
    move_to: str | None = None

    @property
    def after(self) -> str | None:
        return sha256_bytes(self.data) if self.data is not None else None


@dataclass(slots=True)
class ApplyResult:
    txn: str
    pages: list[dict[str, Any]]  # ledger form: path, before, after (+ moved_to for retired and moved pages)
    commit: str | None
    entry: ledger.LedgerEntry


@dataclass(slots=True)
class Recovery:
    """What ``recover_interrupted`` did with one journal left behind."""

    txn: str
    label: str
    outcome: str  # "rolled-back" | "completed" | "needs-attention"
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"txn": self.txn, "label": self.label, "outcome": self.outcome, "problems": list(self.problems)}


# --------------------------------------------------------------------------- paths


def journal_dir(root: Path) -> Path:
    return locations.state_dir(Path(root)) / JOURNAL_DIR


def _archive_name(relpath: str) -> str:
    """``relpath`` as a name memtui may create: control characters become visible placeholders."""
    return "/".join(one_line(part) for part in relpath.split("/"))


def archive_relpath(root: Path, bucket: str, relpath: str) -> str:
    """A free path ``.memtui/archive/<bucket>/<relpath>``; ``name.2.md``, ``name.3.md`` ... if taken.

    A page whose name holds control characters is archived under a name
    showing them as placeholders (the ledger keeps the original path).
    """
    base = PurePosixPath(locations.STATE_DIR_NAME, ARCHIVE_DIR, bucket, _archive_name(relpath))
    candidate = base
    number = 1
    while safe_write.state_file_hash(root, candidate.as_posix()) is not None or _state_entry_exists(root, candidate):
        number += 1
        candidate = base.with_name(f"{base.stem}.{number}{base.suffix}")
    return candidate.as_posix()


def _state_entry_exists(root: Path, relpath: PurePosixPath) -> bool:
    parts = relpath.parts[1:]
    try:
        with state.opened(root, *parts[:-1], create=False) as folder:
            return folder is not None and folder.exists(parts[-1])
    except (UnsafePathError, NotADirectoryError):
        return True  # something that is not a plain folder is in the way: do not use this name


@contextlib.contextmanager
def field_lock(root: Path, *, wait: bool = False) -> Iterator[None]:
    """Hold the field's apply lock; raise ``BusyError`` if another process has it."""
    try:
        with state.StateDir(root, JOURNAL_DIR) as folder:
            fd = folder.open(LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise MemtuiError(
            f"cannot use {journal_dir(root)}: {exc.strerror or exc}",
            "memtui needs to write in the field's .memtui/ folder",
        ) from None
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                raise BusyError(
                    "another memtui is changing this field right now", "try again when it has finished"
                ) from None
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _write_journal(root: Path, name: str, data: dict[str, Any]) -> None:
    """Write a journal signed with the user's key (``mac`` over every other key)."""
    body = {key: value for key, value in data.items() if key != "mac"}
    signed = dict(body, mac=signing.sign_json(body))
    state.write(root, JOURNAL_DIR, name, data=json.dumps(signed, indent=1, sort_keys=True).encode("utf-8"))


def _open_txns(root: Path) -> tuple[list[str], str | None]:
    """The journals memtui has open for this field (registered, not yet finished), and a problem."""
    body, problem = signing.read_record(root, OPEN_RECORD)
    found = body.get("open") if body is not None else []
    if not isinstance(found, list) or not all(isinstance(t, str) for t in found):
        return [], "the record of open journals is damaged"
    return list(found), problem


def _register(root: Path, txn: str) -> None:
    """Record, outside the field, that journal ``txn`` is open (called under the field lock)."""
    found, _ = _open_txns(root)
    try:
        signing.write_record(root, OPEN_RECORD, {"open": sorted(set(found) | {txn})})
    except OSError as exc:
        raise MemtuiError(
            f"cannot record the change about to be made: {exc.strerror or exc}",
            f"memtui keeps its record of open changes in {signing.record_path(root, OPEN_RECORD)}: "
            "make that folder writable; nothing was changed",
        ) from None


def _strike_off(root: Path, txn: str) -> None:
    """Journal ``txn`` is finished or rolled back: no copy of it may be acted on again."""
    found, _ = _open_txns(root)
    if txn in found:
        signing.write_record(root, OPEN_RECORD, {"open": [t for t in found if t != txn]})


def _end(root: Path, name: str, txn: str) -> None:
    """Remove a journal that has done its work, then strike it off (a crash between leaves a
    registered txn without a journal: harmless)."""
    state.unlink(root, JOURNAL_DIR, name)
    _strike_off(root, txn)


def _maybe_crash(point: str) -> None:
    """Test hook: die without cleanup at ``point`` when ``$MEMTUI_TEST_CRASH`` names it."""
    if os.environ.get(CRASH_ENV) == point:
        os._exit(CRASH_EXIT_CODE)


def _disk_hash(root: Path, relpath: str) -> str | None:
    if relpath.split("/")[0] == locations.STATE_DIR_NAME:
        return safe_write.state_file_hash(root, relpath)
    return safe_write.current_hash(safe_write.resolve_in_field(root, relpath, naming=False))


def _read_disk(root: Path, relpath: str) -> bytes | None:
    try:
        return read_file(safe_write.resolve_in_field(root, relpath, naming=False), under=root)  # bounded, no FIFO
    except FileNotFoundError:
        return None


# --------------------------------------------------------------------------- apply


def _check(root: Path, writes: list[PageWrite]) -> dict[str, str]:
    """Step 1: every page as expected and every destination free; the archive path of retired pages."""
    archived: dict[str, str] = {}
    targets = {w.path for w in writes}
    for write in writes:
        now = _disk_hash(root, write.path)
        if now != write.before:
            raise StaleWriteError(
                f"{write.path} changed on disk since the change was prepared"
                if now
                else f"{write.path} no longer exists",
                "look at it again before applying",
                current_hash=now,
            )
        if write.move_to is not None:
            if write.before is None or write.data is None or write.move_to in targets:
                raise MemtuiError(f"cannot move {write.path} to {write.move_to} in this change", "this is a bug")
            destination = safe_write.resolve_in_field(root, write.move_to)
            if os.path.lexists(destination):
                raise UnsafePathError(f"{write.move_to} already exists", "choose another destination")
            targets.add(write.move_to)
        if write.data is None:
            if write.before is None:
                raise MemtuiError(f"cannot retire {write.path}: it does not exist", "drop it from the change")
            target = archive_relpath(root, write.archive_bucket, write.path)
            safe_write.resolve_in_field(root, target, allow_state=True)
            archived[write.path] = target
        else:
            safe_write.check_relpath(write.move_to or write.path)  # a name memtui may create or rewrite
    return archived


def apply_atomically(
    root: Path,
    writes: list[PageWrite],
    *,
    entry: ledger.LedgerEntry,
    label: str,
    commit_message: str | None = None,
) -> ApplyResult:
    """Write every page of ``writes`` or none; record ``entry`` in the ledger.

    ``entry.pages`` and ``entry.commit`` are filled in here. With
    ``commit_message`` and a git field, the touched pages are committed.
    Raises ``StaleWriteError`` (nothing changed) if a page is not at its
    ``before`` hash, ``UnsafePathError`` for a path memtui may not write.
    """
    root = Path(root)
    if not writes:
        raise MemtuiError("nothing to apply", "the change touches no page")
    paths = [w.path for w in writes]
    if len(set(paths)) != len(paths):
        raise MemtuiError("a page appears twice in one change", "each page may be changed once")
    with field_lock(root):
        _recover_locked(root)
        # 1. check everything before touching anything (the ledger too: it is written last)
        archived = _check(root, writes)
        ledger.check_writable(root)
        # 2. keep every version involved and write the journal
        for write in writes:
            old = _read_disk(root, write.path)
            if old is not None:
                safe_write.keep_blob(root, old)
            if write.data is not None:
                safe_write.keep_blob(root, write.data)
        git = commit_message is not None and gitrepo.is_field_repo(root)
        txn = f"{ledger.now_iso().replace(':', '')}-{secrets.token_hex(4)}"
        name = f"{txn}.json"
        pages = []
        for write in writes:
            item: dict[str, Any] = {"path": write.path, "before": write.before, "after": write.after}
            if write.path in archived:
                item["moved_to"] = archived[write.path]
            elif write.move_to is not None:
                item["moved_to"] = write.move_to
            pages.append(item)
        entry.pages = pages
        journal: dict[str, Any] = {
            "version": JOURNAL_VERSION,
            "txn": txn,
            "field": signing.field_id(root),
            "created": _dt.datetime.now(_dt.UTC).isoformat(),
            "ledger_bytes": ledger.size(root),  # its decision can only be after this
            "label": label,
            "phase": "applying",
            "git": git,
            "git_head": gitrepo.head(root) if git else None,
            "git_staging": False,
            "pages": pages,
            "ledger": entry.to_json(),
        }
        _register(root, txn)  # first: a journal nobody registered is never acted on
        _write_journal(root, name, journal)
        # 3.-4. write the pages, commit
        done = 0  # pages finished; a page that failed was left as it was (a moved one may need moving back)
        try:
            for count, write in enumerate(writes, start=1):
                done = count - 1 if write.move_to is None else count
                if write.data is None:
                    safe_write.move_page(
                        root, write.path, archived[write.path], expected_hash=write.before, allow_into_state=True
                    )
                elif write.move_to is not None:
                    safe_write.move_page(root, write.path, write.move_to, expected_hash=write.before)
                    _maybe_crash(f"after-move-{count}")
                    safe_write.write_page(root, write.move_to, write.data, expected_hash=write.before)
                else:
                    safe_write.write_page(
                        root,
                        write.path,
                        write.data,
                        expected_hash=write.before if write.before is not None else safe_write.MUST_NOT_EXIST,
                    )
                done = count
                _maybe_crash(f"after-page-{count}")
            commit = None
            if git:
                journal["git_staging"] = True
                _write_journal(root, name, journal)
                assert commit_message is not None
                touched = paths + [w.move_to for w in writes if w.move_to is not None]
                commit = gitrepo.commit_paths(root, touched, f"{commit_message.rstrip()}\n{TXN_TRAILER}: {txn}\n")
                _maybe_crash("after-commit")
        except BaseException as exc:
            problems = _roll_back(root, dict(journal, pages=pages[:done]))
            if not problems:
                with contextlib.suppress(OSError):
                    _end(root, name, txn)
            if isinstance(exc, OSError):
                raise MemtuiError(
                    f"could not write the change: {exc.strerror or exc}",
                    "nothing was changed" if not problems else "some pages need attention: " + "; ".join(problems),
                ) from exc
            if problems and isinstance(exc, MemtuiError):
                raise type(exc)(exc.message, "the change was undone except: " + "; ".join(problems)) from exc
            raise
        # 5. the change is made: mark it, record it, forget the journal
        entry.commit = commit
        journal["phase"] = "committed"
        journal["ledger"] = entry.to_json()
        _write_journal(root, name, journal)
        ledger.append(root, entry)
        _end(root, name, txn)
    return ApplyResult(txn, pages, commit, entry)


# --------------------------------------------------------------------------- recovery


def pending_journals(root: Path) -> list[Path]:
    """Journals left behind by an interrupted change (normally none)."""
    try:
        names = state.names(root, JOURNAL_DIR)
    except (UnsafePathError, NotADirectoryError):
        return [journal_dir(root)]  # reported by recovery
    return [journal_dir(root) / name for name in names if name.endswith(".json")]


def recover_interrupted(root: Path) -> list[Recovery]:
    """Finish or undo every change a crash interrupted; return what was done.

    Safe to call at any time: a change still running in another process holds
    the lock, and recovery then does nothing.
    """
    root = Path(root)
    if not pending_journals(root):
        return []
    try:
        with field_lock(root):
            return _recover_locked(root)
    except BusyError:
        return []
    except UnsafePathError as exc:
        return [Recovery("?", ".memtui/journal", "needs-attention", [exc.message])]


def _load(root: Path, name: str) -> tuple[dict[str, Any] | None, list[str]]:
    """A journal that may be acted on, or None and why not."""
    try:
        raw = state.read(root, JOURNAL_DIR, name, max_bytes=MAX_JOURNAL_BYTES, kind="a journal")
        if raw is None:
            return None, []
        data = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError, MemtuiError) as exc:
        return None, [f"unreadable journal {name}: {getattr(exc, 'message', None) or exc}"]
    if not isinstance(data, dict):
        return None, [f"journal {name} is not an object"]
    body = {key: value for key, value in data.items() if key != "mac"}
    if not signing.verify_json(body, data.get("mac")):
        return None, [
            f"journal {name} was not written by memtui for this user (forged, altered, or from another account): "
            "not replayed; look at it, then delete it"
        ]
    problems = journal_problems(body, name)
    return (None, problems) if problems else (body, [])


def _hash_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, str) and re.fullmatch(r"[0-9a-f]{64}", value) is not None)


def journal_problems(journal: dict[str, Any], name: str) -> list[str]:
    """What makes a (signed) journal unusable; empty when it is well formed."""
    problems: list[str] = []
    if journal.get("version") != JOURNAL_VERSION:
        return [f"journal {name}: unknown format"]
    txn = journal.get("txn")
    if not isinstance(txn, str) or not _TXN_RE.fullmatch(txn) or name != f"{txn}.json":
        problems.append(f"journal {name}: the transaction id does not match the file")
    at = journal.get("ledger_bytes")
    if not isinstance(journal.get("field"), str) or not isinstance(journal.get("created"), str):
        problems.append(f"journal {name}: it does not name its field and time")
    if not isinstance(at, int) or isinstance(at, bool) or at < 0:
        problems.append(f"journal {name}: it does not say where the ledger ended")
    if not isinstance(journal.get("label"), str):
        problems.append(f"journal {name}: no label")
    if journal.get("phase") not in PHASES:
        problems.append(f"journal {name}: unknown phase")
    if not isinstance(journal.get("git"), bool) or not isinstance(journal.get("git_staging"), bool):
        problems.append(f"journal {name}: git flags are not true/false")
    head = journal.get("git_head")
    if head is not None and not (isinstance(head, str) and _COMMIT_RE.fullmatch(head)):
        problems.append(f"journal {name}: git_head is not a commit")
    pages = journal.get("pages")
    if not isinstance(pages, list) or not pages or not all(isinstance(p, dict) for p in pages):
        return problems + [f"journal {name}: no list of pages"]
    for item in pages:
        problems.extend(_page_problems(item, name))
    try:
        entry = ledger.LedgerEntry.from_json(journal.get("ledger"))
        if entry.action not in ledger.ACTIONS:
            raise ValueError(f"unknown action {entry.action!r}")
        if entry.pages != pages:
            raise ValueError("its pages are not the journal's")
    except ValueError as exc:
        problems.append(f"journal {name}: the ledger line is not a decision about these pages ({exc})")
    return problems


def _page_problems(item: dict[str, Any], name: str) -> list[str]:
    path, moved_to = item.get("path"), item.get("moved_to")
    shown = one_line(str(path))
    try:
        safe_write.check_relpath(path if isinstance(path, str) else "", naming=False)
    except UnsafePathError as exc:
        return [f"journal {name}: page {shown}: {exc.message}"]
    if not _hash_or_none(item.get("before")) or not _hash_or_none(item.get("after")):
        return [f"journal {name}: page {shown}: before/after are not sha256 hashes"]
    if moved_to is None:
        return []
    retired = item.get("after") is None
    try:
        clean = safe_write.check_relpath(moved_to if isinstance(moved_to, str) else "", allow_state=retired)
    except UnsafePathError as exc:
        return [f"journal {name}: page {shown}: {exc.message}"]
    if retired and not clean.startswith(f"{locations.STATE_DIR_NAME}/{ARCHIVE_DIR}/"):
        return [f"journal {name}: page {shown}: retired outside .memtui/archive/"]
    return []


def _decision(value: Any) -> dict[str, Any]:
    """A decision as the ledger records it, without the commit (a journal applying has none yet)."""
    return {key: item for key, item in ledger.LedgerEntry.from_json(value).to_json().items() if key != "commit"}


def _recorded(root: Path, journal: dict[str, Any]) -> ledger.LedgerEntry | None:
    """The verified ledger line of this journal's decision, if it is there (the journal is then spent).

    Only lines after the ledger's end when the journal was made count: an identical earlier
    decision (the same approval, undone and made again within the second) is not this one.
    """
    wanted = _decision(journal["ledger"])
    return next(
        (
            e
            for e in ledger.read(root).entries
            if e.offset >= journal["ledger_bytes"] and _decision(e.to_json()) == wanted
        ),
        None,
    )


def _replay_problem(root: Path, journal: dict[str, Any], name: str, open_txns: list[str]) -> str | None:
    """Why this (signed, well formed) journal must not be acted on again; None when it is live."""
    txn = journal["txn"]
    made = one_line(str(journal.get("created")), 40)
    if journal.get("field") != signing.field_id(root):
        return (
            f"journal {name} (made {made}) belongs to another field: a copy, replayed here; "
            "not acted on; look at it, then delete it"
        )
    decided = _recorded(root, journal)
    if decided is not None and not (journal["phase"] == "committed" and txn in open_txns):
        return (
            f"journal {name} (made {made}) was already used: its decision is in the ledger "
            f"({one_line(decided.action)} {one_line(decided.target)} by {one_line(decided.who)}, {one_line(decided.ts)}); "
            "a replayed copy, not acted on; look at it, then delete it"
        )
    if txn not in open_txns:
        return (
            f"journal {name} (made {made}) is not one memtui has open for this field: it was already "
            "finished or rolled back (a replayed copy), or memtui's record of open journals was lost; "
            "not acted on; look at it, then delete it"
        )
    return None


def _recover_locked(root: Path) -> list[Recovery]:
    results = []
    journals = pending_journals(root)
    open_txns, record_problem = _open_txns(root) if journals else ([], None)
    for path in journals:
        name = path.name
        journal, problems = _load(root, name)
        if journal is None:
            if problems:
                results.append(Recovery(path.stem, "?", "needs-attention", problems))
            continue  # never acted on: left where it is
        txn = journal["txn"]
        label = journal["label"]
        replay = _replay_problem(root, journal, name, open_txns)
        if replay is not None:
            extra = [f"the record of open journals cannot be used: {record_problem}"] if record_problem else []
            results.append(Recovery(txn, one_line(label), "needs-attention", [replay, *extra]))
            continue  # never acted on: left where it is
        commit = _commit_made(root, journal)
        if journal["phase"] == "committed" or commit is not None:
            entry = ledger.LedgerEntry.from_json(journal["ledger"])
            if commit is not None:
                entry.commit = commit
                with contextlib.suppress(MemtuiError):  # the crash may have come before the index was updated
                    touched = [i["path"] for i in journal["pages"]] + [
                        i["moved_to"] for i in journal["pages"] if i.get("moved_to") and i.get("after")
                    ]
                    gitrepo.sync_index(root, touched)
            if _recorded(root, journal) is None:
                ledger.append(root, entry)
            _end(root, name, txn)
            results.append(Recovery(txn, label, "completed"))
            continue
        problems = _roll_back(root, journal)
        if problems:
            results.append(Recovery(txn, label, "needs-attention", problems))
            continue  # keep the journal so nothing is forgotten
        _end(root, name, txn)
        results.append(Recovery(txn, label, "rolled-back"))
    return results


def _commit_made(root: Path, journal: dict[str, Any]) -> str | None:
    """The commit a crashed change made, if HEAD moved to a commit carrying its txn."""
    if not journal.get("git") or not journal.get("git_staging"):
        return None
    try:
        now = gitrepo.head(root)
        if now is None or now == journal.get("git_head"):
            return None
        message = gitrepo.read_commit(root, now).message
    except MemtuiError:
        return None
    return now if f"{TXN_TRAILER}: {journal.get('txn')}" in message else None


def _roll_back(root: Path, journal: dict[str, Any]) -> list[str]:
    """Return every page of a journal to its before-bytes and place; list what could not be."""
    problems: list[str] = []
    pages = journal.get("pages") or []
    for item in reversed(pages):
        path = item.get("path")
        try:
            if item.get("after") is None:
                problems.extend(_roll_back_retired(root, item))
            elif item.get("moved_to"):
                problems.extend(_roll_back_moved(root, item))
            else:
                problems.extend(_roll_back_written(root, item))
        except MemtuiError as exc:
            problems.append(f"{path}: {exc.message}")
        except OSError as exc:
            problems.append(f"{path}: {exc.strerror or exc}")
    if journal.get("git") and journal.get("git_staging") and pages:
        try:
            gitrepo.unstage(root, [item.get("path") for item in pages])
        except MemtuiError as exc:
            problems.append(f"git index: {exc.message}")
    return problems


def _roll_back_retired(root: Path, item: dict[str, Any]) -> list[str]:
    """The change retired this page into the archive: bring it back, drop the archived copy."""
    path, before, moved_to = item["path"], item.get("before"), item.get("moved_to")
    now = _disk_hash(root, path)
    if now is None and before:
        safe_write.write_page(root, path, safe_write.read_blob(root, before), expected_hash=safe_write.MUST_NOT_EXIST)
        now = before
    if now != before:
        return [f"{path}: changed by someone else; left as it is"]
    if moved_to and _disk_hash(root, moved_to) == before:
        parts = moved_to.split("/")[1:]
        state.unlink(root, *parts)
    return []


def _roll_back_written(root: Path, item: dict[str, Any]) -> list[str]:
    path, before, after = item["path"], item.get("before"), item.get("after")
    now = _disk_hash(root, path)
    if now == before:
        return []
    if now != after:
        return [f"{path}: changed by someone else; left as it is"]
    if before is None:
        safe_write.move_page(
            root, path, archive_relpath(root, "rolled-back", path), expected_hash=after, allow_into_state=True
        )
    else:
        safe_write.write_page(root, path, safe_write.read_blob(root, before), expected_hash=after)
    return []


def _roll_back_moved(root: Path, item: dict[str, Any]) -> list[str]:
    """The change moved this page to ``moved_to`` and wrote it there: put it back as it was, where it was.

    If someone edited it at its new place meanwhile, it still goes back (their
    edit kept), so a page never stays out of its folder half-approved.
    """
    path, before, after, moved_to = item["path"], item.get("before"), item.get("after"), item["moved_to"]
    at_source, at_dest = _disk_hash(root, path), _disk_hash(root, moved_to)
    if at_dest is None:
        return [] if at_source == before else [f"{path}: changed by someone else; left as it is"]
    if at_source is not None:
        return [f"{path}: both {path} and {moved_to} exist now; left as they are"]
    if at_dest == after:
        safe_write.write_page(root, moved_to, safe_write.read_blob(root, before), expected_hash=after)
        at_dest = before
    safe_write.move_page(root, moved_to, path, expected_hash=at_dest)
    if at_dest != before:
        return [f"{path}: edited by someone else during the change; moved back to {path} with their edit"]
    return []
