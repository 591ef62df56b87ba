"""History: the timeline of a fact's versions, and what memory held on a given day.

Each version says *what* it decided (its summary, the value of an inline line,
or the first claim of the page), not only when. A subject's history (every page
and inline chain of it) opens from the palette ("History: ...") as
``memtui history FIELD SUBJECT`` shows it.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Header, Input, OptionList, Static
from textual.widgets.option_list import Option

from memtui.field.history import CURRENT, STALE, SUPERSEDED, Chain, Version, describe_event
from memtui.field.page import parse_bytes
from memtui.render.glyphs import STATUS
from memtui.session.events import AnalysisReady, PagesChanged
from memtui.store.files import read_bytes
from memtui.textsafety import one_line, plural
from memtui.tui.context import AppEvent, Context, SessionScreen, ThemeChanged
from memtui.tui.widgets.footer import MemtuiFooter
from memtui.tui.widgets.lists import MarkedOptionList
from memtui.tui.widgets.status_bar import StatusBar

MAX_EVENTS_SHOWN = 8


def decided_text(root, version: Version) -> str:
    """What a version says: an inline line's value, the page's summary, else its first claim."""
    if version.form == "inline" or (version.value and version.value != version.title):
        return version.value
    try:
        result = read_bytes(Path(root, *version.path.split("/")))
    except OSError:
        result = None
    if result is None:
        return ""
    parsed = parse_bytes(version.path, result[0])
    for line in parsed.body.lines:
        if line.kind == "claim":
            return line.text.strip().lstrip("-*+ ").strip()
    return ""


def version_prompt(version: Version, colours: dict[str, str], *, held: bool, last: bool, what: str = "") -> Text:
    current = version.status == CURRENT
    text = Text()
    rail = "└─" if last else "├─"
    start = one_line(version.valid_from or "????-??-??", 10)
    text.append(f"{start} {rail} ", style="dim")
    glyph = STATUS.get(version.status, STATUS[SUPERSEDED])
    if current:
        text.append(f"{glyph.glyph} {glyph.word.upper():<11}", style=f"bold reverse {colours.get(glyph.colour, '')}")
    elif version.status == STALE:
        text.append(f"{glyph.label():<13}", style=f"bold {colours.get(glyph.colour, '')}")
    else:
        text.append(f"{glyph.label():<13}", style="dim")
    text.append(one_line(version.title, 90), style="bold" if current else "dim")
    if version.tag:
        text.append(f" [{version.tag}]", style=f"bold {colours.get(version.tag, '')}")
    if held:
        text.append("  ◆ held on that day", style=f"bold {colours.get('accent', '')}")
    pad = " " * 11 + ("   " if last else "│  ")
    if what and (version.form != "inline" or what not in version.title):
        text.append(f"\n{pad}")
        text.append(one_line(what, 160), style="italic" if current else "dim italic")
    text.append(f"\n{pad}valid {one_line(version.valid_from or '?', 40)} → {one_line(version.valid_to or 'now', 40)}")
    where = version.path if version.line is None else f"{version.path}:{version.line}"
    text.append(f"   {one_line(where)}", style="dim")
    if version.sources:
        text.append(f"\n{pad}sources: ", style="dim")
        text.append(one_line("; ".join(version.sources), 160))
    if version.supersedes:
        text.append(f"\n{pad}replaced: ", style="dim")
        text.append(one_line(", ".join(version.supersedes), 160))
    for event in version.events[-MAX_EVENTS_SHOWN:]:
        text.append(f"\n{pad}· ", style="dim")
        text.append(one_line(describe_event(event), 160), style="dim")
    if not current:
        text.append(f"\n{pad}{one_line(version.reason, 160)}", style=f"italic {colours.get('warning', '')}")
    return text


class HistoryScreen(SessionScreen):
    BINDINGS = [
        Binding("escape,backspace", "back", "Back"),
        Binding("a", "focus_as_of", "As of date"),
        Binding("c", "clear_as_of", "Clear date"),
    ]

    def __init__(self, ctx: Context, target: str) -> None:
        super().__init__(ctx)
        self.target = target
        self.as_of: str | None = None
        self.chains: list[Chain] = []
        self._option_targets: dict[str, tuple[str, int | None]] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        yield Input(placeholder="as of date: YYYY-MM-DD (what did memory hold that day?)", id="as-of")
        yield Static(id="as-of-summary")
        yield MarkedOptionList(id="timeline")
        yield StatusBar(self.ctx)
        yield MemtuiFooter()

    def on_mount(self) -> None:
        self.ctx.events.subscribe(self, self._on_event)
        self.title = f"History: {one_line(self.target, 80)}"
        self.refresh_history()
        self.query_one("#timeline").focus()

    def _on_event(self, event: AppEvent) -> None:
        if isinstance(event, PagesChanged | ThemeChanged | AnalysisReady):
            self.refresh_history()

    def refresh_history(self) -> None:
        field = self.session.model_field()
        self.chains = [c for c in field.history.lookup(self.target) if c.versions] if field else []
        colours = self.ctx.palette()
        timeline = self.query_one("#timeline", OptionList)
        highlighted = timeline.highlighted
        timeline.clear_options()
        self._option_targets.clear()
        if not self.chains:
            timeline.add_option(Option(Text(f"no history for {one_line(self.target)}", style="dim"), disabled=True))
        summary = Text()
        for number, chain in enumerate(self.chains):
            currents = chain.current
            header = Text(f"{one_line(chain.name)}", style="bold")
            header.append(
                f"   {chain.form} history · {plural(len(chain.versions), 'version')}, oldest first", style="dim"
            )
            if len(currents) > 1:
                header.append(
                    f"   ▲ {len(currents)} current at once: contradiction", style=f"bold {colours.get('warning', '')}"
                )
            timeline.add_option(Option(header, id=f"chain-{number}", disabled=True))
            held = chain.as_of(self.as_of) if self.as_of else None
            for index, version in enumerate(chain.versions):
                option_id = f"v-{number}-{index}"
                self._option_targets[option_id] = (version.path, version.line)
                assert field is not None  # the chains come from it
                what = decided_text(field.root, version)
                prompt = version_prompt(
                    version, colours, held=held is version, last=index == len(chain.versions) - 1, what=what
                )
                timeline.add_option(Option(prompt, id=option_id))
            if self.as_of:
                summary.append(f"On {self.as_of}, {one_line(chain.name)}: ", style="bold")
                if held is None:
                    summary.append("nothing recorded yet\n", style="dim")
                else:
                    summary.append(one_line(held.title, 80))
                    summary.append(f"  ({one_line(held.path)})\n", style="dim")
            timeline.add_option(Option(Text(""), disabled=True))
        summary.rstrip()
        self.query_one("#as-of-summary", Static).update(summary)
        self.query_one("#as-of-summary", Static).display = bool(self.as_of)
        if highlighted is not None and highlighted < timeline.option_count:
            timeline.highlighted = highlighted

    def on_input_submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        if not value:
            self.action_clear_as_of()
            return
        try:
            _dt.date.fromisoformat(value)
        except ValueError:
            self.notify("write the date as YYYY-MM-DD", severity="warning")
            return
        self.as_of = value
        self.refresh_history()
        self.query_one("#timeline").focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        target = self._option_targets.get(event.option.id or "")
        if target:
            self.open_page(target[0], line=target[1])

    def action_focus_as_of(self) -> None:
        self.query_one("#as-of", Input).focus()

    def action_clear_as_of(self) -> None:
        self.as_of = None
        self.query_one("#as-of", Input).value = ""
        self.refresh_history()

    def action_back(self) -> None:
        self.app.pop_screen()
