"""Whoosh's segment files read through their memory map instead of copied into memory.

A segment is one compound file that Whoosh maps into memory; each file inside it
(terms, postings, stored fields, columns) is opened as a ``BufferFile`` over a
``memoryview`` of the map. ``BufferFile`` wraps that view in a ``BytesIO``, which
copies it: opening a reader of a 100,000-page index copied its 200 MB of segments
onto the heap, and every reader after a commit did it again (the search process
held 480 MB, the app gigabytes while agents wrote).

``ViewFile`` reads the view in place: a read copies only the bytes it returns, and
the rest stays in the page cache, shared and clean. Whoosh 2.7.4 is its last
release; ``install`` replaces the one name ``whoosh.filedb.compound`` uses to make
these files, and a test checks that a reader's files are ``ViewFile``s.
"""

from __future__ import annotations

import os

from whoosh.filedb import compound
from whoosh.filedb.structfile import BufferFile


class ViewIO:
    """A read-only, seekable file over a buffer, without copying it (what ``BytesIO`` would)."""

    __slots__ = ("_view", "_pos", "_len")

    def __init__(self, buf) -> None:  # noqa: ANN001 - a memoryview or bytes
        self._view = memoryview(buf)
        self._pos = 0
        self._len = len(self._view)

    def read(self, size: int | None = -1) -> bytes:
        pos = self._pos
        if size is None or size < 0 or pos + size > self._len:
            end = self._len
        else:
            end = pos + size
        if end <= pos:
            return b""
        self._pos = end
        return self._view[pos:end].tobytes()

    def peek(self, size: int = 1) -> bytes:
        """Bytes ahead without moving (the unpickler reads a whole frame through it, not each
        opcode's bytes with a call of its own)."""
        pos = self._pos
        return self._view[pos : pos + max(size, 1)].tobytes()

    def readinto(self, target) -> int:  # noqa: ANN001 - a writable buffer
        data = self.read(len(memoryview(target)))
        memoryview(target).cast("B")[: len(data)] = data
        return len(data)

    def readline(self, size: int | None = -1) -> bytes:
        pos = self._pos
        limit = self._len if size is None or size < 0 else min(pos + size, self._len)
        view = self._view
        end = pos
        while end < limit:  # lines are short here (pickle opcodes); no search over the whole view
            end += 1
            if view[end - 1] == 10:
                break
        self._pos = end
        return view[pos:end].tobytes()

    def __iter__(self):
        while line := self.readline():
            yield line

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        if whence == os.SEEK_SET:
            pos = offset
        elif whence == os.SEEK_CUR:
            pos = self._pos + offset
        elif whence == os.SEEK_END:
            pos = self._len + offset
        else:
            raise ValueError(f"invalid whence: {whence}")
        if pos < 0:
            raise ValueError("negative seek position")
        self._pos = pos
        return pos

    def tell(self) -> int:
        return self._pos

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def close(self) -> None:
        self._view.release()  # the map can close once no file uses it


class ViewFile(BufferFile):
    """``BufferFile`` reading its buffer in place (see the module docstring)."""

    def __init__(self, buf, name=None, onclose=None) -> None:  # noqa: ANN001 - Whoosh's signature
        self._buf = buf
        self._name = name
        self.file = ViewIO(buf)
        self.onclose = onclose
        self.is_real = False
        self.is_closed = False


def install() -> None:
    """Make Whoosh's compound storage open its files as ``ViewFile`` (idempotent)."""
    compound.BufferFile = ViewFile
