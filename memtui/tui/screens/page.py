"""Page view: the body with source tags, frontmatter, findings, links, backlinks, history."""

from __future__ import annotations

import gc
import heapq
import time
from collections import Counter
from pathlib import Path

from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Header, OptionList, Static
from textual.widgets.option_list import Option

from memtui.field.checks import SEVERITY_ORDER, check_page_local
from memtui.field.history import CURRENT, UNRECORDED, age_evidence
from memtui.field.page import (
    MAX_PARSE_BYTES,
    ParsedPage,
    line_anchor,
    parse_bytes,
    parse_bytes_steps,
)
from memtui.field.rule_settings import RuleSettings
from memtui.render.glyphs import PENDING, SEVERITY, STATUS, TRUST
from memtui.session.events import AnalysisReady, PagesChanged
from memtui.store.files import FileTooLarge, read_bytes, read_head
from memtui.textsafety import one_line, plural
from memtui.tui import safe
from memtui.tui.context import AppEvent, Context, SessionScreen, ThemeChanged
from memtui.tui.messages import OpenProvenance
from memtui.tui.widgets.footer import MemtuiFooter
from memtui.tui.widgets.lists import MarkedOptionList
from memtui.tui.widgets.page_body import (
    BodyRows,
    LinkTarget,
    RawRows,
    matching_lines,
    tag_legend,
)
from memtui.tui.widgets.page_lines import PageLines
from memtui.tui.widgets.status_bar import StatusBar

KNOWN_KEYS = {
    "id",
    "uuid",
    "title",
    "summary",
    "kind",
    "subject",
    "created",
    "updated",
    "valid_from",
    "valid_to",
    "confidence",
    "origin",
    "reviewed",
    "reviewed_by",
    "reviewed_at",
    "taint",
    "generated",
    "sources",
    "supersedes",
    "lesson",
    "signals",
    "user_correction",
    "move_to",
}
NARROW = 100  # under this many columns the side panel folds away (i shows it instead of the body)
RAW_PREVIEW_BYTES = 64 * 1024  # what an unparsed page shows of itself
SYNC_PARSE_BYTES = 256 * 1024  # a bigger page is parsed in slices (its start at once): about 50 ms of parsing
PARSE_SLICE = 0.006  # seconds of parsing between two turns of the event loop
PREFIX_BYTES = 64 * 1024  # the start of a big page, parsed before it opens
LINKS_LISTED = 100  # the side panel lists this many links; ] and [ reach them all
FINDINGS_LISTED = 30  # and this many findings (the most severe), then how many more of each rule


