"""Every write memtui makes to a field goes through this module.

- Atomic: a temp file in the same folder, ``fsync``, ``os.replace``, ``fsync`` of
  the folder; the file's mode is kept.
- Guarded: the caller says which content hash it loaded (or that the file must
  not exist); if the disk no longer matches, nothing is written and
  ``StaleWriteError`` says so.
- Confined: never a path outside the field (after resolving symlinks), never
  under ``sessions/`` or ``.git/``, only ``*.md`` pages.
- Recoverable: the bytes a write replaces are kept in ``.memtui/blobs/`` by hash.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile
from pathlib import Path, PurePosixPath

from memtui.errors import (
    MemtuiError,
    ReadOnlyFieldError,
    StaleWriteError,
    UnsafePathError,
)
from memtui.store import locations
from memtui.store.files import sha256_bytes

MUST_NOT_EXIST = "absent"  # pass as expected_hash when creating a new page
PROTECTED_TOP = (locations.SESSIONS_DIR, ".git")


@contextlib.contextmanager
def os_errors_as_memtui_errors(action: str, relpath: str):
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


def check_relpath(relpath: str, *, pages_only: bool = True, allow_state: bool = False) -> str:
    """Validate a field-relative path syntactically and return it normalised."""
    if not relpath or "\x00" in relpath:
        raise UnsafePathError("empty or invalid path", "name a page inside the field")
    text = relpath.replace("\\", "/")
    if text.startswith("/") or PurePosixPath(text).is_absolute() or (len(text) > 1 and text[1] == ":"):
        raise UnsafePathError(f"absolute path refused: {relpath}", "use a path relative to the field")
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise UnsafePathError(f"path leaves the field: {relpath}", "remove '..' from the path")
    if not parts:
        raise UnsafePathError("empty path", "name a page inside the field")
    if parts[0] in PROTECTED_TOP or ".git" in parts:
        raise UnsafePathError(
            f"refusing to write under {parts[0]}/: {relpath}",
            "sessions/ is raw evidence and is never modified" if parts[0] == "sessions" else "never write into .git",
        )
    if parts[0] in (locations.STATE_DIR_NAME, locations.DREAM_DIR_NAME) and not allow_state:
        raise UnsafePathError(f"refusing to write under {parts[0]}/: {relpath}", "that folder belongs to memtui")
    if pages_only and not parts[-1].endswith(".md"):
        raise UnsafePathError(f"not a Markdown page: {relpath}", "only *.md pages are written")
    return "/".join(parts)


def resolve_in_field(root: Path, relpath: str, *, pages_only: bool = True, allow_state: bool = False) -> Path:
    """The absolute path for ``relpath``, refusing anything that escapes ``root``.

    Every existing component is resolved, so a symlinked folder that leaves the
    field is caught, and a symlink at the final component is refused.
    """
    clean = check_relpath(relpath, pages_only=pages_only, allow_state=allow_state)
    real_root = Path(os.path.realpath(root))
    target = real_root.joinpath(*clean.split("/"))
    parent_real = Path(os.path.realpath(target.parent))
    if parent_real != real_root and real_root not in parent_real.parents:
        raise UnsafePathError(
            f"path leaves the field through a symlinked folder: {relpath}", "write only inside the field"
        )
    rel_parent = parent_real.relative_to(real_root).parts
    if rel_parent and rel_parent[0] in PROTECTED_TOP:
        raise UnsafePathError(f"path resolves into {rel_parent[0]}/: {relpath}", "never write there")
    if os.path.islink(target):
        raise UnsafePathError(f"the page is a symlink: {relpath}", "memtui does not write through symlinks")
    if target.exists() and not target.is_file():
        raise UnsafePathError(f"not a regular file: {relpath}", "only regular files are written")
    return parent_real / target.name


def current_hash(path: Path) -> str | None:
    """sha256 of the file's bytes now, or None if it does not exist."""
    try:
        with open(path, "rb") as handle:
            return sha256_bytes(handle.read())
    except FileNotFoundError:
        return None


