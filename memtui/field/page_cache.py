"""The page cache: every page's ``PageInfo`` as last read, so an unchanged page is never parsed twice.

Kept in the field's folder in the user cache (``pages.bin``). The field loads its
pages through it (a re-open is stat-only), and the index builds from it: a page
the field has already read is not parsed again by the index, which only needs
its bytes for the words. A cached entry is used only while the file's size, modification
time, change time, inode and device are all the same (``PageInfo.ident``): size and mtime
are the writer's to set (a same-size rewrite with ``os.utime`` putting the old mtime back),
the change time, inode and device are not. The index also compares the content hash.

The file (``store.signed_chunks``) is a JSON header line, then signed chunks of
``CHUNK`` page summaries in ``marshal`` form, one tuple of ``PageInfo``'s fields per page.
At 100,000 pages the JSON-lines form of version 7 was 128 MB, took 4.6 s to decode
(2.2 s with cycle collection paused) and held about 1 GB; this form is 57 MB and a
field opened from it holds about 275 MB (schema 9: 76 MB and 420 MB, opened in 1.6 times
the time), because a chunk stores each repeated part once (``shared_parts``: frontmatter
keys and short values, key-line tables, tag counts, empty lists, citation pairs) and the
summaries share them when read back. One
chunk is decoded at a time (a few milliseconds), so a user interface on another
thread keeps its turn at the GIL.

The cache is disposable: anything wrong with it means "no cache". Anyone who can
write the user's cache folder could otherwise forge an entry (a quarantined page
summarised as reviewed, with the real file's size and mtime), so every chunk carries
an HMAC made with the user's key. A cache with a chunk that does not verify is not
used at all, and a row of the wrong shape is not used.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from memtui import __version__
from memtui.field.normal import NormalPage
from memtui.field.page import PageInfo
from memtui.field.shared_parts import PartPool
from memtui.store import signed_chunks
from memtui.store.gc_pause import no_cycle_collection
from memtui.store.schema import schema_version

# What the cache holds (PageInfo's fields) and the code that reads a page into one.
READING_CODE = (
    "memtui.field.page",
    "memtui.field.normal",
    "memtui.field.body",
    "memtui.field.frontmatter",
    "memtui.field.shared_parts",
    "memtui.credentials",
    "memtui.textsafety",
)
CACHE_FILE = "pages.bin"
OLD_FILES = ("pages.json",)  # earlier schemas' files, removed when this one is written
CHUNK = 2000

FIELDS: tuple[str, ...] = PageInfo.__slots__
_WIDTH = len(FIELDS)
# The type every field of a row must have (None allowed where the summary allows it). An empty
# list is stored as () (``shared_parts``).
_LIST = (list, tuple)
_TYPES: dict[str, tuple[type, ...]] = {
    "path": (str,),
    "size": (int,),
    "mtime_ns": (int,),
    "sha256": (str,),
    "meta": (dict,),
    "fm_present": (bool,),
    "fm_error": (str, type(None)),
    "fm_error_line": (int, type(None)),
    "fm_error_rule": (str, type(None)),
    "key_lines": (dict,),
    "body_line": (int,),
    "body_offset": (int,),
    "heading_title": (str, type(None)),
    "tag_counts": (dict,),
    "claim_lines": (int,),
    "untagged_claim_lines": _LIST,
    "links": _LIST,
    "embeds": _LIST,
    "citations": _LIST,
    "numbered_sources": _LIST,
    "inline_chains": _LIST,
    "hazards": _LIST,
    "hazard_counts": (dict,),
    "problems": _LIST,
    "newline": (str,),
    "has_bom": (bool,),
    "line_count": (int,),
    "parsed": (bool,),
    "dialect": (str,),
    "norm": (dict,),
    "side": (list, type(None)),
    "ident": (tuple, type(None)),
}
assert set(_TYPES) == set(FIELDS), "every PageInfo field needs a type here"
_ROW_TYPES = tuple(_TYPES[name] for name in FIELDS)
_PAIRS = tuple(FIELDS.index(name) for name in ("links", "embeds", "citations"))
_NORM = FIELDS.index("norm")
_IDENT = FIELDS.index("ident")


def cache_path(cache_dir: Path) -> Path:
    return Path(cache_dir) / CACHE_FILE


def header(signature: str = "memtui") -> dict[str, Any]:
    """What the cache file's header must hold for a field read with ``signature``."""
    return {"schema": cache_schema(), "version": __version__, "reader": signature}


