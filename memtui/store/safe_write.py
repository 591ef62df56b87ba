"""Every write memtui makes to a field goes through this module.

- Atomic: a temp file in the same folder, ``fsync``, an atomic rename, ``fsync``
  of the folder; the file's mode is kept.
- Guarded: the caller says which content hash it loaded (or that the file must
  not exist); if the disk no longer matches, nothing is written and
  ``StaleWriteError`` says so. The check and the replacement are one step: on
  Linux the new file is swapped in with ``renameat2(RENAME_EXCHANGE)`` and what
  was swapped out is checked; if an agent wrote the page in between, its version
  is swapped back, kept in ``.memtui/blobs/`` too, and the write is refused
  (elsewhere: the page is renamed aside, checked, and only then replaced). A
  new page is placed with ``RENAME_NOREPLACE`` (or a hard link), never over a
  file that appeared meanwhile; a move is one rename that never replaces, and
  what it moved is checked afterwards.
- Confined: never a path outside the field (after resolving symlinks), never
  under ``sessions/``, ``.git/``, ``.dream/`` or ``.memtui/`` (except memtui's
  own archive moves), only ``*.md`` pages. Backslashes are part of a file name,
  not separators (``a\\b.md`` is one name on Linux); a path that would leave the
  field where backslashes are separators is refused all the same. A path memtui
  creates never holds a control character (a newline in a name would inject
  lines wherever the name is written).
- Recoverable: the bytes a write replaces are kept in ``.memtui/blobs/`` by hash.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
import secrets
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path, PurePosixPath

from memtui.errors import (
    MemtuiError,
    ReadOnlyFieldError,
    StaleWriteError,
    UnsafePathError,
)
from memtui.store import locations, state
from memtui.store.files import MAX_READ_BYTES, read_bytes, sha256_bytes
from memtui.textsafety import visible

MUST_NOT_EXIST = "absent"  # pass as expected_hash when creating a new page
PROTECTED_TOP = (locations.SESSIONS_DIR, ".git")
_CONTROL_RE = re.compile("[\x00-\x1f\x7f-\x9f]")

# Tests only: called with the target path after the hash check, right before the new
# bytes are swapped in, so a test can write the page "in the window" like an agent would.
_before_swap: Callable[[Path], None] | None = None


@contextlib.contextmanager
def os_errors_as_memtui_errors(action: str, relpath: str) -> Iterator[None]:
    """Turn an OSError (no space, no permission, a file where a folder should be) into
    a MemtuiError with a hint, so callers that catch MemtuiError never see a traceback."""
    try:
        yield
    except OSError as exc:
        raise MemtuiError(
            f"cannot {action} {relpath}: {exc.strerror or exc}",
            "check the folder's permissions and free space; the page was not changed",
        ) from exc


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _parts(text: str, relpath: str) -> list[str]:
    """Split on ``/``; refuse absolute paths and ``..``."""
    if text.startswith("/") or PurePosixPath(text).is_absolute() or (len(text) > 1 and text[1] == ":"):
        raise UnsafePathError(f"absolute path refused: {visible(relpath)}", "use a path relative to the field")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise UnsafePathError(f"path leaves the field: {visible(relpath)}", "remove '..' from the path")
    return parts


def has_control_characters(name: str) -> bool:
    """Does a file name hold a C0/C1 control character (which memtui never gives a file)?"""
    return _CONTROL_RE.search(name) is not None


def check_relpath(relpath: str, *, pages_only: bool = True, allow_state: bool = False, naming: bool = True) -> str:
    """Validate a field-relative path syntactically and return it normalised.

    ``naming``: memtui is about to give a file this name, so control characters
    are refused (reading, or moving a page away from such a name, passes False).
    """
    if not relpath or "\x00" in relpath:
        raise UnsafePathError("empty or invalid path", "name a page inside the field")
    if naming and has_control_characters(relpath):
        raise UnsafePathError(
            f"the path holds a control character: {visible(relpath, keep_newlines=False)}",
            "memtui writes no name with control characters in it; rename the file (or reject the page)",
        )
    # Where backslashes separate folders they must not lead out either; on Linux they are name characters.
    foreign = _parts(relpath.replace("\\", "/"), relpath)
    parts = _parts(relpath.replace("\\", "/") if os.sep == "\\" else relpath, relpath)
    if not parts:
        raise UnsafePathError("empty path", "name a page inside the field")
    for candidate in (parts, foreign):
        if candidate[0] in PROTECTED_TOP or ".git" in candidate:
            raise UnsafePathError(
                f"refusing to write under {candidate[0]}/: {visible(relpath)}",
                "sessions/ is raw evidence and is never modified"
                if candidate[0] == "sessions"
                else "never write into .git",
            )
        if candidate[0] in (locations.STATE_DIR_NAME, locations.DREAM_DIR_NAME) and not allow_state:
            raise UnsafePathError(
                f"refusing to write under {candidate[0]}/: {visible(relpath)}", "that folder belongs to memtui"
            )
    if pages_only and not parts[-1].endswith(".md"):
        raise UnsafePathError(f"not a Markdown page: {visible(relpath)}", "only *.md pages are written")
    return "/".join(parts)


def resolve_in_field(
    root: Path, relpath: str, *, pages_only: bool = True, allow_state: bool = False, naming: bool = True
) -> Path:
    """The absolute path for ``relpath``, refusing anything that escapes ``root``.

    Every existing component is resolved, so a symlinked folder that leaves the
    field, or leads into ``sessions/``, ``.git``, ``.dream/`` or ``.memtui/``
    (a proposal writing into memtui's records or another proposal's files), is
    caught, and a symlink at the final component is refused. A path under
    ``.memtui/`` (``allow_state``) must be reached through real folders only.
    """
    clean = check_relpath(relpath, pages_only=pages_only, allow_state=allow_state, naming=naming)
    real_root = Path(os.path.realpath(root))
    target = real_root.joinpath(*clean.split("/"))
    parent_real = Path(os.path.realpath(target.parent))
    if parent_real != real_root and real_root not in parent_real.parents:
        raise UnsafePathError(
            f"path leaves the field through a symlinked folder: {visible(relpath)}", "write only inside the field"
        )
    rel_parent = parent_real.relative_to(real_root).parts
    if rel_parent and rel_parent[0] in (*PROTECTED_TOP, locations.DREAM_DIR_NAME):
        raise UnsafePathError(f"path resolves into {rel_parent[0]}/: {visible(relpath)}", "never write there")
    in_state = bool(rel_parent) and rel_parent[0] == locations.STATE_DIR_NAME
    if in_state and not (allow_state and clean.split("/")[0] == locations.STATE_DIR_NAME):
        raise UnsafePathError(
            f"path resolves into {locations.STATE_DIR_NAME}/ through a symlinked folder: {visible(relpath)}",
            "that folder belongs to memtui",
        )
    if in_state and parent_real != real_root.joinpath(*clean.split("/")[:-1]):
        raise UnsafePathError(
            f"a folder on the way to {visible(relpath)} is a symlink",
            "memtui never follows a link in FIELD/.memtui/: remove it",
        )
    if os.path.islink(target):
        raise UnsafePathError(f"the page is a symlink: {visible(relpath)}", "memtui does not write through symlinks")
    if target.exists() and not target.is_file():
        raise UnsafePathError(f"not a regular file: {visible(relpath)}", "only regular files are written")
    return parent_real / target.name


def current_hash(path: Path) -> str | None:
    """sha256 of the file's bytes now, or None if it does not exist (a symlink is not followed)."""
    result = read_bytes(path)
    return sha256_bytes(result[0]) if result is not None else None


