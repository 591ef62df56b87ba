"""A page as the index sees it: read once, turned into a Whoosh document and a record.

``read_page_doc`` reads one file (never following a symlink, never blocking on
a FIFO) and reads it the way the rest of memtui does: through the field's own
page parser (``memtui.field.page.info_from_bytes``), or, when the field has
already read those exact bytes, from its ``PageInfo`` in the page cache. It
returns the text fields to index plus a ``PageRecord``: size, mtime and SHA-256
(the *inputs* the index was built from), the frontmatter keys the supersede
graph and trust need, and the page's status. Records are stored inside the
index (the ``rec`` field), so a warm open compares them with a ``stat`` of the
folder without reading any page.

What search reads besides title, summary and body (aliases, tags, description,
Claude Code's ``name``, ``lang``) is read from ``PageInfo.meta`` in one place,
``search_meta``; the page's language (``analysis.detect_language``) and its
inline ``#tags`` come from its text.

Statuses come from ``memtui.field.history.History`` run over light page
summaries made from the records (``compute_statuses``): the same rules the rest
of memtui uses, without re-parsing page bodies.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

from memtui.field import body as body_mod
from memtui.field import trust as trust_mod
from memtui.field.field import PLAIN_READER, Field, PageReader, side_matches
from memtui.field.history import CURRENT, History
from memtui.field.normal import NormalPage
from memtui.field.page import (
    MAX_INDEX_BYTES,
    MAX_PARSE_BYTES,
    PageInfo,
    decode,
    side_stamp,
    stat_ident,
    too_large_info,
)
from memtui.field.shared_parts import LIST_FIELDS, PartPool
from memtui.index.analysis import (
    DETECT_CHARS,
    SUMMARY_REPEAT,
    TITLE_REPEAT,
    PageTextValue,
    detect_language,
    head_terms,
    inline_tags,
    tag_terms,
)
from memtui.store.files import FileTooLarge, read_bytes, read_head, sha256_bytes

# Frontmatter keys kept in a record: what History, resolve() and trust_state() read.
HISTORY_KEYS = (
    "id",
    "uuid",
    "title",
    "subject",
    "kind",
    "valid_from",
    "valid_to",
    "created",
    "updated",
    "supersedes",
    "reviewed",
    "taint",
    "origin",
    "status",
    "lifecycle",
    "decision_status",
    "memory_status",
    "superseded_by",
    "aliases",
    "alias",
)
# Of those, the ones whose change can change some page's status.
STATUS_KEYS = (
    "id",
    "uuid",
    "title",
    "subject",
    "kind",
    "valid_from",
    "valid_to",
    "created",
    "supersedes",
    "status",
    "lifecycle",
    "decision_status",
    "memory_status",
    "superseded_by",
    "aliases",
    "alias",
)
# What a dialect's reading (``PageInfo.norm``) a record keeps: what History, resolve() and trust read.
NORM_KEYS = HISTORY_KEYS + ("ids", "tainted", "role")


class StoredRecord(NamedTuple):
    """A ``PageRecord`` as the index stores it (a plain tuple of these fields, in this order;
    the index's schema version is made from them, ``analysis.RECIPE``)."""

    size: int
    mtime_ns: int
    sha256: str
    meta: dict[str, Any]
    heading: str | None
    title: str
    trust: str
    tag_counts: dict[str, int]
    status: str
    successors: list[str]
    norm: dict[str, Any]
    dialect: str
    side: list[Any] | None
    ident: tuple[int, int, int] | None


@dataclass(slots=True)
class PageRecord:
    """What the index remembers about a page besides its terms."""

    path: str
    size: int
    mtime_ns: int
    sha256: str
    meta: dict[str, Any]
    heading: str | None
    title: str
    trust: str
    tag_counts: dict[str, int]
    status: str = CURRENT
    successors: tuple[str, ...] = ()
    norm: dict[str, Any] = field(default_factory=dict)  # the dialect's reading, light (NORM_KEYS)
    dialect: str = "memtui"
    side: list[Any] | None = None  # the sidecar read with the page (see PageInfo.side)
    # Change time, inode, device of the file read (``page.stat_ident``): with size and mtime, what
    # says the page is unchanged since it was indexed (the writer can set size and mtime back).
    ident: tuple[int, int, int] | None = None
    _info: PageInfo | None = field(default=None, repr=False, compare=False)

    def to_stored(self) -> tuple[Any, ...]:
        """The record as the index stores it: a plain tuple of ``StoredRecord``'s fields."""
        stored = [getattr(self, name) for name in StoredRecord._fields]
        stored[StoredRecord._fields.index("successors")] = list(self.successors)
        return tuple(stored)

    @classmethod
    def from_stored(cls, path: str, stored: Any) -> PageRecord | None:
        """Rebuild a record from the index; ``None`` if it is not one this version wrote."""
        try:
            got = StoredRecord._make(stored)
        except (TypeError, ValueError):
            return None
        if not (isinstance(got.size, int) and isinstance(got.mtime_ns, int) and isinstance(got.sha256, str)):
            return None
        if not isinstance(got.meta, dict) or not isinstance(got.tag_counts, dict) or not isinstance(got.norm, dict):
            return None
        if got.side is not None and not isinstance(got.side, list):
            return None
        ident = got.ident
        if ident is not None:
            if not isinstance(ident, (tuple, list)) or len(ident) != 3 or any(type(p) is not int for p in ident):
                return None
            ident = (ident[0], ident[1], ident[2])  # a list when it came back from JSON
        try:
            successors = tuple(got.successors)
        except TypeError:
            return None
        values = got._asdict()
        values.update(
            ident=ident,
            successors=successors,
            **{name: str(values[name]) for name in ("title", "trust", "status", "dialect")},
        )
        return cls(path, **values)

    def page_info(self) -> PageInfo:
        """A light ``PageInfo`` (frontmatter and the dialect's reading, no body) for the supersede graph.

        Its body fields are empty and shared by every light summary (``()`` and one empty dict,
        as ``shared_parts`` holds them): nine new empty containers a page were 53 MB at 100,000."""
        if self._info is None:
            self._info = PageInfo(
                path=self.path,
                size=self.size,
                mtime_ns=self.mtime_ns,
                sha256=self.sha256,
                meta=self.meta,
                heading_title=self.heading,
                norm=NormalPage.from_dict(self.norm),
                dialect=self.dialect,
                side=self.side,
                ident=self.ident,
                key_lines=_NO_COUNTS,
                tag_counts=_NO_COUNTS,
                hazard_counts=_NO_COUNTS,
                **_NO_BODY,  # type: ignore[arg-type]
            )
        return self._info

    def forget_page_info(self) -> None:
        """Drop the light summary ``page_info`` made (it is made again when asked for)."""
        self._info = None

    def status_key(self) -> tuple:
        """Everything about this page that can change any page's status."""
        return (
            self.heading,
            tuple(repr(self.meta.get(k)) for k in STATUS_KEYS),
            tuple(repr(self.norm.get(k)) for k in NORM_KEYS),
        )


_NO_COUNTS: dict[str, int] = {}  # never changed: a PageInfo is read-only once built
_NO_BODY = dict.fromkeys(LIST_FIELDS, ())


def share_parts(records: list[PageRecord]) -> list[PageRecord]:
    """``records`` with their equal parts made one object (``shared_parts``), in place.

    A build helper sends its records in one pickle, which keeps the sharing: the same
    frontmatter keys, dates and kinds, the same tag counts, held once in the parent."""
    pool = PartPool()
    for record in records:
        record.meta = pool.mapping(record.meta)
        record.tag_counts = pool.mapping(record.tag_counts, whole=True)
        record.norm = pool.mapping(record.norm)
        record.trust = pool.string(record.trust)
        record.dialect = pool.string(record.dialect)
    return records


@dataclass(frozen=True, slots=True)
class SearchMeta:
    """The frontmatter search reads besides title and summary."""

    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    description: str = ""
    name: str = ""  # Claude Code memories name themselves with ``name:``
    lang: str = ""  # ``lang:`` or ``language:`` as written


def _strings(value: Any) -> tuple[str, ...]:
    """A YAML list, or a comma-separated string, as strings."""
    if value is None or isinstance(value, bool):
        return ()
    items: Sequence[str | int | float]
    if isinstance(value, (list, tuple, set)):
        items = [item for item in value if isinstance(item, (str, int, float)) and not isinstance(item, bool)]
    elif isinstance(value, str):
        items = value.split(",") if "," in value else [value]
    elif isinstance(value, (int, float)):
        items = [value]
    else:
        return ()
    return tuple(text for item in items if (text := str(item).strip()))


def search_meta(meta: dict[str, Any], norm: dict[str, Any] | None = None) -> SearchMeta:
    """What search reads from a page's frontmatter: ``aliases``/``alias``, ``tags``/``tag``
    (a list, or words separated by commas or spaces), ``description`` (``summary`` is
    read as ``PageInfo.summary``), ``name`` and ``lang``/``language``.

    The one place these keys are read; ``norm`` (the page's dialect reading, e.g. a
    sidecar's tags, a Claude Code memory's description) comes before the frontmatter.
    """
    if norm:
        meta = {**meta, **{key: norm[key] for key in ("aliases", "tags", "description") if key in norm}}
    tags: tuple[str, ...] = ()
    for key in ("tags", "tag"):
        value = meta.get(key)
        if isinstance(value, str) and "," not in value:
            tags = tuple(value.split())
        else:
            tags = _strings(value)
        if tags:
            break
    return SearchMeta(
        aliases=_strings(meta.get("aliases")) or _strings(meta.get("alias")),
        tags=tags,
        description=_text(meta.get("description")) or "",
        name=_text(meta.get("name")) or "",
        lang=_text(meta.get("lang")) or _text(meta.get("language")) or "",
    )


@dataclass(slots=True)
class PageDoc:
    """One page ready to be written to the index."""

    record: PageRecord
    summary: str
    body: str
    tags: list[str]
    search: SearchMeta = field(default_factory=SearchMeta)
    lang: str = ""
    inline_tags: list[str] = field(default_factory=list)

    def text_parts(self) -> tuple:
        """Everything but the record, as plain values (``marshal``): a build helper keeps its
        pages' texts in a temporary file, not in memory, until the statuses come back."""
        s = self.search
        return (
            self.summary,
            self.body,
            list(self.tags),
            (s.aliases, s.tags, s.description, s.name, s.lang),
            self.lang,
            list(self.inline_tags),
        )

    @classmethod
    def from_text_parts(cls, record: PageRecord, parts: tuple) -> PageDoc:
        summary, body, tags, search, lang, inline_tags = parts
        return cls(record, summary, body, tags, SearchMeta(*search), lang, inline_tags)

    def document(self) -> dict[str, Any]:
        rec = self.record
        page = rec.page_info()  # the dialect's reading first, then the frontmatter: as the field sees it
        stem = PurePosixPath(rec.path).stem
        extra = self.search
        ident = _text(page.id) or _text(page.uuid) or next(iter(page.ids), None)
        names = [*extra.aliases, extra.name] if extra.name and extra.name != rec.title else list(extra.aliases)
        abouts = list(dict.fromkeys(t for t in (self.summary, extra.description) if t))
        text = PageTextValue(
            (
                *[rec.title] * TITLE_REPEAT,
                *names * TITLE_REPEAT,
                stem,
                ident or "",
                *[about for about in abouts for _ in range(SUMMARY_REPEAT)],
                " ".join(extra.tags),
                self.body,
            ),
            self.lang,
        )
        ftags = tag_terms([*extra.tags, *self.inline_tags])
        return {
            "path": rec.path,
            "id": ident,
            "title": PageTextValue((rec.title, stem, *names), self.lang),
            "_stored_title": rec.title,
            "text": text,
            "summary": self.summary or extra.description or None,
            "kind": _text(page.kind),
            "subject": _text(page.subject),
            "origin": _text(page.origin),
            "tag": " ".join(self.tags) or None,
            "ftag": " ".join(ftags) or None,
            "lang": self.lang or None,
            "status": f"{rec.status} {rec.trust}",
            "trust": rec.trust,
            "valid_from": _date(page.valid_from),
            "valid_to": _date(page.valid_to),
            "updated": _date(page.updated),
            "head": head_terms((rec.title, stem, *names, ident), self.lang),
            "rec": rec.to_stored(),
        }


def _text(value: Any) -> str | None:
    if value is None:
        return None
    text = value if isinstance(value, str) else str(value)
    text = text.strip()
    return text or None


def _date(value: Any) -> str | None:
    text = _text(value)
    return text[:10] if text else None


def _light_meta(meta: dict[str, Any]) -> dict[str, Any]:
    return {key: meta[key] for key in HISTORY_KEYS if key in meta}


def read_bytes_safely(abspath: str, *, head: int | None = None) -> tuple[bytes, os.stat_result] | None:
    """The bytes of a regular file (only its first ``head`` bytes, if given); ``None`` if it is
    gone, unreadable, not a regular file, or over the parse limit (which is never read).

    Symlinks are not followed and a FIFO never blocks (see ``memtui.store.files.read_bytes``).
    """
    try:
        return read_head(abspath, head) if head is not None else read_bytes(abspath, max_bytes=MAX_PARSE_BYTES)
    except OSError:
        # ELOOP (a symlink), EACCES, ENXIO (a socket), not a regular file, too large ...
        return None


def record_of(info: PageInfo, mtime_ns: int | None = None, ident: tuple[int, int, int] | None = None) -> PageRecord:
    """The index's record of a page the field's reader read (``mtime_ns`` and ``ident``: the stat
    of the bytes indexed, when they were read here rather than by the field)."""
    return PageRecord(
        path=info.path,
        size=info.size,
        mtime_ns=info.mtime_ns if mtime_ns is None else mtime_ns,
        sha256=info.sha256,
        meta=_light_meta(info.meta),
        heading=info.heading_title,
        title=info.title,
        trust=trust_mod.trust_of(info),
        tag_counts=dict(info.tag_counts) or dict.fromkeys(body_mod.SOURCE_TAGS, 0),
        norm=info.norm.to_dict(NORM_KEYS),
        dialect=info.dialect,
        side=info.side,
        ident=ident if ident is not None else info.ident,
    )


def doc_from_bytes(
    path: str,
    data: bytes,
    mtime_ns: int,
    known: PageInfo | None = None,
    *,
    root: Path | None = None,
    reader: PageReader = PLAIN_READER,
    ident: tuple[int, int, int] | None = None,
) -> PageDoc:
    """What the index needs from a page's bytes. Never raises.

    ``known`` is the field's reading of this page (from the page cache); it is
    used when it describes exactly these bytes, else the page is read here, by
    the same reader (``reader``: the field's dialects; ``root`` for sidecars).
    """
    sha = sha256_bytes(data)
    if known is None or known.path != path or known.sha256 != sha or known.size != len(data):
        known = reader.from_bytes(root if root is not None else Path("."), path, data, mtime_ns)
    record = record_of(known, mtime_ns, ident)
    if not known.parsed:
        return PageDoc(record, "", "", [])
    text, _ = decode(data)
    tags = record.tag_counts
    body = text[known.body_offset :]
    extra = search_meta(known.meta, known.norm.to_dict())
    summary = _text(known.summary) or ""
    return PageDoc(
        record,
        summary,
        body,
        [tag for tag, count in tags.items() if count],
        extra,
        detect_language(f"{known.title}\n{summary}\n{body[:DETECT_CHARS]}", extra.lang, path),
        inline_tags(body),
    )


def read_page_doc(
    root: Path, path: str, known: PageInfo | None = None, *, reader: PageReader = PLAIN_READER
) -> PageDoc | None:
    """Read and parse one page for the index; ``None`` when it is gone or not a regular file.

    A page over the parse limit is not read at all: it is indexed by name, unparsed.
    """
    abspath = os.path.join(os.fspath(root), *path.split("/"))
    try:
        result = read_bytes(abspath, max_bytes=MAX_PARSE_BYTES)
    except FileTooLarge as exc:
        doc = too_large_doc(path, abspath, exc.size, exc.stat.st_mtime_ns)
        doc.record.ident = stat_ident(exc.stat)
        return doc
    except OSError:
        return None  # ELOOP (a symlink), EACCES, ENXIO (a socket), not a regular file ...
    if result is None:
        return None
    data, st = result
    if known is not None and not side_matches(known, _side_stat(root, path)):
        known = None  # the sidecar changed since the field read the page
    return doc_from_bytes(path, data, st.st_mtime_ns, known, root=root, reader=reader, ident=stat_ident(st))


def too_large_doc(path: str, abspath: str, size: int, mtime_ns: int) -> PageDoc:
    """A page over the parse limit: not parsed, but its text (up to ``MAX_INDEX_BYTES``, cut
    at a line end) is indexed, so a word only in a 5 MB page is found; the page's finding
    says what was left out."""
    info = too_large_info(path, abspath, size, mtime_ns)
    if info.problems and info.problems[0][0] == "binary-file":
        return PageDoc(record_of(info), "", "", [])
    text = large_page_text(abspath)
    return PageDoc(
        record_of(info), "", text or "", [], lang=detect_language(text[:DETECT_CHARS], None, path) if text else ""
    )


def large_page_text(abspath: str) -> str | None:
    """The text of a page too large to parse, up to ``MAX_INDEX_BYTES`` (whole lines)."""
    try:
        result = read_head(abspath, MAX_INDEX_BYTES)
    except OSError:
        return None
    if result is None:
        return None
    data, st = result
    nul = data.find(b"\0")
    if nul >= 0:
        data = data[:nul]  # binary from here on (a sparse or corrupted file): text ends
    elif st.st_size > len(data):
        data = data[: data.rfind(b"\n") + 1] or data
    text, _ = decode(data)
    return text


def _side_stat(root: Path, path: str) -> tuple[int, int, int, int, int] | None:
    """The stamp of the sidecar beside ``path`` now (``page.side_stamp``, with its change time,
    inode and device: a same-size rewrite with the old mtime put back still differs)."""
    try:
        st = os.lstat(os.path.join(os.fspath(root), *(path[:-3] + ".json").split("/")))
    except OSError:
        return None
    return side_stamp(st)


def compute_statuses(
    root: Path, records: dict[str, PageRecord], reader: PageReader = PLAIN_READER
) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Each page's status (current/superseded/stale) and the pages that (transitively) supersede it.

    ``reader`` is the field's reading: references resolve as the field resolves them.
    """
    light = Field(root, reader=reader)
    light.pages = {path: record.page_info() for path, record in records.items()}
    history = History(light)
    result: dict[str, tuple[str, tuple[str, ...]]] = {}
    for path in records:
        newer = history.replaced_by.get(path)
        successors: tuple[str, ...] = ()
        if newer:
            seen: list[str] = []
            todo = list(newer)
            while todo:
                page = todo.pop(0)
                if page in seen or page == path:
                    continue
                seen.append(page)
                todo.extend(history.replaced_by.get(page, []))
            successors = tuple(seen)
        result[path] = (history.status.get(path, CURRENT), successors)
    return result
