"""Search: results update as you type, from the Whoosh index, in a worker thread."""

from __future__ import annotations

import time

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Header, Input, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from memtui.errors import MemtuiError
from memtui.textsafety import one_line
from memtui.tui.events import FieldEvent
from memtui.tui.widgets.status_bar import StatusBar

HELP = (
    "words (pages with all of them first), \"phrases\", #tag, AND/OR/NOT · filters: kind:semantic "
    "subject:decision/* tag:suggested ftag:NAME status:current|superseded|quarantined|unreviewed "
    "origin:agent path:notes/* lang:ru"
)
TRUST_BADGE = {"quarantined": ("⛔", "quarantined", "error"), "unreviewed": ("◌", "unreviewed", "warning")}
DEBOUNCE = 0.12


def hit_prompt(hit, colours: dict[str, str]) -> Text:
    text = Text()
    if hit.status == "current":
        text.append("● current    ", style=f"bold {colours.get('success', '')}")
    else:
        text.append("↷ superseded ", style="dim")
    badge = TRUST_BADGE.get(hit.trust)
    if badge:
        text.append(f"{badge[0]} {badge[1]} ", style=f"bold {colours.get(badge[2], '')}")
    if getattr(hit, "partial", False):
        text.append("≈ some words ", style=f"{colours.get('warning', '')}")
    text.append(one_line(hit.title, 80), style="bold" if hit.status == "current" else "")
    text.append(f"  {one_line(hit.path)}", style="dim")
    text.append(f"  {hit.score:.2f}", style="dim")
    snippet = one_line(hit.snippet or "", 300)
    if snippet:
        line = Text("\n    " + snippet, style="dim" if hit.status != "current" else "")
        for start, end in hit.highlights or []:
            if 0 <= start < end <= len(snippet):
                line.stylize(f"bold reverse {colours.get('accent', '')}", start + 5, end + 5)
        text.append_text(line)
    return text


class SearchScreen(Screen):
    BINDINGS = [
        Binding("escape", "back", "Back"),
        Binding("down", "focus_results", "Results", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.hits: list = []
        self._timer = None
        self._last_query = ""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="search memory…  (/ to come back here)", id="query")
        yield Static(Text(HELP, style="dim"), id="search-help")
        yield Static(id="search-state")
        yield OptionList(id="results")
        yield StatusBar()
        yield Footer()

    def on_mount(self) -> None:
        self.app.field_signal.subscribe(self, self._on_field)
        self.title = "Search"
        self.focus_query()
        self._show_state()

    def focus_query(self) -> None:
        """Put the cursor in the search box (on first use, on_mount does it once composed)."""
        boxes = self.query("#query")
        if boxes:
            boxes.first(Input).focus()

    def _on_field(self, event: FieldEvent) -> None:
        if event.kind == "index":
            self._show_state()
            if self.app.index is not None and self._last_query and not self.hits:
                self.run_search(self._last_query)
        elif event.kind == "changed" and self._last_query:
            self.run_search(self._last_query)

    def _show_state(self, message: Text | None = None) -> None:
        state = self.query_one("#search-state", Static)
        if message is not None:
            state.update(message)
            return
        app = self.app
        if app.index_error:
            state.update(Text(f"✖ search is unavailable: {one_line(app.index_error)}", style="bold"))
        elif app.index is None:
            progress = app.index_progress
            done = f" {progress.done:,}/{progress.total:,}" if progress.total else ""
            state.update(Text(f"… the index is being built{done}; results appear when it is ready", style="dim"))
        elif app.index.read_only:
            state.update(Text("◇ read-only index (another memtui owns the writer, or the field is a zip)", style="dim"))
        else:
            state.update(Text(""))

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "query":
            return
        self._last_query = event.value
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.set_timer(DEBOUNCE, lambda: self.run_search(self._last_query))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_focus_results()

    @work(thread=True, exclusive=True, group="search", name="search")
    def run_search(self, query: str) -> None:
        worker = get_current_worker()
        service = self.app.index
        if not query.strip():
            self.app.call_from_thread(self._show_results, query, [], None, 0.0)
            return
        if service is None:
            return
        started = time.perf_counter()
        try:
            hits = service.search(query, limit=50)
            error = None
        except MemtuiError as exc:
            hits, error = [], exc
        elapsed = time.perf_counter() - started
        if not worker.is_cancelled:
            self.app.call_from_thread(self._show_results, query, hits, error, elapsed)

    def _show_results(self, query: str, hits: list, error: MemtuiError | None, elapsed: float) -> None:
        if query != self._last_query:
            return
        results = self.query_one("#results", OptionList)
        results.clear_options()
        self.hits = hits
        if error is not None:
            message = Text(f"✖ {one_line(error.message)}", style="bold")
            if error.hint:
                message.append(f"  {one_line(error.hint)}", style="dim")
            self._show_state(message)
            return
        if not query.strip():
            self._show_state()
            return
        colours = self.app.palette()
        results.add_options([Option(hit_prompt(hit, colours), id=f"hit-{i}") for i, hit in enumerate(hits)])
        count = f"{len(hits)} result{'s' if len(hits) != 1 else ''}" if hits else "no results"
        timing = f" in {elapsed * 1000:.0f} ms" if self.app.show_timings else ""
        state = Text(f"{count}{timing}", style="dim")
        if getattr(hits, "timed_out", False):
            state.append("  ▲ the search hit its time limit: results may be incomplete", style="bold")
        self._show_state(state)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        option_id = event.option.id or ""
        if option_id.startswith("hit-"):
            self.app.open_page(self.hits[int(option_id[4:])].path)

    def action_focus_results(self) -> None:
        results = self.query_one("#results", OptionList)
        if results.option_count:
            results.focus()
            if results.highlighted is None:
                results.highlighted = 0

    def action_back(self) -> None:
        if self.focused is self.query_one("#results"):
            self.focus_query()
        else:
            self.app.switch_mode("browse")
