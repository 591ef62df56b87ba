"""memtui's own records inside a field (``FIELD/.memtui/``), reached without following links.

``.memtui/`` is as writable by an agent as the pages are. A symlink there (the
folder itself, ``blobs/``, ``journal/``, the ledger, a blob) would make memtui
write outside the field, or into the field where a page should be. So every
state folder is opened from the field folder one component at a time with
``O_NOFOLLOW | O_DIRECTORY`` (relative to the descriptor of the folder above),
and every state file is opened relative to its folder's descriptor with
``O_NOFOLLOW``: a symlink anywhere on the way is refused with
``UnsafePathError``, and nothing can be swapped in between the check and the
use. Missing folders are created on the way when writing.

``StateDir(root, "journal")`` is such a folder (a context manager holding its
descriptor); the module functions are shortcuts for single operations.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

from memtui.errors import UnsafePathError
from memtui.store import files
from memtui.store.locations import STATE_DIR_NAME

_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_LINK_ERRORS = (errno.ELOOP, errno.ENOTDIR, errno.EMLINK)

try:  # POSIX advisory locks; elsewhere locking is a no-op.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


def _refused(shown: str) -> UnsafePathError:
    return UnsafePathError(
        f"{shown} is a symlink or not a folder",
        "memtui keeps its records in FIELD/.memtui/ and never follows a link there: remove the link",
    )


class StateDir:
    """An open folder under ``FIELD/.memtui/`` (``parts`` below it); ``create`` makes missing ones.

    Raises ``UnsafePathError`` when a component is a symlink or not a folder,
    ``FileNotFoundError`` when one is missing and ``create`` is false.
    """

    def __init__(self, root: Path | str, *parts: str, create: bool = True) -> None:
        self.shown = "/".join((STATE_DIR_NAME, *parts))
        fd = os.open(os.fspath(root), _DIR_FLAGS)
        try:
            for part in (STATE_DIR_NAME, *parts):
                if not part or part in (".", "..") or "/" in part or "\x00" in part:
                    raise UnsafePathError(f"not a plain folder name: {part!r}", "this is a bug in memtui")
                child = self._open_child(fd, part, create)
                os.close(fd)
                fd = child
        except BaseException:
            os.close(fd)
            raise
        self.fd = fd

    def _open_child(self, parent: int, part: str, create: bool) -> int:
        try:
            try:
                return os.open(part, _DIR_FLAGS | _NOFOLLOW, dir_fd=parent)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=parent)
                return os.open(part, _DIR_FLAGS | _NOFOLLOW, dir_fd=parent)
        except OSError as exc:
            if exc.errno in _LINK_ERRORS:
                raise _refused(self.shown) from None
            raise

    # ------------------------------------------------------------------ lifetime
    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> StateDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ files
    def _name(self, name: str) -> str:
        if not name or name in (".", "..") or "/" in name or "\x00" in name:
            raise UnsafePathError(f"not a plain file name: {name!r}", "this is a bug in memtui")
        return name

    def open(self, name: str, flags: int, mode: int = 0o644) -> int:
        """``os.open`` of a file in this folder, never through a symlink."""
        try:
            return os.open(self._name(name), flags | _NOFOLLOW | getattr(os, "O_CLOEXEC", 0), mode, dir_fd=self.fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafePathError(
                    f"{self.shown}/{name} is a symlink", "memtui never follows a link in FIELD/.memtui/: remove it"
                ) from None
            raise

    def _open_regular(self, name: str) -> tuple[int, os.stat_result] | None:
        """A regular file here, opened without following a link or blocking; None when it does not exist."""
        try:
            fd = self.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        except FileNotFoundError:
            return None
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            os.close(fd)
            raise UnsafePathError(f"{self.shown}/{name} is not a regular file", "remove it")
        return fd, st

    def read(self, name: str, *, max_bytes: int = files.MAX_READ_BYTES, kind: str = "a file") -> bytes | None:
        """The bytes of a regular file here; None when it does not exist.

        Read through ``files.read_fd``: over ``max_bytes`` raises ``files.FileTooLarge``
        (an ``OSError``) having read at most ``max_bytes + 1`` bytes.
        """
        opened = self._open_regular(name)
        if opened is None:
            return None
        fd, st = opened
        try:
            return files.read_fd(fd, st, max_bytes=max_bytes, name=f"{self.shown}/{name}", kind=kind)
        finally:
            os.close(fd)

    def lines(self, name: str, *, max_line: int = files.MAX_LINE_BYTES) -> files.LineFile | None:
        """The lines of a regular file here, read a chunk at a time (``files.iter_lines``); None when
        it does not exist. The file stays open until its lines are exhausted or it is closed."""
        opened = self._open_regular(name)
        if opened is None:
            return None
        return files.LineFile(opened[0], max_line=max_line)

    def write(self, name: str, data: bytes, *, mode: int = 0o644, durable: bool = True) -> None:
        """Replace ``name`` atomically: a temp file here, ``fsync``, rename over it, ``fsync`` the folder."""
        tmp = f".memtui-{secrets.token_hex(6)}.tmp"
        fd = self.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fchmod(fd, mode)
                if durable:
                    os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, self._name(name), src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=self.fd)
            raise
        if durable:
            self.sync()

    def append(self, name: str, data: bytes, *, before: Callable[[bytes], bytes] | None = None) -> None:
        """Append ``data`` with one ``write`` and ``fsync``, holding an exclusive lock on the file.

        ``before(tail) -> bytes`` may compute what to append from the end of the
        file as it is under the lock (the ledger's hash chain): ``tail`` is the file
        from the start of its last line (``files.tail``: at most ``files.MAX_LINE_BYTES``
        of it), so a huge file is never read to append to it.
        """
        fd = self.open(name, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise UnsafePathError(f"{self.shown}/{name} is not a regular file", "remove it")
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            if before is not None:
                data = before(files.tail(fd))
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)  # closing releases the lock

    def exists(self, name: str) -> bool:
        try:
            os.stat(self._name(name), dir_fd=self.fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        return True

    def unlink(self, name: str) -> None:
        os.unlink(self._name(name), dir_fd=self.fd)

    def names(self) -> list[str]:
        return sorted(os.listdir(self.fd))

    def sync(self) -> None:
        with contextlib.suppress(OSError):
            os.fsync(self.fd)


@contextlib.contextmanager
def opened(root: Path | str, *parts: str, create: bool = True) -> Iterator[StateDir | None]:
    """``StateDir`` as a context; yields None when a folder is missing and ``create`` is false."""
    try:
        folder = StateDir(root, *parts, create=create)
    except FileNotFoundError:
        yield None
        return
    with folder:
        yield folder


def read(root: Path | str, *parts: str, max_bytes: int = files.MAX_READ_BYTES, kind: str = "a file") -> bytes | None:
    """The bytes of ``.memtui/<parts>``; None when it (or a folder on the way) does not exist.

    Over ``max_bytes`` raises ``files.FileTooLarge`` (nothing past the cap is read)."""
    *folders, name = parts
    with opened(root, *folders, create=False) as folder:
        return folder.read(name, max_bytes=max_bytes, kind=kind) if folder is not None else None


def read_lines(root: Path | str, *parts: str, max_line: int = files.MAX_LINE_BYTES) -> files.LineFile | None:
    """The lines of ``.memtui/<parts>`` read a chunk at a time (a log of any size in bounded
    memory; a line over ``max_line`` comes with ``data`` None); None when it does not exist."""
    *folders, name = parts
    with opened(root, *folders, create=False) as folder:
        return folder.lines(name, max_line=max_line) if folder is not None else None


def write(root: Path | str, *parts: str, data: bytes, mode: int = 0o644) -> None:
    """Atomically write ``.memtui/<parts>`` (folders created, never through a link)."""
    *folders, name = parts
    with StateDir(root, *folders) as folder:
        folder.write(name, data, mode=mode)


def unlink(root: Path | str, *parts: str, missing_ok: bool = True) -> None:
    *folders, name = parts
    with opened(root, *folders, create=False) as folder:
        if folder is None:
            if missing_ok:
                return
            raise FileNotFoundError(errno.ENOENT, "no such state file", "/".join(parts))
        try:
            folder.unlink(name)
        except FileNotFoundError:
            if not missing_ok:
                raise


def names(root: Path | str, *parts: str) -> list[str]:
    """The entries of ``.memtui/<parts>`` (empty when the folder does not exist)."""
    with opened(root, *parts, create=False) as folder:
        return folder.names() if folder is not None else []
