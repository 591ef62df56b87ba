"""Browse: every page as a sortable list or a folder tree, with state badges and filters.

``/`` filters the list (or tree) in place by words in the title, path or
subject; ``f`` steps through the state tabs; ``2`` (or the palette) searches
the full text.
"""

from __future__ import annotations

import time

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.css.query import NoMatches
from textual.timer import Timer
from textual.widgets import ContentSwitcher, Header, Static, Tabs, Tree

from memtui.render.glyphs import FILTER_LABELS
from memtui.session.events import AnalysisReady, FieldLoaded, LoadFailed, PagesChanged, RowsPreviewed
from memtui.session.latest_only import LatestOnly
from memtui.session.rows import FILTERS, PageRow
from memtui.textsafety import one_line
from memtui.tui import safe
from memtui.tui.context import AppEvent, Context, SessionScreen, ThemeChanged
from memtui.tui.page_list import (
    SORTS,
    ListState,
    fill_list,
)
from memtui.tui.widgets.count_tab import CountTab
from memtui.tui.widgets.footer import MemtuiFooter
from memtui.tui.widgets.lists import FilterBox, FilterInPlace
from memtui.tui.widgets.page_table import FIT, Column, PageTable, PreparedRows
from memtui.tui.widgets.page_tree import PageTree
from memtui.tui.widgets.status_bar import StatusBar

COLUMNS = [
    Column("state", "state", FIT, priority=8),
    Column("title", "title", 0, 24, weight=3, priority=10),
    Column("kind", "kind", 11, priority=2),
    Column("subject", "subject", 22, priority=4),
    Column("updated", "updated", 10, priority=3),
    Column("path", "path", 0, 22, weight=2, priority=9),
]
RELOAD_DELAY = 0.1
RELOAD_PAUSE_FACTOR = 10  # after a refill, wait this many times as long as it took: a tenth of the time at most