def _atomic_replace(target: Path, data: bytes | Iterable[bytes], mode: int | None) -> None:
    folder = target.parent
    tmp = _write_temp(folder, data, mode)
    try:
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(folder)


def _write_temp(folder: Path, data: bytes | Iterable[bytes], mode: int | None) -> Path:
    """A new file in ``folder`` holding ``data`` (bytes, or parts of it; flushed to disk), with ``mode``."""
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".memtui-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            if isinstance(data, (bytes, bytearray, memoryview)):
                handle.write(data)
            else:
                for part in data:
                    handle.write(part)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return Path(tmp)


# --------------------------------------------------------------------------- renameat2

AT_FDCWD = -100
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
_UNSUPPORTED = {errno.ENOSYS, errno.EINVAL, getattr(errno, "ENOTSUP", errno.EINVAL), errno.EOPNOTSUPP}


def _load_renameat2() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # a C library without it (glibc before 2.28, musl before 1.2.?)
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


_renameat2_function = _load_renameat2()


def _renameat2(
    src: Path | str, dst: Path | str, flags: int, *, src_dir_fd: int = AT_FDCWD, dst_dir_fd: int = AT_FDCWD
) -> bool:
    """``renameat2``; False when this system or file system cannot do it (the caller falls back)."""
    if _renameat2_function is None:
        return False
    if _renameat2_function(src_dir_fd, os.fsencode(src), dst_dir_fd, os.fsencode(dst), flags) == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code), os.fspath(src), None, os.fspath(dst))