def _atomic_replace(target: Path, data: bytes, mode: int | None) -> None:
    folder = target.parent
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".memtui-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(folder)


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
    folder = locations.state_dir(root) / "blobs" / digest[:2]
    path = folder / digest
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        _atomic_replace(path, data, 0o444)
    return digest


def read_blob(root: Path, digest: str) -> bytes:
    """The bytes stored under ``digest``; refused if the stored copy does not hash to it."""
    if not re.fullmatch(r"[0-9a-f]{64}", digest or ""):
        raise MemtuiError(f"not a content hash: {digest!r}", "blobs are named by their sha256")
    path = locations.state_dir(root) / "blobs" / digest[:2] / digest
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise MemtuiError(f"no saved copy of version {digest[:12]}", "it was never stored by memtui") from None
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
    overwrites whatever is there (the user chose "keep mine").
    Returns the new content hash.
    """
    if readonly:
        raise ReadOnlyFieldError("this field is read-only (opened from a zip)", "export or extract it to edit")
    root = Path(root)
    target = resolve_in_field(root, relpath)
    with os_errors_as_memtui_errors("read", relpath):
        try:
            with open(target, "rb") as handle:
                old = handle.read()
            old_mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            old = None
            old_mode = None
    if expected_hash == MUST_NOT_EXIST and old is not None:
        raise StaleWriteError(
            f"{relpath} already exists", "choose another name or open the existing page",
            current_hash=sha256_bytes(old),
        )
    if expected_hash not in (None, MUST_NOT_EXIST):
        now = sha256_bytes(old) if old is not None else None
        if now != expected_hash:
            raise StaleWriteError(
                f"{relpath} changed on disk since it was loaded"
                if now
                else f"{relpath} was deleted on disk since it was loaded",
                "reload it, or choose to overwrite",
                current_hash=now,
            )
    with os_errors_as_memtui_errors("write", relpath):
        target.parent.mkdir(parents=True, exist_ok=True)
        if old is not None and keep_previous:
            keep_blob(root, old)
        _atomic_replace(target, data, old_mode if old_mode is not None else _default_mode())
    return sha256_bytes(data)




def move_page(
    root: Path, src: str, dst: str, *, expected_hash: str | None, readonly: bool = False, allow_into_state: bool = False
) -> None:
    """Move a page inside the field without overwriting anything at ``dst``.

    ``allow_into_state`` permits a destination under ``.memtui/`` (the archive).
    """
    if readonly:
        raise ReadOnlyFieldError("this field is read-only (opened from a zip)", "export or extract it to edit")
    root = Path(root)
    source = resolve_in_field(root, src)
    dest = resolve_in_field(root, dst, allow_state=allow_into_state)
    if expected_hash is not None and current_hash(source) != expected_hash:
        raise StaleWriteError(f"{src} changed on disk since it was loaded", "look at it again first")
    if not source.exists():
        raise StaleWriteError(f"{src} no longer exists", "it was moved or deleted")
    with os_errors_as_memtui_errors("move", src):
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            # link + unlink never replaces an existing destination.
            os.link(source, dest)
        except FileExistsError:
            raise UnsafePathError(f"{dst} already exists", "choose another destination") from None
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EMLINK):
                raise
            if dest.exists():
                raise UnsafePathError(f"{dst} already exists", "choose another destination") from None
            os.rename(source, dest)
            _fsync_dir(dest.parent)
            return
        os.unlink(source)
        _fsync_dir(dest.parent)
        _fsync_dir(source.parent)


def write_internal_file(path: Path, data: bytes) -> None:
    """Atomic write for memtui's own files (cache, settings): same folder temp + replace."""
    path.parent.mkdir(parents=True, exist_ok=True)
    _atomic_replace(path, data, _default_mode())


def append_line(path: Path, line: str) -> None:
    """Append one line to a log (the ledger) with a single write and fsync."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (line.rstrip("\n") + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
