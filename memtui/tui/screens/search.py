"""Search: results update as you type, from the Whoosh index, in a worker thread.

Like fzf: the focus stays in the search box; up/down move the highlighted
result, enter opens it (the first one unless you moved), typing always edits
the query (also when the results have the focus). A query that does not parse
yet (half a word, an open quote) shows its error only after a pause, so errors
do not flash while you type; the last good results stay meanwhile.
"""

from __future__ import annotations

import re
import time

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.timer import Timer
from textual.widgets import Header, Input, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import get_current_worker

from memtui.errors import MemtuiError
from memtui.field.history import SUPERSEDED
from memtui.index.model import SearchHit
from memtui.render.glyphs import STATUS, TRUST
from memtui.session.events import IndexStateChanged, PagesChanged
from memtui.textsafety import one_line
from memtui.tui.context import AppEvent, Context, SessionScreen
from memtui.tui.widgets.footer import MemtuiFooter
from memtui.tui.widgets.lists import MarkedOptionList
from memtui.tui.widgets.status_bar import StatusBar

HELP = (
    'words (pages with all of them first), "phrases", #tag, AND/OR/NOT · filters: kind:semantic '
    "subject:decision/* tag:suggested ftag:NAME status:current|superseded|quarantined|unreviewed "
    "origin:agent path:notes/* lang:ru"
)
DEBOUNCE = 0.12
ERROR_DELAY = 0.8  # seconds a query must stay unchanged before its parse error is shown


_QUERY_TOKEN_RE = re.compile(r'"([^"]*)"?|(\S+)')
_FILTER_RE = re.compile(r"^[\w-]+:")


def query_words(query: str) -> list[str]:
    """The plain words and phrases of a query, case-folded (no operators, filters or #tags):
    what a page opened from a result looks for with n/N."""
    words = []
    for phrase, word in _QUERY_TOKEN_RE.findall(query):
        if phrase:
            words.append(phrase.strip().casefold())
        elif word not in ("AND", "OR", "NOT") and not _FILTER_RE.match(word) and not word.startswith("#"):
            words.append(word.strip("()+-*?").casefold())
    return list(dict.fromkeys(word for word in words if word))


def hit_prompt(hit: SearchHit, colours: dict[str, str]) -> Text:
    text = Text()
    status = STATUS.get(hit.status, STATUS[SUPERSEDED])
    if hit.status == "current":
        text.append(f"{status.label():<13}", style=f"bold {colours.get(status.colour, '')}")
    else:
        text.append(f"{status.label():<13}", style="dim")
    if hit.trust in ("quarantined", "unreviewed"):
        badge = TRUST[hit.trust]
        text.append(f"{badge.label()} ", style=f"bold {colours.get(badge.colour, '')}")
    if getattr(hit, "partial", False):
        text.append("≈ some words ", style=f"{colours.get('warning', '')}")
    text.append(one_line(hit.title, 80), style="bold" if hit.status == "current" else "")
    where = f"{hit.path}:{hit.line}" if getattr(hit, "line", None) else hit.path
    text.append(f"  {one_line(where)}", style="dim")
    text.append(f"  {hit.score:.2f}", style="dim")
    snippet = one_line(hit.snippet or "", 300)
    if snippet:
        line = Text("\n    " + snippet, style="dim" if hit.status != "current" else "")
        for start, end in hit.highlights or []:
            if 0 <= start < end <= len(snippet):
                line.stylize(f"bold reverse {colours.get('accent', '')}", start + 5, end + 5)
        text.append_text(line)
    return text


