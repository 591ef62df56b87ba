"""Provenance side by side: a claim on the left, the page it cites on the right.

Following a ``[cite:N]`` (or a link with a line anchor, ``sessions/x.md#L13-L18``) from
a page opens this screen: the cited page is read and shown as the page view shows any
page (its trust and status in the info line, the cited lines lit up, ``]``/``[``,
``n``/``N``, raw bytes, the side panel with ``i``), and the citing page stays in sight
beside it with the claim's line lit up, so the two can be read against each other.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Header, Static

from memtui.field.page import MAX_PARSE_BYTES, parse_bytes
from memtui.session.events import PagesChanged
from memtui.store.files import FileTooLarge, read_bytes
from memtui.textsafety import one_line
from memtui.tui.context import AppEvent, Context, ThemeChanged
from memtui.tui.screens.page import PageScreen
from memtui.tui.widgets.footer import MemtuiFooter
from memtui.tui.widgets.page_body import BodyRows, RawRows, Rows
from memtui.tui.widgets.page_lines import PageLines
from memtui.tui.widgets.status_bar import StatusBar


class ProvenanceScreen(PageScreen):
    """The cited page (``path``) beside the claim that cites it."""

    BINDINGS = [
        Binding("o", "open_source", "Source alone"),
    ]

    def __init__(
        self,
        ctx: Context,
        path: str,
        *,
        lines: tuple[int, int] | None,
        claim_path: str,
        claim_line: int,
        claim_rows: Rows | None,
        label: str,
    ) -> None:
        super().__init__(ctx, path, highlight=lines)
        self.cited_lines = lines
        self.claim_path = claim_path
        self.claim_line = claim_line
        self.claim_rows = claim_rows
        self.label = label
        self.claim_changed = False  # the citing page changed on disk since this opened

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="page-info")
        with Horizontal(id="page-main"):
            with Vertical(id="claim-pane"):
                yield Static(id="claim-title", classes="pane-title")
                yield PageLines(id="claim-body", follows_links=False)
            with Vertical(id="source-pane"):
                yield Static(id="source-title", classes="pane-title")
                yield PageLines(id="page-body")
            yield from self.compose_side()
        yield StatusBar(self.ctx)
        yield MemtuiFooter()

    @property
    def claim_body(self) -> PageLines:
        return self.query_one("#claim-body", PageLines)

    def on_mount(self) -> None:
        super().on_mount()
        self._titles()
        if self.claim_rows is None:
            self.claim_body.show(RawRows(header=[Text(f"reading {one_line(self.claim_path)} …", style="dim")]))
            self._read_claim_page(self.colours())
        else:
            self._show_claim()

    def _show_claim(self) -> None:
        rows = self.claim_rows
        assert rows is not None  # given, or read by _read_claim_page
        claim = self.claim_body
        claim.show(rows)
        row = rows.row_of(self.claim_line)
        claim.highlight_rows(row, row)
        claim.scroll_to_row(row, if_hidden=False)

    @work(thread=True, exclusive=True, group="claim page", description="_read_claim_page")
    def _read_claim_page(self, colours: dict[str, str]) -> None:
        """The claim's page, read and laid out as the page view does (opened from the claims list)."""
        field = self.session.field
        assert field is not None  # the app opens a page only once the field is loaded
        abspath = Path(field.root, *self.claim_path.split("/"))
        try:
            result = read_bytes(abspath, max_bytes=MAX_PARSE_BYTES)
        except (OSError, FileTooLarge) as exc:
            result, problem = None, str(exc)
        else:
            problem = "it was deleted"
        rows: Rows
        if result is None:
            rows = RawRows(
                header=[Text(f"✖ cannot read {one_line(self.claim_path)}: {one_line(problem)}", style="bold")]
            )
        else:
            info = field.pages.get(self.claim_path)
            fact_page, view_end = self._body_settings(info)
            rows = BodyRows(
                parse_bytes(self.claim_path, result[0]), colours, fact_page=fact_page, agent_view_ends=view_end
            )
        self.app.call_from_thread(self._claim_read, rows)

    def _claim_read(self, rows: Rows) -> None:
        if self.is_attached:
            self.claim_rows = rows
            self._show_claim()

    def _titles(self) -> None:
        colours = self.colours()
        claim = Text("claim  ", style=f"bold {colours.get('primary', '')}")
        claim.append(f"{one_line(self.claim_path)}  L{self.claim_line}", style="bold")
        if self.claim_changed:
            claim.append("  ✎ changed on disk since (escape shows it)", style=f"bold {colours.get('warning', '')}")
        self.query_one("#claim-title", Static).update(claim)
        source = Text("evidence  ", style=f"bold {colours.get('primary', '')}")
        source.append(one_line(self.path), style="bold")
        if self.cited_lines is not None:
            first, last = self.cited_lines
            source.append(f"  L{first}" if first == last else f"  L{first}-{last}", style="bold")
        source.append(f"   {one_line(self.label, 80)}", style="dim")
        self.query_one("#source-title", Static).update(source)

    def _on_event(self, event: AppEvent) -> None:
        super()._on_event(event)
        if isinstance(event, PagesChanged) and event.touches(self.claim_path) and not self.claim_changed:
            self.claim_changed = True
            self._titles()
        elif isinstance(event, ThemeChanged):
            self._titles()

    # ------------------------------------------------------------------ keys
    def action_scroll(self, delta: int) -> None:
        pane = self.claim_body if self.focused is self.claim_body else self.body
        pane.scroll_to(y=pane.scroll_y + delta, animate=False)

    def action_open_source(self) -> None:
        """The cited page alone, in the page view (the cited lines lit up)."""
        self.open_page(self.path, highlight=self.cited_lines)
