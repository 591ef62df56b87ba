"""A cache file of ``marshal`` chunks, each signed, under a JSON header.

The layout of the page cache and the claims cache: one JSON header line, then
chunks, each a 4-byte little-endian length, a 32-byte HMAC and a ``marshal``
blob. ``marshal`` reads lists, tuples and strings several times faster than
``json`` and keeps a value shared within a chunk shared when read back. The file
is written and read a chunk at a time: a cache of 2,000,000 claims is never held
whole in memory, and another thread (a user interface) runs between chunks.

``marshal`` must never read bytes memtui did not write (crafted input can crash
the interpreter), and anyone who can write the user's cache folder could write
them. So each chunk carries an HMAC, made with the user's key, of the header
line, the chunk's number and its bytes, and a chunk is decoded only after its
HMAC verifies: chunks cannot be forged, reordered or moved from another file.
A file cut short loses its last chunks, which callers treat as not cached. The
format may change between Python versions, so the header names the version that
wrote it. Callers still check the shape of every value they take.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import marshal
import secrets
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from memtui.store import signing
from memtui.store.safe_write import write_internal_file

PYTHON = "{}.{}".format(*sys.version_info[:2])
_MAC = 32


class Unusable(ValueError):
    """The file is missing, from another writer or version, or a chunk is not signed or damaged."""


def _mac(key: bytes, head: bytes, number: int, blob: bytes | memoryview) -> bytes:
    mac = hmac.new(key, head, hashlib.sha256)
    mac.update(number.to_bytes(8, "little"))
    mac.update(blob)
    return mac.digest()


def encode(head: bytes, chunks: Iterable[Any]) -> Iterator[bytes]:
    """The file's parts after ``head`` (its header line) for these chunks
    (``ValueError`` for a value marshal cannot store)."""
    key, _ = signing.signing_key()
    for number, chunk in enumerate(chunks):
        blob = marshal.dumps(chunk)
        yield len(blob).to_bytes(4, "little") + _mac(key, head, number, blob) + blob


def header_line(header: dict[str, Any]) -> bytes:
    """The header line for ``header`` (a new one each time: chunks of two files never match)."""
    return json.dumps({**header, "python": PYTHON, "file": secrets.token_hex(8)}).encode() + b"\n"


def write(path: Path, header: dict[str, Any], chunks: Iterable[Any]) -> None:
    """Write the file atomically, a chunk at a time (``OSError``, ``ValueError`` on failure)."""
    head = header_line(header)
    write_internal_file(path, _parts(head, chunks))


def _parts(head: bytes, chunks: Iterable[Any]) -> Iterator[bytes]:
    yield head
    yield from encode(head, chunks)


def read(path: Path, header: dict[str, Any]) -> Iterator[Any]:
    """The chunks of the file, if its header holds ``header``; each decoded only once its HMAC verifies.

    ``Unusable`` (a ``ValueError``) is raised at once for a missing file or
    another header, and while iterating for a chunk that does not verify.
    """
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise Unusable(str(exc)) from None
    try:
        head = handle.readline()
        found = json.loads(head or b"null")
    except (OSError, ValueError) as exc:
        handle.close()
        raise Unusable(str(exc)) from None
    if not isinstance(found, dict) or any(found.get(k) != v for k, v in {**header, "python": PYTHON}.items()):
        handle.close()
        raise Unusable("written by another version or for another reading")
    return _chunks(handle, head)


def _chunks(handle: IO[bytes], head: bytes) -> Iterator[Any]:
    key, _ = signing.signing_key()
    with handle:
        number = 0
        while True:
            try:
                prefix = handle.read(4 + _MAC)
                if not prefix:
                    return
                size = int.from_bytes(prefix[:4], "little")
                blob = handle.read(size) if len(prefix) == 4 + _MAC else b""
            except OSError as exc:
                raise Unusable(str(exc)) from None
            if size <= 0 or len(blob) != size:
                raise Unusable("a chunk cut short")
            if not hmac.compare_digest(prefix[4:], _mac(key, head, number, blob)):
                raise Unusable("a chunk not signed with this user's key")
            try:
                chunk = marshal.loads(blob)
            except (ValueError, EOFError, TypeError) as exc:
                raise Unusable(str(exc)) from None
            number += 1
            yield chunk
