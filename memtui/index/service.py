"""``IndexService``: the search index of one field, kept current while memtui runs.

Lifecycle::

    svc = IndexService(field_root)            # nothing happens yet
    report = svc.open(progress)               # blocking: check, update or rebuild
    hits = svc.search("public API decision")  # any thread
    svc.start_watching(on_change)             # watchdog + the writer thread
    svc.flush()                               # wait until what changed on disk is searchable
    svc.close()

``location`` is the index folder (``--index-dir``, default in the user cache);
``generation_dir`` the generation inside it that is in use.

Roles. One process writes an index (it holds ``writer.lock``); a second memtui
on the same field opens the index read-only, searches it, follows the writer's
commits (a search opens the commit the newest manifest vouches for, and keeps
the previous one if that cannot be opened yet), still watches the folder so its
own view stays current, and takes over as the writer as soon as the first one
exits. A cache folder memtui cannot write is said to be just that. Nobody ever
waits on Whoosh's own lock for long: writers are created with a short timeout
and only by the writer thread.

The field folder is watched by its absolute path (``memtui`` run inside it
passes "."). If the folder is moved away or deleted while memtui runs, the
service says so (mode ``gone``) and stops indexing; when a folder is there again
(moved back, or recreated), it is watched again and compared with the index.

A field of ``WRITER_HELPER_MIN_PAGES`` or more is written by a helper process
once it is watched (``writer_helper.py``): this service opens the index, hands
the writer lock to the helper, then searches its commits and passes what
changes on disk to the subscribers, as a second memtui does; if the helper
stops, this service takes the lock back and writes itself.

A full build of 1,000 pages or more runs in two helper processes
(``parallel.py``) and leaves two segments; the rest of the time the writer
thread is the only code that writes. It is fed by the watcher (through the
debouncer) and by requests (rescan, rebuild); it commits small batches without
merging, merges small segments once it has been idle for a while (or when
there are many), merges the two segments of a two-process build once it has
been idle longer, and after each commit refreshes searchers and calls the
subscribers with a ``ChangeBatch``. Once a second it also supervises: the observer is alive, the
kernel queue did not overflow, the index files are the ones the manifest lists
(a deleted or truncated index is rebuilt into a new folder), the writer lock is
still ours. An exception in all of this is recorded in ``state.message`` and
the loop goes on; it never takes the thread down.
"""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Self, cast

from memtui.dialects.open import reader_for
from memtui.errors import MemtuiError
from memtui.field.field import PageReader, ScanResult, scan
from memtui.index.analysis import RECIPE, build_schema
from memtui.index.engine.readers import refreshed_searcher
from memtui.index.engine.scoring import WEIGHTING
from memtui.index.engine.segments import PinnedIndex, open_index, segments
from memtui.index.errors import IndexUnavailableError, QueryError
from memtui.index.indexer import (
    IndexGeneration,
    Plan,
    assign_statuses,
    read_all,
    today,
)
from memtui.index.model import ChangeBatch, OpenReport, SearchResults, SyncState
from memtui.index.parallel import (
    PARALLEL_MIN_PAGES,
    BackgroundOptimize,
    BuildFailed,
    build_parallel,
    last_failure,
    reader_spec,
    should_run_parallel,
)
from memtui.index.recall import (
    GOLDEN_FILE,
    GoldenFile,
    RecallResult,
    load_golden,
    run_recall,
)
from memtui.index.record_table import RecordTable
from memtui.index.search import index_languages, parse_query, run_search
from memtui.index.store import (
    MANIFEST_FILE,
    IndexStore,
    Manifest,
    UntrustedIndex,
    check_files,
    default_index_dir,
    link_generation,
    read_manifest,
    restamp,
    write_manifest,
)
from memtui.index.watcher import FLUSH_PREFIX, Debouncer, FieldWatcher
from memtui.index.writer_helper import WriterHelper
from memtui.store import locations, state

Progress = Callable[[int, int, str], None]
OnChange = Callable[[ChangeBatch], None]

TICK = 0.5  # the writer thread wakes at least this often
SUPERVISE_EVERY = 1.0
IDLE_BEFORE_MERGE = 2.0  # merge small segments after this long without changes ...
MAX_SEGMENTS = 8  # ... or as soon as nothing is due once there are more than this
BUSY_MAX_SEGMENTS = 16  # ... and even while changes are due, one small step at a time, beyond this
IDLE_BEFORE_FULL_MERGE = 5.0  # merge several large segments (a two-process build) into one
RETRY_FULL_MERGE_AFTER = 300.0  # after a background merge failed
MAX_BATCH = 500
READER_OPEN_TRIES = 30
READER_MESSAGE = "another memtui is updating this index: searching read-only and following its updates"
# From this many pages the writer's role goes to a helper process (``writer_helper.py``): the
# commits and merges no longer share the app's interpreter. Below it a process costs more
# than it saves (about 1 s to open the index again, tens of MB).
WRITER_HELPER_MIN_PAGES = 20_000