def _read_or_none(path: Path) -> bytes | None:
    result = read_bytes(path)
    return result[0] if result is not None else None


def _stale(relpath: str, now: str | None) -> StaleWriteError:
    return StaleWriteError(
        f"{relpath} changed on disk since it was loaded"
        if now
        else f"{relpath} was deleted on disk since it was loaded",
        "reload it, or choose to overwrite",
        current_hash=now,
    )


def _swap_in(root: Path, relpath: str, target: Path, tmp: Path, expected: str | None) -> None:
    """Put ``tmp`` at ``target`` if ``target`` still holds ``expected`` (None: whatever it holds).

    Closes the window between the hash check and the replacement: the files are
    exchanged atomically and what came out is checked. If it is not what the
    caller expected (an agent wrote in between), the two are exchanged back so
    the agent's version stays on the page; it is also kept as a blob, and the
    write is refused. Whatever a write replaces is kept as a blob.
    """
    try:
        exchanged = _renameat2(tmp, target, RENAME_EXCHANGE)
    except FileNotFoundError:
        raise _stale(relpath, None) from None  # deleted after the check
    if not exchanged:
        _swap_in_without_exchange(root, relpath, target, tmp, expected)
        return
    out = _read_or_none(tmp)  # what was on the page a moment ago
    if out is None:
        return
    digest = keep_blob(root, out)
    if expected is None or digest == expected:
        return
    ours = _read_or_none(target)
    restored = _renameat2(tmp, target, RENAME_EXCHANGE)  # the agent's version goes back on the page
    back = _read_or_none(tmp)
    if back is not None and back != ours:
        keep_blob(root, back)  # yet another write landed meanwhile: keep it too
    if not restored:
        raise StaleWriteError(
            f"{relpath} changed on disk while it was being saved and could not be put back",
            f"their version is kept as .memtui/blobs/{digest[:2]}/{digest}: restore it by hand",
            current_hash=digest,
        )
    raise StaleWriteError(
        f"{relpath} changed on disk while it was being saved; nothing was overwritten",
        f"their version is on the page (also kept as .memtui/blobs/{digest[:2]}/{digest[:12]}...): look at it again",
        current_hash=digest,
    )


def _swap_in_without_exchange(root: Path, relpath: str, target: Path, tmp: Path, expected: str | None) -> None:
    """The same without ``RENAME_EXCHANGE``: rename the page aside, check it, then link the new file in.

    Readers may find no page for a moment; nothing written by anyone is lost.
    """
    aside = target.with_name(f".memtui-{secrets.token_hex(6)}.old")
    try:
        os.rename(target, aside)
    except FileNotFoundError:
        raise _stale(relpath, None) from None
    out = _read_or_none(aside)
    digest = keep_blob(root, out) if out is not None else None
    if expected is not None and digest != expected:
        with contextlib.suppress(OSError):
            os.link(aside, target)  # put theirs back (unless yet another file appeared there)
        with contextlib.suppress(OSError):
            os.unlink(aside)
        raise StaleWriteError(
            f"{relpath} changed on disk while it was being saved; nothing was overwritten",
            "their version is on the page (and kept in .memtui/blobs/): look at it again",
            current_hash=digest,
        )
    try:
        os.link(tmp, target)
    except FileExistsError:
        with contextlib.suppress(OSError):
            os.unlink(aside)
        raise StaleWriteError(
            f"{relpath} was written by someone else while it was being saved; nothing was overwritten",
            "look at it again",
            current_hash=current_hash(target),
        ) from None
    with contextlib.suppress(OSError):
        os.unlink(aside)


def _place_new(relpath: str, target: Path, tmp: Path) -> None:
    """Put ``tmp`` at ``target`` only if nothing is there (a file created meanwhile is never replaced)."""
    try:
        if _renameat2(tmp, target, RENAME_NOREPLACE):
            return
        os.link(tmp, target)
    except FileExistsError:
        raise StaleWriteError(
            f"{relpath} already exists",
            "choose another name or open the existing page",
            current_hash=current_hash(target),
        ) from None


