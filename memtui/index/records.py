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

Statuses come from ``memtui.field.history.History`` run over light page
summaries made from the records (``compute_statuses``): the same rules the rest
of memtui uses, without re-parsing page bodies.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from memtui.field import body as body_mod
from memtui.field import trust as trust_mod
from memtui.field.field import Field
from memtui.field.history import CURRENT, History
from memtui.field.page import MAX_PARSE_BYTES, PageInfo, decode, info_from_bytes, too_large_info
from memtui.index.analysis import SUMMARY_REPEAT, TITLE_REPEAT
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
)
# Of those, the ones whose change can change some page's status.
STATUS_KEYS = ("id", "uuid", "title", "subject", "kind", "valid_from", "valid_to", "created", "supersedes")


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
    _info: PageInfo | None = field(default=None, repr=False, compare=False)

    def to_stored(self) -> tuple:
        return (
            self.size,
            self.mtime_ns,
            self.sha256,
            self.meta,
            self.heading,
            self.title,
            self.trust,
            self.tag_counts,
            self.status,
            list(self.successors),
        )

    @classmethod
    def from_stored(cls, path: str, stored: Any) -> PageRecord | None:
        """Rebuild a record from the index; ``None`` if it is not one this version wrote."""
        try:
            size, mtime_ns, sha, meta, heading, title, trust, tags, status, successors = stored
            if not (isinstance(size, int) and isinstance(mtime_ns, int) and isinstance(sha, str)):
                return None
            if not isinstance(meta, dict) or not isinstance(tags, dict):
                return None
            return cls(path, size, mtime_ns, sha, meta, heading, str(title), str(trust), tags, str(status),
                       tuple(successors))
        except (TypeError, ValueError):
            return None

    def page_info(self) -> PageInfo:
        """A light ``PageInfo`` (frontmatter only) for the supersede graph."""
        if self._info is None:
            self._info = PageInfo(
                path=self.path,
                size=self.size,
                mtime_ns=self.mtime_ns,
                sha256=self.sha256,
                meta=self.meta,
                heading_title=self.heading,
            )
        return self._info

    def status_key(self) -> tuple:
        """Everything about this page that can change any page's status."""
        return (self.heading, tuple(repr(self.meta.get(k)) for k in STATUS_KEYS))


@dataclass(slots=True)
class PageDoc:
    """One page ready to be written to the index."""

    record: PageRecord
    summary: str
    body: str
    tags: list[str]

    def document(self) -> dict[str, Any]:
        rec = self.record
        meta = rec.meta
        stem = PurePosixPath(rec.path).stem
        words_of_name = re.sub(r"[\W_]+", " ", stem)
        title = f"{rec.title} {words_of_name}"
        head = " ".join([rec.title] * TITLE_REPEAT + [words_of_name] + [self.summary] * SUMMARY_REPEAT)
        return {
            "path": rec.path,
            "id": _text(meta.get("id")) or _text(meta.get("uuid")),
            "title": title,
            "_stored_title": rec.title,
            "text": f"{head}\n{self.body}",
            "summary": self.summary or None,
            "kind": _text(meta.get("kind")),
            "subject": _text(meta.get("subject")),
            "origin": _text(meta.get("origin")),
            "tag": " ".join(self.tags) or None,
            "status": f"{rec.status} {rec.trust}",
            "valid_from": _date(meta.get("valid_from")),
            "valid_to": _date(meta.get("valid_to")),
            "updated": _date(meta.get("updated") or meta.get("created")),
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


def record_of(info: PageInfo, mtime_ns: int | None = None) -> PageRecord:
    """The index's record of a page the field's parser read."""
    return PageRecord(
        path=info.path,
        size=info.size,
        mtime_ns=info.mtime_ns if mtime_ns is None else mtime_ns,
        sha256=info.sha256,
        meta=_light_meta(info.meta),
        heading=info.heading_title,
        title=info.title,
        trust=trust_mod.trust_state(info.meta, info.path),
        tag_counts=dict(info.tag_counts) or dict.fromkeys(body_mod.SOURCE_TAGS, 0),
    )


def doc_from_bytes(path: str, data: bytes, mtime_ns: int, known: PageInfo | None = None) -> PageDoc:
    """What the index needs from a page's bytes. Never raises.

    ``known`` is the field's reading of this page (from the page cache); it is
    used when it describes exactly these bytes, else the page is parsed here,
    by the same parser.
    """
    sha = sha256_bytes(data)
    if known is None or known.path != path or known.sha256 != sha or known.size != len(data):
        known = info_from_bytes(path, data, len(data), mtime_ns)
    record = record_of(known, mtime_ns)
    if not known.parsed:
        return PageDoc(record, "", "", [])
    text, _ = decode(data)
    tags = record.tag_counts
    return PageDoc(
        record, _text(known.summary) or "", text[known.body_offset :], [tag for tag, count in tags.items() if count]
    )


def read_page_doc(root: Path, path: str, known: PageInfo | None = None) -> PageDoc | None:
    """Read and parse one page for the index; ``None`` when it is gone or not a regular file.

    A page over the parse limit is not read at all: it is indexed by name, unparsed.
    """
    abspath = os.path.join(os.fspath(root), *path.split("/"))
    try:
        result = read_bytes(abspath, max_bytes=MAX_PARSE_BYTES)
    except FileTooLarge as exc:
        return PageDoc(record_of(too_large_info(path, abspath, exc.size, exc.stat.st_mtime_ns)), "", "", [])
    except OSError:
        return None  # ELOOP (a symlink), EACCES, ENXIO (a socket), not a regular file ...
    if result is None:
        return None
    data, st = result
    return doc_from_bytes(path, data, st.st_mtime_ns, known)


def compute_statuses(root: Path, records: dict[str, PageRecord]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Each page's status (current/superseded) and the pages that (transitively) supersede it."""
    light = Field(root)
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
