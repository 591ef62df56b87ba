"""Change several pages as one step: all of them or none, even across a crash.

``apply_atomically(root, writes, ...)`` is how a proposal is approved or
reverted:

1. every page is checked first (path confined to the field, bytes on disk still
   the ``before`` hash); nothing is written if one fails;
2. the bytes each page has now are kept in ``.memtui/blobs/`` and a *journal*
   ``.memtui/journal/<txn>.json`` (path, before hash, after hash of each page,
   plus the ledger line to write) is written atomically;
3. the pages are written one by one through ``safe_write`` (hash-guarded);
   a page the change retires is moved to ``.memtui/archive/<bucket>/<path>``,
   never deleted;
4. in a git field the touched pages are committed (one commit whose message
   carries a ``Memtui-Txn: <txn>`` trailer);
5. the journal is marked ``committed``, the ledger line is appended, the journal
   is removed.

If the process dies between 2 and 5, a journal is left behind.
``recover_interrupted(root)`` (the CLI calls it before every review command,
the TUI at start) finds it and either rolls back (phase ``applying`` and no
commit was made: every page returns to its before-bytes, pages the change
created move to ``.memtui/archive/rolled-back/``) or rolls forward (the journal
says ``committed`` or HEAD carries the txn trailer: the ledger line is written).
Either way the field ends in the old state or the new one, never in between.

A lock file (``.memtui/journal/.lock``, ``flock``) keeps two memtui processes
from applying at once and keeps recovery away from a change still in progress.

For tests only: ``MEMTUI_TEST_CRASH=after-page-N`` in the environment makes the
process exit abruptly (``os._exit``) after writing N pages, and
``MEMTUI_TEST_CRASH=after-commit`` right after the git commit, before the
journal is marked committed.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from memtui.errors import MemtuiError, StaleWriteError
from memtui.review import ledger
from memtui.store import gitrepo, locations, safe_write
from memtui.store.files import sha256_bytes

JOURNAL_DIR = "journal"
ARCHIVE_DIR = "archive"
CRASH_ENV = "MEMTUI_TEST_CRASH"
CRASH_EXIT_CODE = 86
JOURNAL_VERSION = 1
TXN_TRAILER = "Memtui-Txn"

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
    ``.memtui/archive/<archive_bucket>/``.
    """

    path: str
    before: str | None
    data: bytes | None
    archive_bucket: str = "retired"

    @property
    def after(self) -> str | None:
        return sha256_bytes(self.data) if self.data is not None else None


@dataclass(slots=True)
class ApplyResult:
    txn: str
    pages: list[dict[str, Any]]  # ledger form: path, before, after (+ moved_to for retired pages)
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


def archive_relpath(root: Path, bucket: str, relpath: str) -> str:
    """A free path ``.memtui/archive/<bucket>/<relpath>``; ``name.2.md``, ``name.3.md`` ... if taken."""
    base = PurePosixPath(locations.STATE_DIR_NAME, ARCHIVE_DIR, bucket, relpath)
    candidate = base
    number = 1
    while os.path.lexists(Path(root).joinpath(*candidate.parts)):
        number += 1
        candidate = base.with_name(f"{base.stem}.{number}{base.suffix}")
    return candidate.as_posix()