class PageScreen(SessionScreen):
    BINDINGS = [
        Binding("escape,backspace", "back", "Back"),
        Binding("i", "toggle_details", "Details"),
        Binding("e", "edit", "Edit"),
        Binding("r", "toggle_raw", "Raw"),
        Binding("h", "history", "History"),
        Binding("right_square_bracket", "next_link", "Next link", key_display="]"),
        Binding("left_square_bracket", "previous_link", "Prev link", key_display="["),
        Binding("n", "next_match", "Next match"),
        Binding("N", "previous_match", "Prev match", key_display="N"),
        Binding("enter", "follow", "Follow"),
        Binding("j,down", "scroll(1)", "Down", show=False),
        Binding("k,up", "scroll(-1)", "Up", show=False),
    ]

    def __init__(
        self,
        ctx: Context,
        path: str,
        *,
        line: int | None = None,
        highlight: tuple[int, int] | None = None,
        matches: list[int] | None = None,
        terms: list[str] | None = None,
    ) -> None:
        super().__init__(ctx)
        self.path = path
        self.jump_line = line
        self.raw = False
        self.parsed: ParsedPage | None = None
        self.data: bytes | None = None
        self.deleted = False
        self.body_rows: BodyRows | None = None  # the parsed body as rows (kept while raw bytes show)
        self.links: list[LinkTarget] = []
        self.selected_link: int | None = None
        self.terms = list(terms or [])
        self.matches: list[int] = sorted(set(matches or []))  # file lines, n/N walk them
        self.match_index: int | None = None
        self._target: tuple[int, int] | None = highlight or ((line, line) if line else None)
        self._highlight = highlight is not None or bool(matches)
        if self._target is not None and self.matches and self._target[0] in self.matches:
            self.match_index = self.matches.index(self._target[0])
        self._body_key: tuple | None = None
        self._panes: dict[str, object] = {}  # what each side pane shows now (see ``_update``)
        self._reading = 0  # which reading of the file the rows come from (a late parse of an older one is dropped)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="page-info")
        with Horizontal(id="page-main"):
            yield PageLines(id="page-body")
            yield from self.compose_side()
        yield StatusBar(self.ctx)
        yield MemtuiFooter()

    def compose_side(self) -> ComposeResult:
        """The side panel: frontmatter, tags, findings, links, backlinks, history."""
        with VerticalScroll(id="page-side"):
            yield Static("Frontmatter", classes="side-title")
            yield Static(id="page-frontmatter")
            yield Static("Source tags", classes="side-title")
            yield Static(id="page-tags")
            yield Static("Findings", classes="side-title")
            yield Static(id="page-findings")
            yield Static("Links and citations", classes="side-title")
            yield MarkedOptionList(id="page-links")
            yield Static("Backlinks", classes="side-title")
            yield MarkedOptionList(id="page-backlinks")
            yield Static("History", classes="side-title")
            yield Static(id="page-history")

    @property
    def body(self) -> PageLines:
        return self.query_one("#page-body", PageLines)

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < NARROW, "-narrow")

    def action_toggle_details(self) -> None:
        """Side panel on or off; on a narrow terminal it takes the place of the body."""
        self.toggle_class("-details")
        if self.has_class("-narrow") and self.has_class("-details"):
            self.query_one("#page-side").focus()
        else:
            self.body.focus()

    def on_mount(self) -> None:
        self.set_class(self.app.size.width < NARROW, "-narrow")
        self.ctx.events.subscribe(self, self._on_event)
        self.load()
        self.body.focus()

    # ------------------------------------------------------------------ loading
    def load(self) -> None:
        """Read the file; parse it again only if its bytes changed (else only the side panel)."""
        field = self.session.field
        assert field is not None  # the app opens a page only once the field is loaded
        abspath = Path(field.root, *self.path.split("/"))
        try:
            result = read_bytes(abspath, max_bytes=MAX_PARSE_BYTES)
        except FileTooLarge:
            result = read_head(abspath, RAW_PREVIEW_BYTES)  # shown raw: never the whole file
        except OSError as exc:
            result = None
            safe.notify(self, f"cannot read {self.path}: {exc}", severity="error")
        if result is None:
            self.deleted = True
            self.render_page()
            return
        data = result[0]
        if self.deleted or data != self.data or self.parsed is None:
            self.deleted = False
            self.data = data
            self._read(data)
        self.render_page()

    def _read(self, data: bytes) -> None:
        """Parse the page; a big one in a worker thread, its start at once (the first screens)."""
        self._reading += 1
        if len(data) <= SYNC_PARSE_BYTES:
            self.parsed = parse_bytes(self.path, data)
            return
        cut = data.rfind(b"\n", 0, PREFIX_BYTES) + 1
        start = parse_bytes(self.path, data[:cut]) if cut else None
        if start is not None and start.frontmatter.present and not start.frontmatter.closed:
            start = None  # the frontmatter runs past the start: wait for the whole page
        self.parsed = start
        field = self.session.field
        assert field is not None  # load() read the page from it
        info = field.pages.get(self.path)
        fact_page, view_end = self._body_settings(info)
        # After the first screen is drawn: a thread parsing meanwhile would slow the drawing down.
        self.call_after_refresh(self._parse_whole, self._reading, data, self.colours(), fact_page, view_end)

    def _parse_whole(
        self, reading: int, data: bytes, colours: dict[str, str], fact_page: bool, view_end: int | None
    ) -> None:
        """Parse the whole page a slice at a time between events (a thread would hold the
        interpreter lock while keys wait), then show it."""

        def steps():
            parsed = yield from parse_bytes_steps(self.path, data)
            rows = yield from BodyRows.in_steps(parsed, colours, fact_page=fact_page, agent_view_ends=view_end)
            return parsed, rows

        work = steps()
        # Hundreds of thousands of new objects, none of them garbage: a cycle collection
        # meanwhile would stop a keystroke for 100 ms or more (as the index build does).
        collecting = gc.isenabled()
        gc.disable()

        def step() -> None:
            try:
                if reading != self._reading or not self.is_attached:
                    raise StopIteration
                deadline = time.perf_counter() + PARSE_SLICE
                while time.perf_counter() < deadline:
                    next(work)
            except StopIteration as done:
                if collecting:
                    # The page's hundreds of thousands of objects live while it is shown: out of
                    # the collector's sight, or the first full collection after this walked them
                    # all while a key waited (a 300-450 ms pause at 50,000 lines). Freed by
                    # reference counts when the page closes, as the app's analysis is.
                    gc.freeze()
                    gc.enable()
                if done.value is not None and reading == self._reading and self.is_attached:
                    self._parsed_whole(reading, *done.value)
                return
            self.set_timer(0.001, step)

        step()

    def _parsed_whole(self, reading: int, parsed: ParsedPage, rows: BodyRows) -> None:
        if reading != self._reading or not self.is_attached:
            return
        self.parsed = parsed
        self.body_rows = rows
        self.render_page()

    def _on_event(self, event: AppEvent) -> None:
        if isinstance(event, PagesChanged) and event.touches(self.path):
            self.load()
        elif isinstance(event, AnalysisReady | ThemeChanged):
            self.render_page()

    def colours(self) -> dict[str, str]:
        return self.ctx.palette()

    @staticmethod
    def _body_settings(info) -> tuple[bool, int | None]:
        """What the body's look depends on besides its bytes: a fact page marks untagged
        claims; a memory index shows where the agent's view of it ends."""
        view = info.norm.agent_view if info is not None else None
        return bool(info and info.is_fact_page), view.get("ends_at") if isinstance(view, dict) else None

    # ------------------------------------------------------------------ rendering
    def render_page(self) -> None:
        """The title, the info line, the side panel; the body only when what it shows changed."""
        field = self.session.field
        info = field.pages.get(self.path) if field else None
        title = info.title if info else self.path
        self.title = one_line(title, 120)
        self.sub_title = one_line(self.path)
        colours = self.colours()
        self._render_body(info, colours)
        self._render_info(info, colours)  # after the body: it says which match is lit up
        if self.deleted or self.parsed is None:
            return
        palette = tuple(colours.items())
        fm = self.parsed.frontmatter
        self._update(
            "#page-frontmatter", (fm.raw, fm.error, fm.error_line, palette), lambda: self._frontmatter(colours)
        )
        counts = self.parsed.body.tag_counts
        self._update("#page-tags", (tuple(counts.items()), palette), lambda: tag_legend(colours, counts))
        self._render_findings(colours)
        self._render_links()
        self._render_backlinks()
        self._render_history(colours)

    def _render_body(self, info, colours) -> None:
        body = self.body
        fact_page, view_end = self._body_settings(info)
        unparsed = info is not None and not info.parsed
        key = (self.deleted, self.raw, unparsed, id(self.parsed), id(self.data), fact_page, view_end)
        keep_place = self._body_key is not None and not self.deleted
        if key == self._body_key:
            rows = body.rows
            if isinstance(rows, BodyRows) and rows.colours != colours:  # a new theme: the same rows in its colours
                rows.colours = colours
                body.restyle()
            return
        self._body_key = key
        if self.deleted:
            self.links = []
            rows = RawRows(
                header=[Text(f"✖ {one_line(self.path)} was deleted on disk.", style=f"bold {colours.get('error', '')}")]
            )
        elif self.parsed is None:
            rows = RawRows(header=[Text(f"reading {len(self.data or b''):,} bytes …", style="dim")])
        else:
            body_rows = self.body_rows
            if (
                body_rows is None
                or body_rows.source is not self.parsed
                or (body_rows.fact_page, body_rows.agent_view_ends) != (fact_page, view_end)
            ):
                body_rows = BodyRows(
                    self.parsed,
                    colours,
                    fact_page=fact_page,
                    agent_view_ends=view_end,
                    complete=len(self.parsed.data) == len(self.data or b""),
                )
            self.body_rows = body_rows
            self.links = body_rows.links
            if self.selected_link is not None and self.selected_link >= len(self.links):
                self.selected_link = None
            if self.raw:
                rows = RawRows(self.data or b"")
            elif unparsed:
                problem = one_line(info.problems[0][2] if info.problems else "")
                rows = RawRows(
                    self.data or b"",
                    limit=RAW_PREVIEW_BYTES,
                    header=[Text.assemble(("not parsed: ", "bold"), problem), Text("")],
                )
            else:
                rows = body_rows
        body.selected_link = self.selected_link
        body.show(rows, keep_place=keep_place)
        self._place()

    def _place(self) -> None:
        """Scroll to (and light up) the lines asked for, once the rows hold them."""
        if self._target is None or self.raw or self.body_rows is None or self.body.rows is not self.body_rows:
            return
        first, last = self._target
        rows = self.body_rows
        if not rows.complete and rows.lines and first > rows.lines[-1].number:
            return  # beyond what is read yet: when the whole page is
        if rows.complete:
            self._target = None
            if self.terms:
                self.matches = sorted(set(self.matches) | set(matching_lines(rows.lines, self.terms)))
                if self.match_index is not None or self.matches:
                    self.match_index = self.matches.index(first) if first in self.matches else None
                self.refresh_bindings()
        if self._highlight:
            self.show_lines(first, last)
        else:
            self.scroll_to_line(first)

    def show_lines(self, first: int, last: int | None = None) -> None:
        """Light up file lines ``first`` to ``last`` and bring them into view near the top."""
        last = first if last is None else last
        rows = self.body.rows
        top, bottom = rows.row_of(first), rows.row_of(last)
        self.body.highlight_rows(top, bottom)
        if not (self.body.row_visible(top) and self.body.row_visible(bottom)):
            self.body.scroll_to_row(top, if_hidden=False)

    def _render_info(self, info, colours) -> None:
        text = Text()
        if info is None:
            text.append("✖ not in the field", style=colours.get("error", ""))
        else:
            field, model = self.session.field, self.session.model_field()
            assert field is not None and model is not None  # ``info`` is one of its pages
            state = field.trust(self.path)
            status = model.history.status.get(self.path, PENDING)
            glyph, word, colour = TRUST[state]
            if state == "quarantined" and self.path.startswith("sessions/"):
                glyph, colour, word = "◇", "secondary", "tainted transcript (evidence, not reviewed)"
            text.append(f"{glyph} {word}", style=f"bold {colours.get(colour, '')}")
            s_glyph, s_word, s_colour = STATUS[status]
            text.append(
                f"   {s_glyph} {s_word}", style="bold" if status == CURRENT else f"bold {colours.get(s_colour, 'dim')}"
            )
            if status == UNRECORDED and (age := age_evidence(info)) is not None:
                text.append(f" ({age[0]}, by {age[1]})", style="dim")  # all there is to judge currency by
            if self.matches:
                at = "" if self.match_index is None else f"{self.match_index + 1} of "
                text.append(f"   match {at}{len(self.matches)} (n/N)", style="bold")
            text.append(f"   {one_line(self.path)}", style="dim")
            if info.kind:
                text.append(f"   kind {one_line(info.kind)}")
            if info.subject:
                text.append(f"   subject {one_line(info.subject)}")
            text.append(f"   {info.size:,} bytes")
        if self.raw:
            text.append("   RAW BYTES", style=f"bold reverse {colours.get('warning', '')}")
        self._update("#page-info", text, lambda: text)

    def _update(self, selector: str, key, make) -> None:
        """Update a pane only when what it shows changed: an update lays the screen out again,
        and the analysis of any page in the field comes here."""
        if self._panes.get(selector) == key:
            return
        self._panes[selector] = key
        self.query_one(selector, Static).update(make())

    def _frontmatter(self, colours):
        assert self.parsed is not None  # render_page asks for it only once the page is parsed
        fm = self.parsed.frontmatter
        if not fm.present:
            return Text("no frontmatter", style="dim")
        if fm.error:
            text = Text(f"✖ line {fm.error_line}: {one_line(fm.error)}\n", style=colours.get("error", ""))
            text.append(safe.block(fm.raw))
            return text
        table = Table.grid(padding=(0, 1))
        table.add_column(style="bold", no_wrap=True)
        table.add_column(overflow="fold")
        for key, value in fm.data.items():
            label = Text(one_line(key, 24), style="bold" if key in KNOWN_KEYS else "italic")
            if key not in KNOWN_KEYS:
                label.append(" ?", style="dim")
            table.add_row(label, _value_text(value))
        return table

    def _findings(self):
        """The analysis's findings of this page (one path: the session's analysis); while the page
        itself changed since, its own rules now, the rest when the next analysis is ready."""
        analysis = self.session.analysis
        field = self.session.field
        info = field.pages.get(self.path) if field is not None else None
        if info is None:
            return []
        if analysis is not None and analysis.field.pages.get(self.path) is info:
            return analysis.by_path.get(self.path, [])
        return check_page_local(info)

    def _render_findings(self, colours) -> None:
        found = self._findings()
        findings = heapq.nsmallest(FINDINGS_LISTED, found, key=lambda f: (SEVERITY_ORDER[f.severity], f.line or 0))
        analysis = self.session.analysis
        hidden = analysis.hidden_by_path.get(self.path, 0) if analysis is not None else 0
        if not findings:
            text = Text("✓ none", style=colours.get("success", ""))
            if hidden:  # the field's own memtui.toml hid them: never a plain "none"
                text.append(f", {RuleSettings.hidden_note(hidden)}", style=colours.get("warning", ""))
            self._update("#page-findings", text, lambda: text)
            return
        text = Text()
        for finding in findings[:FINDINGS_LISTED]:
            glyph, _, colour = SEVERITY[finding.severity]
            text.append(f"{glyph} {finding.severity} ", style=f"bold {colours.get(colour, '')}")
            text.append(finding.rule, style="bold")
            if finding.line:
                text.append(f" L{finding.line}", style="dim")
            text.append(f"\n  {one_line(finding.message)}\n")
        if len(found) > FINDINGS_LISTED:
            rest = Counter(finding.rule for finding in found) - Counter(f.rule for f in findings[:FINDINGS_LISTED])
            counts = ", ".join(f"{rule} {count:,}" for rule, count in rest.most_common())
            text.append(f"… {len(found) - FINDINGS_LISTED:,} more: {one_line(counts, 300)}", style="dim")
        if hidden:
            text.append(f"\n{RuleSettings.hidden_note(hidden)}", style=colours.get("warning", ""))
        text.rstrip()
        self._update("#page-findings", text, lambda: text)

    def _field_key(self) -> tuple:
        field = self.session.model_field()
        return id(field), getattr(field, "generation", None)

    def _render_links(self) -> None:
        key = (id(self.links), len(self.links), self._field_key())
        if self._panes.get("#page-links") == key:
            return
        self._panes["#page-links"] = key
        options = []
        for index, link in enumerate(self.links[:LINKS_LISTED]):
            label = Text(f"L{link.line} ", style="dim")
            if link.kind == "wiki":
                model = self.session.model_field()
                assert model is not None  # a page is shown only once the field is loaded
                hit = model.resolve(link.target, near=self.path)
                label.append(f"[[{one_line(link.target, 40)}]]")
                label.append(f" → {one_line(hit.path)}" if hit else " ✖ missing", style="dim" if hit else "bold")
            elif link.kind == "cite":
                label.append(f"[cite:{link.target}] ")
                label.append(one_line(self._citation_source(link) or "✖ no such source", 50), style="dim")
            else:
                label.append(f"{one_line(link.label, 20)} → ")
                label.append(one_line(link.target, 60), style="underline")
            options.append(Option(label, id=f"link-{index}"))
        if len(self.links) > LINKS_LISTED:
            more = f"… {len(self.links) - LINKS_LISTED:,} more: ] and [ reach them in the page"
            options.append(Option(Text(more, style="dim"), disabled=True))
        widget = self.query_one("#page-links", OptionList)
        widget.clear_options()
        widget.add_options(options or [Option(Text("none", style="dim"), disabled=True)])

    def _render_backlinks(self) -> None:
        model = self.session.model_field() if self.session.field else None
        backlinks = model.backlinks(self.path) if model is not None else []
        sources = list(dict.fromkeys(source for source, _line in backlinks))
        key = (tuple(sources), self._field_key())
        if self._panes.get("#page-backlinks") == key:
            return
        self._panes["#page-backlinks"] = key
        widget = self.query_one("#page-backlinks", OptionList)
        widget.clear_options()
        self._backlink_paths = sources
        if not sources:
            widget.add_options([Option(Text("none", style="dim"), disabled=True)])
            return
        field = self.session.field
        assert field is not None  # the backlinks came from it
        options = []
        for index, source in enumerate(sources):
            info = field.pages.get(source)
            label = Text(one_line(info.title if info else source, 40))
            label.append(f"  {one_line(source)}", style="dim")
            options.append(Option(label, id=f"back-{index}"))
        widget.add_options(options)

    def _render_history(self, colours) -> None:
        field = self.session.model_field()
        text = Text()
        if field is None or self.path not in field.pages:
            self._update("#page-history", text, lambda: text)
            return
        history = field.history
        version = history.page_version(self.path)
        text.append(
            "● current" if version.status == CURRENT else f"↷ {one_line(version.reason)}",
            style="bold" if version.status == CURRENT else "dim",
        )
        if version.supersedes:
            text.append(f"\nreplaces: {one_line(', '.join(version.supersedes))}")
        if version.superseded_by:
            text.append(f"\nreplaced by: {one_line(', '.join(version.superseded_by))}")
        inline = len(field.pages[self.path].inline_chains)  # one chain per group: counted, not built
        if inline:
            text.append(f"\n{plural(inline, 'inline history chain')}", style=colours.get("primary", ""))
        text.append("\npress h for the timeline", style="dim")
        self._update("#page-history", text, lambda: text)

    # ------------------------------------------------------------------ links
    def _citation_source(self, link: LinkTarget) -> str | None:
        field = self.session.field
        assert field is not None  # a page is shown only once the field is loaded
        info = field.pages.get(self.path)
        if info is None:
            return None
        try:
            number = int(link.target)
        except ValueError:
            return None
        sources = info.citation_sources
        return sources[number - 1] if 1 <= number <= len(sources) else None

    def follow_link(self, index: int) -> None:
        if not 0 <= index < len(self.links):
            return
        self.selected_link = index
        link = self.links[index]
        field = self.session.model_field()
        assert field is not None  # a page is shown only once the field is loaded
        if link.kind == "wiki":
            hit = field.resolve(link.target, near=self.path)
            if hit is None:
                safe.notify(self, f"[[{link.target}]] matches no page", severity="warning")
                return
            self.open_page(hit.path)
        elif link.kind == "cite":
            source = self._citation_source(link)
            if source is None:
                safe.notify(self, f"[cite:{link.target}]: the page has no such source", severity="warning")
                return
            hit = field.resolve_source(source, near=self.path)
            if hit is None:
                safe.notify(self, f"source outside this field: {source}", title=f"[cite:{link.target}]")
                return
            self.open_evidence(hit.path, line_anchor(source), link, f"[cite:{link.target}] {source}")
        else:
            target = link.target
            if "://" not in target and target.split("#", 1)[0].endswith(".md"):
                hit = field.resolve(target.split("#", 1)[0], near=self.path)
                if hit is not None:
                    lines = line_anchor(target)
                    if lines is None:
                        self.open_page(hit.path)
                    else:
                        self.open_evidence(hit.path, lines, link, f"{link.label} → {target}")
                    return
            from memtui.tui.screens.dialogs import LinkDialog

            self.app.push_screen(LinkDialog(link.label, target))

    def open_evidence(self, path: str, lines: tuple[int, int] | None, link: LinkTarget, label: str) -> None:
        """The cited page beside the claim that cites it (its cited lines lit up)."""
        rows = self.body_rows
        if rows is None or self.parsed is None:
            self.open_page(path, highlight=lines)
            return
        self.post_message(
            OpenProvenance(path, lines=lines, claim_path=self.path, claim_line=link.line, claim_rows=rows, label=label)
        )

    def action_follow(self) -> None:
        focused = self.focused
        if isinstance(focused, OptionList) and focused.highlighted is not None:
            option = focused.get_option_at_index(focused.highlighted)
            self._open_option(focused, option.id)
            return
        if self.selected_link is not None:
            self.follow_link(self.selected_link)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._open_option(event.option_list, event.option.id)

    def _open_option(self, widget: OptionList, option_id: str | None) -> None:
        if not option_id:
            return
        if option_id.startswith("link-"):
            self.follow_link(int(option_id[5:]))
        elif option_id.startswith("back-"):
            self.open_page(self._backlink_paths[int(option_id[5:])])

    def _select_link(self, index: int) -> None:
        if not self.links:
            return
        self.selected_link = index % len(self.links)
        self.body.select_link(self.selected_link)
        self.scroll_to_line(self.links[self.selected_link].line)

    def action_next_link(self) -> None:
        self._select_link(0 if self.selected_link is None else self.selected_link + 1)

    def action_previous_link(self) -> None:
        self._select_link(-1 if self.selected_link is None else self.selected_link - 1)

    def scroll_to_line(self, line: int) -> None:
        """Bring file line ``line`` into view (two lines under the top) if it is not."""
        self.body.scroll_to_row(self.body.rows.row_of(line))

    # ------------------------------------------------------------------ search matches
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("next_match", "previous_match"):
            return bool(self.matches)  # shown in the footer only when the page was opened from a search
        return True

    def _select_match(self, step: int) -> None:
        if not self.matches:
            return
        if self.match_index is None:
            # From where the reader is: the first match below (or above) the top line.
            here = self.body.reading_line() or 0
            after = [i for i, line in enumerate(self.matches) if (line > here if step > 0 else line < here)]
            index = (after[0] if step > 0 else after[-1]) if after else (0 if step > 0 else -1)
        else:
            index = self.match_index + step
        self.match_index = index % len(self.matches)
        self.show_lines(self.matches[self.match_index])
        field = self.session.field
        assert field is not None  # a page is shown only once the field is loaded
        self._render_info(field.pages.get(self.path), self.colours())

    def action_next_match(self) -> None:
        self._select_match(1)

    def action_previous_match(self) -> None:
        self._select_match(-1)

    # ------------------------------------------------------------------ actions
    def action_back(self) -> None:
        self.app.pop_screen()

    def action_toggle_raw(self) -> None:
        self.raw = not self.raw
        self.render_page()

    def action_history(self) -> None:
        self.open_history(self.path)

    def action_edit(self) -> None:
        self.open_editor(self.path, line=self.reading_line())

    def reading_line(self) -> int | None:
        """The file line the reader is on: the selected link's, else the top line in view."""
        if self.selected_link is not None and 0 <= self.selected_link < len(self.links):
            return self.links[self.selected_link].line
        if round(self.body.scroll_y) == 0:
            return None  # at the top: the editor starts at the top too (frontmatter in view)
        return self.body.reading_line()

    def action_scroll(self, delta: int) -> None:
        self.body.scroll_to(y=self.body.scroll_y + delta, animate=False)


def _value_text(value) -> Text:
    if isinstance(value, list):
        if not value:
            return Text("[]", style="dim")
        return Text("\n".join(one_line(_scalar(v), 200) for v in value))  # one item per line
    if isinstance(value, dict):
        return Text("\n".join(f"{one_line(str(k), 30)}: {one_line(_scalar(v), 160)}" for k, v in value.items()))
    if value is None:
        return Text("null", style="dim")
    return Text(one_line(_scalar(value), 400))


def _scalar(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_scalar(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(_scalar(v) for v in value)
    return "null" if value is None else str(value)
