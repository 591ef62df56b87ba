"""The user's signing key: what memtui wrote itself can be told from what someone else wrote.

An agent that can write the field can write ``FIELD/.memtui/`` (the journal of
an apply in progress, the ledger of decisions), and one that can write the
user's cache can write the page cache and the search index, whose files Whoosh
unpickles. memtui signs those records with a key that lives outside every field
(``~/.config/memtui/index-signing.key``, named for its first use, 0600) and
trusts only what verifies: HMAC-SHA256 over the exact bytes.

The key is created atomically: written whole to a temporary file, then linked
to its name, under a lock (``index-signing.key.lock``), so a first run killed
half-way never leaves an empty key behind. A key file shorter than a key (left
by an older memtui killed while creating it) holds nothing memtui ever signed
with, and is replaced the same way. A key file that is a symlink, or not a
regular file, is never read through or replaced: ``key_status()`` says what is
wrong with it.

Records about a field that must not be editable from the field (the anchored
head of its ledger, the apply journals it has open) are kept beside the key,
``~/.config/memtui/fields/<sha256 of the field's resolved path>.<kind>.json``,
signed with it (``write_record`` / ``read_record``).

If the key cannot be stored or read, a key for this process only is used:
signed caches written now then do not verify in the next run (they are
rebuilt), and the review ledger refuses to record a decision (it would be
reported done, then ignored as forged): ``key_status().problem`` says why.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import json
import os
import secrets
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from memtui.store import locations

KEY_FILE = "index-signing.key"
LOCK_FILE = "index-signing.key.lock"
KEY_BYTES = 32
_MAX_KEY_BYTES = 4096

try:  # POSIX advisory locks; elsewhere the lock is a no-op.
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class KeyStatus:
    """What memtui signs with in this process."""

    path: str  # where the user's key lives
    persistent: bool  # False: a key for this process only (see ``problem``)
    problem: str | None  # why the key does not persist; None when it does
    created: bool  # this process made the key (a first run here, or ~/.config/memtui was lost)
    repaired: bool  # this process replaced a key file too short to be a key


_process_key: bytes | None = None
_cached: tuple[KeyStatus, bytes] | None = None  # per key path (the tests move the config folder between runs)


class _Unusable(Exception):
    """The key file exists but memtui must not read it or replace it."""


def _read_key(path: str) -> bytes | None:
    """The key file's bytes (None: missing); ``_Unusable`` for a link or a file that is not a regular one."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _Unusable(
                f"{path} is a symlink: memtui never reads its key through a link; "
                "replace the link with a copy of the file it points to (mode 0600)"
            ) from None
        raise _Unusable(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _Unusable(f"{path} is not a regular file: move it away, and memtui makes a new key")
        data = b""
        while len(data) <= _MAX_KEY_BYTES and (chunk := os.read(fd, _MAX_KEY_BYTES + 1 - len(data))):
            data += chunk
        return data[:_MAX_KEY_BYTES]
    except OSError as exc:
        raise _Unusable(f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


@contextlib.contextmanager
def _key_lock(folder: str) -> Iterator[None]:
    fd = os.open(
        os.path.join(folder, LOCK_FILE),
        os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0),
        0o600,
    )
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _install_key(folder: str, path: str, *, replace: bool) -> None:
    """Write a new key whole to a temporary file, then give it its name in one step.

    Without ``replace`` the name is taken with ``link`` (which fails if the key
    appeared meanwhile); with it a short key file is renamed over.
    """
    tmp = os.path.join(folder, f".{KEY_FILE}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        try:
            os.write(fd, secrets.token_bytes(KEY_BYTES))
            os.fsync(fd)
        finally:
            os.close(fd)
        if replace:
            os.replace(tmp, path)
        else:
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass  # another memtui made it first: theirs is used
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
                    raise
                os.replace(tmp, path)  # no hard links here; the lock keeps other memtuis out
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    with contextlib.suppress(OSError):
        dir_fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def _load_key(path: str) -> tuple[bytes, bool, bool]:
    """(key, created, repaired) from the key file, made or repaired first if needed.

    ``_Unusable`` when it cannot be used, ``OSError`` when it cannot be made.
    """
    key = _read_key(path)
    if key is not None and len(key) >= KEY_BYTES:
        return key, False, False
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    with _key_lock(folder):
        key = _read_key(path)  # another memtui may have made or repaired it meanwhile
        if key is not None and len(key) >= KEY_BYTES:
            return key, False, False
        repaired = key is not None  # shorter than a key: never used to sign anything
        _install_key(folder, path, replace=repaired)
        key = _read_key(path)
    if key is None or len(key) < KEY_BYTES:
        raise _Unusable(f"{path} could not be made (it is still missing or short)")
    return key, not repaired, repaired


def _this_process_key() -> bytes:
    global _process_key
    if _process_key is None:
        _process_key = secrets.token_bytes(KEY_BYTES)
    return _process_key


def _current() -> tuple[KeyStatus, bytes]:
    global _cached
    path = os.fspath(locations.user_config_dir() / KEY_FILE)
    if _cached is not None and _cached[0].path == path:
        return _cached
    try:
        key, created, repaired = _load_key(path)
        status = KeyStatus(path, True, None, created, repaired)
    except _Unusable as exc:
        key, status = _this_process_key(), KeyStatus(path, False, str(exc), False, False)
    except OSError as exc:
        problem = f"cannot create {path}: {exc.strerror or exc}; make that folder writable"
        key, status = _this_process_key(), KeyStatus(path, False, problem, False, False)
    _cached = (status, key)
    return _cached


def signing_key() -> tuple[bytes, bool]:
    """The user's signing key and whether it persists between runs.

    Created on first use (mode 0600, whole or not at all, never through a
    symlink). Read once per process and key path.
    """
    status, key = _current()
    return key, status.persistent


def key_status() -> KeyStatus:
    """Whether the key persists, and if not why (see ``KeyStatus``)."""
    return _current()[0]


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


# --------------------------------------------------------------------------- records kept outside the field

RECORDS_DIR = "fields"  # under the user's config folder, beside the key: one record file per field and kind
_MAX_RECORD_BYTES = 1 << 20


def field_id(root: str | os.PathLike[str]) -> str:
    """The identity of a field: sha256 of its resolved path (a copy elsewhere is another field)."""
    return hashlib.sha256(os.fsencode(os.path.realpath(root))).hexdigest()


def record_path(root: str | os.PathLike[str], kind: str) -> str:
    """Where memtui keeps its ``kind`` record about a field, outside it (an agent writing the
    field cannot reach it): ``~/.config/memtui/fields/<field id>.<kind>.json``."""
    return os.fspath(locations.user_config_dir() / RECORDS_DIR / f"{field_id(root)}.{kind}.json")


def read_record(root: str | os.PathLike[str], kind: str) -> tuple[dict[str, Any] | None, str | None]:
    """(the signed body, None), (None, None) when there is no record, (None, why) when it does not verify.

    Never read through a link; bounded; the body must name this field.
    """
    path = record_path(root, kind)
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        return None, f"cannot read {path}: {exc.strerror or exc}"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, f"{path} is not a regular file"
        data = b""
        while len(data) <= _MAX_RECORD_BYTES and (chunk := os.read(fd, _MAX_RECORD_BYTES + 1 - len(data))):
            data += chunk
    except OSError as exc:
        return None, f"cannot read {path}: {exc.strerror or exc}"
    finally:
        os.close(fd)
    try:
        value = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None, f"{path} is damaged"
    if not isinstance(value, dict):
        return None, f"{path} is damaged"
    body = {key: item for key, item in value.items() if key != "mac"}
    if not verify_json(body, value.get("mac")) or body.get("field") != os.path.realpath(root):
        return None, f"{path} is not signed with this machine's key for this field"
    return body, None


def write_record(root: str | os.PathLike[str], kind: str, body: dict[str, Any]) -> None:
    """Write a signed record about a field atomically (temp file, fsync, rename; mode 0600)."""
    path = record_path(root, kind)
    folder = os.path.dirname(path)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    full = dict(body, field=os.path.realpath(root))
    full["mac"] = sign_json(full)
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        try:
            os.write(fd, json.dumps(full, sort_keys=True).encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
