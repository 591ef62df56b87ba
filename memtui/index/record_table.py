"""The page records of one index generation: what a warm open needs at once, the rest on demand.

A generation's records (``records.PageRecord``: size, mtime, hash, the frontmatter keys
history needs, status ...) are stored in the index itself, one pickled ``rec`` per
document. Reading all of them back is most of a warm open: 0.2 s at 10,000 pages,
about 2 s and hundreds of MB at 100,000, for a comparison with the folder that needs
only each page's size, mtime, change time, inode, device and sidecar stamp.

So a generation also keeps a **snapshot** (``memtui-records.json``) of those stamps,
written when its records are all known and the index does not move under it (after a
build, after the whole merge beside, when the writer closes): for each page its size,
mtime, ident (change time, inode, device: what the writer cannot set back) and sidecar stamp
(``PageInfo.side``: the sidecar's size and mtime with its own change time, inode and device; a
stamp of size and mtime alone, from an older snapshot, never matches a scan, so the page is
read again), and the references of its ``supersedes``/``superseded_by``. It holds the Whoosh
table-of-contents generation it describes; a snapshot of another commit is not used (the records are read from the index
as before). It is one of the generation's files, so the signed manifest vouches for it
like any other.

``RecordTable`` is a mapping ``path -> PageRecord``: pages from the snapshot are *stubs*
until asked for, then read from the index (one lookup by path, or all at once when
every record is needed, as a whole status computation does). ``stamp`` and
``references`` answer from the stubs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, MutableMapping, Sequence
from pathlib import Path
from typing import Any, cast

from memtui.field.field import sidecar_unchanged
from memtui.index.records import PageRecord

SNAPSHOT_FILE = "memtui-records.json"
SNAPSHOT_FORMAT = 3  # 3: each page's ident (change time, inode, device) besides size and mtime


# (size, mtime_ns, sidecar stamp as PageRecord.side holds it, ident as PageRecord.ident holds it)
Stamp = tuple[int, int, list[Any] | None, tuple[int, int, int] | None]


def stamp_of(record: PageRecord) -> Stamp:
    return record.size, record.mtime_ns, record.side, record.ident


def references_of(record: PageRecord) -> tuple[str, ...]:
    info = record.page_info()
    return (*info.supersedes, *info.superseded_by)


# Reads the records of some pages from the index (all of them when given None).
Loader = Callable[[Iterable[str] | None], dict[str, PageRecord]]


class RecordTable(MutableMapping):
    """``path -> PageRecord`` of a generation; see the module docstring."""

    def with_loader(self, loader: Loader) -> RecordTable:
        """A copy of this table that reads the records it lacks with ``loader``."""
        table = self.copy()
        table._loader = loader
        return table

    def __init__(
        self,
        full: dict[str, PageRecord] | None = None,
        stubs: dict[str, Stamp] | None = None,
        loader: Loader | None = None,
        refs: dict[str, tuple[str, ...]] | None = None,
    ) -> None:
        self._full: dict[str, PageRecord] = dict(full or {})
        self._stubs: dict[str, Stamp] = dict(stubs or {})  # pages not read yet: their stamps
        self._refs: dict[str, tuple[str, ...]] = dict(refs or {})  # of the stubs that have references
        self._loader = loader
        self.changed = bool(self._full) or not self._stubs  # since the snapshot it came from

    # ------------------------------------------------------------------ mapping
    def __getitem__(self, path: str) -> PageRecord:
        found = self._full.get(path)
        if found is not None:
            return found
        if path not in self._stubs:
            raise KeyError(path)
        self._load([path])
        return self._full[path]

    def get(self, path: str, default=None):
        return self[path] if path in self else default

    def __setitem__(self, path: str, record: PageRecord) -> None:
        self._full[path] = record
        self._stubs.pop(path, None)
        self._refs.pop(path, None)
        self.changed = True

    def __delitem__(self, path: str) -> None:
        self._refs.pop(path, None)
        if self._full.pop(path, None) is None and self._stubs.pop(path, None) is None:
            raise KeyError(path)
        self.changed = True

    def pop(self, path: str, *default):
        """Remove a page; its record if it was read, else ``default`` (a stub is not read for this)."""
        if path in self._full or path in self._stubs:
            self.changed = True
        self._refs.pop(path, None)
        found = self._full.pop(path, None)
        if self._stubs.pop(path, None) is not None or found is not None:
            return found if found is not None else (default[0] if default else None)
        if default:
            return default[0]
        raise KeyError(path)

    def __contains__(self, path: object) -> bool:
        return path in self._full or path in self._stubs

    def __iter__(self) -> Iterator[str]:
        yield from list(self._full)
        yield from list(self._stubs)

    def __len__(self) -> int:
        return len(self._full) + len(self._stubs)

    def values(self):
        self.load_all()
        return self._full.values()

    def items(self):
        self.load_all()
        return self._full.items()

    def copy(self) -> RecordTable:
        table = RecordTable(self._full, self._stubs, self._loader, self._refs)
        table.changed = self.changed
        return table

    # ------------------------------------------------------------------ without loading
    def stamp(self, path: str) -> Stamp | None:
        """Size, mtime, the sidecar stamp and the ident the page was indexed with."""
        found = self._full.get(path)
        if found is not None:
            return found.size, found.mtime_ns, found.side, found.ident
        return self._stubs.get(path)

    def compare(self, entries: Sequence) -> tuple[list[str], list[str]]:
        """The folder compared with the index, from scan entries (``field.ScanEntry``): the
        paths whose size, mtime, ident (change time, inode, device: a same-size rewrite with the
        old mtime put back still differs) or sidecar differ from what was indexed or that were
        not indexed, and the indexed paths the scan does not hold (removed)."""
        full, stubs = self._full, self._stubs
        stub_of = stubs.get
        differ: list[str] = []
        known = 0  # entries the index holds
        for entry in entries:
            path = entry.path
            record = full.get(path) if full else None
            stamp = (record.size, record.mtime_ns, record.side, record.ident) if record is not None else stub_of(path)
            if stamp is None:
                differ.append(path)
                continue
            known += 1
            # A page read without a sidecar (``side`` None) is unchanged whatever is beside it.
            if (
                stamp[0] != entry.size
                or stamp[1] != entry.mtime_ns
                or (stamp[3] if len(stamp) > 3 else None) != entry.ident  # a stamp without one: read again
                or (stamp[2] is not None and not sidecar_unchanged(stamp[2], entry.side))
            ):
                differ.append(path)
        if known == len(self):
            return differ, []  # every indexed page is still there (scan paths are distinct)
        present = {entry.path for entry in entries}
        return differ, [path for path in self if path not in present]

    def sha256(self, path: str) -> str:
        return self[path].sha256  # a stub is read for it (a page removed: its bytes may have moved)

    def references(self) -> list[tuple[str, str]]:
        """Every (page, target) of a ``supersedes`` or ``superseded_by``."""
        out: list[tuple[str, str]] = []
        for path, record in self._full.items():
            out.extend((path, target) for target in references_of(record))
        for path, targets in self._refs.items():
            if path in self._stubs:
                out.extend((path, target) for target in targets)
        return out

    @property
    def loaded(self) -> int:
        return len(self._full)

    # ------------------------------------------------------------------ loading
    def load_all(self) -> dict[str, PageRecord]:
        """Every record, read from the index in one pass if some are stubs."""
        if self._stubs:
            self._load(None)
        return self._full

    def _load(self, paths: list[str] | None) -> None:
        if self._loader is None:
            raise KeyError(paths[0] if paths else "records")
        found = self._loader(paths)
        wanted = list(self._stubs) if paths is None else paths
        for path in wanted:
            record = found.get(path)
            if record is None:
                raise LookupError(f"the index has no record of {path} though its snapshot lists it")
            self._full[path] = record
            self._stubs.pop(path, None)
            self._refs.pop(path, None)


# ---------------------------------------------------------------------- the snapshot file
def write_snapshot(gen_dir: Path, toc: int, table: RecordTable, write: Callable[[Path, bytes], None]) -> None:
    """Write the stamps and references of every page of ``table`` as the snapshot of commit ``toc``."""
    paths = list(table)
    stamps = cast(list[Stamp], [table.stamp(path) for path in paths])  # every page of the table has one
    refs = {}
    for path in paths:
        record = table._full.get(path)
        targets = references_of(record) if record is not None else table._refs.get(path, ())
        if targets:
            refs[path] = list(targets)
    payload = {
        "format": SNAPSHOT_FORMAT,
        "toc": toc,
        "paths": paths,
        "sizes": [stamp[0] for stamp in stamps],
        "mtimes": [stamp[1] for stamp in stamps],
        "sides": [stamp[2] for stamp in stamps],
        "idents": [stamp[3] for stamp in stamps],
        "refs": refs,
    }
    write(gen_dir / SNAPSHOT_FILE, json.dumps(payload, separators=(",", ":")).encode())
    table.changed = False


def read_snapshot(gen_dir: Path, toc: int | None) -> tuple[dict[str, Stamp], dict[str, tuple[str, ...]]] | None:
    """The stamps and references of the snapshot of commit ``toc``; None when there is none,
    it describes another commit, or it is malformed (the records are read from the index then).

    Columns, not rows: 100,000 pages load in a fraction of a second. A stamp is only ever
    compared with the folder's, so a wrong one makes a page be read again, nothing worse;
    what could break a comparison (a path that is not text, a sidecar stamp that is not a
    list) makes the whole snapshot unused.
    """
    try:
        data = json.loads((gen_dir / SNAPSHOT_FILE).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != SNAPSHOT_FORMAT or toc is None or data.get("toc") != toc:
        return None
    paths, sizes, mtimes, sides, idents, refs = (
        data.get(k) for k in ("paths", "sizes", "mtimes", "sides", "idents", "refs")
    )
    if not (
        isinstance(paths, list)
        and isinstance(idents, list)
        and isinstance(sizes, list)
        and isinstance(mtimes, list)
        and isinstance(sides, list)
        and isinstance(refs, dict)
    ):
        return None
    if not len(paths) == len(sizes) == len(mtimes) == len(sides) == len(idents):
        return None
    if not all(isinstance(path, str) for path in paths) or not all(s is None or type(s) is list for s in sides):
        return None
    references: dict[str, tuple[str, ...]] = {}
    for path, targets in refs.items():
        if not isinstance(targets, list) or not all(isinstance(t, str) for t in targets):
            return None
        references[path] = tuple(targets)
    stamps = dict(zip(paths, zip(sizes, mtimes, sides, map(_ident, idents))))
    if len(stamps) != len(paths):
        return None  # a page listed twice
    return stamps, references


def _ident(value: Any) -> tuple[int, int, int] | None:
    """A snapshot's ident as a scan holds it (a tuple); None, so the page is read again, if it is not one."""
    if type(value) is list and len(value) == 3 and all(type(part) is int for part in value):
        return (value[0], value[1], value[2])
    return None