class IndexService:
    """The Whoosh index of one field (see the module docstring)."""

    def __init__(
        self,
        field_root: Path,
        *,
        index_dir: Path | None = None,
        readonly_field: bool = False,
        source: Path | None = None,
        golden: Path | None = None,
        reader: PageReader | None = None,
        dialect: str | None = None,
        writer_helper: bool = True,
    ) -> None:
        self.root = Path(os.path.abspath(field_root))  # "." would follow a folder replaced under it
        # How pages are read: the field's dialects (detected on open() when not given), as the field reads them.
        self.reader: PageReader | None = reader
        self.dialect = dialect  # without a reader: read every page as this format (None: detect)
        self.readonly_field = readonly_field
        self.location = (
            Path(index_dir) if index_dir else default_index_dir(self.root, readonly=readonly_field, source=source)
        )
        self.golden_path = Path(golden) if golden else self.root / GOLDEN_FILE
        # The field's page cache: pages it has read are not parsed again by a build.
        self.page_cache_dir = locations.default_cache_dir(self.root, readonly=readonly_field, source=source)
        self._store = IndexStore(self.location)
        self._gen: IndexGeneration | None = None
        self._manifest: Manifest | None = None
        self._ix: Any = None  # the Whoosh index searched (the generation's, or a reader's)
        self._searcher: Any = None  # a Whoosh searcher of it, once one is open
        self._searcher_stale = False
        self._search_lock = threading.RLock()
        self._reader_stamp: tuple | None = None
        self._reader_manifest_stamp: tuple | None = None
        self._reader_gen: Path | None = None
        self._writer = False
        self._frozen = False  # serving an old index that cannot be updated (golden gate)
        self._opened = False
        self._closed = False
        # state
        self._mode = "stopped"
        self._message = ""
        self._last_sync: float | None = None
        self._pages = 0
        # writer thread
        self._subscribers: list[OnChange] = []
        self._debouncer = Debouncer()
        self._watcher: FieldWatcher | None = None
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()
        self._stopping = False
        self._busy = False
        self._idle = threading.Condition()
        self._requests: set[str] = set()  # "rescan", "rebuild"
        self._rebuild_reason = ""
        self._rebuild_progress: Progress | None = None  # told how a requested rebuild goes
        self._last_activity = time.monotonic()
        self._merge: _MergeBeside | None = None  # a full merge of a copy, in a helper process
        self._merge_failed_at: float | None = None
        self._last_supervise = 0.0
        self._barriers: set[str] = set()
        self._barrier_count = 0
        self._errors = 0
        self._root_identity: tuple[int, int] | None = None  # (st_dev, st_ino) of the field folder
        self._root_gone = False
        # A large field's writer runs in a helper process (start_watching); False in the helper itself.
        self._writer_helper_allowed = writer_helper and not os.environ.get("MEMTUI_NO_WRITER_HELPER")
        self._helper: WriterHelper | None = None

    @property
    def _page_reader(self) -> PageReader:
        """``reader``, which ``open()`` sets (when not given) before anything reads a page."""
        return cast(PageReader, self.reader)

    # ================================================================== public
    @property
    def recipe(self) -> dict:
        """What built this index: the analysis recipe and how pages were read (their dialects)."""
        signature = self.reader.signature if self.reader is not None else "memtui"
        return {**RECIPE, "reader": signature}

    @property
    def read_only(self) -> bool:
        """True when this process only searches: another memtui writes the index, or the field is a zip
        (this memtui's own writer helper does not count: it writes for it)."""
        return self.readonly_field or self._frozen or not (self._writer or self.helper_writes())

    def helper_writes(self) -> bool:
        """The writer's role is with this service's helper process, and it is running."""
        helper = self._helper
        return helper is not None and helper.alive() and (helper.writer or not helper.opened.is_set())

    def writing(self) -> bool:
        """Changes are waiting for the writer or being committed (cheap: no lock)."""
        helper = self._helper
        return bool(len(self._debouncer) or self._busy or self._requests or (helper is not None and helper.busy))

    def merging(self) -> bool:
        """A merge of every segment into one runs beside, in a helper process (after a build)."""
        helper = self._helper
        return self._merge is not None or (helper is not None and helper.merges)

    @property
    def state(self) -> SyncState:
        pending = len(self._debouncer) + (1 if self._busy else 0) + len(self._requests)
        if self.helper_writes():
            sync = cast(WriterHelper, self._helper).sync  # helper_writes(): there is a helper
            mode = self._mode if self._mode in ("gone", "down") else sync.mode
            message = self._message if mode == self._mode else sync.message
            return SyncState(mode, sync.last_sync, pending + sync.pending, sync.indexed_pages or self._pages, message)
        return SyncState(self._mode, self._last_sync, pending, self._pages, self._message)

    def open(self, progress: Progress | None = None) -> OpenReport:
        """Check the index against the folder, then update or rebuild it. Blocking."""
        if self._closed:
            raise IndexUnavailableError("this index service was closed", "create a new one")
        if self._opened:
            return OpenReport(location=str(self.location), pages=self._pages, read_only=self.read_only)
        started = time.perf_counter()
        report = OpenReport(location=str(self.location))
        if not self.root.is_dir():
            raise IndexUnavailableError(f"no such folder: {self.root}", "give the path of a memory folder")
        scanned = None
        if self.reader is None:
            self.reader, scanned = reader_for(self.root, dialect=self.dialect)  # its scan is the first rescan's
        self._root_identity = _identity(self.root)
        try:
            writer = self._store.acquire_writer()
        except OSError as exc:
            self._open_unwritable(report, exc)
            writer = None
        if writer:
            self._writer = True
            try:
                self._open_writer(report, progress, rebuild=False, scanned=scanned)
            except OSError as exc:
                raise IndexUnavailableError(
                    f"cannot write the index in {self.location}: {exc.strerror or exc}",
                    "check free space and permissions, or pass --index-dir",
                ) from None
            self._mode = "down" if self._frozen else ("read-only" if self.read_only else "stopped")
        elif writer is not None:
            self._open_reader(report)
            self._mode = "read-only"
            self._message = READER_MESSAGE
        report.read_only = self.read_only
        report.seconds = time.perf_counter() - started
        # The page records and the index's readers live as long as the service: keep the
        # cycle collector from walking them again and again (at 10,000 pages a full
        # collection during a search took longer than the search). Garbage is still freed
        # by reference counts; the app does the same after each analysis.
        gc.freeze()
        self._opened = True
        self._last_sync = time.time()
        return report

    def _open_unwritable(self, report: OpenReport, exc: OSError) -> None:
        """The index folder cannot be written (read-only file system, permissions): say so.

        An index already there is searched as it is; without one there is nothing to search.
        """
        reason = f"cannot write the index folder {self.location} ({exc.strerror or exc})"
        try:
            self._open_reader_once()
        except UntrustedIndex as problem:
            raise IndexUnavailableError(
                f"{reason}, and there is no index there to search ({problem})",
                "check the folder's permissions, or pass --index-dir",
            ) from None
        self._frozen = True
        self._mode = "down"
        self._message = f"{reason}: searching the index there as it is; it is not kept current"
        report.generation = self._reader_gen.name if self._reader_gen else None
        report.pages = self._pages
        report.notes.append(self._message)

    def rebuild(self, progress: Progress | None = None, *, force: bool = False) -> OpenReport:
        """Build a fresh index now (the old one serves until it is done). ``force``: skip the golden gate."""
        helper = self._helper
        if helper is not None and self.helper_writes():
            started = time.perf_counter()
            helper.opened.wait(60)
            error = helper.rebuild(progress)
            if error is None:
                raise IndexUnavailableError(
                    "the index writer process stopped before the rebuild was done",
                    "this memtui takes the index over in a moment: rebuild again then",
                )
            if error:
                raise IndexUnavailableError(f"the rebuild failed: {error}", "see the status bar")
            with contextlib.suppress(UntrustedIndex):
                self._open_reader_once()
            return OpenReport(
                location=str(self.location),
                rebuilt=True,
                rebuild_reason="rebuild requested",
                generation=self._reader_gen.name if self._reader_gen else None,
                pages=self._pages,
                seconds=time.perf_counter() - started,
            )
        if not self._writer:
            raise IndexUnavailableError("another memtui is updating this index", "close it, or rebuild from that one")
        report = OpenReport(location=str(self.location))
        started = time.perf_counter()
        if self._thread is not None:
            # The writer thread owns the index while watching: ask it, and wait.
            self._rebuild_progress = progress
            self._request("rebuild", "rebuild requested")
            with self._idle:
                while "rebuild" in self._requests or self._busy:
                    self._wake.set()
                    self._idle.wait(0.05)
            report.rebuilt = True
            report.rebuild_reason = "rebuild requested"
            report.generation = self.generation_dir.name if self.generation_dir else None
            report.pages = self._pages
        else:
            self._frozen = False
            self._rebuild(report, progress, reason="rebuild requested", gate=not force)
        report.seconds = time.perf_counter() - started
        report.read_only = self.read_only
        return report

    def search(self, query: str, *, limit: int = 20, plain: bool = False) -> SearchResults:
        """Ranked hits for ``query``; ``plain`` treats it as words only (no filters or operators)."""
        if not self._opened or self._ix is None:
            raise IndexUnavailableError("the search index is not open yet", "wait until it has been built")
        limit = max(1, min(int(limit), 1000))
        with self._search_lock:
            searcher = self._current_searcher()
            parsed = parse_query(query, searcher.schema, plain=plain, langs=index_languages(searcher))
            if parsed is None:
                return SearchResults()
            try:
                return run_search(searcher, parsed, limit=limit, root=self.root)
            except QueryError:
                raise
            except Exception as exc:  # noqa: BLE001 - Whoosh failing to read = a damaged index
                self._searcher = None
                if not self._writer or self._frozen:
                    raise IndexUnavailableError("the search index could not be read", "try again in a moment") from None
                self._request("rebuild", f"the index could not be read ({type(exc).__name__})")
                raise IndexUnavailableError(
                    "the search index is damaged and is being rebuilt", "try again in a moment"
                ) from None

    def start_watching(self, on_change: OnChange | None = None) -> None:
        """Keep the index current from now on; ``on_change`` is called after each commit."""
        if not self._opened:
            raise IndexUnavailableError("open() the index before watching", "call open() first")
        if on_change is not None and on_change not in self._subscribers:
            self._subscribers.append(on_change)
        if self.readonly_field or self._thread is not None or (self._frozen and not self._writer):
            return  # a zip, already watching, or an index folder nobody can write
        self._hand_over()
        self._watcher = FieldWatcher(self.root, self._on_path, self._on_barrier, self._page_reader.scope)
        self._start_watcher(polling=False)
        self._thread = threading.Thread(target=self._run, name="memtui-index-writer", daemon=True)
        self._thread.start()

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every change made on disk before this call is committed. False on timeout."""
        deadline = time.monotonic() + timeout
        if self._thread is None:
            return True
        helper = self._helper
        if helper is not None and self.helper_writes():
            helper.opened.wait(timeout)
            if not helper.flush(max(0.0, deadline - time.monotonic())) and self.helper_writes():
                return False
        barrier = None
        if self._watcher is not None and self._watcher.observer is not None:
            self._barrier_count += 1
            barrier = f"{FLUSH_PREFIX}{os.getpid()}-{id(self)}-{self._barrier_count}"
            try:
                with state.StateDir(self.root) as folder:  # never through a symlinked .memtui/
                    folder.write(barrier, b"", durable=False)
            except (OSError, MemtuiError):
                barrier = None
        try:
            with self._idle:
                while True:
                    seen = barrier is None or barrier in self._barriers
                    if seen and not len(self._debouncer) and not self._busy and not self._requests:
                        return True
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self._wake.set()
                    self._idle.wait(min(left, 0.05))
        finally:
            if barrier is not None:
                self._barriers.discard(barrier)
                with contextlib.suppress(OSError, MemtuiError):
                    state.unlink(self.root, barrier)

    def request_rescan(self) -> None:
        """Compare the whole folder with the index soon (e.g. after memtui itself moved many pages)."""
        if self._helper is not None:
            self._helper.request_rescan()
        self._request("rescan", "")

    def close(self) -> None:
        """Stop the watcher and the writer thread, release the index. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        self._stopping = True
        self._wake.set()
        if self._watcher is not None:
            self._watcher.stop()
        if self._thread is not None:
            self._thread.join(timeout=30)
        helper, self._helper = self._helper, None
        if helper is not None:
            helper.stop()  # it saves the snapshot and releases the lock
        self._cancel_merge_beside()
        if self._thread is None or not self._thread.is_alive():
            self._save_snapshot()
        with self._search_lock:
            if self._searcher is not None:
                with contextlib.suppress(Exception):
                    self._searcher.close()
            self._searcher = None
        self._store.release_writer()
        self._mode = "stopped"

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ introspection (CLI, tests)
    @property
    def generation_dir(self) -> Path | None:
        if self._gen is not None:
            return self._gen.dir
        return self._reader_gen

    def indexed_inputs(self) -> dict[str, str]:
        """path -> sha256 of every page as the index stores it (read from the index itself)."""
        with self._search_lock:
            searcher = self._current_searcher()
            out: dict[str, str] = {}
            for _, stored in searcher.reader().iter_docs():
                out[stored["path"]] = stored["rec"][2]
            return out

    def indexed_statuses(self) -> dict[str, tuple[str, str]]:
        """path -> (status, trust) as stored in the index."""
        with self._search_lock:
            searcher = self._current_searcher()
            return {s["path"]: (s["rec"][8], s["rec"][6]) for _, s in searcher.reader().iter_docs()}

    def segment_count(self) -> int:
        ix = self._ix
        return len(segments(ix)) if ix is not None else 0

    def recall_test(self, golden: GoldenFile, *, k: int | None = None) -> RecallResult:
        return run_recall(golden, lambda q, n: self.search(q, limit=n, plain=True), k=k)

    # ================================================================== opening
    def _open_writer(
        self, report: OpenReport, progress: Progress | None, *, rebuild: bool, scanned: ScanResult | None = None
    ) -> None:
        gen_dir = self._store.current()
        reason = ""
        recipe_changed = False
        if gen_dir is None:
            reason = "no index yet"
        else:
            try:
                manifest = read_manifest(gen_dir)
                rehashed = check_files(gen_dir, manifest)
                if rehashed:  # verified by content under new stamps: vouch for those, hash once
                    manifest = restamp(gen_dir, manifest, rehashed)
                if manifest.recipe != self.recipe:
                    recipe_changed = True
                    reason = "the index recipe changed"
                else:
                    self._gen = IndexGeneration.open(gen_dir, status_day=manifest.status_day, toc=manifest.toc)
                    self._gen.reader = self._page_reader
                    self._manifest = manifest
            except UntrustedIndex as exc:
                reason = str(exc)
        if reason:
            self._rebuild(
                report, progress, reason=reason, gate=recipe_changed, old_dir=gen_dir if recipe_changed else None
            )
            return
        gen = self._gen
        assert gen is not None
        self._attach(gen.ix)
        if progress is not None:
            progress(0, len(gen.records), "checking")
        plan = gen.plan_rescan(self.root, scanned=scanned)
        if not plan and gen.status_day != today():
            plan = gen.plan_statuses_only(self.root)
        if plan:
            gen.apply(plan)
            self._after_commit()
        self._store.remove_generations(keep=gen.dir)
        report.generation = gen.dir.name
        report.pages = len(gen.records)
        report.added = len(plan.batch.added) + len(plan.batch.moved)
        report.changed = len(plan.batch.changed) - plan.status_updates
        report.removed = len(plan.batch.removed)
        report.touched = plan.touched
        report.status_updates = plan.status_updates
        self._pages = len(gen.records)

    def _rebuild(
        self,
        report: OpenReport,
        progress: Progress | None,
        *,
        reason: str,
        gate: bool,
        old_dir: Path | None = None,
    ) -> None:
        """Build a new generation; swap it in only when complete (and, if gated, when it passes golden.yaml)."""
        old_dir = old_dir or (self._gen.dir if self._gen is not None else None)
        entries = scan(self.root, self._page_reader.scope)[0]
        new_dir = self._store.new_generation()
        try:
            gen = None
            if should_run_parallel(len(entries)):
                gen = IndexGeneration.create(new_dir)
                records = build_parallel(
                    self.root, new_dir, entries, progress, page_cache_dir=self.page_cache_dir, reader=self._page_reader
                )
                if records is None:
                    report.notes.append(f"the two-process build failed ({last_failure()}): built in one process")
                    shutil.rmtree(new_dir, ignore_errors=True)
                    new_dir = self._store.new_generation()
                    gen = None
                else:
                    gen.records = records
            if gen is None:
                if progress is not None:
                    progress(0, len(entries), "reading")
                docs = read_all(
                    self.root, entries, progress, page_cache_dir=self.page_cache_dir, reader=self._page_reader
                )
                assign_statuses(self.root, docs, self._page_reader)
                gen = IndexGeneration.create(new_dir)
                gen.build(docs, len(docs), progress)
                del docs
            gen.reader = self._page_reader
            gen.save_snapshot()
            manifest = write_manifest(new_dir, self.recipe, status_day=today(), pages=len(gen.records))
        except BaseException:
            shutil.rmtree(new_dir, ignore_errors=True)
            raise
        report.rebuilt = True
        report.rebuild_reason = reason
        report.generation = new_dir.name
        report.pages = len(gen.records)
        golden = self._golden_check(gen, progress)
        report.golden = golden.to_json() if golden is not None else None
        if gate and golden is not None and not golden.passed and old_dir is not None and self._serve_old(old_dir):
            shutil.rmtree(new_dir, ignore_errors=True)
            self._frozen = True
            self._message = (
                f"a rebuilt index scored recall@{golden.k} {golden.recall:.2f} on {self.golden_path.name} "
                f"(needs {golden.min_recall:.2f}): still searching the previous index, which is not updated; "
                "run `memtui index FIELD --rebuild --force` to accept the new one"
            )
            report.notes.append(self._message)
            report.generation = old_dir.name
            return
        self._store.point_at(new_dir)
        previous = self._gen
        self._gen = gen
        self._manifest = manifest
        self._pages = len(gen.records)
        self._attach(gen.ix)
        self._store.remove_generations(keep=new_dir)
        del previous

    def _golden_check(self, gen: IndexGeneration, progress: Progress | None) -> RecallResult | None:
        if not self.golden_path.is_file():
            return None
        try:
            golden = load_golden(self.golden_path)
        except MemtuiError:
            return None  # a broken golden file must not block indexing (recall-test reports it)
        if progress is not None:
            progress(0, len(golden.questions), "checking golden.yaml")
        with gen.ix.searcher(weighting=WEIGHTING) as searcher:
            langs = index_languages(searcher)

            def search(question: str, k: int) -> list:
                parsed = parse_query(question, searcher.schema, plain=True, langs=langs)
                if parsed is None:
                    return []
                return run_search(searcher, parsed, limit=k, root=self.root)

            return run_recall(golden, search)

    def _serve_old(self, old_dir: Path) -> bool:
        """Keep searching an index built with an older recipe (its own pickled schema)."""
        try:
            ix = open_index(old_dir, with_schema=False)
            with ix.reader() as reader:
                self._pages = reader.doc_count()
        except Exception:  # noqa: BLE001 - the old index is not usable either
            return False
        self._gen = None
        self._attach(ix)
        self._reader_gen = old_dir
        return True

    def _open_reader(self, report: OpenReport) -> None:
        last = "no index yet"
        for _ in range(READER_OPEN_TRIES):
            try:
                self._open_reader_once()
                report.generation = self._reader_gen.name if self._reader_gen else None
                report.pages = self._pages
                return
            except UntrustedIndex as exc:
                last = str(exc)
                time.sleep(0.1)
        raise IndexUnavailableError(
            f"another memtui is updating this index and it cannot be read yet ({last})",
            "try again in a moment",
        )

    def _open_reader_once(self, *, reuse: bool = False) -> None:
        """Open the generation ``CURRENT`` names, at the commit its manifest vouches for.

        Files of a commit the writer is making meanwhile are not listed in the
        manifest yet; they are ignored (never opened), so a search while the
        app commits does not fail. ``reuse``: keep the readers of the segments
        that did not change (a new commit in the same generation): at 100,000
        pages, the first search on a fresh reader of the big segment took
        0.1-2 s while an agent wrote 50 pages a second.
        """
        stamp = self._store.pointer_stamp()
        gen_dir = self._store.current()
        if gen_dir is None:
            raise UntrustedIndex("no index yet")
        manifest_stamp = _file_stamp(gen_dir / MANIFEST_FILE)
        manifest = read_manifest(gen_dir)
        check_files(gen_dir, manifest, extra_ok=True)
        if manifest.toc is None:
            raise UntrustedIndex("the index manifest names no table of contents")
        try:
            ix = PinnedIndex(
                gen_dir,
                manifest.toc,
                schema=build_schema() if manifest.recipe.get("schema") == RECIPE["schema"] else None,
            )
        except Exception as exc:  # noqa: BLE001 - the writer removed that commit's files just now: try again
            raise UntrustedIndex(f"the index does not open: {exc}") from None
        if not (reuse and gen_dir == self._reader_gen and self._refresh_reader(ix)):
            self._attach(ix)
        self._reader_gen = gen_dir
        self._reader_stamp = stamp
        self._reader_manifest_stamp = manifest_stamp
        self._manifest = manifest
        self._pages = manifest.pages

    def _refresh_reader(self, ix) -> bool:
        """Search ``ix`` (a newer commit of the generation open) keeping the unchanged segments' readers."""
        with self._search_lock:
            old = self._searcher
            if old is None:
                return False
            try:
                searcher = refreshed_searcher(ix, old, WEIGHTING)
            except Exception:  # noqa: BLE001 - a reader it could not reuse: open all afresh
                return False
            self._ix, self._searcher = ix, searcher
            return True

    # ================================================================== searching
    def _attach(self, ix) -> None:
        with self._search_lock:
            old = self._searcher
            self._ix = ix
            self._searcher = None
            if old is not None:
                with contextlib.suppress(Exception):
                    old.close()

    def _current_searcher(self):
        if self._writer and not self._frozen:
            if self._searcher is None:
                self._searcher = self._ix.searcher(weighting=WEIGHTING)
            elif self._searcher_stale:
                self._searcher_stale = False
                old = self._searcher
                try:
                    self._searcher = refreshed_searcher(self._ix, old, WEIGHTING)
                except Exception:  # noqa: BLE001 - a reader it could not reuse: open all afresh
                    with contextlib.suppress(Exception):
                        old.close()
                    self._searcher = self._ix.searcher(weighting=WEIGHTING)
            return self._searcher
        # Read-only: follow the writer's commits and swaps once their manifest vouches for them;
        # until a new one opens, keep searching the one already open.
        if (
            not self._frozen
            and self._reader_gen is not None
            and (
                self._store.pointer_stamp() != self._reader_stamp
                or _file_stamp(self._reader_gen / MANIFEST_FILE) != self._reader_manifest_stamp
            )
        ):
            with contextlib.suppress(UntrustedIndex):  # state changes only once the new one opened
                self._open_reader_once(reuse=True)
        if self._searcher is None:
            self._searcher = self._open_searcher()
        return self._searcher

    def _open_searcher(self):
        """A searcher; a reader whose commit the writer has just merged away moves to the newest one."""
        for _ in range(READER_OPEN_TRIES):
            try:
                return self._ix.searcher(weighting=WEIGHTING)
            except OSError:
                if self._writer or self._frozen:
                    raise
            time.sleep(0.05)
            with contextlib.suppress(UntrustedIndex):
                self._open_reader_once()
        return self._ix.searcher(weighting=WEIGHTING)

    # ================================================================== the writer thread
    def _request(self, what: str, reason: str) -> None:
        if what == "rebuild":
            self._rebuild_reason = reason
        self._requests.add(what)
        self._wake.set()

    def _on_path(self, rel: str, is_dir: bool, complete: bool = False) -> None:
        self._debouncer.add(rel, is_dir, complete=complete)
        self._wake.set()

    def _on_barrier(self, name: str) -> None:
        self._barriers.add(name)
        self._wake.set()

    def _start_watcher(self, *, polling: bool) -> None:
        watcher = self._watcher
        assert watcher is not None
        try:
            mode = watcher.start(polling=polling)
        except OSError as exc:
            self._mode = "down"
            self._message = f"cannot watch the folder ({exc.strerror or exc}): changes are not picked up"
            return
        self._mode = ("watching" if mode == "inotify" else "polling") if self._writer else "read-only"
        self._message = watcher.message or ("" if self._writer else READER_MESSAGE)

    def _run(self) -> None:
        while not self._stopping:
            next_due = self._debouncer.next_due()
            timeout = TICK if next_due is None else max(0.0, min(TICK, next_due - time.monotonic()))
            self._wake.wait(timeout)
            self._wake.clear()
            if self._stopping:
                break
            try:
                self._step()
                if self._errors:
                    self._errors = 0
                    if self._mode == "down":
                        self._mode = "polling" if self._watcher and self._watcher.mode == "polling" else "watching"
            except Exception as exc:  # noqa: BLE001 - the writer thread never dies
                self._errors += 1
                self._message = f"index update failed: {type(exc).__name__}: {exc}; retrying with a rescan"
                if self._errors >= 3:
                    self._mode = "down"
                self._requests.add("rescan")
                time.sleep(min(5.0, 0.2 * self._errors))
            finally:
                self._busy = False
                with self._idle:
                    self._idle.notify_all()

    def _step(self) -> None:
        self._busy = True  # before taking work off the queues: flush() must not see a gap
        now = time.monotonic()
        if "rebuild" in self._requests:
            self._requests.discard("rebuild")
            self._requests.discard("rescan")
            self._rebuild_live(self._rebuild_reason or "rebuild requested")
        due = self._debouncer.take_due(now)
        rescan = "rescan" in self._requests
        if (due or rescan) and not self._root_gone:
            self._requests.discard("rescan")
            if self._writer:
                self._sync(due, rescan=rescan)
            else:
                self._follow(due, rescan=rescan)
            self._last_activity = time.monotonic()
        if now - self._last_supervise >= SUPERVISE_EVERY:
            self._last_supervise = now
            self._supervise()
        if self._merge is not None:
            self._finish_merge_beside()
        gen = self._gen
        if gen is None or self._frozen:
            return
        if len(self._debouncer):
            # An agent writing page after page never leaves the queue empty: without this, each
            # commit added a segment (178 in 10 s at 50 pages a second) and every search and
            # reader refresh paid for all of them. One bounded step of small segments is a few
            # tens of milliseconds.
            if gen.segment_count() > BUSY_MAX_SEGMENTS and gen.merge("small"):
                self._after_commit()
        elif gen.warm(self.root):
            return  # one piece of idle work per step: a change that comes meanwhile is not kept waiting
        else:
            idle_for = time.monotonic() - self._last_activity
            plan = gen.merge_plan()
            if plan == "all" and idle_for < IDLE_BEFORE_FULL_MERGE:
                plan = "small" if gen.segment_count() > MAX_SEGMENTS else None
            elif plan == "small" and idle_for < IDLE_BEFORE_MERGE and gen.segment_count() <= MAX_SEGMENTS:
                plan = None
            if plan == "all" and len(gen.records) >= PARALLEL_MIN_PAGES:
                # Seconds of work at 10,000 pages: done beside, so a page written meanwhile
                # is committed at once instead of waiting for it.
                if self._merge is None and (
                    self._merge_failed_at is None or time.monotonic() - self._merge_failed_at > RETRY_FULL_MERGE_AFTER
                ):
                    self._start_merge_beside(gen)
                plan = "small" if gen.segment_count() > MAX_SEGMENTS else None
            if plan is not None and gen.merge(plan):
                self._after_commit()

    # ------------------------------------------------------------------ the writer in a helper process
    def _hand_over(self) -> bool:
        """A large field: let a helper process write the index (``writer_helper.py``); this service
        then searches what it commits, as a second memtui does, and takes the role back if it stops."""
        gen = self._gen
        if (
            not self._writer_helper_allowed
            or not self._writer
            or self._frozen
            or gen is None
            or len(gen.records) < WRITER_HELPER_MIN_PAGES
        ):
            return False
        self._save_snapshot()  # the helper's open reads the page stamps from it
        try:
            helper = WriterHelper(self.root)
        except OSError:
            return False
        self._cancel_merge_beside()  # the helper starts its own when it is idle
        self._store.release_writer()
        self._writer = False
        self._gen = None
        self._helper = helper
        self._mode, self._message = "read-only", READER_MESSAGE  # shown only if the helper gives up
        try:
            helper.open(self.root, self.location, reader_spec(self._page_reader), self.golden_path)
        except (OSError, ValueError):
            pass  # it is gone: the next supervision takes the lock back
        with contextlib.suppress(UntrustedIndex):
            self._open_reader_once()
        return True

    # ------------------------------------------------------------------ merging beside
    def _start_merge_beside(self, gen: IndexGeneration) -> None:
        """Merge a copy of ``gen`` (hard links) into one segment in a helper process."""
        new_dir = self._store.new_generation()
        try:
            link_generation(gen.dir, new_dir)
            job = BackgroundOptimize(new_dir)
        except (OSError, BuildFailed, EOFError, ValueError):
            shutil.rmtree(new_dir, ignore_errors=True)
            self._merge_failed_at = time.monotonic()
            return
        self._merge = _MergeBeside(job, new_dir, gen.records.copy(), gen.status_day, gen.references)

    def _cancel_merge_beside(self) -> None:
        job, self._merge = self._merge, None
        if job is not None:
            job.optimize.stop()
            shutil.rmtree(job.dir, ignore_errors=True)

    def _finish_merge_beside(self) -> None:
        """When the helper is done: bring the merged copy up to date and search it instead."""
        job = self._merge
        assert job is not None
        try:
            done = job.optimize.result()
        except BuildFailed:
            done = False
        if done is None:
            return
        self._merge = None
        job.optimize.stop()
        if not done or self._gen is None or self._frozen:
            if not done:
                self._merge_failed_at = time.monotonic()
            shutil.rmtree(job.dir, ignore_errors=True)
            return
        try:
            ix = open_index(job.dir)
            merged = IndexGeneration(job.dir, ix, job.records)
            merged.reader = self._page_reader
            merged.status_day = job.status_day
            merged.references = job.references
            if job.dirty:  # what was committed to the old generation meanwhile, read again
                merged.apply(merged.plan_paths(self.root, sorted(job.dirty)))
            merged.records.changed = True  # its records are all known: a snapshot of the merged commit
            merged.save_snapshot()
            manifest = write_manifest(job.dir, self.recipe, status_day=merged.status_day, pages=len(merged.records))
        except Exception:  # noqa: BLE001 - the old generation goes on serving; retry later
            self._merge_failed_at = time.monotonic()
            shutil.rmtree(job.dir, ignore_errors=True)
            return
        self._store.point_at(job.dir)
        self._gen = merged
        self._manifest = manifest
        self._pages = len(merged.records)
        self._attach(ix)
        self._store.remove_generations(keep=job.dir)

    def _sync(self, due: list[tuple[str, bool]], *, rescan: bool) -> None:
        gen = self._gen
        if gen is None or self._frozen:
            return
        files = [rel for rel, is_dir in due if not is_dir]
        if rescan or any(is_dir for _, is_dir in due):
            previous = self._mode
            self._mode = "rescanning"
            try:
                plan = gen.plan_rescan(self.root, extra=files)
            finally:
                if self._mode == "rescanning":
                    self._mode = previous
            self._commit(plan)
        else:
            for start in range(0, len(files), MAX_BATCH):
                self._commit(gen.plan_paths(self.root, files[start : start + MAX_BATCH]))
        self._last_sync = time.time()

    def _follow(self, due: list[tuple[str, bool]], *, rescan: bool) -> None:
        """Not the writer: pass what changed on disk to the subscribers (the app re-reads those pages).

        The other memtui commits them to the index; searches here follow its commits.
        """
        files = [rel for rel, is_dir in due if not is_dir]
        rescanned = rescan or any(is_dir for _, is_dir in due)
        if files or rescanned:
            self._notify(ChangeBatch(changed=files, rescanned=rescanned))
        self._last_sync = time.time()

    def _commit(self, plan: Plan) -> None:
        gen = self._gen
        if gen is None or not plan:
            return
        gen.apply(plan)
        if self._merge is not None:
            self._merge.dirty.update(plan.removed)
            self._merge.dirty.update(plan.docs)
        self._after_commit()
        if plan.batch:
            self._notify(plan.batch)

    def _after_commit(self) -> None:
        gen = self._gen
        if gen is None:
            return
        self._searcher_stale = True
        self._pages = len(gen.records)
        self._manifest = write_manifest(
            gen.dir, self.recipe, status_day=gen.status_day, pages=len(gen.records), previous=self._manifest
        )

    def _save_snapshot(self) -> None:
        """The next warm open reads the page stamps from a snapshot instead of every record
        (``record_table``): written when the writer stops, if anything changed."""
        gen = self._gen
        if not self._writer or gen is None or self._frozen or self.read_only:
            return
        try:
            if gen.save_snapshot():
                self._manifest = write_manifest(
                    gen.dir, self.recipe, status_day=gen.status_day, pages=len(gen.records), previous=self._manifest
                )
        except (OSError, LookupError):
            pass  # a cache: the next open reads the records from the index

    def _notify(self, batch: ChangeBatch) -> None:
        for callback in list(self._subscribers):
            try:
                callback(batch)
            except Exception as exc:  # noqa: BLE001 - a subscriber's bug must not stop indexing
                self._message = f"a change subscriber failed: {type(exc).__name__}: {exc}"

    def _rebuild_live(self, reason: str) -> None:
        self._cancel_merge_beside()
        previous_mode = self._mode
        self._mode = "rescanning"
        self._message = f"rebuilding the index: {reason}"
        report = OpenReport(location=str(self.location))
        progress, self._rebuild_progress = self._rebuild_progress, None
        try:
            self._rebuild(report, progress, reason=reason, gate=False)
            self._message = ""
        finally:
            self._mode = previous_mode if previous_mode != "rescanning" else "watching"
        batch = ChangeBatch(rescanned=True)
        self._notify(batch)

    def _supervise(self) -> None:
        # 0. the field folder is still the one we watch (moved away, deleted, recreated?)
        if not self._supervise_root():
            return
        # 1. the writer lock is still ours (the index folder may have been deleted); a reader
        #    takes over as soon as the writer has gone
        if not self._supervise_role():
            return
        # 2. the index files are the ones we wrote
        gen, manifest = self._gen, self._manifest
        if self._writer and gen is not None and manifest is not None and not self._frozen:
            try:
                check_files(gen.dir, manifest)
                if self._store.current() != gen.dir:
                    raise UntrustedIndex("the index pointer was changed")
            except UntrustedIndex as exc:
                self._rebuild_live(str(exc))
                return
        # 3. the watcher is alive and saw everything
        watcher = self._watcher
        if watcher is None or self._mode == "down":
            return
        ok, why = watcher.healthy()
        if not ok:
            self._message = f"{why}: restarting it and rescanning"
            self._start_watcher(polling=watcher.mode == "polling")
            self._requests.add("rescan")
            self._wake.set()
            return
        if watcher.listener.failed_dirs:
            count = len(watcher.listener.failed_dirs)
            self._start_watcher(polling=True)
            self._message = (
                f"could not watch {count} folder{'s' if count != 1 else ''} (inotify watch limit?): "
                "polling every 2 s instead"
            )
            self._requests.add("rescan")
            self._wake.set()
            return
        if watcher.listener.overflowed.is_set():
            watcher.listener.overflowed.clear()
            self._message = "the change queue overflowed: rescanned the folder"
            self._requests.add("rescan")
            self._wake.set()
        # 4. a day passed: valid_to dates may have expired pages
        if self._writer and gen is not None and gen.status_day != today() and not self._requests:
            self._commit(gen.plan_statuses_only(self.root))

    def _supervise_root(self) -> bool:
        """Notice the field folder going away or being replaced; False while it is gone."""
        identity = _identity(self.root)
        if identity is None:
            if not self._root_gone:
                self._root_gone = True
                if self._watcher is not None:
                    self._watcher.stop()
                self._debouncer.take_due(float("inf"))  # events about a folder that is gone
                self._mode = "gone"
                self._message = (
                    f"the field folder {self.root} was moved away or deleted: nothing is watched or indexed "
                    "until a folder is there again"
                )
                self._notify(ChangeBatch(notice=self._message))
            return False
        if identity == self._root_identity and not self._root_gone:
            return True
        # Back again (moved back), or a new folder at the same path: watch it and compare.
        replaced = identity != self._root_identity
        self._root_identity = identity
        self._root_gone = False
        if self._watcher is not None:
            self._watcher = FieldWatcher(self.root, self._on_path, self._on_barrier)
            self._start_watcher(polling=False)
        self._message = f"the field folder {self.root} was {'replaced' if replaced else 'back'}: rescanned it"
        self._requests.add("rescan")
        self._notify(ChangeBatch(rescanned=True, notice=self._message))
        self._wake.set()
        return False

    def _supervise_role(self) -> bool:
        """Keep the writer lock, or take it over when the writer has gone; False when the role changed."""
        helper = self._helper
        if helper is not None:
            if self.helper_writes():
                return True  # the helper has (or is taking) the lock: never take it from it
            self._helper = None
            why = f"the index writer process {helper.failure or 'stopped'}" if helper.writer or helper.failure else ""
            helper.stop()
            if not why:  # another memtui took the lock before the helper could
                self._message = READER_MESSAGE
            with contextlib.suppress(OSError):
                if self._store.acquire_writer():
                    self._become_writer(f"{why}: this memtui keeps the index current itself" if why else None)
                    return False
            return True
        if self._writer:
            if self._store.holds_writer():
                return True
            self._store.release_writer()
            with contextlib.suppress(OSError):
                if self._store.acquire_writer():
                    return True
            self._become_reader("another memtui took over this index")
            return False
        if self._frozen or self.readonly_field:
            return True
        try:
            acquired = self._store.acquire_writer()
        except OSError:
            return True
        if acquired:
            self._become_writer()
            return False
        return True

    def _become_reader(self, why: str) -> None:
        self._writer = False
        self._gen = None
        self._mode = "read-only"
        self._message = f"{why}: searching read-only and following its updates"
        with contextlib.suppress(UntrustedIndex):
            self._open_reader_once()

    def _become_writer(self, why: str | None = None) -> None:
        """The writer exited: keep the index current from here (check it against the folder first)."""
        self._mode = "starting"  # until the folder is checked; the state never says read-only meanwhile
        self._message = "taking over the index writer: checking the index against the folder"
        self._writer = True
        report = OpenReport(location=str(self.location))
        self._open_writer(report, None, rebuild=False)
        self._reader_gen = None
        self._mode = "watching" if self._watcher is not None and self._watcher.mode == "inotify" else "polling"
        self._message = why or "the other memtui closed: this one now keeps the index current"
        self._notify(ChangeBatch(rescanned=True))


def _identity(path: Path) -> tuple[int, int] | None:
    """Which folder is at ``path`` now (device and inode), or None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


def _file_stamp(path: Path) -> tuple[int, int] | None:
    """Changes whenever the file is replaced (a new manifest: the writer committed)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_mtime_ns)


class _MergeBeside:
    """A full merge under way in a copy of the generation, and what changed since the copy."""

    def __init__(
        self,
        optimize: BackgroundOptimize,
        gen_dir: Path,
        records: RecordTable,
        status_day: str,
        references: list[tuple[str, str]] | None,
    ) -> None:
        self.optimize = optimize
        self.dir = gen_dir
        self.records = records  # the generation's records when it was copied
        self.references = references  # theirs (``IndexGeneration.references``)
        self.status_day = status_day
        self.dirty: set[str] = set()  # pages committed to the old generation since
