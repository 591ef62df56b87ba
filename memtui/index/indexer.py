"""One index generation: build it, bring it in line with the folder, commit small batches.

``IndexGeneration`` owns a Whoosh index and the page records stored in it.
Only the writer thread calls the methods that write. ``plan_changes`` turns a
set of paths (from the watcher, or from comparing the folder with the records)
into the documents to write: it reads each page once, tells a real change from
a touch (same hash, new mtime) and pairs a removal with an addition of the same
bytes as a move. When a change can alter the supersede graph, every status is
recomputed and the pages whose status changed are re-indexed too.
"""

from __future__ import annotations

import datetime as _dt
import gc
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from whoosh.reading import SegmentReader

from memtui.field import page_cache
from memtui.field.field import (
    PLAIN_READER,
    Field,
    PageReader,
    ScanEntry,
    ScanResult,
    is_page_path,
    scan,
    side_matches,
)
from memtui.field.lookup import table_entries
from memtui.field.page import PageInfo
from memtui.index.analysis import codec
from memtui.index.engine.fastwrite import FastSegmentWriter
from memtui.index.engine.segments import create_index, open_index, segments
from memtui.index.model import ChangeBatch
from memtui.index.parallel import PARALLEL_MIN_PAGES, optimize_in_helper
from memtui.index.record_table import RecordTable, read_snapshot, write_snapshot
from memtui.index.records import PageDoc, PageRecord, compute_statuses, read_page_doc
from memtui.index.store import UntrustedIndex, replace_file

Progress = Callable[[int, int, str], None]

WRITER_LIMIT_MB = 256
SMALL_SEGMENT_DOCS = 500
SMALL_MERGE_BYTES = 256 * 1024  # what one step of merging small segments reads, at most (about 50 ms)
MERGE_TIER_RATIO = 4  # a step joins segments of like size: each page is written again a few times, not each step
LOCK_TIMEOUT = 2.0
PROGRESS_EVERY = 100


def today() -> str:
    return _dt.date.today().isoformat()


@dataclass(slots=True)
class Plan:
    """Documents to write and records to drop, and the change notice to send once committed."""

    docs: dict[str, PageDoc] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)
    batch: ChangeBatch = field(default_factory=ChangeBatch)
    touched: int = 0
    status_updates: int = 0

    def __bool__(self) -> bool:
        return bool(self.docs or self.removed)


