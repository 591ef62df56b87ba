"""The page list as it was last shown, so a re-launch shows it before anything is parsed.

After each analysis the app writes every row (title, kind, subject, badges...) with
the size and modification time of the page it describes to ``rows.json`` in the
field's cache folder. On the next launch, right after the folder scan, rows whose
page has the same size and time are shown at once; other pages show as "reading"
until the field is loaded. The file is a disposable cache like the others: a
missing or damaged one only means the list fills in a moment later.
"""

from __future__ import annotations

import json
from pathlib import Path

from memtui import __version__
from memtui.field.field import ScanEntry
from memtui.store.safe_write import write_internal_file
from memtui.tui.model import PENDING, PageRow, make_cells, pending_row

ROW_CACHE = "rows.json"
SCHEMA = 1
_FIELDS = ("title", "kind", "subject", "updated", "trust", "status", "errors", "warnings", "proposals")


def load_rows(cache_dir: Path, entries: list[ScanEntry]) -> dict[str, PageRow]:
    """A row for every scanned page: the cached one when the page is unchanged, else a placeholder."""
    try:
        data = json.loads((cache_dir / ROW_CACHE).read_bytes())
        cached = data["rows"] if data.get("schema") == SCHEMA and data.get("version") == __version__ else {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        cached = {}
    rows: dict[str, PageRow] = {}
    for entry in entries:
        hit = cached.get(entry.path) if isinstance(cached, dict) else None
        row = None
        if isinstance(hit, list) and len(hit) == len(_FIELDS) + 2 and hit[:2] == [entry.size, entry.mtime_ns]:
            try:
                row = make_cells(PageRow(entry.path, *hit[2:]))
            except TypeError:
                row = None
        rows[entry.path] = row if row is not None else pending_row(entry.path)
    return rows


def save_rows(cache_dir: Path, rows: dict[str, PageRow], stats: dict[str, tuple[int, int]]) -> None:
    """Write the rows of pages whose size and time are known (best effort)."""
    payload = {
        "schema": SCHEMA,
        "version": __version__,
        "rows": {
            path: [*stats[path], *(getattr(row, name) for name in _FIELDS)]
            for path, row in rows.items()
            if path in stats and row.trust != PENDING
        },
    }
    try:
        write_internal_file(cache_dir / ROW_CACHE, json.dumps(payload, separators=(",", ":")).encode())
    except OSError:
        pass
