"""The one reader of files in a field, and hashing bytes.

A field is hostile: where a page was there may now be a symlink (to a secret
elsewhere, or to ``/dev/zero``), a FIFO (which would block a reader for ever), a
folder, or a 1 GB sparse file that takes no disk. Every file memtui opens inside
a field is read here:

- never through a symlink at the last step (``O_NOFOLLOW``), and with ``under``
  (the field folder) never through a symlink at any step: each folder on the
  way is opened relative to the one above it with ``O_NOFOLLOW``;
- regular files only, opened ``O_NONBLOCK`` (a FIFO or a device is refused
  without waiting for a writer);
- the size is checked before reading and enforced while reading: a file over
  ``max_bytes`` raises ``FileTooLarge`` (what, how big, the cap) after reading
  at most ``max_bytes + 1`` bytes. Every read has a cap: ``MAX_READ_BYTES``
  when the caller names none, smaller ones for the kinds of file below;
- logs are read a line at a time (``iter_lines``): memory stays bounded by the
  cap of one line, whatever the size of the file.

Content hashes are SHA-256 of the exact bytes.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Generator
from dataclasses import dataclass

KB = 1024
MB = 1024 * KB

# Caps by kind of file (bytes). Nothing memtui reads whole is bigger than MAX_READ_BYTES.
MAX_READ_BYTES = 64 * MB  # any file read whole: a page, a kept version, an archived copy
MAX_SIDE_BYTES = 4 * MB  # a side file of a format (sidecar, config, relation) or a settings file
MAX_JOURNAL_BYTES = 1 * MB  # a journal of a change in progress
MAX_LINE_BYTES = 1 * MB  # one line of a log read line by line (the ledger, an events log)

_CHUNK = 1 << 20
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def size_text(size: int) -> str:
    """A size as a person reads it: ``512 bytes``, ``64 KB``, ``1.5 MB``, ``1 GB``."""
    for unit, scale in (("GB", 1024**3), ("MB", MB), ("KB", KB)):
        if size >= scale:
            value = size / scale
            return f"{value:.0f} {unit}" if value >= 10 or value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"


class FileTooLarge(OSError):
    """The file is larger than the reader's cap; nothing past the cap was read.

    ``size`` is how big it is (at least), ``limit`` the cap, ``stat`` its
    ``os.stat_result``; ``message`` says all of it in words (``strerror`` too,
    for callers that show ``exc.strerror``).
    """

    def __init__(
        self,
        st: os.stat_result,
        size: int | None = None,
        *,
        limit: int | None = None,
        name: str | None = None,
        kind: str = "a file",
    ) -> None:
        self.size = st.st_size if size is None else size
        self.limit = limit
        self.kind = kind
        self.stat = st
        cap = f", over memtui's cap of {size_text(limit)} for {kind}" if limit is not None else ""
        words = f"{size_text(self.size)} ({self.size:,} bytes){cap}: not read"
        super().__init__(errno.EFBIG, words, name)

    @property
    def message(self) -> str:
        return f"{self.filename or 'the file'} is {self.strerror}"

    def __reduce__(self) -> tuple[object, ...]:
        return (_too_large, (self.stat, self.size, self.limit, self.filename, self.kind))


def _too_large(st: os.stat_result, size: int, limit: int | None, name: str | None, kind: str) -> FileTooLarge:
    return FileTooLarge(st, size, limit=limit, name=name, kind=kind)


def _shown(path: str | os.PathLike[str]) -> str:
    return os.fspath(path)


def _open_under(under: str | os.PathLike[str], path: str | os.PathLike[str]) -> int:
    """Open ``path`` (inside ``under``, or relative to it) with no symlink at any step below ``under``."""
    base = os.path.abspath(os.fspath(under))
    target = os.path.abspath(os.path.join(base, os.fspath(path)))
    rel = os.path.relpath(target, base)
    if rel == ".." or rel.startswith(".." + os.sep):  # a path made from the field's real path
        base = os.path.realpath(base)
        rel = os.path.relpath(target, base)
    parts = [part for part in rel.split(os.sep) if part not in ("", ".")]
    if not parts or parts[0] == "..":
        raise OSError(errno.EXDEV, "not inside the field", os.fspath(path))
    fd = os.open(base, _DIR_FLAGS & ~getattr(os, "O_NOFOLLOW", 0))  # the field itself may be reached by a link
    try:
        for part in parts[:-1]:
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise OSError(errno.ELOOP, "a folder on the way is a symlink or not a folder", target) from None
                raise
            os.close(fd)
            fd = child
        return os.open(parts[-1], _READ_FLAGS, dir_fd=fd)
    finally:
        os.close(fd)


def open_regular(
    path: str | os.PathLike[str], *, dir_fd: int | None = None, under: str | os.PathLike[str] | None = None
) -> tuple[int, os.stat_result] | None:
    """An open descriptor of a regular file and its ``stat``; None if it does not exist.

    Never through a symlink at the last step (at any step below ``under``), never
    blocking; anything but a regular file raises ``OSError`` (``ELOOP`` for a
    symlink, ``EINVAL`` otherwise). The caller closes the descriptor.
    """
    try:
        if under is not None:
            fd = _open_under(under, path)
        else:
            fd = os.open(path, _READ_FLAGS, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
    return fd, st


def read_fd(
    fd: int, st: os.stat_result, *, max_bytes: int = MAX_READ_BYTES, name: str | None = None, kind: str = "a file"
) -> bytes:
    """The bytes of an open regular file: its size checked first, ``max_bytes`` enforced while reading."""
    if st.st_size > max_bytes:
        raise FileTooLarge(st, limit=max_bytes, name=name, kind=kind)
    chunks = []
    total = 0
    while True:
        chunk = os.read(fd, min(_CHUNK, max_bytes + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
        if total > max_bytes:  # it grew while being read
            raise FileTooLarge(st, size=max(total, st.st_size), limit=max_bytes, name=name, kind=kind)
    return b"".join(chunks)


def read_bytes(
    abspath: str | os.PathLike[str],
    *,
    max_bytes: int = MAX_READ_BYTES,
    kind: str = "a file",
    dir_fd: int | None = None,
    under: str | os.PathLike[str] | None = None,
) -> tuple[bytes, os.stat_result] | None:
    """Read a regular file (see the module): its bytes and ``stat``; None if it does not exist.

    ``O_NONBLOCK`` keeps a FIFO put where a page was from blocking the reader;
    anything but a regular file raises ``OSError``. A file over ``max_bytes``
    (by its size, or because it grew while being read) raises ``FileTooLarge``
    after reading at most ``max_bytes + 1`` bytes. ``under``: the folder the
    path is inside, reached with no symlink at any step below it.
    """
    opened = open_regular(abspath, dir_fd=dir_fd, under=under)
    if opened is None:
        return None
    fd, st = opened
    try:
        return read_fd(fd, st, max_bytes=max_bytes, name=_shown(abspath), kind=kind), st
    finally:
        os.close(fd)


def read_file(
    path: str | os.PathLike[str],
    *,
    max_bytes: int = MAX_READ_BYTES,
    kind: str = "a file",
    under: str | os.PathLike[str] | None = None,
) -> bytes:
    """``Path.read_bytes`` through this reader: ``FileNotFoundError`` when it does not exist."""
    result = read_bytes(path, max_bytes=max_bytes, kind=kind, under=under)
    if result is None:
        raise FileNotFoundError(errno.ENOENT, "no such file", os.fspath(path))
    return result[0]


def read_head(
    abspath: str | os.PathLike[str], limit: int, *, under: str | os.PathLike[str] | None = None
) -> tuple[bytes, os.stat_result] | None:
    """The first ``limit`` bytes of a regular file (a raw preview of one too large to read whole)."""
    opened = open_regular(abspath, under=under)
    if opened is None:
        return None
    fd, st = opened
    try:
        return os.read(fd, limit), st
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a log, without its newline.

    ``data`` is None when the line is longer than the reader's cap (its bytes
    were counted, not kept); ``size`` is its length; ``digest`` the SHA-256 of
    its bytes (None for a line over the cap, which is never hashed).
    """

    number: int  # 1-based, counting empty lines too
    data: bytes | None
    size: int
    digest: str | None


