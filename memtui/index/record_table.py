"""The page records of one index generation: what a warm open needs at once, the rest on demand.

A generation's records (``records.PageRecord``: size, mtime, hash, the frontmatter keys
history needs, status ...) are stored in the index itself, one pickled ``rec`` per
document. Reading all of them back is most of a warm open: 0.2 s at 10,000 pages,
about 2 s and hundreds of MB at 100,000, for a comparison with the folder that needs
only each page's size, mtime and sidecar stamp.

So a generation also keeps a **snapshot** (``memtui-records.json``) of those stamps,
written when its records are all known and the index does not move under it (after a
build, after the whole merge beside, when the writer closes): for each page its size,
mtime, SHA-256, sidecar stamp, status, successors and the references of its
``supersedes``/``superseded_by``. It holds the Whoosh table-of-contents generation it
describes; a snapshot of another commit is not used (the records are read from the index
as before). It is one of the generation's files, so the signed manifest vouches for it
like any other.

``RecordTable`` is a mapping ``path -> PageRecord``: pages from the snapshot are *stubs*
until asked for, then read from the index (one lookup by path, or all at once when
every record is needed, as a whole status computation does). ``stamp``, ``sha256``,
``status`` and ``references`` answer from the stubs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, MutableMapping
from pathlib import Path
from typing import Any, NamedTuple

from memtui.index.records import PageRecord

SNAPSHOT_FILE = "memtui-records.json"
SNAPSHOT_FORMAT = 1


class Stub(NamedTuple):
    """A page's record as far as a warm open, a rescan and the supersede graph need it."""

    size: int
    mtime_ns: int
    sha256: str
    side: list | None
    status: str
    successors: tuple[str, ...]
    references: tuple[str, ...]  # the targets of its supersedes / superseded_by

    @classmethod
    def of(cls, record: PageRecord) -> Stub:
        info = record.page_info()
        return cls(record.size, record.mtime_ns, record.sha256, record.side, record.status,
                   tuple(record.successors), (*info.supersedes, *info.superseded_by))

    def to_json(self, path: str) -> list:
        return [path, self.size, self.mtime_ns, self.sha256, self.side, self.status,
                list(self.successors), list(self.references)]

    @classmethod
    def from_json(cls, item: Any) -> tuple[str, Stub] | None:
        try:
            path, size, mtime_ns, sha, side, status, successors, references = item
        except (TypeError, ValueError):
            return None
        if not (isinstance(path, str) and isinstance(size, int) and isinstance(mtime_ns, int)
                and isinstance(sha, str) and isinstance(status, str)):
            return None
        if not (side is None or isinstance(side, list)):
            return None
        if not (isinstance(successors, list) and isinstance(references, list)
                and all(isinstance(s, str) for s in (*successors, *references))):
            return None
        return path, cls(size, mtime_ns, sha, side, status, tuple(successors), tuple(references))


# Reads the records of some pages from the index (all of them when given None).
Loader = Callable[[Iterable[str] | None], dict[str, PageRecord]]


class RecordTable(MutableMapping):
    """``path -> PageRecord`` of a generation; see the module docstring."""

    def __init__(self, full: dict[str, PageRecord] | None = None, stubs: dict[str, Stub] | None = None,
                 loader: Loader | None = None) -> None:
        self._full: dict[str, PageRecord] = dict(full or {})
        self._stubs: dict[str, Stub] = dict(stubs or {})
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
        self.changed = True

    def __delitem__(self, path: str) -> None:
        if self._full.pop(path, None) is None and self._stubs.pop(path, None) is None:
            raise KeyError(path)
        self.changed = True

    def pop(self, path: str, *default):
        """Remove a page; its record if it was read, else ``default`` (a stub is not read for this)."""
        if path in self._full or path in self._stubs:
            self.changed = True
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
        table = RecordTable(self._full, self._stubs, self._loader)
        table.changed = self.changed
        return table

    # ------------------------------------------------------------------ without loading
    def stub(self, path: str) -> Stub | None:
        found = self._full.get(path)
        if found is not None:
            return Stub.of(found)
        return self._stubs.get(path)

    def stamp(self, path: str) -> tuple[int, int, list | None] | None:
        """Size, mtime and the sidecar stamp the page was indexed with."""
        found = self._full.get(path)
        if found is not None:
            return found.size, found.mtime_ns, found.side
        stub = self._stubs.get(path)
        return (stub.size, stub.mtime_ns, stub.side) if stub is not None else None

    def sha256(self, path: str) -> str | None:
        found = self._full.get(path)
        if found is not None:
            return found.sha256
        stub = self._stubs.get(path)
        return stub.sha256 if stub is not None else None

    def references(self) -> list[tuple[str, str]]:
        """Every (page, target) of a ``supersedes`` or ``superseded_by``."""
        out: list[tuple[str, str]] = []
        for path, record in self._full.items():
            info = record.page_info()
            out.extend((path, target) for target in (*info.supersedes, *info.superseded_by))
        for path, stub in self._stubs.items():
            out.extend((path, target) for target in stub.references)
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


# ---------------------------------------------------------------------- the snapshot file
def write_snapshot(gen_dir: Path, toc: int, table: RecordTable, write: Callable[[Path, bytes], None]) -> None:
    """Write the stubs of every record of ``table`` as the snapshot of commit ``toc``."""
    pages = [table.stub(path).to_json(path) for path in table]
    data = json.dumps({"format": SNAPSHOT_FORMAT, "toc": toc, "pages": pages}, separators=(",", ":")).encode()
    write(gen_dir / SNAPSHOT_FILE, data)
    table.changed = False


def read_snapshot(gen_dir: Path, toc: int | None) -> dict[str, Stub] | None:
    """The stubs of the snapshot of commit ``toc``; None when there is none, it describes
    another commit, or it is damaged (the records are read from the index then)."""
    try:
        data = json.loads((gen_dir / SNAPSHOT_FILE).read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != SNAPSHOT_FORMAT or data.get("toc") != toc or toc is None:
        return None
    pages = data.get("pages")
    if not isinstance(pages, list):
        return None
    stubs: dict[str, Stub] = {}
    for item in pages:
        parsed = Stub.from_json(item)
        if parsed is None:
            return None
        stubs[parsed[0]] = parsed[1]
    return stubs