def cache_schema() -> str:
    """This cache's schema version (``store.schema``): PageInfo's fields, and the code reading a page."""
    return schema_version(PageInfo, code=(*READING_CODE, __name__))


def read_infos(cache_dir: Path, wanted: set[str] | None = None, *, signature: str = "memtui") -> dict[str, PageInfo]:
    """Cached summaries by path (only ``wanted`` paths, if given); ``{}`` when there is no usable cache.

    ``signature`` names how the pages were read (which dialects): a cache written
    by another reading is not used.
    """
    pages: dict[str, PageInfo] = {}
    try:
        with no_cycle_collection():
            for chunk in signed_chunks.read(cache_path(cache_dir), header(signature)):
                if not isinstance(chunk, list):
                    return {}
                for row in chunk:
                    if type(row) is tuple and len(row) == _WIDTH and (wanted is None or row[0] in wanted):
                        info = _info(row)
                        if info is not None:
                            pages[info.path] = info
    except signed_chunks.Unusable:
        return {}
    return pages


def _info(row: tuple[Any, ...]) -> PageInfo | None:
    for value, types in zip(row, _ROW_TYPES):
        if type(value) not in types:
            return None
    for index in _PAIRS:
        for pair in row[index]:
            if type(pair) is not tuple or len(pair) != 2:
                return None
    ident = row[_IDENT]
    if ident is not None and (len(ident) != 3 or any(type(part) is not int for part in ident)):
        return None
    values = list(row)
    try:
        values[_NORM] = NormalPage.from_dict(row[_NORM])
    except TypeError:
        return None
    return PageInfo(*values)


def info_if_unchanged(
    info: PageInfo | None, path: str, size: int, mtime_ns: int, ident: tuple[int, int, int] | None
) -> PageInfo | None:
    """The cached summary of ``path`` if it describes a file of this size, mtime and ``ident``
    (``page.stat_ident``: change time, inode, device, which the writer cannot set back).
    A summary or a scan without an ident never matches: the page is read again."""
    if (
        info is not None
        and ident is not None
        and info.ident == ident
        and info.path == path
        and info.size == size
        and info.mtime_ns == mtime_ns
    ):
        return info
    return None


def rows(infos: Iterable[PageInfo]) -> Iterator[list[tuple[Any, ...]]]:
    """Rows of ``CHUNK`` summaries, their repeated parts made the same object within a chunk
    (``shared_parts``: ``marshal`` then stores each once, and reading shares them)."""
    chunk: list[tuple[Any, ...]] = []
    pool = PartPool()
    for info in infos:
        shared = pool.share(copy.copy(info))  # the field's own summaries are left as they are
        row = [getattr(shared, name) for name in FIELDS]
        row[_NORM] = pool.mapping(shared.norm.to_dict())  # the normalised page, flat (marshal stores builtins)
        chunk.append(tuple(row))
        if len(chunk) == CHUNK:
            yield chunk
            chunk, pool = [], PartPool()
    if chunk:
        yield chunk


def write(cache_dir: Path, infos: Iterable[PageInfo], *, signature: str = "memtui") -> None:
    """Write the cache (best effort: it is disposable)."""
    try:
        signed_chunks.write(cache_path(cache_dir), header(signature), rows(infos))
    except (OSError, ValueError):
        return  # no cache (or a value marshal cannot store: a summary holds only JSON-like values)
    for old in OLD_FILES:
        try:
            (Path(cache_dir) / old).unlink()
        except OSError:
            pass