def iter_lines(fd: int, *, max_line: int = MAX_LINE_BYTES) -> Generator[Line, None, None]:
    """The lines of an open file, read in chunks: memory stays within ``max_line`` and one chunk.

    Empty lines are yielded too (``number`` counts every line); a last line
    without a newline is yielded when it is not empty.
    """
    number = 1
    held = bytearray()
    size = 0
    over = False
    while True:
        block = os.read(fd, _CHUNK)
        if not block:
            break
        start = 0
        while True:
            end = block.find(b"\n", start)
            stop = len(block) if end < 0 else end
            size += stop - start
            if not over:
                if size > max_line:
                    over = True
                    held = bytearray()
                else:
                    held += block[start:stop]
            if end < 0:
                break
            data = None if over else bytes(held)
            yield Line(number, data, size, None if data is None else sha256_bytes(data))
            number += 1
            held, size, over = bytearray(), 0, False
            start = end + 1
    if size:
        data = None if over else bytes(held)
        yield Line(number, data, size, None if data is None else sha256_bytes(data))


def tail(fd: int, *, limit: int = MAX_LINE_BYTES) -> bytes:
    """The end of an open file from the start of its last line (at most ``limit`` bytes, and
    a last newline); what appending a line needs to know, read without reading the whole file."""
    size = os.fstat(fd).st_size
    if not size:
        return b""
    start = max(0, size - limit - 1)
    data = os.pread(fd, size - start, start)
    cut = data.rstrip().rfind(b"\n")
    return data[cut + 1 :] if cut >= 0 else data


class LineFile:
    """The lines of an open file (``iter_lines``), owning its descriptor: closed once the lines
    are exhausted, on ``close()``, at the end of a ``with`` block, or when collected."""

    def __init__(self, fd: int, *, max_line: int = MAX_LINE_BYTES) -> None:
        self._fd = fd
        self._lines = iter_lines(fd, max_line=max_line)

    def __iter__(self) -> LineFile:
        return self

    def __next__(self) -> Line:
        if self._fd < 0:
            raise StopIteration
        try:
            return next(self._lines)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self._fd >= 0:
            self._lines.close()
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> LineFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()