class BrowseScreen(FilterInPlace, SessionScreen):
    """The pages of the field."""

    BINDINGS = [
        Binding("slash", "filter_list", "Filter", key_display="/"),
        Binding("v", "toggle_view", "Tree/List"),
        Binding("s", "cycle_sort", "Sort"),
        Binding("r", "reverse_sort", "Reverse"),
        Binding("f", "cycle_filter", "State tab"),
        Binding("h", "history", "History"),
        Binding("e", "edit", "Edit"),
    ]
    HELP_EXTRA = [("enter", "open the highlighted page"), ("tab", "between the state tabs and the list")]

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.filter = "all"
        self.sort = "path"
        self.reverse = False
        self.rows: dict[str, PageRow] = {}
        self._reload_timer: Timer | None = None
        self._reload_seconds = 0.0  # how long the last timed refill took
        self._fill_token = 0  # which refill is the newest (a worker's older one is dropped)
        self._list_state: ListState | None = None  # the last refill made in a worker: the next starts from it
        self._fills = LatestOnly(self._start_fill, lambda go: self._schedule_reload())  # one at a time, paced
        self._filter_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Tabs(*[CountTab(self._tab_label(name, None), id=f"filter-{name}") for name in FILTERS], id="filters")
        yield FilterBox(id="list-filter")
        with ContentSwitcher(initial="page-list", id="views"):
            yield PageTable(COLUMNS, id="page-list")
            yield PageTree(id="page-tree")
        yield Static(id="browse-message", classes="message")
        yield StatusBar(self.ctx)
        yield MemtuiFooter()

    def on_mount(self) -> None:
        self.ctx.events.subscribe(self, self._on_event)
        table = self.query_one(PageTable)
        table.sort_column = self.sort
        table.empty_message = "loading pages…"
        self._reload()
        table.focus()

    # ------------------------------------------------------------------ data
    def _tab_label(self, name: str, count: int | None) -> Content:
        glyph, word, _ = FILTER_LABELS[name]
        return Content(f"{glyph} {word}" + (f" {count:,}" if count is not None else ""))

    def _on_event(self, event: AppEvent) -> None:
        if isinstance(event, RowsPreviewed | FieldLoaded | AnalysisReady | PagesChanged | ThemeChanged | LoadFailed):
            self._schedule_reload()

    def _schedule_reload(self) -> None:
        """Coalesce bursts of events (a first load, an agent writing many pages) into one refill.

        The first fill is immediate: nothing is on screen yet to coalesce with.
        """
        if not self.rows:
            self._reload()
            return
        if self._reload_timer is None:
            # Paced by what a refill costs (at 100,000 rows tens of milliseconds even when
            # made from the last one): while an agent writes page after page, refills take at
            # most a tenth of the time (at 100,000 pages the list follows about once a second;
            # with a quarter, refills were a sixth of the app's interpreter in a write storm).
            delay = max(RELOAD_DELAY, RELOAD_PAUSE_FACTOR * self._reload_seconds)
            self._reload_timer = self.set_timer(delay, self._timed_reload)

    def _timed_reload(self) -> None:
        """A refill after field events: the rows are filtered, sorted and measured in a worker
        (tens of milliseconds at 10,000 pages, which a key pressed meanwhile would wait for)."""
        self._reload_timer = None
        session = self.session
        empty = session.field is not None and len(session.field) == 0 and not session.pending_paths
        if session.load_error is not None or empty:
            self._reload()
            return
        self._fills.request()

    def _start_fill(self) -> None:
        self._fill_token += 1
        fitted = self.query_one(PageTable).fitted_columns()  # the DOM is asked here, on the UI thread
        self._prepare_fill(
            dict(self.session.rows),
            self._fill_token,
            self.filter,
            self.text_filter,
            self.sort,
            self.reverse,
            fitted,
            self._list_state,
        )

    @work(thread=True, exclusive=False, group="browse-fill", description="prepare_fill")  # one at a time: LatestOnly
    def _prepare_fill(
        self,
        rows: dict[str, PageRow],
        token: int,
        filter_name: str,
        query: str,
        sort: str,
        reverse: bool,
        fitted: tuple,
        last: ListState | None,
    ) -> None:
        started = time.perf_counter()
        try:
            state = fill_list(rows, filter_name, query, sort, reverse, fitted, last)
        except BaseException:
            self.app.call_from_thread(self._fill_finished, started)
            raise
        self.app.call_from_thread(self._apply_fill, token, state, started)

    def _fill_finished(self, started: float) -> None:
        self._reload_seconds = time.perf_counter() - started
        self._fills.finished()

    def _apply_fill(self, token: int, state: ListState, started: float) -> None:
        try:
            if token != self._fill_token:
                return  # a newer fill (a filter typed, a sort chosen) was made meanwhile
            try:
                self.query_one("#browse-message", Static).display = False
                self.query_one("#views").display = True
            except NoMatches:
                return  # the screen is being taken down (the app is closing): nothing to fill
            self.rows = state.rows
            self._list_state = state
            self._set_tab_labels(state.counts)
            self._fill(state.visible, state.prepared)
        finally:
            self._fill_finished(started)  # with the table filled: what the next refill waits for

    def _reload(self) -> None:
        session = self.session
        message = self.query_one("#browse-message", Static)
        if session.load_error is not None:
            error = session.load_error
            message.update(Text(f"✖ {one_line(error.message)}\n{one_line(error.hint)}"))
            message.display = True
            return
        if session.field is not None and len(session.field) == 0 and not session.pending_paths:
            message.update(
                Text.assemble(
                    ("No pages here.\n\n", "bold"),
                    f"memtui found no Markdown pages (*.md) under {one_line(str(session.field.root))}.\n",
                    "A memory folder holds pages like MEMORY.md, knowledge/*.md, notes/*.md.\n",
                    "Open another folder with `memtui PATH`, or try `memtui demo` for a sample memory.",
                )
            )
            message.display = True
            self.query_one("#views").display = False
            return
        message.display = False
        self.query_one("#views").display = True
        self.rows = session.rows
        self._fill()

    def _set_tab_labels(self, counts: dict[str, int]) -> None:
        tabs = self.query_one(Tabs)
        for name in FILTERS:
            tabs.query_one(f"#filter-{name}", CountTab).relabel(self._tab_label(name, counts[name]))

    def _visible_rows(self) -> list[PageRow]:
        """The rows listed now, in the order shown."""
        return self._list_state.visible if self._list_state is not None else []

    def _fill(self, visible: list[PageRow] | None = None, prepared: PreparedRows | None = None) -> None:
        """Fill the list: with rows a worker prepared, or made here from ``self.rows`` (a filter
        typed, a sort chosen): the one way a list is made, ``page_list.fill_list``."""
        table = self.query_one(PageTable)
        if visible is None or prepared is None:
            self._fill_token += 1  # a refill being prepared from older settings is dropped
            state = fill_list(
                self.rows,
                self.filter,
                self.text_filter,
                self.sort,
                self.reverse,
                table.fitted_columns(),
                self._list_state,
            )
            self._list_state = state
            self._set_tab_labels(state.counts)
            visible, prepared = state.visible, state.prepared
        table.sort_column = self.sort
        table.sort_reverse = self.reverse
        table.empty_message = (
            (
                "no pages match this filter"
                if not self.text_filter
                else f"no pages match {one_line(self.text_filter, 60)!r}"
            )
            if self.session.field is not None
            else "loading pages…"
        )
        table.set_prepared(prepared)
        tree = self.query_one(PageTree)
        if self.query_one(ContentSwitcher).current == "page-tree":
            self._fill_tree(visible)
        else:
            tree.stale = True  # type: ignore[attr-defined]

    def _fill_tree(self, visible: list[PageRow] | None = None) -> None:
        if visible is None:
            visible = self._visible_rows()
        colours = self.ctx.palette()
        root = self.session.field.root.name if self.session.field is not None else "field"
        self.query_one(PageTree).set_rows({row.path: row for row in visible}, colours, root)

    # ------------------------------------------------------------------ events
    def on_page_table_selected(self, event: PageTable.Selected) -> None:
        self.open_page(event.key)

    def on_page_table_header_clicked(self, event: PageTable.HeaderClicked) -> None:
        if event.column == self.sort:
            self.reverse = not self.reverse
        else:
            self.sort, self.reverse = event.column, event.column == "updated"
        self._fill()

    def on_tree_node_selected(self, event: Tree.NodeSelected[str]) -> None:
        data = event.node.data
        if data and not data.startswith("dir:"):
            self.open_page(data)

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        if event.tab is None or event.tab.id is None:
            return
        name = event.tab.id.removeprefix("filter-")
        if name != self.filter:
            self.filter = name
            self._fill()

    # ------------------------------------------------------------------ filter in place
    def _list_widget(self):
        switcher = self.query_one(ContentSwitcher)
        return self.query_one(PageTree) if switcher.current == "page-tree" else self.query_one(PageTable)

    def filtered_list(self):
        return self._list_widget()

    def refilter(self) -> None:
        if self._filter_timer is not None:
            self._filter_timer.stop()
        self._filter_timer = self.set_timer(0.08, self._filtered)  # coalesce fast typing over a big list

    def _filtered(self) -> None:
        self._filter_timer = None
        self._fill()

    # ------------------------------------------------------------------ actions
    def selected_path(self) -> str | None:
        if self.query_one(ContentSwitcher).current == "page-tree":
            node = self.query_one(PageTree).cursor_node
            data = node.data if node is not None else None
            return data if data and not data.startswith("dir:") else None
        return self.query_one(PageTable).cursor_key

    def action_toggle_view(self) -> None:
        switcher = self.query_one(ContentSwitcher)
        if switcher.current == "page-list":
            switcher.current = "page-tree"
            self._fill_tree()
            self.query_one(PageTree).focus()
        else:
            switcher.current = "page-list"
            self.query_one(PageTable).focus()

    def action_cycle_sort(self) -> None:
        self.sort = SORTS[(SORTS.index(self.sort) + 1) % len(SORTS)]
        self.reverse = self.sort == "updated"
        self._fill()
        safe.notify(self, f"sorted by {self.sort}", timeout=1.5)

    def action_reverse_sort(self) -> None:
        self.reverse = not self.reverse
        self._fill()

    def action_cycle_filter(self) -> None:
        index = (FILTERS.index(self.filter) + 1) % len(FILTERS)
        self.query_one(Tabs).active = f"filter-{FILTERS[index]}"

    def action_history(self) -> None:
        path = self.selected_path()
        if path:
            self.open_history(path)

    def action_edit(self) -> None:
        path = self.selected_path()
        if path:
            self.open_editor(path)
