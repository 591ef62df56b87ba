"""Help: the keys of the screen you are on first, then the keys that work everywhere, then the rest.

Gathered from the screens' own bindings so it never goes stale; ``HELP_EXTRA``
on a screen adds keys that are not bindings (Enter on a list, Tab between panes).
"""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Static

from memtui.render.glyphs import BADGES

INTRO = (
    "memtui shows what an agent remembers and where each fact came from. "
    "Source tags: [stated] the user said it, [observed] seen in a tool result, "
    "[inferred] the agent's conclusion, [suggested] the agent's idea the user never committed to."
)
EVERYWHERE_EXTRA = [
    ("tab  shift+tab", "next / previous pane (list, review, side panel)"),
    ("ctrl+p", "command palette: open any page, run any action of this screen, history of a subject, theme"),
    ("/", "filter the list you are in (browse, quarantine, proposals); 2 searches the full text"),
    ("z", "undo the last decision (quarantine and proposals screens); z again goes further back"),
    ("ctrl+z  ctrl+y", "undo / redo an edit (editor)"),
    ("escape", "back; in a dialog: cancel"),
]


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
        keys = display or "  ".join(k.strip() for k in key.split(","))
        rows.append((keys, description))
    return rows


def screen_sections() -> list[tuple[str, type[Screen[Any]]]]:
    """Every screen's keys, by screen: the fixed ones, and each numbered mode (``tui.modes``)."""
    import importlib

    from memtui.tui.modes import MODES
    from memtui.tui.screens.browse import BrowseScreen
    from memtui.tui.screens.claims import ClaimsScreen
    from memtui.tui.screens.editor import EditorScreen
    from memtui.tui.screens.history import HistoryScreen
    from memtui.tui.screens.page import PageScreen
    from memtui.tui.screens.search import SearchScreen

    modes = [
        (mode.title, getattr(importlib.import_module(f"memtui.tui.screens.{mode.module}"), mode.screen))
        for mode in MODES
    ]
    return [
        ("Browse", BrowseScreen),
        ("Page", PageScreen),
        ("History", HistoryScreen),
        ("Search", SearchScreen),
        *modes,
        ("Claims", ClaimsScreen),
        ("Editor", EditorScreen),
    ]


def screen_rows(screen_type: type[Screen[Any]], focused: Widget | None = None) -> list[tuple[str, str]]:
    """A screen's keys: its bindings, the focused widget's own ones (the page list's), its extras."""
    rows = _binding_rows(screen_type.BINDINGS)
    if focused is not None:
        seen = {description for _, description in rows}
        rows += [row for row in _binding_rows(type(focused).BINDINGS) if row[1] not in seen and row[0] != "enter"]
    else:
        from memtui.tui.screens.browse import BrowseScreen
        from memtui.tui.widgets.page_table import PageTable

        if screen_type is BrowseScreen:
            rows += [row for row in _binding_rows(PageTable.BINDINGS)]
    rows += list(getattr(screen_type, "HELP_EXTRA", []))
    return rows


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "close", "Close")]

    def __init__(self, for_screen: Screen[Any] | None = None) -> None:
        super().__init__()
        self.for_screen = for_screen

    def compose(self) -> ComposeResult:
        sections = screen_sections()
        current = type(self.for_screen) if self.for_screen is not None else None
        current_name = next((name for name, kind in sections if kind is current), None)
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold", no_wrap=True)
        table.add_column()

        def section(title: str, rows: list[tuple[str, str]]) -> None:
            table.add_row(Text(title, style="bold underline"), "")
            for keys, description in rows:
                table.add_row(Text(keys), Text(description))
            table.add_row("", "")

        if current_name is not None:
            assert current is not None  # it is the section named
            focused = self.for_screen.focused if self.for_screen is not None else None
            # The focused widget's own keys when memtui defines them (the page list), not Textual's defaults.
            focused = (
                focused
                if focused is not None
                and "BINDINGS" in type(focused).__dict__
                and type(focused).__module__.startswith("memtui")
                else None
            )
            section(f"This screen: {current_name}", screen_rows(current, focused))
        section("Everywhere", _binding_rows(type(self.app).BINDINGS) + EVERYWHERE_EXTRA)
        for name, kind in sections:
            if kind is not current:
                section(name, screen_rows(kind))
        badges = Text("Badges: ")
        for state, (glyph, word, _) in BADGES.items():
            badges.append(f"{glyph}{word} = {state}   ")
        with Vertical(id="help-dialog"):
            yield Static(Text("memtui keys (escape closes)", style="bold"), classes="dialog-title")
            with VerticalScroll():
                yield Static(table, id="help-keys")
                yield Static(Text(INTRO))
                yield Static(badges)

    def action_close(self) -> None:
        self.dismiss(None)
