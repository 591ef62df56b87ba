"""The memtui Textual application.

The app owns the field (loaded in a worker thread), the analysis of it (checks,
supersede statuses, proposals: computed in a worker over a snapshot), and the
index service (opened in a worker; its watcher reports changes from a background
thread). Screens read ``app.field`` and ``app.analysis`` and subscribe to
``app.field_signal``, which the app publishes whenever either changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as _dt
import gc
import importlib
import os
import queue
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App, ScreenStackError
from textual.binding import Binding
from textual.signal import Signal
from textual.worker import WorkerFailed, get_current_worker

from memtui.dialects.open import open_field_cached, reader_for
from memtui.errors import MemtuiError
from memtui.field.check_memo import CheckMemo
from memtui.field.field import Field
from memtui.index.model import ChangeBatch
from memtui.resources import themes_dir
from memtui.review import ledger
from memtui.store.locations import default_cache_dir
from memtui.tui import row_cache, safe
from memtui.tui.commands import (
    ActionsProvider,
    HistoryProvider,
    PagesProvider,
    ScreenActionsProvider,
)
from memtui.tui.contrast import NO_COLOR_THEME, use_readable_dim
from memtui.tui.events import FieldEvent, IndexCommitted, LoadProgress
from memtui.tui.latest_only import LatestOnly
from memtui.tui.model import PENDING, Analysis, PageRow, analyse, make_row, quick_rows
from memtui.tui.screens.browse import BrowseScreen
from memtui.tui.settings import Settings
from memtui.tui.themes import load_themes, tag_colours

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


class _EarlyScan(threading.Thread):
    """The folder scan and the cached rows, started before the UI is up."""

    def __init__(self, root: Path, dialect: str | None = None) -> None:
        super().__init__(name="memtui early scan", daemon=True)
        self.root = root
        self.dialect = dialect
        self.result: tuple = (None, None)
        self.start()

    def run(self) -> None:
        try:
            reader, scanned = reader_for(self.root, dialect=self.dialect)
            rows = row_cache.load_rows(default_cache_dir(self.root), scanned.entries)
            self.result = ((reader, scanned), rows)
        except (OSError, MemtuiError):
            self.result = (None, None)


class MemtuiApp(App):
    """Browse, search, trace and review an agent's memory folder."""

    CSS_PATH = "styles/app.tcss"
    TITLE = "memtui"
    COMMANDS = App.COMMANDS | {ScreenActionsProvider, PagesProvider, ActionsProvider, HistoryProvider}
    ENABLE_COMMAND_PALETTE = True

    # Screens other than browse are imported when first opened (start-up time).
    MODES = {
        "browse": BrowseScreen,
        "search": lambda: _screen("search", "SearchScreen"),
        "overview": lambda: _screen("overview", "OverviewScreen"),
        "quarantine": lambda: _screen("quarantine", "QuarantineScreen"),
        "proposals": lambda: _screen("proposals", "ProposalsScreen"),
        "claims": lambda: _screen("claims", "ClaimsScreen"),
    }
    DEFAULT_MODE = "browse"

    BINDINGS = [
        Binding("1", "switch_mode('browse')", "Browse", tooltip="The pages, by folder or as a list"),
        Binding("/,2", "open_search", "Search", tooltip="Full-text search with filters"),
        Binding("3", "switch_mode('overview')", "Overview"),
        Binding("4", "switch_mode('quarantine')", "Quarantine"),
        Binding("5", "switch_mode('proposals')", "Proposals"),
        Binding("6", "open_claims", "Claims", tooltip="Every tagged line: whose idea is this fact?"),
        Binding("question_mark,f1", "help", "Help", key_display="?"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(
        self,
        field_path: Path,
        *,
        index_dir: Path | None = None,
        theme: str | None = None,
        watch: bool = True,
        use_index: bool = True,
        settings: Settings | None = None,
        dialect: str | None = None,
    ) -> None:
        # Absolute: "." (memtui run inside the field) would keep naming a folder deleted and recreated.
        self.field_path = Path(os.path.abspath(field_path))
        self.dialect = dialect  # --dialect: read every page as this format
        self.index_dir = index_dir
        self.watch_enabled = watch
        self.use_index = use_index
        self.settings = settings or Settings.load()
        self.requested_theme = theme
        self._theme_from_command_line: str | None = None
        self.field: Field | None = None
        self.claims_request: tuple[str, str | None] | None = None  # preset and tag for the claims screen
        self.pending_paths: set[str] = set()  # listed but not read yet (first load)
        self.rows: dict[str, PageRow] = {}  # the page list's rows, kept current by the app
        self._changed_since_snapshot: set[str] = set()
        self.analysis: Analysis | None = None
        self.index: Any = None
        self.index_error: str | None = None
        self.load_error: MemtuiError | None = None
        self.load_progress = LoadProgress()
        self.index_progress = LoadProgress()
        self.last_sync: float | None = None
        self._palette: dict[str, str] = {}
        self.show_timings = True  # search shows how long it took (off in snapshot tests)
        self.clock = lambda: _dt.datetime.now(_dt.UTC)  # proposal ages (fixed in snapshot tests)
        self.ready = asyncio.Event()
        self.index_ready = asyncio.Event()
        self._analysis_pending = False
        self._analysis_timer = None  # a paced re-analysis waiting to start
        self._unannounced: tuple[list[str], list[str]] = ([], [])  # changed, removed: not told yet
        self._announce_timer = None
        self._announced_at = -ANNOUNCE_EVERY
        self._committed: queue.SimpleQueue = queue.SimpleQueue()  # batches for read_changes (None: stop)
        self._analysis_seconds = 0.0  # how long the last analysis took
        self._check_memo = CheckMemo()  # per-page results kept from one analysis to the next
        self._row_cache = row_cache.RowCacheWriter()  # only on the row-write worker (one at a time)
        self._row_writes = LatestOnly(self.save_rows, self._after_row_write, hold=True)  # one at a time, paced
        super().__init__()
        use_readable_dim(self)  # dim text stays at 4.5:1 or more
        self._register_themes()
        self.field_signal: Signal[FieldEvent] = Signal(self, "field")
        # Scan the folder while Textual starts up (file system calls release the GIL).
        self._early = _EarlyScan(self.field_path, dialect) if self.field_path.is_dir() else None
        self.sub_title = safe.line(self.field_path.resolve().name or str(self.field_path)).plain

    # ------------------------------------------------------------------ start
    def on_mount(self) -> None:
        # The index writer and the analysis run in threads beside the UI: with Python's
        # default 5 ms switch interval, every file operation of the writer waited up to
        # 5 ms for the interpreter while the analysis ran (a convoy): at 10,000 pages,
        # 50 new pages a second put the index 2.5-5 s behind (p95); 1 ms: about 1 s.
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(SWITCH_INTERVAL)
        for problem in self._theme_problems:
            safe.notify(self, problem, severity="warning")
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.load_field()
        self.read_changes()
        if not self.is_headless:
            self._catch_hangup()

    def clear_selection(self) -> None:
        """Clear text selection on the active screen, also before the first screen is on its stack.

        On Python 3.12+ ``App.run`` starts tasks eagerly, so the browse screen's filter box
        (an ``Input``) is mounted before its mode's stack holds the screen, and Textual's
        own ``clear_selection`` raises ``ScreenStackError`` there: memtui did not start at
        all (Textual issue #6444; ``run_test`` does not start tasks eagerly, so only a real
        launch showed it). Nothing is selected yet at that moment.
        """
        try:
            super().clear_selection()
        except ScreenStackError:
            pass

    def _catch_hangup(self) -> None:
        """Closing the terminal window (SIGHUP) keeps unsaved edits under .memtui/unsaved/ first."""
        try:
            loop = asyncio.get_running_loop()
            for number in (signal.SIGHUP, signal.SIGTERM):
                loop.add_signal_handler(number, self._hang_up)
        except (NotImplementedError, RuntimeError, AttributeError, ValueError):
            pass  # no such signals here (Windows); Textual's own handling applies

    def _hang_up(self) -> None:
        self.keep_unsaved_edits()
        self.exit(return_code=129)

    def editors(self) -> list:
        """Every editor open in any mode, the active one first."""
        from memtui.tui.screens.editor import EditorScreen

        found = []
        for stack in self._screen_stacks.values():
            found.extend(screen for screen in stack if isinstance(screen, EditorScreen))
        found.sort(key=lambda screen: screen is not self.screen)
        return found

    def keep_unsaved_edits(self) -> list[str]:
        """Store every editor's unsaved text under .memtui/unsaved/ (nothing in the field changes)."""
        from memtui.store import merge3

        kept = []
        for editor in self.editors():
            data = editor.unsaved_bytes()
            if data is None or self.field is None:
                continue
            try:
                kept.append(merge3.keep_copy(self.field.root, editor.path, data, folder=merge3.UNSAVED_DIR))
            except (OSError, MemtuiError):
                continue
        return kept

    async def action_quit(self) -> None:
        """Quit, but never drop unsaved edits without asking."""
        dirty = [editor for editor in self.editors() if editor.dirty]
        if not dirty:
            self.exit()
            return
        self._ask_before_quitting(dirty)

    @work(exclusive=True, group="quit", description="_ask_before_quitting")
    async def _ask_before_quitting(self, dirty: list) -> None:
        from rich.text import Text

        from memtui.tui.screens.dialogs import ChoiceDialog

        names = ", ".join(editor.path for editor in dirty)
        choice = await self.push_screen_wait(
            ChoiceDialog(
                "Unsaved edits",
                Text(
                    f"{safe.line(names, limit=300).plain} {'has' if len(dirty) == 1 else 'have'} edits that are not saved."
                ),
                [("stay", "Keep editing"), ("save", "Save and quit"), ("discard", "Quit without saving")],
                variant_of={"save": "primary", "discard": "error"},
            )
        )
        if choice == "discard":
            self.exit()
            return
        if choice != "save":
            return
        for editor in dirty:
            if not await editor.save().wait():
                safe.notify(self, f"{editor.path} was not saved; still here", severity="warning")
                return
        self.exit()

    def _register_themes(self) -> None:
        """Register memtui's themes and choose one before the app starts: a theme set once it
        runs parses and applies the whole stylesheet again (a fifth of the CPU of starting)."""
        self._theme_problems: list[str] = []  # told once the app runs
        try:
            themes, problems = load_themes(themes_dir())
        except FileNotFoundError as exc:
            themes, problems = [], []
            self._theme_problems.append(str(exc))
        for theme in themes:
            self.register_theme(theme)
        for problem in problems:
            self._theme_problems.append(f"theme {problem.path.name} not loaded: {problem.message}")
        if self.no_color:
            # NO_COLOR: greys that stay readable once Textual turns every colour to grey.
            self.register_theme(NO_COLOR_THEME)
            self._theme_from_command_line = NO_COLOR_THEME.name
            self.theme = NO_COLOR_THEME.name
            self._palette = self._make_palette()
            return
        wanted = self.requested_theme or self.settings.theme
        if wanted in self.available_themes:
            if self.requested_theme and self.requested_theme != self.theme:
                self._theme_from_command_line = self.requested_theme
            self.theme = wanted
        elif themes:
            self.theme = themes[0].name
        self._palette = self._make_palette()

    def _refresh_truecolor_filter(self, theme) -> None:
        # Textual rebuilds its true-colour filter on every theme change; keep memtui's readable dim.
        super()._refresh_truecolor_filter(theme)
        use_readable_dim(self)

    def _theme_changed(self, theme) -> None:
        self._palette = self._make_palette()
        if self._theme_from_command_line == theme.name:
            if theme.name != NO_COLOR_THEME.name:
                self._theme_from_command_line = None  # --theme is for this run; only a choice in the app is remembered
        elif self.settings.theme != theme.name and theme.name != NO_COLOR_THEME.name:
            self.settings.theme = theme.name
            self.settings.save()
        self.field_signal.publish(FieldEvent("theme"))

    # ------------------------------------------------------------------ field
    @work(thread=True, exclusive=True, group="load", name="load field", description="load_field")
    def load_field(self) -> None:
        """Show cached pages at once, then read the rest in batches (the list fills in)."""
        worker = get_current_worker()
        scanned = None
        if self._early is not None:
            # The list as it was last shown, for every page unchanged since: at once.
            self._early.join()
            scanned, preview = self._early.result
            if preview is not None:
                self.call_from_thread(self._rows_preview, preview)
        reader, found = scanned if scanned is not None else (None, None)
        try:
            loaded, pending = open_field_cached(self.field_path, dialect=self.dialect, scanned=found, reader=reader)
        except MemtuiError as exc:
            self.call_from_thread(self._load_failed, exc)
            return
        loaded.approvals = ledger.approvals(loaded.root)  # review evidence kept in memtui's ledger
        pending_paths = [entry.path for entry in pending]
        rows = quick_rows(loaded.pages, pending_paths)
        self.call_from_thread(self._field_opened, loaded, pending_paths, rows)
        total = len(pending)
        for start in range(0, total, LOAD_BATCH):
            if worker.is_cancelled:
                return
            batch = loaded.read_entries(pending[start : start + LOAD_BATCH])
            batch_rows = quick_rows(batch[0])
            self.load_progress = LoadProgress("reading pages", min(start + LOAD_BATCH, total), total)
            self.call_from_thread(self._pages_read, batch, batch_rows)
        self.call_from_thread(self._field_loaded)

    def _rows_preview(self, rows: dict[str, PageRow]) -> None:
        if self.field is None:
            self.rows = rows
            self.field_signal.publish(FieldEvent("preview"))

    def _field_opened(self, loaded: Field, pending: list[str], rows: dict[str, PageRow]) -> None:
        self.field = loaded
        self.pending_paths = set(pending)
        # Keep the previous analysis' rows (badges, statuses) for unchanged pages until the new one is done.
        for path, row in self.rows.items():
            if row.trust != PENDING and path in rows and rows[path].trust != PENDING:
                rows[path] = row
        self.rows = rows
        self.load_progress = LoadProgress("reading pages", 0, len(pending)) if pending else LoadProgress("loaded")
        self.field_signal.publish(FieldEvent("loaded"))

    def _pages_read(self, batch, rows: dict[str, PageRow]) -> None:
        pages, vanished, read_at = batch
        self.field.add_pages(pages, vanished, read_at)
        self.pending_paths.difference_update(pages)
        self.pending_paths.difference_update(vanished)
        self.rows.update(rows)
        for path in vanished:
            self.rows.pop(path, None)
        self.field_signal.publish(FieldEvent("changed", list(pages), vanished))

    def _field_loaded(self) -> None:
        loaded = self.field
        self.pending_paths = set()
        self.load_progress = LoadProgress("loaded", len(loaded), len(loaded))
        stale_cache = loaded.snapshot() if loaded._cache_stale else None
        self._recover_interrupted()
        self.request_analysis()
        if self.use_index and len(loaded):
            # The index builds from the page cache (pages read here are not parsed again): save it first.
            self.open_index(stale_cache)
        else:
            self.index_ready.set()
            if stale_cache is not None:
                self.save_page_cache(stale_cache)
        self.field_signal.publish(FieldEvent("loaded"))

    @work(thread=True, group="cache", name="save row cache", description="save_rows")
    def save_rows(self, result: Analysis) -> None:
        with self._row_writes.reporting(self):
            self._write_rows(result)

    def _write_rows(self, result: Analysis) -> None:
        snapshot = result.field
        if getattr(snapshot, "cache_dir", None) is not None:
            self._row_cache.save(snapshot.cache_dir, result.rows, snapshot.pages)

    def _after_row_write(self, go) -> None:  # noqa: ANN001 - LatestOnly's callback
        """The next row-cache write, after a pause ten times as long as the last one took and at
        least ``ROW_CACHE_PAUSE_MIN``: the cache only makes the next launch quicker (its rows are
        shown until the pages are read again), and a write still joins and signs every row
        (0.15 s at 100,000 pages, 0.6 s while an agent writes); what changed meanwhile is in
        the next write, and the last is written when the app closes."""
        self.set_timer(max(ROW_CACHE_PAUSE_MIN, ROW_CACHE_PAUSE_FACTOR * self._row_writes.last_seconds), go)

    @work(thread=True, group="cache", name="save page cache", description="save_page_cache")
    def save_page_cache(self, snapshot: Field) -> None:
        snapshot.save_cache()

    def _load_failed(self, exc: MemtuiError) -> None:
        self.load_error = exc
        self.ready.set()
        self.field_signal.publish(FieldEvent("error"))

    def _recover_interrupted(self) -> None:
        """Finish or roll back a proposal apply that a crash interrupted."""
        if self.field is None or self.field.readonly:
            return
        try:
            from memtui.review import apply_journal
        except ImportError:
            return
        try:
            recovered = apply_journal.recover_interrupted(self.field.root)
        except MemtuiError as exc:
            safe.notify(self, exc.message, title="recovery", severity="error", timeout=20)
            return
        outcomes = {
            "rolled-back": "an interrupted change was rolled back",
            "completed": "an interrupted change was completed",
        }
        for recovery in recovered:
            message = outcomes.get(recovery.outcome, "an interrupted change needs attention (it was not replayed)")
            details = "".join(f"\n{problem}" for problem in recovery.problems)
            safe.notify(self, f"{message}: {recovery.label}{details}", title="recovery", severity="warning", timeout=20)
        if any(recovery.outcome != "needs-attention" for recovery in recovered):
            self.field.rescan()

    def request_analysis(self) -> None:
        """Recompute checks and statuses in the background (coalesced)."""
        if self.field is None:
            return
        if self._analysis_pending or self._analysis_timer is not None:
            return
        self._analysis_pending = True
        self._changed_since_snapshot = set()
        self.run_analysis(self.field.snapshot())

    @work(thread=True, exclusive=False, group="analysis", name="analyse field", description="run_analysis")
    def run_analysis(self, snapshot: Field) -> None:
        started = time.perf_counter()
        budget = [INDEX_FIRST_S]
        result = analyse(snapshot, self._check_memo, self.analysis, between=lambda: self._let_index_write(budget))
        self._analysis_seconds = time.perf_counter() - started  # with its waits: fewer analyses in a storm
        self.call_from_thread(self._analysis_done, result)

    def _let_index_write(self, budget: list[float]) -> None:
        """Between the steps of an analysis (a worker thread): while the search index has changes
        to commit, wait, so that a page is found by search before the statuses it changes are
        shown, not after a second of sharing the interpreter. ``budget``: the seconds this
        analysis may still wait in all (INDEX_FIRST_S: while an agent writes without a pause the
        index is never idle, and the statuses must not fall behind for it)."""
        index = self.index
        if index is None or not hasattr(index, "writing") or budget[0] <= 0:
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
        # What the app holds now lives on: keep the cycle collector from walking it again
        # and again (at 10,000 pages each full collection took a few hundred ms of the UI
        # thread while an agent wrote pages). Garbage is still freed by reference counts.
        gc.freeze()
        self.rows = dict(result.rows)
        self._row_writes.request(result)
        if self.field is not None and result.generation != self.field.generation:
            # The field changed while we were busy: patch those rows now, analyse again after
            # a pause twice as long as the analysis took, so that while an agent writes page
            # after page the analysis holds the interpreter at most a third of the time, and
            # keys and the index (which shares it) keep up (at 10,000 pages an analysis of a
            # few new pages takes about half a second).
            for path in self._changed_since_snapshot:
                self._refresh_row(path)
            pause = min(ANALYSIS_PAUSE_MAX, max(ANALYSIS_PAUSE_MIN, ANALYSIS_PAUSE_FACTOR * self._analysis_seconds))
            self._analysis_timer = self.set_timer(pause, self._paced_analysis)
        self.ready.set()
        self.field_signal.publish(FieldEvent("analysed"))

    def _paced_analysis(self) -> None:
        self._analysis_timer = None
        self.request_analysis()

    def _refresh_row(self, path: str) -> None:
        """Recompute one page's row on the UI thread (cheap: one page)."""
        info = self.field.pages.get(path) if self.field else None
        if info is None:
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

        Resolving links, backlinks and history over 10,000 pages takes a moment;
        the analysis worker builds them, so screens use its snapshot when nothing
        changed since, and the live field (built on demand) otherwise.
        """
        analysis = self.analysis
        if analysis is None or self.field is None:
            return self.field
        if analysis.generation == self.field.generation:
            return analysis.field
        if len(self.field) > LIVE_LOOKUP_LIMIT:
            # Rebuilding lookups over a big field would stall the UI; the analysis
            # running now will catch up within seconds.
            return analysis.field
        return self.field

    # ------------------------------------------------------------------ index
    @work(thread=True, exclusive=True, group="index", name="open index", description="open_index")
    def open_index(self, save_first: Field | None = None) -> None:
        """Open (or build) the search index; ``save_first``: a field snapshot whose page cache to write first."""
        if save_first is not None:
            save_first.save_cache()
        try:
            from memtui.index import IndexService
        except ImportError as exc:  # pragma: no cover - the package ships with memtui
            self.index_error = f"search index unavailable: {exc}"
            self.call_from_thread(self._index_opened)
            return
        assert self.field is not None

        def progress(done: int, total: int, phase: str) -> None:
            self.index_progress = LoadProgress(phase, done, total)
            self.call_from_thread(self.field_signal.publish, FieldEvent("index"))

        try:
            service = IndexService(
                self.field.root,
                index_dir=self.index_dir,
                readonly_field=self.field.readonly,
                source=self.field.source,
                reader=self.field.reader,
            )
            service.open(progress=progress)
            self.index = service
            if self.watch_enabled:
                service.start_watching(self._on_index_change)
        except MemtuiError as exc:
            self.index_error = f"{exc.message} ({exc.hint})" if exc.hint else exc.message
        except Exception as exc:  # the index is a cache: browsing goes on without it
            self.index_error = f"search index failed: {exc}"
        self.call_from_thread(self._index_opened)

    def _index_opened(self) -> None:
        self.index_progress = LoadProgress("ready", self.index_progress.total, self.index_progress.total)
        self.last_sync = time.time()
        self.index_ready.set()
        if self.index_error:
            safe.notify(self, self.index_error, title="search index", severity="warning", timeout=10)
        self.field_signal.publish(FieldEvent("index"))

    def _on_index_change(self, batch) -> None:
        """Called by the index service's thread after it committed a batch: ``read_changes``
        reads its pages, then the UI thread installs them (``on_index_committed``)."""
        self._committed.put(batch)

    def read_changes(self) -> None:
        """Start the thread that reads the pages of each committed batch, in order, off the UI
        thread (at 100,000 pages an agent writing 50 pages a second had the UI thread reading pages
        1.5 s of every 10, and the keys waited for it). A plain thread, not a worker: it lives as
        long as the app, and ``workers.wait_for_complete`` would wait for it forever."""
        thread = threading.Thread(target=self._read_committed, name="memtui: read changed pages", daemon=True)
        thread.start()

    def _read_committed(self) -> None:
        while (batch := self._committed.get()) is not None:
            field = self.field
            reads = None
            if field is not None and not batch.rescanned:
                try:
                    reads = _read_batch(field, batch)
                except Exception:  # noqa: BLE001 - the UI thread reads them again and reports it
                    reads = None
            self.post_message(IndexCommitted(batch, reads, field))  # False once closing: nothing to do

    def on_index_committed(self, message: IndexCommitted) -> None:
        if message.reads is not None and message.field is self.field:
            self.apply_changes(message.batch, message.reads)
        else:
            self.apply_changes(message.batch)  # the field was loaded again meanwhile: read here

    def apply_changes(self, batch: ChangeBatch, reads=None) -> None:  # noqa: ANN001 - see read_changes
        """Bring ``app.field`` in line with what changed on disk and tell the screens; ``reads``:
        the batch's pages read already (``read_changes``), else they are read here."""
        if self.field is None:
            return
        if batch.notice:
            safe.notify(self, batch.notice, title="field folder", severity="warning", timeout=10)
        changed: list[str] = []
        removed: list[str] = []
        if batch.rescanned and not self.field.root.is_dir():
            batch = ChangeBatch()  # the folder is gone: keep showing what was there (the status bar says so)
        if batch.rescanned:
            result = self.field.rescan()
            changed = result["added"] + result["changed"]
            removed = result["removed"]
        else:
            field = self.field
            if reads is None:
                reads = _read_batch(field, batch)
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
            self.field_signal.publish(FieldEvent("index"))
            return
        for path in changed + removed:
            self._refresh_row(path)
            self._changed_since_snapshot.add(path)
        self.field_signal.publish(FieldEvent("changed", changed, removed))
        self.request_analysis()
        self._announce(changed, removed)

    def _announce(self, changed: list[str], removed: list[str]) -> None:
        """One notice for what changed on disk, at most every ``ANNOUNCE_EVERY`` seconds: while an
        agent wrote page after page, each commit (18 a second) put up a notice of its own, and
        the screen held dozens at once. What comes in between is told in the next one."""
        self._unannounced[0].extend(changed)
        self._unannounced[1].extend(removed)
        if self._announce_timer is not None:
            return  # told when it fires
        wait = self._announced_at + ANNOUNCE_EVERY - time.monotonic()
        if wait > 0:
            self._announce_timer = self.set_timer(wait, self._announce_now)
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
        safe.notify(self, "; ".join(parts), title="changed on disk", timeout=4)

    def reload_paths(self, paths: list[str]) -> None:
        """Re-read pages memtui itself just wrote (the watcher will confirm later)."""
        if self.field is None:
            return
        self.field.approvals = ledger.approvals(self.field.root)  # a decision may have been recorded
        self.apply_changes(ChangeBatch(changed=list(paths)))

    # ------------------------------------------------------------------ actions
    def action_open_search(self) -> None:
        self.switch_mode("search")
        screen = self.screen
        if hasattr(screen, "focus_query"):
            screen.focus_query()

    def action_open_claims(self, preset: str = "all", tag: str | None = None) -> None:
        """The claims screen, showing ``preset`` narrowed to ``tag``."""
        self.claims_request = (preset, tag)
        if self.current_mode == "claims":
            self.screen.on_screen_resume()
        else:
            self.switch_mode("claims")

    def action_help(self) -> None:
        from memtui.tui.screens.help import HelpScreen

        self.push_screen(HelpScreen(self.screen))

    def open_page(
        self,
        path: str,
        *,
        line: int | None = None,
        highlight: tuple[int, int] | None = None,
        matches: list[int] | None = None,
        terms: list[str] | None = None,
    ) -> None:
        """Open a page, scrolled to file ``line``; ``highlight``: file lines (first, last) lit up
        and scrolled to; ``matches``: file lines that n/N walk, and with ``terms`` (words of a
        query) the page adds every line holding them."""
        from memtui.tui.screens.page import PageScreen

        if self._can_open(path):
            self.push_screen(PageScreen(path, line=line, highlight=highlight, matches=matches, terms=terms))

    def open_provenance(
        self,
        path: str,
        *,
        lines: tuple[int, int] | None,
        claim_path: str,
        claim_line: int,
        claim_rows=None,
        label: str = "",
    ) -> None:
        """Open the page ``path`` that a claim cites beside the claim: ``lines`` (the cited
        file lines) lit up on the right, the claim's line on the left (``claim_rows``: the
        claim's page as the page view laid it out; else it is read)."""
        from memtui.tui.screens.provenance import ProvenanceScreen

        if self._can_open(path):
            self.push_screen(
                ProvenanceScreen(
                    path, lines=lines, claim_path=claim_path, claim_line=claim_line, claim_rows=claim_rows, label=label
                )
            )

    def _can_open(self, path: str) -> bool:
        if self.field is None or path in self.pending_paths:
            safe.notify(self, f"{path} is still being read; try again in a moment", timeout=3)
            return False
        if path not in self.field.pages:
            safe.notify(self, f"no such page: {path}", severity="warning")
            return False
        return True

    def palette(self) -> dict[str, str]:
        """Colours for Rich styles: the theme's semantic colours plus the source-tag colours.

        Computed once per theme (every render and the status bar's clock use it).
        """
        return self._palette

    def _make_palette(self) -> dict[str, str]:
        variables = self.get_css_variables()
        colours = {
            name: variables.get(name, "") for name in ("primary", "secondary", "accent", "warning", "error", "success")
        }
        colours.update(tag_colours(variables))
        return {name: value if _is_colour(value) else "" for name, value in colours.items()}

    def open_editor(self, path: str, *, line: int | None = None) -> None:
        from memtui.tui.screens.editor import EditorScreen

        if self.field is None or path not in self.field.pages:
            safe.notify(self, f"no such page: {path}", severity="warning")
            return
        if self.field.readonly:
            safe.notify(self, "this field is read-only (opened from a zip)", severity="warning")
            return
        self.push_screen(EditorScreen(path, line=line))

    def action_open_named(self, path: str) -> None:
        self.open_page(path)

    def action_rescan(self) -> None:
        if self.field is None:
            return

        self.apply_changes(ChangeBatch(rescanned=True))
        self.notify("folder rescanned", timeout=2)

    def action_rebuild_index(self) -> None:
        if self.index is None:
            safe.notify(self, "the index is not open yet", severity="warning")
            return
        self.rebuild_index()

    @work(thread=True, exclusive=True, group="index", name="rebuild index", description="rebuild_index")
    def rebuild_index(self) -> None:
        def progress(done: int, total: int, phase: str) -> None:
            self.index_progress = LoadProgress(phase, done, total)
            self.call_from_thread(self.field_signal.publish, FieldEvent("index"))

        try:
            self.index.rebuild(progress=progress)
            message, severity = "search index rebuilt", "information"
        except MemtuiError as exc:
            message, severity = exc.message, "error"
        self.call_from_thread(safe.notify, self, message, severity=severity)
        self.call_from_thread(self.field_signal.publish, FieldEvent("index"))

    def get_system_commands(self, screen):
        """Textual's system commands without duplicates of memtui's own (Keys: ``?`` is the help)
        and without Screenshot when there is nowhere to save it."""
        for command in super().get_system_commands(screen):
            if command.title == "Keys":
                continue
            if command.title == "Screenshot" and not _screenshot_possible():
                continue
            yield command

    def action_cycle_bump_updated(self) -> None:
        from memtui.tui.settings import BUMP_CHOICES

        current = self.settings.bump_updated
        self.settings.bump_updated = (
            BUMP_CHOICES[(BUMP_CHOICES.index(current) + 1) % len(BUMP_CHOICES)] if current in BUMP_CHOICES else "ask"
        )
        self.settings.save()
        safe.notify(self, f"on save, set updated: to now: {self.settings.bump_updated}", timeout=3)

    def action_toggle_commit_after_save(self) -> None:
        self.settings.commit_after_save = not self.settings.commit_after_save
        self.settings.save()
        state = "on" if self.settings.commit_after_save else "off"
        safe.notify(self, f"git commit after save: {state}", timeout=3)

    def open_history(self, target: str) -> None:
        from memtui.tui.screens.history import HistoryScreen

        self.push_screen(HistoryScreen(target))

    def _handle_exception(self, error: Exception) -> None:
        """Textual's, except for a thread worker asked for as the app closed (a timer or a
        finishing worker started it after the thread pool had shut down). That is no failure
        of the user's work, and Textual's report of it rendered every local of the failing
        frames: at 100,000 pages the app took minutes and 11 GB to quit."""
        if (
            isinstance(error, WorkerFailed)
            and isinstance(error.error, RuntimeError)
            and (self._closing or self._closed or not self.is_running)
        ):
            return
        super()._handle_exception(error)

    def on_unmount(self) -> None:
        sys.setswitchinterval(getattr(self, "_switch_interval", 0.005))
        self._committed.put(None)  # read_changes ends
        waiting = self._row_writes.take_waiting()  # the rows of the last analysis, held by the pause
        if waiting is not None:
            with contextlib.suppress(Exception):  # a cache: the next launch reads the pages
                self._write_rows(*waiting)
        if self.index is not None:
            try:
                self.index.close()
            except Exception:
                pass


def _read_batch(field, batch: ChangeBatch):  # noqa: ANN001, ANN202 - Field, (reads, reads)
    """The pages of a batch read again (``Field.read_page``, which changes nothing): those
    added or changed (and where moved ones went), then those gone (and where moved ones
    were), each once, as ``(path, read)`` pairs."""
    paths = [*batch.added, *batch.changed, *(new for _, new in batch.moved)]
    gone = [*batch.removed, *(old for old, _ in batch.moved)]
    return (
        [(path, field.read_page(path)) for path in dict.fromkeys(paths)],
        [(path, field.read_page(path)) for path in dict.fromkeys(gone)],
    )


def _screen(module: str, name: str):
    return getattr(importlib.import_module(f"memtui.tui.screens.{module}"), name)()


def _screenshot_possible() -> bool:
    """Textual saves screenshots in the user's downloads folder: only offer it when that folder is writable."""
    import os

    try:
        from textual.app import (
            user_downloads_path,  # where Textual's deliver_screenshot saves
        )

        folder = user_downloads_path()
    except Exception:
        return False
    return folder.is_dir() and os.access(folder, os.W_OK)


def _is_colour(value: str) -> bool:
    return isinstance(value, str) and len(value) in (7, 9) and value.startswith("#")


def run_app(
    field_path: Path, *, index_dir: Path | None = None, theme: str | None = None, dialect: str | None = None
) -> int:
    app = MemtuiApp(field_path, index_dir=index_dir, theme=theme, dialect=dialect)
    app.run()
    if app.load_error is not None:
        raise app.load_error
    return app.return_code or 0