@contextlib.contextmanager
def field_lock(root: Path, *, wait: bool = False) -> Iterator[None]:
    """Hold the field's apply lock; raise ``BusyError`` if another process has it."""
    folder = journal_dir(root)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError as exc:
        raise MemtuiError(
            f"cannot use {folder}: {exc.strerror or exc}", "memtui needs to write in the field's .memtui/ folder"
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


def _write_journal(path: Path, data: dict[str, Any]) -> None:
    safe_write.write_internal_file(path, json.dumps(data, indent=1, sort_keys=True).encode("utf-8"))


def _maybe_crash(point: str) -> None:
    """Test hook: die without cleanup at ``point`` when ``$MEMTUI_TEST_CRASH`` names it."""
    if os.environ.get(CRASH_ENV) == point:
        os._exit(CRASH_EXIT_CODE)


def _disk_hash(root: Path, relpath: str, *, allow_state: bool = False) -> str | None:
    return safe_write.current_hash(safe_write.resolve_in_field(root, relpath, allow_state=allow_state))


def _read_disk(root: Path, relpath: str) -> bytes | None:
    try:
        return safe_write.resolve_in_field(root, relpath).read_bytes()
    except FileNotFoundError:
        return None


# --------------------------------------------------------------------------- apply


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
        # 1. check everything before touching anything
        archived: dict[str, str] = {}
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
            if write.data is None:
                if write.before is None:
                    raise MemtuiError(f"cannot retire {write.path}: it does not exist", "drop it from the change")
                target = archive_relpath(root, write.archive_bucket, write.path)
                safe_write.resolve_in_field(root, target, allow_state=True)
                archived[write.path] = target
        # 2. keep every version involved and write the journal
        for write in writes:
            old = _read_disk(root, write.path)
            if old is not None:
                safe_write.keep_blob(root, old)
            if write.data is not None:
                safe_write.keep_blob(root, write.data)
        git = commit_message is not None and gitrepo.is_field_repo(root)
        txn = f"{ledger.now_iso().replace(':', '')}-{secrets.token_hex(4)}"
        journal_path = journal_dir(root) / f"{txn}.json"
        pages = []
        for write in writes:
            item: dict[str, Any] = {"path": write.path, "before": write.before, "after": write.after}
            if write.path in archived:
                item["moved_to"] = archived[write.path]
            pages.append(item)
        entry.pages = pages
        journal: dict[str, Any] = {
            "version": JOURNAL_VERSION,
            "txn": txn,
            "label": label,
            "phase": "applying",
            "git": git,
            "git_head": gitrepo.head(root) if git else None,
            "git_staging": False,
            "pages": pages,
            "ledger": entry.to_json(),
        }
        _write_journal(journal_path, journal)
        # 3.-4. write the pages, commit
        try:
            for count, write in enumerate(writes, start=1):
                if write.data is None:
                    safe_write.move_page(
                        root, write.path, archived[write.path], expected_hash=write.before, allow_into_state=True
                    )
                else:
                    safe_write.write_page(
                        root,
                        write.path,
                        write.data,
                        expected_hash=write.before if write.before is not None else safe_write.MUST_NOT_EXIST,
                    )
                _maybe_crash(f"after-page-{count}")
            commit = None
            if git:
                journal["git_staging"] = True
                _write_journal(journal_path, journal)
                assert commit_message is not None
                commit = gitrepo.commit_paths(root, paths, f"{commit_message.rstrip()}\n{TXN_TRAILER}: {txn}\n")
                _maybe_crash("after-commit")
        except BaseException as exc:
            problems = _roll_back(root, journal)
            if not problems:
                with contextlib.suppress(FileNotFoundError):
                    journal_path.unlink()
            if isinstance(exc, OSError):
                raise MemtuiError(
                    f"could not write the change: {exc.strerror or exc}",
                    "nothing was changed" if not problems else "some pages need attention: " + "; ".join(problems),
                ) from exc
            raise
        # 5. the change is made: mark it, record it, forget the journal
        entry.commit = commit
        journal["phase"] = "committed"
        journal["ledger"] = entry.to_json()
        _write_journal(journal_path, journal)
        ledger.append(root, entry)
        journal_path.unlink()
    return ApplyResult(txn, pages, commit, entry)


# --------------------------------------------------------------------------- recovery


def pending_journals(root: Path) -> list[Path]:
    """Journals left behind by an interrupted change (normally none)."""
    folder = journal_dir(root)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.json") if p.is_file())


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


def _recover_locked(root: Path) -> list[Recovery]:
    results = []
    for path in pending_journals(root):
        try:
            journal = json.loads(path.read_text("utf-8"))
            if not isinstance(journal, dict) or journal.get("version") != JOURNAL_VERSION:
                raise ValueError("unknown journal format")
        except (OSError, ValueError) as exc:
            results.append(Recovery(path.stem, "?", "needs-attention", [f"unreadable journal {path.name}: {exc}"]))
            continue
        txn = str(journal.get("txn", path.stem))
        label = str(journal.get("label", ""))
        commit = _commit_made(root, journal)
        if journal.get("phase") == "committed" or commit is not None:
            entry = ledger.LedgerEntry.from_json(journal["ledger"])
            if commit is not None:
                entry.commit = commit
                with contextlib.suppress(MemtuiError):  # the crash may have come before the index was updated
                    gitrepo.sync_index(root, [item["path"] for item in journal["pages"]])
            if not ledger.contains(root, entry):
                ledger.append(root, entry)
            path.unlink()
            results.append(Recovery(txn, label, "completed"))
            continue
        problems = _roll_back(root, journal)
        if problems:
            results.append(Recovery(txn, label, "needs-attention", problems))
            continue  # keep the journal so nothing is forgotten
        path.unlink()
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
    """Return every page of a journal to its before-bytes; list what could not be."""
    problems: list[str] = []
    pages = journal.get("pages") or []
    for item in reversed(pages):
        path = item.get("path")
        before = item.get("before")
        after = item.get("after")
        try:
            now = _disk_hash(root, path)
            if after is None:  # the change retired this page into the archive
                moved_to = item.get("moved_to")
                if now is None and before:
                    safe_write.write_page(
                        root, path, safe_write.read_blob(root, before), expected_hash=safe_write.MUST_NOT_EXIST
                    )
                    now = before
                if now == before:
                    if moved_to and _disk_hash(root, moved_to, allow_state=True) == before:
                        safe_write.resolve_in_field(root, moved_to, allow_state=True).unlink()
                    continue
                problems.append(f"{path}: changed by someone else; left as it is")
                continue
            if now == before:
                continue
            if now != after:
                problems.append(f"{path}: changed by someone else; left as it is")
                continue
            if before is None:
                safe_write.move_page(
                    root, path, archive_relpath(root, "rolled-back", path), expected_hash=after, allow_into_state=True
                )
            else:
                safe_write.write_page(root, path, safe_write.read_blob(root, before), expected_hash=after)
        except MemtuiError as exc:
            problems.append(f"{path}: {exc.message}")
        except OSError as exc:
            problems.append(f"{path}: {exc.strerror or exc}")
    if journal.get("git") and journal.get("git_staging"):
        try:
            gitrepo.unstage(root, [item.get("path") for item in pages])
        except MemtuiError as exc:
            problems.append(f"git index: {exc.message}")
    return problems
