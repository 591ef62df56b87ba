"""``Session``: one field open for auditing, kept current while agents write to it.

The session owns the workflow every surface shares: open the field (its dialects, the page
and row caches, the ledger's approvals), read the pages the caches did not hold, analyse
them (checks, statuses, claims, rows: the incremental ``CheckMemo`` keeps per-page results
between analyses), open and watch the search index, take the changes its watcher reports,
pace the analysis while changes keep coming, and keep the proposal queue. It speaks to its
user in typed events (``memtui.session.events``) through its ``Host``.

Threads: the session's state changes only on its owner thread (the host's event loop);
slow work runs on background threads the host starts (``Host.run_thread``) and hands its
result back with ``Host.call_from_thread`` or ``Host.post``.
"""

from __future__ import annotations

import contextlib
import gc
import os
import queue
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtui.dialects.open import open_field_cached, reader_for
from memtui.dialects.reader import DialectReader
from memtui.errors import MemtuiError
from memtui.field.check_memo import CheckMemo
from memtui.field.field import Field, PageRead, ScanResult
from memtui.index.model import ChangeBatch
from memtui.render.glyphs import INDEX_STATES, PENDING, Glyph
from memtui.review import ledger
from memtui.session import row_cache
from memtui.session.analysis import Analysis, analyse
from memtui.session.events import (
    AnalysisReady,
    FieldLoaded,
    IndexStateChanged,
    LoadFailed,
    Notice,
    PagesChanged,
    Progress,
    ProposalsChanged,
    RowsPreviewed,
    SessionEvent,
)
from memtui.session.host import Host, Timer
from memtui.session.latest_only import LatestOnly
from memtui.session.opening import FieldOptions
from memtui.session.rows import PageRow, make_row, quick_rows
from memtui.store.locations import default_cache_dir

if TYPE_CHECKING:
    from memtui.index.service import IndexService

LOAD_BATCH = 1000
SWITCH_INTERVAL = 0.001  # seconds a thread holds the interpreter before another may take it
ANALYSIS_PAUSE_MIN = 0.0  # after an analysis, before the next one: as long as it took, within these
ANALYSIS_PAUSE_MAX = 5.0
ANALYSIS_PAUSE_FACTOR = 4.0
INDEX_FIRST_S = 0.3  # how long an analysis may wait in all for the search index to commit
ANNOUNCE_EVERY = 2.0  # seconds between two "changed on disk" notices (what comes between waits)
ROW_CACHE_PAUSE_MIN = 30.0  # between two row-cache writes: at least this, or ten times the last one's time
ROW_CACHE_PAUSE_FACTOR = 10.0
LIVE_LOOKUP_LIMIT = 2000  # above this many pages, stale lookups wait for the next analysis

Reads = tuple[list[tuple[str, PageRead]], list[tuple[str, PageRead]]]


class _EarlyScan(threading.Thread):
    """The folder scan and the cached rows, started before the user interface is up."""

    def __init__(self, root: Path, dialect: str | None = None) -> None:
        super().__init__(name="memtui early scan", daemon=True)
        self.root = root
        self.dialect = dialect
        self.scanned: tuple[DialectReader, ScanResult] | None = None
        self.rows: dict[str, PageRow] | None = None
        self.start()

    def run(self) -> None:
        try:
            reader, scanned = reader_for(self.root, dialect=self.dialect)
            self.rows = row_cache.load_rows(default_cache_dir(self.root), scanned.entries)
            self.scanned = (reader, scanned)
        except (OSError, MemtuiError):
            self.scanned, self.rows = None, None


