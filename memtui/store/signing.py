"""The user's signing key: what memtui wrote itself can be told from what someone else wrote.

An agent that can write the field can write ``FIELD/.memtui/`` (the journal of
an apply in progress, the ledger of decisions), and one that can write the
user's cache can write the page cache and the search index, whose files Whoosh
unpickles. memtui signs those records with a key that lives outside every field
(``~/.config/memtui/index-signing.key``, named for its first use, created
0600) and trusts only what verifies: HMAC-SHA256 over the exact bytes.

If the key cannot be stored, a key for this process only is used: signed
records written now then do not verify in the next run (caches are rebuilt,
an interrupted apply is reported instead of replayed).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
from typing import Any

from memtui.store import locations

KEY_FILE = "index-signing.key"
KEY_BYTES = 32

_process_key: bytes | None = None
_cached: tuple[str, bytes] | None = None  # (key path, key) once read from disk


def _read_key(path: str) -> bytes | None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
        try:
            data = os.read(fd, 4096)
        finally:
            os.close(fd)
        if len(data) >= KEY_BYTES:
            return data
    return None


def signing_key() -> tuple[bytes, bool]:
    """The user's signing key and whether it persists between runs.

    Created on first use (mode 0600, never through a symlink). Read once per
    process and folder (the tests move the config folder between runs).
    """
    global _process_key, _cached
    path = os.fspath(locations.user_config_dir() / KEY_FILE)
    if _cached is not None and _cached[0] == path:
        return _cached[1], True
    key = _read_key(path)
    if key is None:
        try:
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(secrets.token_bytes(KEY_BYTES))
        except FileExistsError:
            pass  # another memtui made it first
        except OSError:
            if _process_key is None:
                _process_key = secrets.token_bytes(KEY_BYTES)
            return _process_key, False
        key = _read_key(path)
    if key is None:
        if _process_key is None:
            _process_key = secrets.token_bytes(KEY_BYTES)
        return _process_key, False
    _cached = (path, key)
    return key, True


def sign(data: bytes) -> str:
    """HMAC-SHA256 of ``data`` with the user's key, as hex."""
    key, _ = signing_key()
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def verify(data: bytes, signature: Any) -> bool:
    """Does ``signature`` sign ``data`` with the user's key? (Constant-time comparison.)"""
    return isinstance(signature, str) and hmac.compare_digest(signature, sign(data))


def verify_digest(digest: str, signature: Any) -> bool:
    """Does ``signature`` equal a digest computed with ``Hasher``? (Constant-time comparison.)"""
    return isinstance(signature, str) and hmac.compare_digest(signature, digest)


def canonical(value: Any) -> bytes:
    """The one byte form of a JSON value that gets signed (sorted keys, no spaces, ASCII)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def sign_json(value: Any) -> str:
    return sign(canonical(value))


def verify_json(value: Any, signature: Any) -> bool:
    return verify(canonical(value), signature)


class Hasher:
    """An HMAC over bytes fed piece by piece (a file read line by line)."""

    def __init__(self) -> None:
        self._mac = hmac.new(signing_key()[0], digestmod=hashlib.sha256)

    def update(self, data: bytes) -> None:
        self._mac.update(data)

    def hexdigest(self) -> str:
        return self._mac.hexdigest()
