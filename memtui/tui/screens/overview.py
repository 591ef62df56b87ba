"""Overview: the state of the whole memory at a glance."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Vertical
from textual.widgets import Header, OptionList, Sparkline, Static
from textual.widgets.option_list import Option

from memtui.dialects.detect import BY_NAME
from memtui.dialects.loading import AUTOMATIC
from memtui.field.body import SOURCE_TAGS
from memtui.field.checks import RULES
from memtui.render.context import agent_heading
from memtui.render.glyphs import FILTER_LABELS, SEVERITY, STATUS, TRUST
from memtui.session.events import IndexStateChanged
from memtui.textsafety import one_line
from memtui.tui.context import AppEvent, SessionScreen
from memtui.tui.widgets.footer import MemtuiFooter
from memtui.tui.widgets.lists import MarkedOptionList
from memtui.tui.widgets.status_bar import StatusBar, describe_sync

BAR_WIDTH = 24


def bar(value: int, total: int, width: int = BAR_WIDTH) -> str:
    if total <= 0:
        return "░" * width
    filled = min(width, round(width * value / total))
    return "█" * filled + "░" * (width - filled)


class OverviewScreen(SessionScreen):
    BINDINGS = [Binding("escape", "app.switch_mode('browse')", "Back")]
    HELP_EXTRA = [("enter", "on a source tag count: the claims with that tag")]

    PANELS = [
        ("Pages", "ov-pages"),
        ("Read as", "ov-read"),
        ("Findings by rule", "ov-findings"),
        ("Source tags", "ov-tags"),
        ("Pages written per day", "ov-days"),
        ("Loaded every session", "ov-memory"),
        ("Index and watcher", "ov-index"),
        ("Proposals", "ov-proposals"),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        with Grid(id="overview-grid"):
            for title, widget_id in self.PANELS:
                panel = Vertical(classes="panel")
                panel.border_title = title
                with panel:
                    if widget_id == "ov-days":
                        yield Sparkline([], id="ov-sparkline")
                    if widget_id == "ov-tags":  # each count opens the claims with that tag
                        yield MarkedOptionList(id=widget_id)
                    else:
                        yield Static(id=widget_id)
        yield StatusBar(self.ctx)
        yield MemtuiFooter()

    def on_mount(self) -> None:
        self.title = "Overview"
        self.ctx.events.subscribe(self, self._on_event)
        self.set_interval(2.0, self._refresh_index)
        self.refresh_overview()

    def _on_event(self, event: AppEvent) -> None:
        if isinstance(event, IndexStateChanged):
            self._refresh_index()
        else:
            self.refresh_overview()

    def refresh_overview(self) -> None:
        session = self.session
        analysis = session.analysis
        colours = self.ctx.palette()
        pages = self.query_one("#ov-pages", Static)
        if session.field is None or analysis is None:
            pages.update(Text("… reading and checking the field", style="dim"))
            self._refresh_index()
            return
        counts = analysis.counts
        total = counts.get("pages", 0)
        table = Table.grid(padding=(0, 1))
        table.add_column(justify="right", style="bold")
        table.add_column()
        table.add_column(style="dim")
        rows = [
            (total, "◆ pages", ""),
            (counts.get("quarantined", 0), TRUST["quarantined"].label(), "error"),
            (counts.get("tainted_sessions", 0), "◇ tainted transcripts", "secondary"),
            (counts.get("unreviewed", 0), TRUST["unreviewed"].label(), "warning"),
            (counts.get("reviewed", 0), TRUST["reviewed"].label(), "success"),
            (counts.get("unknown", 0), TRUST["unknown"].label(), "secondary"),
            (counts.get("superseded", 0), STATUS["superseded"].label(), "secondary"),
            (counts.get("stale", 0), STATUS["stale"].label(), "warning"),
            (counts.get("unrecorded", 0), STATUS["unrecorded"].label(), "secondary"),
            (counts.get("with_findings", 0), FILTER_LABELS["findings"].label(), "warning"),
            (counts.get("proposals", 0), "✎ pending proposals", "accent"),
        ]
        for value, label, colour in rows:
            if (label.startswith("◇") or label == STATUS["unrecorded"].label()) and not value:
                continue
            table.add_row(f"{value:,}", Text(label, style=colours.get(colour, "")), bar(value, total, 10))
        if counts.get("tainted_sessions"):
            table.add_row(
                "",
                Text("◇ session transcripts that read outside content: evidence, not in the review queue", style="dim"),
                "",
            )
        pages.update(table)
        self._render_read_as(analysis, colours)
        self._render_findings(analysis, colours)
        self._render_tags(analysis, colours)
        self._render_days(analysis)
        self._render_memory(analysis, colours)
        self._render_proposals(analysis, colours)
        self._refresh_index()

    def _render_read_as(self, analysis, colours) -> None:
        """Which formats memtui read the field as, what it left out, what memtui.toml changed."""
        widget = self.query_one("#ov-read", Static)
        report = analysis.report
        if report is None:
            widget.update(Text("…", style="dim"))
            return
        text = Text()
        for change in report.changed:  # what an agent's file changed in the reading since the last run
            text.append("▲ the reading changed since the last run: ", style=colours.get("warning", ""))
            text.append(f"{one_line(change, 300)}\n")
        for applied, pages in report.dialects:
            where = f" in {applied.root}/" if applied.root else ""
            text.append(f"◆ {one_line(BY_NAME[applied.name].title)}{one_line(where)}", style="bold")
            text.append(f"  {pages:,} page{'s' if pages != 1 else ''}\n")
            if applied.evidence:
                text.append(f"  {one_line('; '.join(applied.evidence), 160)}\n", style="dim")
        if report.scope:
            text.append(f"hidden paths read: {one_line(', '.join(report.scope), 160)}\n", style="dim")
        for skipped in report.skipped:
            text.append("○ not read: ", style=colours.get("warning", ""))
            text.append(f"{one_line(skipped.words(), 300)}\n", style="dim")
        if report.settings.summary:
            text.append(f"⚙ {one_line(report.settings.summary)}: ", style=colours.get("warning", ""))
            text.append(one_line("; ".join(report.settings.describe()), 200), style="dim")
        widget.update(text)

    def _render_findings(self, analysis, colours) -> None:
        by_rule = analysis.by_rule
        widget = self.query_one("#ov-findings", Static)
        if not by_rule:
            widget.update(Text("✓ no findings", style=colours.get("success", "")))
            return
        table = Table.grid(padding=(0, 1))
        table.add_column(justify="right", style="bold")
        table.add_column()
        order = {"error": 0, "warning": 1, "info": 2}
        for rule, count in sorted(by_rule.items(), key=lambda kv: (order[RULES[kv[0]].severity], -kv[1], kv[0])):
            severity = RULES[rule].severity
            glyph, _, colour = SEVERITY[severity]
            table.add_row(str(count), Text(f"{glyph} {rule}", style=colours.get(colour, "")))
        widget.update(table)

    def _render_tags(self, analysis, colours) -> None:
        totals = analysis.tag_totals
        total = sum(totals.get(tag, 0) for tag in SOURCE_TAGS)
        widest = max(len(f"{totals.get(tag, 0):,}") for tag in SOURCE_TAGS)
        options = []
        for tag in SOURCE_TAGS:
            value = totals.get(tag, 0)
            share = f"{100 * value / total:.0f}%" if total else "-"
            prompt = Text(f"[{tag}]".ljust(12), style=f"bold {colours.get(tag, '')}")
            prompt.append(f"{value:,}".rjust(widest), style="bold")
            prompt.append(f" {bar(value, total, 18)} {share}", style=colours.get(tag, ""))
            options.append(Option(prompt, id=tag))
        widget = self.query_one("#ov-tags", MarkedOptionList)
        highlighted = widget.highlighted
        widget.set_options(options)
        if highlighted is not None:
            widget.highlighted = highlighted

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_list.id == "ov-tags" and event.option.id:
            self.open_claims("all", event.option.id)

    def _render_days(self, analysis) -> None:
        series = analysis.per_day
        sparkline = self.query_one("#ov-sparkline", Sparkline)
        sparkline.data = [count for _, count in series]
        sparkline.display = bool(series)  # an empty sparkline would draw as full bars
        label = self.query_one("#ov-days", Static)
        if series:
            busiest = max(series, key=lambda item: item[1])
            label.update(
                Text(
                    f"{series[0][0]} → {series[-1][0]} · {sum(c for _, c in series):,} pages · "
                    f"busiest {busiest[0]} ({busiest[1]})",
                    style="dim",
                )
            )
        else:
            label.update(Text("no created/updated dates recorded", style="dim"))

    def _render_memory(self, analysis, colours) -> None:
        """What each agent loads by itself, with its files cut short and the findings in them
        (the context screen, ``7``, lists every file)."""
        widget = self.query_one("#ov-memory", Static)
        report = analysis.context
        if report is None or not report.agents:
            reason = report.unknown[0] if report is not None and report.unknown else "no agent's files found"
            widget.update(Text(f"? {one_line(reason, 200)}", style="dim"))
            return
        text = Text()
        for agent in report.agents:
            if text:
                text.append("\n")
            text.append_text(agent_heading(agent, colours))
            for loaded in agent.files:
                if loaded.cut_at_line is not None:
                    text.append(
                        f"\n  ✂ {one_line(loaded.path, 60)} cut at line {loaded.cut_at_line:,} ({loaded.cap.words if loaded.cap else 'its cap'})",
                        style=colours.get("warning", ""),
                    )
        trusts: dict[str, int] = {}
        for agent in report.agents:
            for loaded in agent.files:
                if loaded.loaded in AUTOMATIC and loaded.trust is not None:
                    trusts[loaded.trust] = trusts.get(loaded.trust, 0) + 1
        if trusts:
            text.append("\nof what loads: ")
            parts = [(TRUST[state], count) for state, count in sorted(trusts.items()) if state in TRUST]
            for number, (glyph, count) in enumerate(parts):
                text.append(
                    ("" if number == 0 else ", ") + f"{count} {glyph.label()}", style=colours.get(glyph.colour, "")
                )
        errors = sum(1 for f in report.findings if f.severity == "error")
        if report.findings:
            text.append(
                f"\n{SEVERITY['error' if errors else 'warning'].glyph} {len(report.findings)} findings in loaded files "
                f"({errors} errors): press 7",
                style=colours.get("error" if errors else "warning", ""),
            )
        else:
            text.append("\n✓ no secret or hidden text found in what loads", style=colours.get("success", ""))
        widget.update(text)

    def _render_proposals(self, analysis, colours) -> None:
        widget = self.query_one("#ov-proposals", Static)
        text = Text()
        if analysis.proposal_error:
            text.append(f"✖ {one_line(analysis.proposal_error)}\n", style=colours.get("error", ""))
        states: dict[str, int] = {}
        for proposal in analysis.proposals:
            state = getattr(proposal, "state", "pending")
            states[state] = states.get(state, 0) + 1
        text.append(f"{len(analysis.proposals)} pending", style="bold")
        if states:
            text.append("  " + ", ".join(f"{n} {s}" for s, n in sorted(states.items())), style="dim")
        stats = getattr(analysis, "regret", None)
        if stats:
            text.append("\nregret rate (reverted / approved):", style="bold")
            for job, row in sorted(stats.items()):
                rate = row.get("regret_rate")
                shown = "-" if rate is None else f"{100 * rate:.0f}%"
                text.append(f"\n  {one_line(job)}: {row.get('reverted', 0)}/{row.get('approved', 0)} = {shown}")
        else:
            text.append("\nno approved proposals yet: no regret rate", style="dim")
        widget.update(text)

    def _refresh_index(self) -> None:
        session = self.session
        colours = self.ctx.palette()
        glyph, word, colour = session.index_state()
        text = Text(f"{glyph} {word}", style=f"bold {colours.get(colour, '')}")
        text.append(f"   {describe_sync(session, self.ctx.show_timings)}", style="dim")
        service = session.index
        if service is not None:
            state = service.state
            text.append(f"\n{state.indexed_pages:,} pages indexed, {state.pending} pending")
            if state.message:
                text.append(f"\n{one_line(state.message, 200)}", style="dim")
            text.append(f"\nindex at {one_line(str(service.location))}", style="dim")
            if service.read_only:
                text.append("\n◇ read-only: another memtui writes this index", style=colours.get("secondary", ""))
        elif session.index_error:
            text.append(f"\n{one_line(session.index_error, 200)}", style=colours.get("error", ""))
        self.query_one("#ov-index", Static).update(text)
