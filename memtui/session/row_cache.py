"""The page list as it was last shown, so a re-launch shows it before anything is parsed.

After each analysis the app writes every row (title, kind, subject, badges...) with
the size, modification time and ident (change time, inode, device) of the page it
describes to ``rows.json`` in the field's cache folder, and the stamp of the sidecar read with it
(an aictx ``<page>.json``, which decides the row's status, title and trust). On the next launch,
right after the folder scan, rows whose page and sidecar have the same stamp are shown at once
(size and mtime alone are the writer's to set back: a same-size rewrite would keep a "reviewed"
row, a same-length sidecar rewrite a "stale" one); other pages show as "reading"
until the field is loaded. The file is a disposable cache like the others: a
missing or damaged one only means the list fills in a moment later. Its first
line carries an HMAC of the rest made with the user's key, so rows forged by
someone who can write the cache folder (a quarantined page shown as reviewed)
are never shown.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from memtui import __version__
from memtui.field.field import ScanEntry
from memtui.render.glyphs import PENDING
from memtui.session.rows import PageRow, make_cells, pending_row
from memtui.store import signing
from memtui.store.safe_write import write_internal_file
from memtui.store.schema import schema_version

ROW_CACHE = "rows.json"


class OnDisk(Protocol):
    """What the row cache needs of a page: its size, modification time and ident (a ``PageInfo``, a ``ScanEntry``)."""

    @property
    def size(self) -> int: ...

    @property
    def mtime_ns(self) -> int: ...

    @property
    def ident(self) -> tuple[int, int, int] | None: ...

    @property
    def side(self) -> Sequence[Any] | None: ...


_STAMP = 5  # size, mtime_ns, ctime_ns, inode, device: the first items of a cached row (its sidecar's: the last)


def _stamp(page: OnDisk) -> list[int] | None:
    """The stamp a row is kept with; None for a page not read from disk (its row is not kept)."""
    ident = page.ident
    return None if ident is None else [page.size, page.mtime_ns, *ident]


def _side(page: OnDisk) -> list[Any] | None:
    """The sidecar stamp a row is kept with (``page.side_stamp``: size, mtime, change time, inode,
    device), [] when there was none, None when the page was read without looking (any will do).
    A ``PageInfo`` holds ``[path, *stamp]`` (path "" when absent); a ``ScanEntry`` the stamp."""
    side = page.side
    if side is None:
        return None
    if side and isinstance(side[0], str):
        return list(side[1:]) if side[0] else []
    return list(side)


_FIELDS = ("title", "kind", "subject", "updated", "trust", "status", "errors", "warnings", "proposals")


def cache_schema() -> str:
    """The row cache's schema version (``store.schema``): a row's fields, and the code that makes rows."""
    code = ("memtui.session.rows", "memtui.session.analysis", "memtui.field.checks", "memtui.field.trust")
    return schema_version(PageRow, code=(*code, "memtui.field.history", "memtui.render.glyphs", __name__))


def load_rows(cache_dir: Path, entries: list[ScanEntry]) -> dict[str, PageRow]:
    """A row for every scanned page: the cached one when the page is unchanged, else a placeholder."""
    try:
        header, _, body = (cache_dir / ROW_CACHE).read_bytes().partition(b"\n")
        meta = json.loads(header)
        trusted = meta.get("schema") == cache_schema() and meta.get("version") == __version__
        cached = json.loads(body) if trusted and signing.verify(body, meta.get("hmac")) else {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        cached = {}
    rows: dict[str, PageRow] = {}
    for entry in entries:
        hit = cached.get(entry.path) if isinstance(cached, dict) else None
        row = None
        stamp = _stamp(entry)
        if (
            isinstance(hit, list)
            and len(hit) == len(_FIELDS) + _STAMP + 1
            and stamp is not None
            and hit[:_STAMP] == stamp
            and (hit[-1] is None or hit[-1] == (list(entry.side) if entry.side is not None else []))
        ):
            try:
                row = make_cells(PageRow(entry.path, *hit[_STAMP:-1]))
            except TypeError:
                row = None
        rows[entry.path] = row if row is not None else pending_row(entry.path)
    return rows


class RowCacheWriter:
    """Writes ``rows.json``, each row encoded once: a row the analysis kept (the same object,
    for a page of the same size and time) reuses its bytes from the last write. At 100,000
    pages encoding every row took about a second per write, while an agent wrote pages and
    the search index waited for the interpreter; now a write joins the kept parts and
    encodes the rows that changed."""

    def __init__(self) -> None:
        # path -> (row, [size, mtime_ns, sidecar stamp], ident, the row's bytes as last written)
        self._parts: dict[str, tuple[PageRow, list[Any], tuple[int, int, int], bytes]] = {}
        self._lock = threading.Lock()  # a worker's write, and the last one as the app closes

    def save(self, cache_dir: Path, rows: dict[str, PageRow], pages: Mapping[str, OnDisk]) -> None:
        """Write the rows of pages whose stamp is known (``pages``: path -> an object with
        ``size``, ``mtime_ns``, ``ident`` and ``side``), best effort."""
        with self._lock:
            self._save(cache_dir, rows, pages)

    def _save(self, cache_dir: Path, rows: dict[str, PageRow], pages: Mapping[str, OnDisk]) -> None:
        kept = self._parts
        parts: dict[str, tuple[PageRow, list[Any], tuple[int, int, int], bytes]] = {}
        for path, row in rows.items():
            info = pages.get(path)
            if info is None or row.trust == PENDING:
                continue
            ident = info.ident
            if ident is None:
                continue
            size, mtime_ns, side = key = [info.size, info.mtime_ns, _side(info)]
            part = kept.get(path)
            if part is None or part[0] is not row or part[1] != key or part[2] != ident:
                encoded = json.dumps(
                    {path: [size, mtime_ns, *ident, *(getattr(row, name) for name in _FIELDS), side]},
                    separators=(",", ":"),
                ).encode()[1:-1]
                part = (row, key, ident, encoded)
            parts[path] = part
        self._parts = parts
        body = b"{" + b",".join([part[3] for part in parts.values()]) + b"}"
        header = json.dumps({"schema": cache_schema(), "version": __version__, "hmac": signing.sign(body)}).encode()
        try:
            write_internal_file(cache_dir / ROW_CACHE, header + b"\n" + body)
        except OSError:
            pass
