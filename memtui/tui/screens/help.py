"""Help: every key, gathered from the screens' own bindings so it never goes stale."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from memtui.tui.model import BADGES

INTRO = (
    "memtui shows what an agent remembers and where each fact came from. "
    "Source tags: [stated] the user said it, [observed] seen in a tool result, "
    "[inferred] the agent's conclusion, [suggested] the agent's idea the user never committed to. "
    "Ctrl+P opens the command palette: open any page by title, id or path, or run any action."
)


def _binding_rows(bindings) -> list[tuple[str, str]]:
    rows = []
    for binding in bindings:
        if isinstance(binding, Binding):
            key, description, display = binding.key, binding.description, binding.key_display
        else:
            key, _action, description = (list(binding) + ["", "", ""])[:3]
            display = None
        if not description:
            continue
        keys = display or " ".join(k.strip() for k in key.split(","))
        rows.append((keys, description))
    return rows


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close")]

    def compose(self) -> ComposeResult:
        from memtui.tui.screens.browse import BrowseScreen
        from memtui.tui.screens.history import HistoryScreen
        from memtui.tui.screens.page import PageScreen
        from memtui.tui.screens.proposals import ProposalsScreen
        from memtui.tui.screens.quarantine import QuarantineScreen
        from memtui.tui.screens.search import SearchScreen
        from memtui.tui.widgets.page_table import PageTable

        sections = [
            ("Everywhere", type(self.app).BINDINGS),
            ("Page list", PageTable.BINDINGS),
            ("Browse", BrowseScreen.BINDINGS),
            ("Page", PageScreen.BINDINGS),
            ("History", HistoryScreen.BINDINGS),
            ("Search", SearchScreen.BINDINGS),
            ("Quarantine", QuarantineScreen.BINDINGS),
            ("Proposals", ProposalsScreen.BINDINGS),
        ]
        try:
            from memtui.tui.screens.editor import EditorScreen

            sections.append(("Editor", EditorScreen.BINDINGS))
        except ImportError:
            pass
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()
        for title, bindings in sections:
            table.add_row(Text(title, style="bold underline"), "")
            for keys, description in _binding_rows(bindings):
                table.add_row(keys, description)
            table.add_row("", "")
        badges = Text("Badges: ")
        for state, (glyph, word, _) in BADGES.items():
            badges.append(f"{glyph}{word} = {state}   ")
        with Vertical(id="help-dialog"):
            yield Static(Text("memtui keys", style="bold"), classes="dialog-title")
            with VerticalScroll():
                yield Static(Text(INTRO))
                yield Static(badges)
                yield Static(table)

    def action_close(self) -> None:
        self.dismiss(None)