class SearchScreen(SessionScreen):
    BINDINGS = [
        Binding("enter", "open_highlighted", "Open", show=True),
        Binding("down", "move(1)", "Next result", show=False),
        Binding("up", "move(-1)", "Previous result", show=False),
        Binding("pagedown", "move(10)", "Page down", show=False),
        Binding("pageup", "move(-10)", "Page up", show=False),
        Binding("escape", "back", "Back"),
    ]
    HELP_EXTRA = [
        ("up  down", "move the highlighted result (the focus stays in the box)"),
        ("tab", "to the results list"),
    ]

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.hits: list[SearchHit] = []
        self.hits_query = ""  # the query the results shown answer (typing may be ahead of it)
        self._timer: Timer | None = None
        self._error_timer: Timer | None = None
        self._last_query = ""

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="search memory…  (/ to come back here)", id="query")
        yield Static(Text(HELP, style="dim"), id="search-help")
        yield Static(id="search-state")
        yield MarkedOptionList(id="results")
        yield StatusBar(self.ctx)
        yield MemtuiFooter()

    def on_mount(self) -> None:
        self.ctx.events.subscribe(self, self._on_event)
        self.title = "Search"
        self.focus_query()
        self._show_state()

    def focus_query(self) -> None:
        """Put the cursor in the search box (on first use, on_mount does it once composed)."""
        boxes = self.query("#query")
        if boxes:
            boxes.first(Input).focus()

    def _on_event(self, event: AppEvent) -> None:
        if isinstance(event, IndexStateChanged):
            self._show_state()
            if self.session.index is not None and self._last_query and not self.hits:
                self.run_search(self._last_query)
        elif isinstance(event, PagesChanged) and self._last_query:
            self.run_search(self._last_query)

    def _show_state(self, message: Text | None = None) -> None:
        state = self.query_one("#search-state", Static)
        if message is not None:
            state.update(message)
            return
        session = self.session
        if session.index_error:
            state.update(Text(f"✖ search is unavailable: {one_line(session.index_error)}", style="bold"))
        elif session.index is None:
            progress = session.index_progress
            done = f" {progress.done:,}/{progress.total:,}" if progress.total else ""
            state.update(Text(f"… the index is being built{done}; results appear when it is ready", style="dim"))
        elif session.index.read_only:
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
        event.stop()
        self.action_open_highlighted()

    def action_open_highlighted(self) -> None:
        """Open the highlighted result (the first, unless up/down moved the highlight)."""
        results = self.query_one("#results", OptionList)
        if not self.hits:
            return
        index = results.highlighted if results.highlighted is not None else 0
        if 0 <= index < len(self.hits):
            self._open_hit(self.hits[index])

    def action_move(self, delta: int) -> None:
        results = self.query_one("#results", OptionList)
        if not results.option_count:
            return
        current = results.highlighted if results.highlighted is not None else -1
        results.highlighted = max(0, min(results.option_count - 1, current + delta))

    def on_key(self, event) -> None:
        """Typing always edits the query, wherever the focus is."""
        query = self.query_one("#query", Input)
        if self.focused is not query and event.is_printable and event.character and event.character != "/":
            query.focus()
            query.insert_text_at_cursor(event.character)
            event.stop()

    @work(thread=True, exclusive=True, group="search", name="search", description="run_search")
    def run_search(self, query: str) -> None:
        worker = get_current_worker()
        service = self.session.index
        if not query.strip():
            self.app.call_from_thread(self._show_results, query, [], None, 0.0)
            return
        if service is None:
            return
        started = time.perf_counter()
        hits: list[SearchHit]  # a SearchResults when the search ran
        error: MemtuiError | None
        try:
            hits = service.search(query, limit=50)
            error = None
        except MemtuiError as exc:
            hits, error = [], exc
        elapsed = time.perf_counter() - started
        if not worker.is_cancelled:
            self.app.call_from_thread(self._show_results, query, hits, error, elapsed)

    def _show_results(self, query: str, hits: list[SearchHit], error: MemtuiError | None, elapsed: float) -> None:
        if query != self._last_query or not self.is_attached:
            return  # a newer query, or the app closed while the search ran (its widgets are gone)
        results = self.query_one("#results", OptionList)
        if self._error_timer is not None:
            self._error_timer.stop()
            self._error_timer = None
        if error is not None:
            # Half-typed queries do not parse: keep the last results, say so only after a pause.
            message = Text(f"✖ {one_line(error.message)}", style="bold")
            if error.hint:
                message.append(f"  {one_line(error.hint)}", style="dim")
            self._error_timer = self.set_timer(ERROR_DELAY, lambda: self._show_error(query, message))
            return
        previous = (
            self.hits[results.highlighted].path
            if self.hits and results.highlighted is not None and results.highlighted < len(self.hits)
            else None
        )
        results.clear_options()
        self.hits, self.hits_query = hits, query
        if not query.strip():
            self._show_state()
            return
        colours = self.ctx.palette()
        results.add_options([Option(hit_prompt(hit, colours), id=f"hit-{i}") for i, hit in enumerate(hits)])
        if hits:
            # Enter opens the first result, or the one you moved to if a refresh still has it.
            results.highlighted = next((i for i, hit in enumerate(hits) if hit.path == previous), 0)
        count = f"{len(hits)} result{'s' if len(hits) != 1 else ''}" if hits else "no results"
        timing = f" in {elapsed * 1000:.0f} ms" if self.ctx.show_timings else ""
        state = Text(f"{count}{timing}", style="dim")
        if getattr(hits, "timed_out", False):
            state.append("  ▲ the search hit its time limit: results may be incomplete", style="bold")
        for note in getattr(hits, "notes", ()):
            state.append(f"\n▲ {one_line(note)}", style="bold")
        self._show_state(state)

    def _show_error(self, query: str, message: Text) -> None:
        self._error_timer = None
        if query == self._last_query:
            self._show_state(message)

    def _open_hit(self, hit: SearchHit) -> None:
        """The page, scrolled to the line the snippet came from, lit up; n/N walk the lines
        holding the query's words."""
        line = hit.line
        self.open_page(
            hit.path,
            line=line,
            highlight=(line, line) if line else None,
            matches=[line] if line else None,
            terms=query_words(self._last_query),
        )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        option_id = event.option.id or ""
        if option_id.startswith("hit-"):
            self._open_hit(self.hits[int(option_id[4:])])

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
