"""Claims: every tagged line of the field, to answer "whose idea is this fact?".

A claim is one line carrying a source tag (``[stated]``, ``[observed]``,
``[inferred]``, ``[suggested]``), or a struck history line that carried one
(``memtui.field.claims``). The presets are the auditor's first questions:

- **agent ideas on decisions**: ``[suggested]``/``[inferred]`` claims on decision
  pages (a ``decision`` kind, a ``decision/...`` subject, the ``decisions/`` folder);
- **uncited [stated]**: current claims said to come from the user that cite nothing;
- **promoted**: claims whose tag rose from a weaker one in an earlier version;
- **superseded**: struck lines and claims of pages no longer current.

``t`` narrows to one tag (the overview's tag counts open the screen that way),
``/`` filters by words in the claim or its path, Enter opens the page at the
claim's line. The claims are computed in a worker from the analysed snapshot
(shared with the checks, so usually already made).
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.timer import Timer
from textual.widgets import Header, Static, Tab, Tabs

from memtui.field.body import SOURCE_TAGS
from memtui.field.claims import Claim
from memtui.field.page import line_anchor
from memtui.session.analysis import Analysis
from memtui.session.events import AnalysisReady
from memtui.session.latest_only import LatestOnly
from memtui.textsafety import one_line
from memtui.tui import safe
from memtui.tui.context import AppEvent, Context, SessionScreen, ThemeChanged
from memtui.tui.messages import OpenProvenance
from memtui.tui.themes import TAG_FALLBACK
from memtui.tui.widgets.footer import MemtuiFooter
from memtui.tui.widgets.lists import FilterBox, FilterInPlace, matches
from memtui.tui.widgets.page_table import Column, PageTable
from memtui.tui.widgets.status_bar import StatusBar

PRESETS: dict[str, str] = {
    "all": "all claims",
    "ideas": "agent ideas on decisions",
    "uncited": "uncited [stated]",
    "promoted": "promoted",
    "superseded": "superseded",
}
COLUMNS = [
    Column("tag", "tag", 11, priority=9),
    Column("cited", "cited", 5, priority=6),
    Column("status", "status", 10, priority=7),
    Column("rose", "rose from", 11, priority=5),
    Column("text", "claim", 0, 20, weight=3, priority=10),
    Column("where", "page:line", 0, 16, weight=2, priority=8),
]
RELOAD_DELAY = 0.2


def is_decision_page(info) -> bool:
    """A decision, by kind, subject or folder (what "decision subjects" means in the presets)."""
    if info is None:
        return False
    kind = (info.kind or "").casefold()
    subject = (info.subject or "").casefold()
    return kind == "decision" or subject.startswith(("decision/", "decisions/")) or info.path.startswith("decisions/")


def in_preset(claim: Claim, preset: str, pages) -> bool:
    if preset == "ideas":
        return (
            claim.tag in ("suggested", "inferred")
            and claim.status == "current"
            and is_decision_page(pages.get(claim.path))
        )
    if preset == "uncited":
        return claim.tag == "stated" and not claim.cited and claim.status == "current"
    if preset == "promoted":
        return claim.promoted_from is not None
    if preset == "superseded":
        return claim.status == "superseded"
    return True


def claim_key(claim: Claim) -> str:
    return f"{claim.path}\n{claim.line}"


def claim_cells(claim: Claim) -> tuple:
    if claim.line_status == "struck":
        status = ("struck", "dim")
    elif claim.page_status != "current":
        status = (claim.page_status, "dim")
    else:
        status = ("current", "")
    return (
        (f"[{claim.tag}]", TAG_FALLBACK.get(claim.tag, "")),
        ("✓ yes" if claim.cited else "✗ no", "" if claim.cited else "warning"),
        status,
        (
            f"↑ {claim.promoted_from}" if claim.promoted_from else "",
            "error" if claim.promoted_from and not claim.new_citation else "",
        ),
        (one_line(claim.text, 400), "dim" if claim.status != "current" else ""),
        (one_line(f"{claim.path}:{claim.line}", 300), "dim"),
    )


class ClaimsScreen(FilterInPlace, SessionScreen):
    """The claims of the field, by preset, tag and words."""

    BINDINGS = [
        Binding("slash", "filter_list", "Filter", key_display="/"),
        Binding("f", "cycle_preset", "Preset"),
        Binding("t", "cycle_tag", "Tag"),
        Binding("p", "evidence", "Evidence", tooltip="The highlighted claim beside the page it cites"),
        Binding("escape", "app.switch_mode('browse')", "Back"),
    ]
    HELP_EXTRA = [
        ("enter", "open the page at the claim's line"),
        ("tab", "between the presets and the list"),
    ]

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._request: tuple[str, str | None] | None = None  # a preset and tag asked for, not shown yet
        self._claim_reads = LatestOnly(self._compute, self.call_later)
        self.preset = "all"
        self.tag: str | None = None
        self.claims: list[Claim] = []
        self.by_key: dict[str, Claim] = {}
        self._analysed: Analysis | None = None  # the analysis the claims were made from
        self._reload_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Tabs(*[Tab(Content(PRESETS[name]), id=f"preset-{name}") for name in PRESETS], id="claim-presets")
        yield Static(id="claims-summary")
        yield FilterBox(
            id="list-filter",
            placeholder="filter: words in the claim or its page (enter: back to the list, escape: clear)",
        )
        yield PageTable(COLUMNS, id="claim-list")
        yield StatusBar(self.ctx)
        yield MemtuiFooter()

    def on_mount(self) -> None:
        self.title = "Claims"
        self.ctx.events.subscribe(self, self._on_event)
        table = self.query_one(PageTable)
        table.empty_message = "reading the claims…"
        self._take_request()
        self._load()
        table.focus()

    def on_screen_resume(self) -> None:
        if self._take_request():
            self.refilter()

    def request(self, preset: str = "all", tag: str | None = None) -> None:
        """Show ``preset`` narrowed to ``tag`` (asked for by the overview, the palette, a key)."""
        self._request = (preset, tag)
        if self.is_mounted and self.app.screen is self and self._take_request():
            self.refilter()

    def _take_request(self) -> bool:
        """The preset or tag asked for by whoever opened the screen, if one waits."""
        request, self._request = self._request, None
        if request is None:
            return False
        preset, tag = request
        self.preset = preset if preset in PRESETS else "all"
        self.tag = tag if tag in SOURCE_TAGS else None
        self._show_preset()
        return True

    def _show_preset(self) -> None:
        tabs = self.query_one(Tabs)
        if tabs.active != f"preset-{self.preset}":
            tabs.active = f"preset-{self.preset}"

    # ------------------------------------------------------------------ data
    def _on_event(self, event: AppEvent) -> None:
        if isinstance(event, AnalysisReady | ThemeChanged) and self._reload_timer is None:
            self._reload_timer = self.set_timer(RELOAD_DELAY, self._timed_load)

    def _timed_load(self) -> None:
        self._reload_timer = None
        self._load()

    def _load(self) -> None:
        analysis = self.session.analysis
        if analysis is None:
            summary = self.query_one("#claims-summary", Static)
            summary.update(Text("… reading and checking the field", style="dim"))
            summary.display = True
            return
        if analysis is self._analysed:
            return
        self._claim_reads.request(analysis)

    @work(thread=True, exclusive=True, group="claims", description="_compute")
    def _compute(self, analysis: Analysis) -> None:
        with self._claim_reads.reporting(self.app):
            claims = analysis.claims()
            self.app.call_from_thread(self._take, analysis, claims)

    def _take(self, analysis: Analysis, claims: list[Claim]) -> None:
        self._analysed = analysis
        self.claims = claims
        self.by_key = {claim_key(claim): claim for claim in claims}
        self.refilter()

    def visible_claims(self) -> list[Claim]:
        pages = self._analysed.field.pages if self._analysed is not None else {}
        query = self.text_filter
        out = []
        for claim in self.claims:
            if self.tag is not None and claim.tag != self.tag:
                continue
            if self.preset != "all" and not in_preset(claim, self.preset, pages):
                continue
            if query and not matches(query, claim.text, claim.path):
                continue
            out.append(claim)
        return out

    def refilter(self) -> None:
        table = self.query_one(PageTable)
        shown = self.visible_claims()
        by_key = self.by_key
        table.empty_message = "no claims match" if self._analysed is not None else "reading the claims…"
        table.set_lazy_rows([claim_key(claim) for claim in shown], lambda key: claim_cells(by_key[key]))
        self._summarise(shown)

    def _summarise(self, shown: list[Claim]) -> None:
        colours = self.ctx.palette()
        text = Text()
        text.append(f"{len(shown):,}", style="bold")
        text.append(f" of {len(self.claims):,} claims · {PRESETS[self.preset]}")
        if self.tag:
            text.append(" · tag ")
            text.append(f"[{self.tag}]", style=f"bold {colours.get(self.tag, '')}")
            text.append(" (t: next tag)", style="dim")
        if self.text_filter:
            text.append(f" · words {one_line(self.text_filter, 40)!r}")
        promoted = sum(1 for claim in shown if claim.promoted_from)
        uncited = sum(1 for claim in shown if claim.tag == "stated" and not claim.cited and claim.status == "current")
        if promoted:
            text.append(f"   ↑ {promoted:,} promoted", style=colours.get("error", ""))
        if uncited:
            text.append(f"   ✗ {uncited:,} uncited [stated]", style=colours.get("warning", ""))
        summary = self.query_one("#claims-summary", Static)
        summary.update(text)
        summary.display = True

    def filtered_list(self) -> PageTable:
        return self.query_one(PageTable)

    # ------------------------------------------------------------------ actions
    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        name = (event.tab.id or "").removeprefix("preset-")
        if name in PRESETS and name != self.preset:
            self.preset = name
            self.refilter()

    def action_cycle_preset(self) -> None:
        names = list(PRESETS)
        self.preset = names[(names.index(self.preset) + 1) % len(names)]
        self._show_preset()
        self.refilter()

    def action_cycle_tag(self) -> None:
        order = [None, *SOURCE_TAGS]
        self.tag = order[(order.index(self.tag) + 1) % len(order)]
        self.refilter()

    def action_evidence(self) -> None:
        """The highlighted claim beside the first page it cites that is in the field."""
        table = self.query_one(PageTable)
        claim = self.by_key.get(table.cursor_key) if table.cursor_key is not None else None
        if claim is None:
            return
        field = self.session.model_field()
        assert field is not None  # the claims come from an analysis of it
        outside = []
        for source in claim.citations:
            hit = field.resolve_source(source, near=claim.path)
            if hit is not None:
                self.post_message(
                    OpenProvenance(
                        hit.path, lines=line_anchor(source), claim_path=claim.path, claim_line=claim.line, label=source
                    )
                )
                return
            outside.append(source)
        if outside:
            safe.notify(self, f"cited outside this field: {', '.join(outside)}", title=f"{claim.path}:{claim.line}")
        else:
            safe.notify(self, f"{claim.path}:{claim.line} cites no evidence", severity="warning")

    def on_page_table_selected(self, event: PageTable.Selected) -> None:
        claim = self.by_key.get(event.key)
        if claim is not None:
            self.open_page(claim.path, line=claim.line, highlight=(claim.line, claim.line))
