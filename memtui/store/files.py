"""Reading a file from a field safely, and hashing bytes.

A field is hostile: where a page was there may now be a symlink (to a secret
elsewhere), a FIFO (which would block a reader for ever) or a folder.
``read_bytes`` reads only regular files, never follows a symlink at the last
step and never blocks. Content hashes are SHA-256 of the exact bytes.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()

def read_bytes(abspath: str | os.PathLike[str]) -> tuple[bytes, os.stat_result] | None:
    """Read a regular file without following a symlink at the last step; None if gone.

    ``O_NONBLOCK`` keeps a FIFO put where a page was from blocking the reader;
    anything but a regular file raises ``OSError``.
    """
    flags = (
        os.O_RDONLY
        | getattr(os, "O_NOFOLLOW", 0)
        | getattr(os, "O_CLOEXEC", 0)
        | getattr(os, "O_NONBLOCK", 0)
    )
    try:
        fd = os.open(abspath, flags)
    except FileNotFoundError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks), st
    finally:
        os.close(fd)
