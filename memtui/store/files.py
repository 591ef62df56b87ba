"""Reading a file from a field safely, and hashing bytes.

A field is hostile: where a page was there may now be a symlink (to a secret
elsewhere), a FIFO (which would block a reader for ever) or a folder.
``read_bytes`` reads only regular files, never follows a symlink at the last
step and never blocks; with ``max_bytes`` it checks the size before reading and
never reads more than that (a 3 GB sparse file named like a page is not loaded
to find out it is too big). Content hashes are SHA-256 of the exact bytes.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class FileTooLarge(OSError):
    """The file is larger than the reader's limit; ``stat`` is its ``os.stat_result``. Nothing past the limit was read."""

    def __init__(self, st: os.stat_result, size: int | None = None) -> None:
        self.size = st.st_size if size is None else size
        super().__init__(errno.EFBIG, f"{self.size:,} bytes, too large to read")
        self.stat = st


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


def _open_regular(abspath: str | os.PathLike[str]) -> tuple[int, os.stat_result] | None:
    """An open descriptor of a regular file (never through a symlink at the last step); None if gone."""
    try:
        fd = os.open(abspath, _READ_FLAGS)
    except FileNotFoundError:
        return None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file")
    return fd, st


def read_bytes(abspath: str | os.PathLike[str], *, max_bytes: int | None = None) -> tuple[bytes, os.stat_result] | None:
    """Read a regular file without following a symlink at the last step; None if gone.

    ``O_NONBLOCK`` keeps a FIFO put where a page was from blocking the reader;
    anything but a regular file raises ``OSError``. A file over ``max_bytes``
    (by its size, or because it grew while being read) raises ``FileTooLarge``
    after reading at most ``max_bytes + 1`` bytes.
    """
    opened = _open_regular(abspath)
    if opened is None:
        return None
    fd, st = opened
    try:
        if max_bytes is not None and st.st_size > max_bytes:
            raise FileTooLarge(st)
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20 if max_bytes is None else min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if max_bytes is not None and total > max_bytes:
                raise FileTooLarge(st, size=max(total, st.st_size))
        return b"".join(chunks), st
    finally:
        os.close(fd)


def read_head(abspath: str | os.PathLike[str], limit: int) -> tuple[bytes, os.stat_result] | None:
    """The first ``limit`` bytes of a regular file (a raw preview of one too large to read whole)."""
    opened = _open_regular(abspath)
    if opened is None:
        return None
    fd, st = opened
    try:
        return os.read(fd, limit), st
    finally:
        os.close(fd)
