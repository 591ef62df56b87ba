"""The page cache: every page's ``PageInfo`` as last read, so an unchanged page is never parsed twice.

One JSON line per page after a header line (``schema`` and memtui's version),
in the field's folder in the user cache (``pages.json``). The field loads its
pages through it (a re-open is stat-only), and the index builds from it: a page
the field has already read is not parsed again by the index, which only needs
its bytes for the words. A cached entry is used only while the file's size and
modification time are the same; the index also compares the content hash.

Read one line at a time (not one 10 MB ``json.loads``, which would hold the
GIL for its whole run and freeze a user interface on another thread). The cache
is disposable: anything wrong with it means "no cache".

Anyone who can write the user's cache folder could otherwise forge an entry (a
quarantined page summarised as reviewed, with the real file's size and mtime),
so the header carries an HMAC of every line after it, made with the user's key
(``store.signing``); a cache that does not verify is not used at all.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from memtui import __version__
from memtui.field.page import PageInfo
from memtui.store import signing
from memtui.store.safe_write import write_internal_file

CACHE_SCHEMA = 7
CACHE_FILE = "pages.json"


def cache_path(cache_dir: Path) -> Path:
    return Path(cache_dir) / CACHE_FILE


def read_entries(
    cache_dir: Path, wanted: set[str] | None = None, *, signature: str = "memtui"
) -> dict[str, dict[str, Any]]:
    """Raw cache entries by path (only ``wanted`` paths, if given); ``{}`` when there is no usable cache.

    ``signature`` names how the pages were read (which dialects): a cache written
    by another reading is not used.
    """
    pages: dict[str, dict[str, Any]] = {}
    try:
        with open(cache_path(cache_dir), "rb") as handle:
            header = json.loads(handle.readline() or b"null")
            if (
                not isinstance(header, dict)
                or header.get("schema") != CACHE_SCHEMA
                or header.get("version") != __version__
                or header.get("reader") != signature
            ):
                return {}
            body = handle.read()
        if not signing.verify(body, header.get("hmac")):
            return {}  # not written by memtui for this user: forged, or from another account
        for line in body.decode("utf-8").splitlines():
            entry = json.loads(line)
            if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                if wanted is None or entry["path"] in wanted:
                    pages[entry["path"]] = entry
    except (OSError, ValueError):
        return {}
    return pages


def info_of(entry: Any) -> PageInfo | None:
    """The ``PageInfo`` a cache entry holds, or None if it is not one."""
    if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) or not isinstance(entry.get("meta"), dict):
        return None
    try:
        return PageInfo.from_json(entry)
    except (TypeError, ValueError, AttributeError):
        return None


def info_if_unchanged(entry: Any, path: str, size: int, mtime_ns: int) -> PageInfo | None:
    """The cached ``PageInfo`` of ``path`` if the entry describes a file of this size and mtime."""
    if isinstance(entry, dict) and entry.get("path") == path and entry.get("size") == size and (
        entry.get("mtime_ns") == mtime_ns
    ):
        return info_of(entry)
    return None


def write(cache_dir: Path, infos: Iterable[PageInfo], *, signature: str = "memtui") -> None:
    """Write the cache (best effort: it is disposable)."""
    body = "".join(json.dumps(info.to_json(), separators=(",", ":")) + "\n" for info in infos).encode()
    header = json.dumps(
        {"schema": CACHE_SCHEMA, "version": __version__, "reader": signature, "hmac": signing.sign(body)}
    )
    try:
        write_internal_file(cache_path(cache_dir), header.encode() + b"\n" + body)
    except OSError:
        pass