def _proc_umask() -> int | None:
    """The process umask from /proc (Linux), read without changing it."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return None


def _import_time_umask() -> int:
    mask = os.umask(0o022)  # where /proc is missing: read once, at import, before threads run
    os.umask(mask)
    return mask


_FALLBACK_UMASK = _import_time_umask() if _proc_umask() is None else 0o022


def _default_mode() -> int:
    """Mode for a new file: 0o666 minus the umask (the umask is never toggled at run time,
    which would race with other threads creating files)."""
    mask = _proc_umask()
    return 0o666 & ~(_FALLBACK_UMASK if mask is None else mask)


def keep_blob(root: Path, data: bytes) -> str:
    """Store bytes under ``.memtui/blobs/<sha256>`` (once) and return the hash."""
    digest = sha256_bytes(data)
    with state.StateDir(root, "blobs", digest[:2]) as folder:
        try:
            kept = folder.read(digest)
        except (MemtuiError, OSError):
            kept = None  # a symlink or something else planted under that name: replaced below
        if kept != data:
            folder.write(digest, data, mode=0o444)
    return digest


def read_blob(root: Path, digest: str | None) -> bytes:
    """The bytes stored under ``digest``; refused if the stored copy does not hash to it (or it is not a hash)."""
    if digest is None or not re.fullmatch(r"[0-9a-f]{64}", digest):
        raise MemtuiError(f"not a content hash: {digest!r}", "blobs are named by their sha256")
    data = state.read(root, "blobs", digest[:2], digest)
    if data is None:
        raise MemtuiError(f"no saved copy of version {digest[:12]}", "it was never stored by memtui")
    if sha256_bytes(data) != digest:
        raise MemtuiError(
            f"the saved copy of version {digest[:12]} has been altered",
            "something other than memtui wrote into .memtui/blobs; restore it by hand",
        )
    return data


def write_page(
    root: Path,
    relpath: str,
    data: bytes,
    *,
    expected_hash: str | None,
    readonly: bool = False,
    keep_previous: bool = True,
) -> str:
    """Atomically write a page, only if the disk still holds ``expected_hash``.

    ``expected_hash`` is the sha256 of the bytes the caller loaded, or
    ``MUST_NOT_EXIST`` for a new page. ``None`` means the caller deliberately
    overwrites whatever is there (the user chose "keep mine"); what it replaces
    is kept as a blob all the same. Returns the new content hash.
    """
    if readonly:
        raise ReadOnlyFieldError("this field is read-only (opened from a zip)", "export or extract it to edit")
    root = Path(root)
    target = resolve_in_field(root, relpath)
    with os_errors_as_memtui_errors("read", relpath):
        found = read_bytes(target, kind="a page")  # no symlink, no FIFO, bounded (files.MAX_READ_BYTES)
        old = found[0] if found is not None else None
        old_mode: int | None = stat.S_IMODE(found[1].st_mode) if found is not None else None
    if expected_hash == MUST_NOT_EXIST and old is not None:
        raise StaleWriteError(
            f"{relpath} already exists",
            "choose another name or open the existing page",
            current_hash=sha256_bytes(old),
        )
    if expected_hash not in (None, MUST_NOT_EXIST):
        now = sha256_bytes(old) if old is not None else None
        if now != expected_hash:
            raise _stale(relpath, now)
    with os_errors_as_memtui_errors("write", relpath):
        target.parent.mkdir(parents=True, exist_ok=True)
        if old is not None and keep_previous:
            keep_blob(root, old)
        tmp = _write_temp(target.parent, data, old_mode if old_mode is not None else _default_mode())
        try:
            if _before_swap is not None:
                _before_swap(target)
            if old is None:
                _place_new(relpath, target, tmp)
            else:
                _swap_in(root, relpath, target, tmp, expected_hash)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        _fsync_dir(target.parent)
    return sha256_bytes(data)


def move_page(
    root: Path, src: str, dst: str, *, expected_hash: str | None, readonly: bool = False, allow_into_state: bool = False
) -> None:
    """Move a page inside the field without overwriting anything at ``dst``.

    One rename that never replaces (``RENAME_NOREPLACE``, or a hard link); the
    moved file is then checked against ``expected_hash`` and moved back if an
    agent replaced the page just before. ``allow_into_state`` permits a
    destination under ``.memtui/`` (the archive), reached through real folders only.
    The source may have any name (a page is moved away from a hostile name);
    the destination never holds a control character.
    """
    if readonly:
        raise ReadOnlyFieldError("this field is read-only (opened from a zip)", "export or extract it to edit")
    root = Path(root)
    source = resolve_in_field(root, src, naming=False)
    dest = resolve_in_field(root, dst, allow_state=allow_into_state)
    if expected_hash is not None and current_hash(source) != expected_hash:
        raise StaleWriteError(f"{src} changed on disk since it was loaded", "look at it again first")
    if not source.exists():
        raise StaleWriteError(f"{src} no longer exists", "it was moved or deleted")
    with os_errors_as_memtui_errors("move", src):
        if dst.split("/")[0] == locations.STATE_DIR_NAME:
            with state.StateDir(root, *check_relpath(dst, allow_state=True).split("/")[1:-1]) as folder:
                _rename_new(src, dst, source, dest.name, folder.fd)
                folder.sync()
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            _rename_new(src, dst, source, dest, AT_FDCWD)
            _fsync_dir(dest.parent)
        _fsync_dir(source.parent)
    moved = dest if dst.split("/")[0] != locations.STATE_DIR_NAME else None
    if expected_hash is None:
        return
    now = current_hash(moved) if moved is not None else state_file_hash(root, dst)
    if now != expected_hash:
        with contextlib.suppress(OSError, MemtuiError):
            if moved is not None and _renameat2(moved, source, RENAME_NOREPLACE):
                _fsync_dir(source.parent)
        raise StaleWriteError(f"{src} changed on disk while it was being moved", "look at it again first")


def _rename_new(src: str, dst: str, source: Path, dest: Path | str, dest_dir_fd: int) -> None:
    """Rename ``source`` to ``dest`` (relative to ``dest_dir_fd``), never replacing a file there."""
    dir_fd = None if dest_dir_fd == AT_FDCWD else dest_dir_fd
    try:
        if _renameat2(source, dest, RENAME_NOREPLACE, dst_dir_fd=dest_dir_fd):
            return
        # link + unlink never replaces an existing destination either.
        os.link(source, dest, dst_dir_fd=dir_fd, follow_symlinks=False)
    except FileExistsError:
        raise UnsafePathError(f"{visible(dst)} already exists", "choose another destination") from None
    except FileNotFoundError:
        raise StaleWriteError(f"{src} no longer exists", "it was moved or deleted") from None
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, getattr(errno, "ENOTSUP", errno.EPERM)):
            raise
        # Another file system (a mount inside the field), or one without hard links: a plain rename.
        if os.path.lexists(dest if dir_fd is None else f"/proc/self/fd/{dir_fd}/{dest}"):
            raise UnsafePathError(f"{visible(dst)} already exists", "choose another destination") from None
        os.rename(source, dest, dst_dir_fd=dir_fd)
        return
    os.unlink(source)


def state_file_hash(root: Path, relpath: str) -> str | None:
    """sha256 of a file under ``.memtui/`` (``relpath`` starts with it), read without following links."""
    parts = check_relpath(relpath, allow_state=True, pages_only=False).split("/")
    data = state.read(root, *parts[1:])
    return sha256_bytes(data) if data is not None else None


def read_state_file(root: Path, relpath: str, *, max_bytes: int = MAX_READ_BYTES, kind: str = "a file") -> bytes | None:
    """The bytes of a file under ``.memtui/`` (``relpath`` starts with it: an archived page, a kept
    copy), reached without following any link and read through the bounded reader; None when it
    does not exist. ``UnsafePathError`` for a link on the way, ``FileTooLarge`` over ``max_bytes``."""
    parts = check_relpath(relpath, allow_state=True, pages_only=False, naming=False).split("/")
    if parts[0] != locations.STATE_DIR_NAME or len(parts) < 2:
        raise UnsafePathError(f"not under {locations.STATE_DIR_NAME}/: {visible(relpath)}", "this is a bug in memtui")
    try:
        return state.read(root, *parts[1:], max_bytes=max_bytes, kind=kind)
    except NotADirectoryError:
        return None


def write_internal_file(path: Path, data: bytes | Iterable[bytes]) -> None:
    """Atomic write for memtui's own files (cache, settings): same folder temp + replace.

    ``data`` may be an iterable of parts, written as they come (a large cache
    file is never held whole in memory)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_replace(path, data, _default_mode())


def append_line(path: Path, line: str) -> None:
    """Append one line to a log outside a field with a single write and fsync (never through a symlink)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (line.rstrip("\n") + "\n").encode("utf-8")
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