class Session:
    """A field open for auditing (see the module). Create it, then ``start()``; ``close()`` at the end."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        host: Host,
        *,
        options: FieldOptions | None = None,
        use_index: bool = True,
        watch: bool = True,
    ) -> None:
        # Absolute: "." (memtui run inside the field) would keep naming a folder deleted and recreated.
        self.root = Path(os.path.abspath(path))
        self.options = options or FieldOptions()
        self.use_index = use_index
        self.watch = watch
        self.host = host
        self.field: Field | None = None
        self.pending_paths: set[str] = set()  # listed but not read yet (first load)
        self.rows: dict[str, PageRow] = {}  # the page list's rows, kept current
        self.analysis: Analysis | None = None
        self.index: IndexService | None = None
        self.index_error: str | None = None
        self.index_ready = False  # the index opened (or failed to): searches get an answer
        self.load_error: MemtuiError | None = None
        self.load_progress = Progress()
        self.index_progress = Progress()
        self.last_sync: float | None = None
        self.analysed = False  # an analysis finished since the field loaded
        self._closed = False
        self._changed_since_snapshot: set[str] = set()
        self._analysis_pending = False
        self._analysis_timer: Timer | None = None  # a paced re-analysis waiting to start
        self._analysis_seconds = 0.0  # how long the last analysis took
        self._unannounced: tuple[list[str], list[str]] = ([], [])  # changed, removed: not told yet
        self._announce_timer: Timer | None = None
        self._announced_at = -ANNOUNCE_EVERY
        self._committed: queue.SimpleQueue[ChangeBatch | None] = queue.SimpleQueue()  # for the reader thread
        self._check_memo = CheckMemo()  # per-page results kept from one analysis to the next
        self._row_cache = row_cache.RowCacheWriter()  # only on the row-write thread (one at a time)
        self._row_writes = LatestOnly(self._start_row_write, self._after_row_write, hold=True)
        self._proposal_ids: tuple[str, ...] | None = None
        self._switch_interval = sys.getswitchinterval()
        # Scan the folder while the user interface starts up (file system calls release the GIL).
        self._early = _EarlyScan(self.root, self.options.dialect) if self.root.is_dir() else None

    # ------------------------------------------------------------------ properties
    @property
    def readonly(self) -> bool:
        return self.field is not None and self.field.readonly

    @property
    def settled(self) -> bool:
        """No analysis runs or waits to run."""
        return not self._analysis_pending and self._analysis_timer is None

    @property
    def writing_caches(self) -> bool:
        """Is the row cache being written, or are rows waiting for the next write?"""
        return self._row_writes.pending

    def index_state(self) -> Glyph:
        """The search index and its watcher, as a glyph, a word and a colour."""
        if not self.use_index:
            return INDEX_STATES["off"]
        if self.index_error:
            return INDEX_STATES["failed"]
        if self.index is None:
            progress = self.index_progress
            if progress.total:
                return Glyph("↻", f"indexing {progress.done:,}/{progress.total:,}", "warning")
            return INDEX_STATES["opening"]
        mode = self.index.state.mode
        return INDEX_STATES.get(mode, Glyph("?", mode, "secondary"))

    def last_synced(self) -> float | None:
        """When the index (or, without one, the field) last took the changes on disk (epoch seconds)."""
        last = self.index.state.last_sync if self.index is not None else None
        return last or self.last_sync

    def emit(self, event: SessionEvent) -> None:
        if not self._closed:
            self.host.emit(event)

    # ------------------------------------------------------------------ start and end
    def start(self) -> None:
        """Open the field (a background thread) and start taking the index's changes."""
        # The index writer and the analysis run in threads: with Python's default 5 ms switch
        # interval every file operation of the writer waited up to 5 ms for the interpreter
        # while the analysis ran (a convoy): at 10,000 pages, 50 new pages a second put the
        # index 2.5-5 s behind (p95); 1 ms: about 1 s.
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL)
        self.host.run_thread(self._load, name="load field", group="load")
        # A plain thread, not a host worker: it lives as long as the session and blocks on a queue.
        threading.Thread(target=self._read_committed, name="memtui: read changed pages", daemon=True).start()

    def close(self) -> None:
        """Stop taking changes, write the rows waiting for the row cache, close the index."""
        if self._closed:
            return
        self._closed = True
        sys.setswitchinterval(self._switch_interval)
        self._committed.put(None)  # the reader thread ends
        waiting = self._row_writes.take_waiting()  # the rows of the last analysis, held by the pause
        if waiting is not None:
            with contextlib.suppress(Exception):  # a cache: the next launch reads the pages
                self._write_rows(*waiting)
        if self.index is not None:
            with contextlib.suppress(Exception):
                self.index.close()

    # ------------------------------------------------------------------ loading
    def _load(self) -> None:
        """Show cached pages at once, then read the rest in batches (background thread)."""
        call = self.host.call_from_thread
        found = None
        if self._early is not None:
            # The list as it was last shown, for every page unchanged since: at once.
            self._early.join()
            if self._early.rows is not None:
                call(self._rows_preview, self._early.rows)
            found = self._early.scanned
        reader, scanned = found if found is not None else (None, None)
        try:
            loaded, pending = open_field_cached(self.root, dialect=self.options.dialect, scanned=scanned, reader=reader)
        except MemtuiError as exc:
            call(self._load_failed, exc)
            return
        ledger.with_approvals(loaded)  # review evidence kept in memtui's ledger
        pending_paths = [entry.path for entry in pending]
        call(self._field_opened, loaded, pending_paths, quick_rows(loaded.pages, pending_paths))
        total = len(pending)
        for start in range(0, total, LOAD_BATCH):
            if self._closed:
                return
            batch = loaded.read_entries(pending[start : start + LOAD_BATCH])
            rows = quick_rows(batch[0])
            self.load_progress = Progress("reading pages", min(start + LOAD_BATCH, total), total)
            call(self._pages_read, batch, rows)
        call(self._field_loaded)

    def _rows_preview(self, rows: dict[str, PageRow]) -> None:
        if self.field is None:
            self.rows = rows
            self.emit(RowsPreviewed())

    def _field_opened(self, loaded: Field, pending: list[str], rows: dict[str, PageRow]) -> None:
        self.field = loaded
        self.pending_paths = set(pending)
        # Keep the previous rows (badges, statuses) of unchanged pages until the analysis is done.
        for path, row in self.rows.items():
            if row.trust != PENDING and path in rows and rows[path].trust != PENDING:
                rows[path] = row
        self.rows = rows
        self.load_progress = Progress("reading pages", 0, len(pending)) if pending else Progress("loaded")
        self.emit(FieldLoaded(complete=False))

    def _pages_read(self, batch: tuple[dict[str, Any], list[str], dict[str, int]], rows: dict[str, PageRow]) -> None:
        pages, vanished, read_at = batch
        assert self.field is not None
        self.field.add_pages(pages, vanished, read_at)
        self.pending_paths.difference_update(pages)
        self.pending_paths.difference_update(vanished)
        self.rows.update(rows)
        for path in vanished:
            self.rows.pop(path, None)
        self.emit(PagesChanged(tuple(pages), tuple(vanished), on_disk=False))

    def _field_loaded(self) -> None:
        loaded = self.field
        assert loaded is not None
        self.pending_paths = set()
        self.load_progress = Progress("loaded", len(loaded), len(loaded))
        stale_cache = loaded.snapshot() if loaded.cache_stale else None
        self._recover_interrupted()
        self.request_analysis()
        if self.use_index and len(loaded):
            # The index builds from the page cache (pages read here are not parsed again): save it first.
            self.host.run_thread(lambda: self._open_index(stale_cache), name="open index", group="index")
        else:
            self.index_ready = True
            if stale_cache is not None:
                self.host.run_thread(stale_cache.save_cache, name="save page cache", group="cache")
        self.emit(FieldLoaded(complete=True))

    def _load_failed(self, exc: MemtuiError) -> None:
        self.load_error = exc
        self.emit(LoadFailed(exc))

    def _recover_interrupted(self) -> None:
        """Finish or roll back a proposal apply that a crash interrupted."""
        if self.field is None or self.field.readonly:
            return
        from memtui.review import apply_journal

        try:
            recovered = apply_journal.recover_interrupted(self.field.root)
        except MemtuiError as exc:
            self.emit(Notice(exc.message, title="recovery", severity="error", timeout=20))
            return
        outcomes = {
            "rolled-back": "an interrupted change was rolled back",
            "completed": "an interrupted change was completed",
        }
        for recovery in recovered:
            message = outcomes.get(recovery.outcome, "an interrupted change needs attention (it was not replayed)")
            details = "".join(f"\n{problem}" for problem in recovery.problems)
            self.emit(Notice(f"{message}: {recovery.label}{details}", title="recovery", severity="warning", timeout=20))
        if any(recovery.outcome != "needs-attention" for recovery in recovered):
            self.field.rescan()

    # ------------------------------------------------------------------ analysis
    def request_analysis(self) -> None:
        """Recompute checks and statuses in the background (coalesced, paced)."""
        if self.field is None or self._closed:
            return
        if self._analysis_pending or self._analysis_timer is not None:
            return
        self._analysis_pending = True
        self._changed_since_snapshot = set()
        snapshot = self.field.snapshot()
        self.host.run_thread(lambda: self._analyse(snapshot), name="analyse field", group="analysis")

    def _analyse(self, snapshot: Field) -> None:
        started = time.perf_counter()
        budget = [INDEX_FIRST_S]
        result = analyse(snapshot, self._check_memo, self.analysis, between=lambda: self._let_index_write(budget))
        self._analysis_seconds = time.perf_counter() - started  # with its waits: fewer analyses in a storm
        self.host.call_from_thread(self._analysis_done, result)

    def _let_index_write(self, budget: list[float]) -> None:
        """Between the steps of an analysis (its thread): while the search index has changes to
        commit, wait, so that a page is found by search before the statuses it changes are
        shown. ``budget``: the seconds this analysis may still wait in all (INDEX_FIRST_S: while
        an agent writes without a pause the index is never idle, and the statuses must not fall
        behind for it)."""
        index = self.index
        if index is None or budget[0] <= 0:
            return
        started = time.perf_counter()
        deadline = started + budget[0]
        while index.writing() and time.perf_counter() < deadline:
            time.sleep(0.005)
        budget[0] -= time.perf_counter() - started

    def _analysis_done(self, result: Analysis) -> None:
        self._analysis_pending = False
        previous, self.analysis = self.analysis, result
        if previous is not None and previous.field is not result.field:
            previous.field.release()  # its history points back at it: free it by refcount, now
        # What the session holds now lives on: keep the cycle collector from walking it again
        # and again (at 10,000 pages each full collection took a few hundred ms of the UI
        # thread while an agent wrote pages). Garbage is still freed by reference counts.
        gc.freeze()
        self.rows = dict(result.rows)
        self._row_writes.request(result)
        if self.field is not None and result.generation != self.field.generation:
            # The field changed meanwhile: patch those rows now, analyse again after a pause
            # four times as long as the analysis took, so that while an agent writes page after
            # page the analysis holds the interpreter at most a fifth of the time, and keys and
            # the index (which shares it) keep up.
            for path in self._changed_since_snapshot:
                self.refresh_row(path)
            pause = min(ANALYSIS_PAUSE_MAX, max(ANALYSIS_PAUSE_MIN, ANALYSIS_PAUSE_FACTOR * self._analysis_seconds))
            self._analysis_timer = self.host.set_timer(pause, self._paced_analysis)
        self.analysed = True
        self.emit(AnalysisReady(result))
        ids = tuple(entry.proposal.id for entry in result.proposals)
        if self._proposal_ids is not None and ids != self._proposal_ids:
            self.emit(ProposalsChanged(ids))
        self._proposal_ids = ids

    def _paced_analysis(self) -> None:
        self._analysis_timer = None
        self.request_analysis()

    def refresh_row(self, path: str) -> None:
        """Recompute one page's row from the last analysis (cheap: one page)."""
        info = self.field.pages.get(path) if self.field else None
        if info is None or self.field is None:
            self.rows.pop(path, None)
            return
        analysis = self.analysis
        if analysis is None:
            self.rows[path] = make_row(info, PENDING, [], 0, self.field.trust(path))
            return
        self.rows[path] = make_row(
            info,
            analysis.status.get(path, PENDING),
            analysis.by_path.get(path, []),
            len(analysis.proposal_pages.get(path, [])),
            self.field.trust(path),
        )

    def model_field(self) -> Field | None:
        """The field with its lookups built: the analysed snapshot when it is current.

        Resolving links, backlinks and history over 10,000 pages takes a moment; the analysis
        builds them, so users take its snapshot when nothing changed since, and the live field
        (built on demand) otherwise.
        """
        analysis = self.analysis
        if analysis is None or self.field is None:
            return self.field
        if analysis.generation == self.field.generation:
            return analysis.field
        if len(self.field) > LIVE_LOOKUP_LIMIT:
            # Rebuilding lookups over a big field would stall the UI; the analysis running now
            # catches up within seconds.
            return analysis.field
        return self.field

    # ------------------------------------------------------------------ the row cache
    def _start_row_write(self, result: Analysis) -> None:
        self.host.run_thread(lambda: self._row_write(result), name="save row cache", group="cache")

    def _row_write(self, result: Analysis) -> None:
        with self._row_writes.reporting(self.host):
            self._write_rows(result)

    def _write_rows(self, result: Analysis) -> None:
        snapshot = result.field
        if snapshot.cache_dir is not None:
            self._row_cache.save(snapshot.cache_dir, result.rows, snapshot.pages)

    def _after_row_write(self, go: Callable[[], None]) -> None:
        """The next row-cache write, after a pause ten times as long as the last one took and at
        least ``ROW_CACHE_PAUSE_MIN``: the cache only makes the next launch quicker, and a write
        still joins and signs every row (0.15 s at 100,000 pages, 0.6 s while an agent writes);
        what changed meanwhile is in the next write, and the last is written on close."""
        if not self._closed:
            self.host.set_timer(max(ROW_CACHE_PAUSE_MIN, ROW_CACHE_PAUSE_FACTOR * self._row_writes.last_seconds), go)

    # ------------------------------------------------------------------ the index
    def _open_index(self, save_first: Field | None) -> None:
        """Open (or build) the search index (background thread); ``save_first``: a field snapshot
        whose page cache to write first."""
        if save_first is not None:
            save_first.save_cache()
        from memtui.index.service import IndexService

        field = self.field
        assert field is not None
        progress = self._index_progressed
        try:
            service = IndexService(
                field.root,
                index_dir=self.options.index_dir,
                readonly_field=field.readonly,
                source=field.source,
                reader=field.reader,
            )
            service.open(progress=progress)
            self.index = service
            if self.watch:
                service.start_watching(self.on_index_commit)
        except MemtuiError as exc:
            self.index_error = f"{exc.message} ({exc.hint})" if exc.hint else exc.message
        except Exception as exc:  # the index is a cache: browsing goes on without it
            self.index_error = f"search index failed: {exc}"
        self.host.call_from_thread(self._index_opened)

    def _index_progressed(self, done: int, total: int, phase: str) -> None:
        """The index's progress, on its thread: kept, and told on the owner thread."""
        self.index_progress = Progress(phase, done, total)
        self.host.call_from_thread(self.emit, IndexStateChanged())

    def _index_opened(self) -> None:
        self.index_progress = Progress("ready", self.index_progress.total, self.index_progress.total)
        self.last_sync = time.time()
        self.index_ready = True
        if self.index_error:
            self.emit(Notice(self.index_error, title="search index", severity="warning", timeout=10))
        self.emit(IndexStateChanged())

    def rebuild_index(self) -> None:
        """Build the search index again from the pages (a background thread; progress as events)."""
        if self.index is None:
            self.emit(Notice("the index is not open yet", severity="warning"))
            return
        self.host.run_thread(self._rebuild_index, name="rebuild index", group="index")

    def _rebuild_index(self) -> None:
        index = self.index
        assert index is not None
        try:
            index.rebuild(progress=self._index_progressed)
            notice = Notice("search index rebuilt")
        except MemtuiError as exc:
            notice = Notice(exc.message, severity="error")
        self.host.call_from_thread(self.emit, notice)
        self.host.call_from_thread(self.emit, IndexStateChanged())

    def on_index_commit(self, batch: ChangeBatch) -> None:
        """Called on the index writer's thread after each commit: never waits (the reader thread
        reads the batch's pages, the owner thread installs them)."""
        self._committed.put(batch)

    def _read_committed(self) -> None:
        """The pages of each batch the index committed, read in order off the owner thread (at
        100,000 pages an agent writing 50 pages a second had the UI thread reading pages 1.5 s of
        every 10, and the keys waited for it); the owner thread installs them."""
        while (batch := self._committed.get()) is not None:
            field = self.field
            reads = None
            if field is not None and not batch.rescanned:
                try:
                    reads = read_batch(field, batch)
                except Exception:  # noqa: BLE001 - the owner thread reads them again and reports it
                    reads = None
            self.host.post(self._take_committed, batch, reads, field)  # False once closing: nothing to do

    def _take_committed(self, batch: ChangeBatch, reads: Reads | None, field: Field | None) -> None:
        if reads is not None and field is self.field:
            self.apply_changes(batch, reads)
        else:
            self.apply_changes(batch)  # the field was loaded again meanwhile: read here

    # ------------------------------------------------------------------ changes
    def apply_changes(self, batch: ChangeBatch, reads: Reads | None = None) -> None:
        """Bring the field in line with what changed on disk and tell the user; ``reads``: the
        batch's pages read already (``read_batch``), else they are read here."""
        if self.field is None or self._closed:
            return
        if batch.notice:
            self.emit(Notice(batch.notice, title="field folder", severity="warning", timeout=10))
        changed: list[str] = []
        removed: list[str] = []
        if batch.rescanned and not self.field.root.is_dir():
            batch = ChangeBatch()  # the folder is gone: keep showing what was there (the status says so)
        if batch.rescanned:
            result = self.field.rescan()
            changed = result["added"] + result["changed"]
            removed = result["removed"]
        else:
            field = self.field
            if reads is None:
                reads = read_batch(field, batch)
            for path, read in reads[0]:
                outcome = field.take_read(read)
                if outcome in ("added", "changed"):
                    changed.append(path)
                elif outcome == "removed":
                    removed.append(path)
            for path, read in reads[1]:
                if field.take_read(read) == "removed":
                    removed.append(path)
        self.last_sync = time.time()
        if not changed and not removed:
            self.emit(IndexStateChanged())
            return
        for path in changed + removed:
            self.refresh_row(path)
            self._changed_since_snapshot.add(path)
        self.emit(PagesChanged(tuple(changed), tuple(removed)))
        self.request_analysis()
        self._announce(changed, removed)

    def _announce(self, changed: list[str], removed: list[str]) -> None:
        """One notice for what changed on disk, at most every ``ANNOUNCE_EVERY`` seconds: while an
        agent wrote page after page, each commit (18 a second) put up a notice of its own. What
        comes in between is told in the next one."""
        self._unannounced[0].extend(changed)
        self._unannounced[1].extend(removed)
        if self._announce_timer is not None:
            return  # told when it fires
        wait = self._announced_at + ANNOUNCE_EVERY - time.monotonic()
        if wait > 0:
            self._announce_timer = self.host.set_timer(wait, self._announce_now)
        else:
            self._announce_now()

    def _announce_now(self) -> None:
        self._announce_timer = None
        (changed, removed), self._unannounced = self._unannounced, ([], [])
        changed, removed = list(dict.fromkeys(changed)), list(dict.fromkeys(removed))
        if not changed and not removed:
            return
        self._announced_at = time.monotonic()
        parts = []
        if changed:
            shown = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
            parts.append(f"updated: {shown}")
        if removed:
            shown = ", ".join(removed[:3]) + (f" and {len(removed) - 3} more" if len(removed) > 3 else "")
            parts.append(f"removed: {shown}")
        self.emit(Notice("; ".join(parts), title="changed on disk", timeout=4))

    def reload_paths(self, paths: list[str]) -> None:
        """Read again pages memtui itself just wrote (the watcher confirms later), with the
        decisions the ledger holds now."""
        if self.field is None:
            return
        ledger.with_approvals(self.field)
        self.apply_changes(ChangeBatch(changed=list(paths)))

    def rescan(self) -> None:
        """Compare the whole folder with the field again."""
        if self.field is not None:
            self.apply_changes(ChangeBatch(rescanned=True))


def read_batch(field: Field, batch: ChangeBatch) -> Reads:
    """The pages of a batch read again (``Field.read_page``, which changes nothing): those added
    or changed (and where moved ones went), then those gone (and where moved ones were), each
    once, as ``(path, read)`` pairs."""
    paths = [*batch.added, *batch.changed, *(new for _, new in batch.moved)]
    gone = [*batch.removed, *(old for old, _ in batch.moved)]
    return (
        [(path, field.read_page(path)) for path in dict.fromkeys(paths)],
        [(path, field.read_page(path)) for path in dict.fromkeys(gone)],
    )
