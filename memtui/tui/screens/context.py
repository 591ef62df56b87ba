"""Context: what each agent will be told next session.

For every agent whose files memtui found in the field, its files in load order: what it
loads every session, what it loads when it works on matching files (and, with ``a``,
what it reads only when it decides to), each with its size, why it loads, its review
state, where a cap cuts it and the findings that reach the agent with it. What the agent
loads from outside the field is named, never read; what memtui cannot tell is said.
``enter`` opens the file at its first finding. The report is ``memtui context``'s
(``session.loaded``), drawn by the same renderer (``render.context``).
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widgets import Header, OptionList, Static
from textual.widgets.option_list import Option

from memtui.dialects.loading import AUTOMATIC, ContextReport, LoadedFile
from memtui.field.field import Field
from memtui.render.context import (
    agent_heading,
    agent_notes,
    file_details,
    file_row,
    shown_files,
    unknown_lines,
)
from memtui.session.events import IndexStateChanged
from memtui.session.loaded import loaded_context
from memtui.textsafety import plural
from memtui.tui import safe
from memtui.tui.context import AppEvent, SessionScreen
from memtui.tui.widgets.footer import MemtuiFooter
from memtui.tui.widgets.lists import MarkedOptionList
from memtui.tui.widgets.status_bar import StatusBar


class ContextScreen(SessionScreen):
    BINDINGS = [
        Binding("escape", "app.switch_mode('browse')", "Back"),
        Binding("a", "toggle_all", "All files", tooltip="Also the files an agent reads only when it decides to"),
    ]
    HELP_EXTRA = [("enter", "open the file, at its first finding")]

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.all_files = False
        self.report: ContextReport | None = None
        self._files: dict[str, LoadedFile] = {}  # option id -> file

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="context-summary")
        yield MarkedOptionList(id="context-list")
        yield StatusBar(self.ctx)
        yield MemtuiFooter()

    def on_mount(self) -> None:
        self.title = "What agents load"
        self.ctx.events.subscribe(self, self._on_event)
        self.refresh_context()

    def _on_event(self, event: AppEvent) -> None:
        if not isinstance(event, IndexStateChanged):
            self.refresh_context()

    def refresh_context(self) -> None:
        analysis = self.session.analysis
        if analysis is None:
            self.query_one("#context-summary", Static).update(Text("… reading and checking the field", style="dim"))
            return
        self._measure(analysis.field)

    @work(thread=True, exclusive=True, group="context", description="_measure")
    def _measure(self, field: Field) -> None:
        """Measured off the UI thread: the capped files are read to find their cut. Every file,
        listed or not: what is not listed is counted."""
        report = loaded_context(field)
        self.app.call_from_thread(self._show, report)

    def _show(self, report: ContextReport) -> None:
        if not self.is_attached:
            return
        self.report = report
        colours = self.ctx.palette()
        listing = self.query_one("#context-list", OptionList)
        before = listing.highlighted_option.id if listing.highlighted_option is not None else None
        options: list[Option] = []
        self._files = {}
        automatic = 0
        for number, agent in enumerate(report.agents):
            options.append(Option(agent_heading(agent, colours), disabled=True, id=f"agent:{number}"))
            shown = shown_files(agent, all_files=self.all_files)
            # The list may not be laid out yet (a report that came back fast): the screen's width then.
            width = (listing.size.width or self.size.width or self.app.size.width) - 4
            path_width = min(max((len(f.path) for f in shown), default=10), 40)
            for loaded in shown:
                key = f"file:{number}:{loaded.path}"
                # one line a file: the path column as wide as the agent's paths need, the reason cut to fit
                prompt = file_row(loaded, colours, path_width=path_width, width=width)
                for line in file_details(loaded, colours):
                    prompt.append("\n")
                    prompt.append_text(line)
                options.append(Option(prompt, id=key))
                self._files[key] = loaded
            notes = agent_notes(agent, shown, colours, more_hint="a lists them")
            options.extend(Option(note, disabled=True) for note in notes)
            automatic += sum(1 for f in agent.files if f.loaded in AUTOMATIC)
        options.extend(Option(line, disabled=True) for line in unknown_lines(report, colours))
        listing.set_options(options)
        if before is not None and before in self._files:
            listing.highlighted = listing.get_option_index(before)
        elif self._files:
            listing.highlighted = listing.get_option_index(next(iter(self._files)))
        summary = Text(
            f"{plural(len(report.agents), 'agent')}, {plural(automatic, 'file')} loaded without asking, ",
            style="bold",
        )
        errors = [f for f in report.findings if f.severity == "error"]
        summary.append(
            f"{plural(len(report.findings), 'finding')} in them ({len(errors)} errors)",
            style=colours.get("error" if errors else "success", ""),
        )
        summary.append("   a: " + ("only what loads by itself" if self.all_files else "every file"), style="dim")
        self.query_one("#context-summary", Static).update(summary)

    def on_resize(self) -> None:
        """Rows are cut to the list's width: drawn again at the new one."""
        if self.report is not None:
            self._show(self.report)

    def action_toggle_all(self) -> None:
        self.all_files = not self.all_files
        if self.report is not None:
            self._show(self.report)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        loaded = self._files.get(event.option.id or "")
        if loaded is None:
            return
        if not loaded.exists:
            safe.notify(self, f"{loaded.path} is not in the field: the agent would find nothing there")  # markup off
            return
        lines = [f.line for f in loaded.findings if f.line]
        self.open_page(loaded.path, line=min(lines) if lines else loaded.cut_at_line)