class IndexGeneration:
    """A Whoosh index in one generation folder, with the records of the pages it holds."""

    def __init__(self, gen_dir: Path, ix, records: dict[str, PageRecord] | RecordTable) -> None:
        self.dir = gen_dir
        self.ix = ix
        self.records = records
        self.status_day = today()
        self.reader: PageReader = PLAIN_READER  # how pages are read (the field's dialects); set by the service
        # Every supersedes / superseded_by reference of the records, as (page, target), kept
        # from the last whole computation: what decides whether a change can move any
        # other page's status (None: not known yet, compute everything).
        self.references: list[tuple[str, str]] | None = None
        self._reference_keys: tuple[list, dict[tuple, list[int]]] | None = None  # (references, by key)

    @property
    def records(self) -> RecordTable:
        return self._records

    @records.setter
    def records(self, records: dict[str, PageRecord] | RecordTable) -> None:
        """A table of this generation's records (a copy of another generation's reads from this one)."""
        if isinstance(records, RecordTable):
            table = records.with_loader(self._load_records)
        else:
            table = RecordTable(records, loader=self._load_records)
        self._records = table

    def _load_records(self, paths: Iterable[str] | None) -> dict[str, PageRecord]:
        """Records read from the index: of ``paths``, or of every page (one pass over the index)."""
        found: dict[str, PageRecord] = {}
        with self.ix.reader() as reader:
            if paths is None:
                for _, stored in reader.iter_docs():
                    record = _record_of_stored(stored)
                    found[record.path] = record
                return found
            for path in paths:
                docnum = reader.first_id("path", path)
                if docnum is not None:
                    found[path] = _record_of_stored(reader.stored_fields(docnum))
        return found

    def save_snapshot(self) -> bool:
        """Write the records' snapshot for the current commit (see ``record_table``); False when
        nothing changed since the one it has."""
        if not self._records.changed:
            return False
        write_snapshot(self.dir, self.ix.latest_generation(), self._records, replace_file)
        return True

    @classmethod
    def create(cls, gen_dir: Path) -> IndexGeneration:
        ix = create_index(gen_dir)
        return cls(gen_dir, ix, {})

    @classmethod
    def open(cls, gen_dir: Path, *, status_day: str | None = None, toc: int | None = None) -> IndexGeneration:
        """Open a generation whose manifest was checked (at commit ``toc``); its records from
        the snapshot of that commit if there is one, else read from the index."""
        try:
            ix = open_index(gen_dir)
            generation = cls(gen_dir, ix, {})
            snapshot = read_snapshot(gen_dir, toc) if toc is not None and toc == ix.latest_generation() else None
            if snapshot is not None and len(snapshot[0]) == ix.doc_count():
                generation._records = RecordTable(stubs=snapshot[0], loader=generation._load_records, refs=snapshot[1])
                generation.references = generation._records.references()
            else:
                generation.records = generation._load_records(None)
        except UntrustedIndex:
            raise
        except Exception as exc:  # noqa: BLE001 - Whoosh raises many kinds of errors for a damaged index
            raise UntrustedIndex(f"the index does not open: {type(exc).__name__}: {exc}") from None
        if status_day:
            generation.status_day = status_day
        return generation

    # ------------------------------------------------------------------ writing
    def _writer(self) -> FastSegmentWriter:
        return FastSegmentWriter(self.ix, timeout=LOCK_TIMEOUT, limitmb=WRITER_LIMIT_MB, codec=codec())

    def build(self, docs: Iterable[PageDoc], total: int, progress: Progress | None = None) -> None:
        """Write every page into this (new, empty) generation in one segment."""
        writer = self._writer()
        collecting = gc.isenabled()
        gc.disable()  # millions of postings, none of them garbage: no cycle collection meanwhile
        try:
            for number, doc in enumerate(docs, start=1):
                writer.add_document(**doc.document())
                self.records[doc.record.path] = doc.record
                if progress is not None and (number % PROGRESS_EVERY == 0 or number == total):
                    progress(number, total, "indexing")
            if progress is not None:
                progress(total, total, "committing")
            writer.commit(merge=False)
        except BaseException:
            writer.cancel()
            raise
        finally:
            if collecting:
                gc.enable()

    def apply(self, plan: Plan) -> None:
        """Commit one plan as one small segment (no merging: that waits until idle)."""
        writer = self._writer()
        try:
            # One searcher for every deletion (update_document would open one per page), and
            # none for new pages: opening it reads every segment (while an agent writes new
            # pages, each commit adds one until the idle merge), which cost more than the commit.
            indexed = [path for path in [*plan.removed, *plan.docs] if path in self.records]
            if indexed:
                searcher = writer.searcher()
                try:
                    for path in indexed:
                        writer.delete_by_term("path", path, searcher=searcher)
                finally:
                    searcher.close()
            for doc in plan.docs.values():
                writer.add_document(**doc.document())
            writer.commit(merge=False)
        except BaseException:
            writer.cancel()
            raise
        for path in plan.removed:
            self.records.pop(path, None)
        for path, doc in plan.docs.items():
            self.records[path] = doc.record

    def segment_count(self) -> int:
        return len(segments(self.ix))

    def segment_sizes(self) -> list[int]:
        return [segment.doc_count_all() for segment in segments(self.ix)]

    def small_threshold(self) -> int:
        """Segments with fewer documents than this are "small" (cheap to merge)."""
        return max(SMALL_SEGMENT_DOCS, sum(self.segment_sizes()) // 10)

    def _segment_bytes(self, segment) -> int:
        try:
            return os.path.getsize(self.dir / segment.make_filename(segment.COMPOUND_EXT))
        except (OSError, AttributeError):
            return SMALL_MERGE_BYTES  # not a compound segment file: counted as a whole step

    def small_merge_step(self) -> list[Any]:
        """The small segments one merge step joins: the smallest first, at least two, while
        their files stay within ``SMALL_MERGE_BYTES``. The writer thread commits nothing while
        it merges, so a step is kept short (joining a dozen one-page CJK segments took half a
        second, and a page written meanwhile waited for it); the next step, once nothing is
        due, joins more. A segment more than ``MERGE_TIER_RATIO`` times the size of those chosen
        before it is left for a later step, when the small ones have grown: while an agent
        writes page after page, each step had joined a dozen one-page segments into the same
        quarter-megabyte one, writing it again and again (72 ms a step at 100,000 pages)."""
        threshold = self.small_threshold()
        small = sorted(
            (segment for segment in segments(self.ix) if segment.doc_count_all() < threshold), key=self._segment_bytes
        )
        chosen: list[Any] = []  # Whoosh segments
        total = 0
        for segment in small:
            size = self._segment_bytes(segment)
            if len(chosen) >= 2 and (total + size > SMALL_MERGE_BYTES or size > MERGE_TIER_RATIO * total):
                break
            chosen.append(segment)
            total += size
        if len(chosen) < 2 or total > SMALL_MERGE_BYTES * 8:
            return []  # even the two smallest are big: the whole merge (beside, at size) joins them
        return chosen

    def merge_plan(self) -> str | None:
        """What merging would help: "small" (several small segments), "all" (several large ones), None."""
        sizes = self.segment_sizes()
        threshold = self.small_threshold()
        small = sum(1 for size in sizes if size < threshold)
        if len(sizes) - small > 1:
            return "all"
        if small > 1:
            return "small" if self.small_merge_step() else "all"
        return None

    def merge(self, kind: str) -> bool:
        """Merge the small segments into one ("small"), or every segment into one ("all")."""
        if kind == "all" and len(self.records) >= PARALLEL_MIN_PAGES and optimize_in_helper(self.dir):
            return True  # a helper process merged everything (and held the memory that takes)
        chosen = {segment.segment_id() for segment in self.small_merge_step()} if kind != "all" else set()
        if kind != "all" and not chosen:
            return False  # nothing small enough to join in one step (merge_plan says "all" then)
        writer = self._writer()

        def small_only(w, segments):
            keep = []
            for segment in segments:
                if segment.segment_id() in chosen:
                    w.add_reader(SegmentReader(w.storage, w.schema, segment))
                else:
                    keep.append(segment)
            return keep

        try:
            if kind == "all":
                writer.commit(optimize=True)
            else:
                writer.commit(mergetype=small_only)
        except BaseException:
            writer.cancel()
            raise
        return True

    # ------------------------------------------------------------------ planning
    def plan_paths(self, root: Path, paths: Iterable[str], *, rescanned: bool = False) -> Plan:
        """Read each path and decide what to write. Paths that are not pages are dropped."""
        plan = Plan(batch=ChangeBatch(rescanned=rescanned))
        added: list[str] = []
        for path in dict.fromkeys(self._page_of(root, p) for p in paths):
            known = self.records.get(path)
            doc = read_page_doc(root, path, reader=self.reader) if is_page_path(path, self.reader.scope) else None
            if doc is None:
                if known is not None:
                    plan.removed.append(path)
                continue
            if known is None:
                added.append(path)
            else:
                if (
                    known.sha256 == doc.record.sha256
                    and known.side == doc.record.side
                    and known.norm == doc.record.norm
                ):
                    if (
                        known.size == doc.record.size
                        and known.mtime_ns == doc.record.mtime_ns
                        and known.ident == doc.record.ident
                    ):
                        continue
                    plan.touched += 1  # same bytes, new mtime: store the new inputs, report nothing
                else:
                    plan.batch.changed.append(path)
                doc.record.status, doc.record.successors = known.status, known.successors
            plan.docs[path] = doc
        # A removal and an addition of the same bytes in one batch is a move.
        removed_by_hash = {self.records.sha256(p): p for p in plan.removed}
        for path in added:
            old = removed_by_hash.pop(plan.docs[path].record.sha256, None)
            if old is not None:
                plan.batch.moved.append((old, path))
        moved_from = {old for old, _ in plan.batch.moved}
        moved_to = {new for _, new in plan.batch.moved}
        plan.batch.added = [p for p in added if p not in moved_to]
        plan.batch.removed = [p for p in plan.removed if p not in moved_from]
        self._plan_statuses(root, plan, structural=bool(added or plan.removed))
        return plan

    def _page_of(self, root: Path, path: str) -> str:
        """A sidecar (``x.json``) stands for its page (``x.md``): a change to it changes the page."""
        if path.endswith(".json"):
            page = path[:-5] + ".md"
            if page in self.records or (root / page).is_file():
                return page
        return path

    def _plan_statuses(self, root: Path, plan: Plan, *, structural: bool, force: bool = False) -> None:
        """Recompute statuses if this plan can change any; re-index the pages whose status moved."""
        relevant = force or structural or self.status_day != today()
        if not relevant:
            for path, doc in plan.docs.items():
                known = self.records.get(path)
                if known is None or known.status_key() != doc.record.status_key():
                    relevant = True
                    break
        if not relevant:
            return
        # One computation of statuses (compute_statuses) over the pages a change can reach: those
        # it adds or re-keys alone when it cannot move another page's status, else every page.
        alone = None if force or self.status_day != today() else self._decided_alone(root, plan)
        if alone is not None:
            records: dict[str, PageRecord] = {path: plan.docs[path].record for path in alone}
        else:
            records = dict(self.records.load_all())  # a whole computation: every record
            for path in plan.removed:
                records.pop(path, None)
            for path, doc in plan.docs.items():
                records[path] = doc.record
        reported = set(plan.batch.paths())
        for path, (status, successors) in compute_statuses(root, records, self.reader).items():
            record = records[path]
            if record.status == status and record.successors == successors:
                continue
            moved = plan.docs.get(path)
            if moved is None:
                moved = read_page_doc(root, path, reader=self.reader)
                if moved is None:
                    continue  # vanished since: the watcher reports it
                plan.docs[path] = moved
                plan.status_updates += 1
            moved.record.status, moved.record.successors = status, successors
            if path not in reported:
                plan.batch.changed.append(path)
                reported.add(path)
        if alone is None:
            self.references = _references(records)
            self.status_day = today()

    def _decided_alone(self, root: Path, plan: Plan) -> set[str] | None:
        """The pages whose statuses a change moves, when it cannot move any other page's: each
        is then its own (declared status, ``valid_to``), computed from those pages alone; None
        when the change might move another page's status.

        The supersede graph's edges come only from references (``supersedes``,
        ``superseded_by``). A change moves no other page's status when the pages it
        adds, removes or re-keys hold no reference and no known reference resolves to
        them, old or new (checked against a field of those pages alone, with the same
        resolver: every lookup table a reference could hit is keyed by what those pages
        hold). Cost: one resolve per reference on a field of a few pages, instead of the
        whole field's graph (about 0.2 s at 10,000 pages, 2 s at 100,000).
        """
        references = self.known_references()
        before: dict[str, PageInfo] = {}
        after: dict[str, PageInfo] = {}
        for path in plan.removed:
            known = self.records.get(path)
            if known is not None:
                before[path] = known.page_info()
        for path, doc in plan.docs.items():
            known = self.records.get(path)
            if known is not None and known.status_key() == doc.record.status_key():
                continue  # its status inputs are the same: its status stays (copied in plan_paths)
            if known is not None:
                before[path] = known.page_info()
            after[path] = doc.record.page_info()
        if any(info.supersedes or info.superseded_by for info in (*before.values(), *after.values())):
            return None
        by_key = self._references_by_key(root, references) if before or after else {}
        for pages in (before, after):
            if not pages:
                continue
            alone = _field_of(root, self.reader, pages)
            held: set[tuple[str, str]] = set().union(*(table_entries(path, info) for path, info in pages.items()))
            held.update(("self", path) for path in pages)
            hit = sorted({number for key in held for number in by_key.get(key, ())})
            for path, target in (references[number] for number in hit):
                if alone.resolve(target, near=path) is not None:
                    return None
        return set(after)

    def warm(self, root: Path) -> bool:
        """Make, while nothing is due, what the next change's statuses will need (the references
        by key: 0.2 s at 100,000 pages, which the first page written after opening waited for).
        True if there was something to make."""
        if self.references is None:
            self.known_references()
            return True
        references = self.references
        if self._reference_keys is not None and self._reference_keys[0] is references:
            return False
        self._references_by_key(root, references)
        return True

    def known_references(self) -> list[tuple[str, str]]:
        """``references``, made from the records when no whole computation has left them (a
        generation built, or merged beside: the first change after a build's merge had every
        status of the field recomputed, 0.9 s at 20,000 pages). A pass over the records, no
        resolving: the references of a snapshot's stubs are in the snapshot."""
        if self.references is None:
            self.references = self._records.references()
        return self.references

    def _references_by_key(self, root: Path, references: list[tuple[str, str]]) -> dict[tuple, list[int]]:
        """For each lookup key a reference may use (``Field.reference_keys``), the references
        (numbers in ``references``) that use it; kept while the references are the same list. A
        check of a few pages is then a lookup per key those pages hold, and only the references
        that could hit one of them are resolved (a pass over every reference of a 100,000-page
        field took about 9 ms of each commit)."""
        kept = self._reference_keys
        if kept is None or kept[0] is not references:
            resolver = _field_of(root, self.reader, {})
            by_key: dict[tuple, list[int]] = {}
            for number, (path, target) in enumerate(references):
                for key in resolver.reference_keys(target, near=path):
                    by_key.setdefault(key, []).append(number)
            kept = self._reference_keys = (references, by_key)
        return kept[1]

    def plan_statuses_only(self, root: Path) -> Plan:
        """Recompute every status (e.g. a ``valid_to`` date has passed since the last run)."""
        plan = Plan()
        self._plan_statuses(root, plan, structural=False, force=True)
        return plan

    def plan_rescan(self, root: Path, *, extra: Iterable[str] = (), scanned: ScanResult | None = None) -> Plan:
        """Compare the whole folder with the records (stat only) and plan what differs (plus
        ``extra``); ``scanned``: a scan of it with the reader's scope made just before."""
        # scan lists pages only (field.is_page_name)
        entries = scanned.entries if scanned is not None else scan(root, self.reader.scope)[0]
        differ, removed = self.records.compare(entries)
        suspects = [*extra, *differ, *removed]
        return self.plan_paths(root, suspects, rescanned=True)


def _record_of_stored(stored: dict) -> PageRecord:
    path = stored.get("path")
    record = PageRecord.from_stored(path, stored.get("rec")) if isinstance(path, str) else None
    if record is None:
        raise UntrustedIndex("a page record in the index is damaged")
    return record


def _references(records: dict[str, PageRecord]) -> list[tuple[str, str]]:
    """Every (page, target) of a ``supersedes`` or ``superseded_by`` among ``records``."""
    out: list[tuple[str, str]] = []
    for path, record in records.items():
        info = record.page_info()
        for target in (*info.supersedes, *info.superseded_by):
            out.append((path, target))
    return out


def _field_of(root: Path, reader: PageReader, pages: dict[str, PageInfo]) -> Field:
    """A field holding only ``pages`` (read as ``reader`` reads): to resolve against them alone."""
    alone = Field(root, reader=reader)
    alone.pages = pages
    return alone


def read_all(
    root: Path,
    entries: list[ScanEntry],
    progress: Progress | None = None,
    *,
    page_cache_dir: Path | None = None,
    reader: PageReader = PLAIN_READER,
) -> list[PageDoc]:
    """Read every listed page for a full build (pages that vanished meanwhile are skipped).

    Pages the field has already read the same way (``page_cache_dir``) are not parsed again.
    """
    docs: list[PageDoc] = []
    total = len(entries)
    cached = page_cache.read_infos(page_cache_dir, signature=reader.signature) if page_cache_dir is not None else {}
    for number, entry in enumerate(entries, start=1):
        known = page_cache.info_if_unchanged(
            cached.get(entry.path), entry.path, entry.size, entry.mtime_ns, entry.ident
        )
        if known is not None and not side_matches(known, entry.side):
            known = None
        doc = read_page_doc(root, entry.path, known, reader=reader)
        if doc is not None:
            docs.append(doc)
        if progress is not None and (number % PROGRESS_EVERY == 0 or number == total):
            progress(number, total, "reading")
    return docs


def assign_statuses(root: Path, docs: list[PageDoc], reader: PageReader = PLAIN_READER) -> None:
    records = {doc.record.path: doc.record for doc in docs}
    for path, (status, successors) in compute_statuses(root, records, reader).items():
        records[path].status, records[path].successors = status, successors
