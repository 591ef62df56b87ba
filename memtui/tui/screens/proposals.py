"""Proposals queue: maintenance ("dream") jobs' edits, reviewed with the diff in view.

Each proposal shows its job, age, pages, state (ready / stale / conflicting /
invalid), its rationale and evidence, a per-page diff (unified or side by side,
changed words highlighted, source tags coloured), and the checks that would be
new or resolved after applying. Approving a stale proposal first shows the
three-way difference. Every decision goes to the ledger.
"""

from __future__ import annotations

from rich.console import Group
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from memtui.errors import MemtuiError
from memtui.review import proposals as proposals_mod
from memtui.textsafety import one_line
from memtui.tui import safe
from memtui.tui.events import FieldEvent
from memtui.tui.screens.dialogs import ChoiceDialog, TextDialog
from memtui.tui.widgets.diff_view import side_by_side, unified
from memtui.tui.widgets.status_bar import StatusBar

STATE_GLYPHS = {
    "ready": ("●", "ready", "success"),
    "stale": ("◐", "stale", "warning"),
    "conflicting": ("⇄", "conflicting", "warning"),
    "invalid": ("✖", "invalid", "error"),
    "approved": ("✓", "approved", "success"),
    "rejected": ("⊘", "rejected", "secondary"),
    "reverted": ("↶", "reverted", "secondary"),
}


def entry_prompt(entry, colours: dict[str, str]) -> Text:
    proposal = entry.proposal
    text = Text()
    for flag in entry.flags or [entry.state]:
        glyph, word, colour = STATE_GLYPHS.get(flag, ("?", flag, "secondary"))
        text.append(f"{glyph} {word} ", style=f"bold {colours.get(colour, '')}")
    text.append(one_line(proposal.id, 60), style="bold")
    age = f"{entry.age_days:.0f} d" if entry.age_days is not None else "age ?"
    text.append(f"\n  {one_line(proposal.job, 20)} · {age} · {len(proposal.pages)} page(s) · {proposal.carrier}", style="dim")
    if entry.conflicts_with:
        text.append(f"\n  conflicts with {one_line(', '.join(entry.conflicts_with), 80)}", style=colours.get("warning", ""))
    return text


def findings_text(title: str, findings, colours: dict[str, str], colour: str) -> Text:
    text = Text(f"{title}: {len(findings)}\n", style=f"bold {colours.get(colour, '')}")
    for finding in findings[:30]:
        text.append(f"  {finding.severity} {finding.rule} ", style="bold")
        text.append(f"{one_line(finding.path)}{':' + str(finding.line) if finding.line else ''}  ", style="dim")
        text.append(f"{one_line(finding.message, 120)}\n")
    return text


class ThreeWayScreen(ModalScreen[str | None]):
    """A stale proposal: what changed on disk since its base, and what it would do now."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, review, colours: dict[str, str]) -> None:
        super().__init__(classes="dialog-screen")
        self.review = review
        self.colours = colours

    def compose(self) -> ComposeResult:
        parts = [
            Text(
                "This proposal is stale: pages changed on disk after the job read them. "
                "Approving replaces what is on disk now with the proposed versions.\n",
                style="bold",
            )
        ]
        for three in self.review.three_way:
            parts.append(Text(f"\n━━ {one_line(three.path)}", style="bold"))
            if three.base_available:
                parts.append(Text("what changed on disk since the job's base (would be overwritten):", style="bold"))
                parts.append(unified(three.base_to_disk, self.colours))
                parts.append(Text("what the job proposed relative to its base:", style="bold"))
                parts.append(unified(three.base_to_proposed, self.colours))
            else:
                parts.append(Text("the base version is kept nowhere; only disk → proposed can be shown:", style="bold"))
            parts.append(Text("disk now → proposed:", style="bold"))
            parts.append(unified(three.disk_to_proposed, self.colours))
        with Vertical(classes="dialog wide-dialog"):
            yield Static(Text("Stale proposal: three-way difference", style="bold"), classes="dialog-title")
            with VerticalScroll(classes="dialog-body tall"):
                yield Static(Group(*parts))
            with Horizontal(classes="dialog-buttons"):
                yield Button("Approve anyway (overwrite)", id="accept", variant="error")
                yield Button("Cancel", id="cancel", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss("accept" if event.button.id == "accept" else None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ProposalsScreen(Screen):
    BINDINGS = [
        Binding("a", "approve", "Approve"),
        Binding("x", "reject", "Reject"),
        Binding("u", "revert", "Revert"),
        Binding("s", "toggle_side", "Side by side"),
        Binding("d", "toggle_decided", "Show decided"),
        Binding("escape", "app.switch_mode('browse')", "Back"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.queue = None
        self.review = None
        self.side = False
        self.show_decided = False
        self._ids: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="review-main"):
            yield OptionList(id="proposal-list")
            with VerticalScroll(id="review-scroll"):
                yield Static(id="proposal-review")
        yield StatusBar()
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Proposals"
        self.app.field_signal.subscribe(self, self._on_field)
        self.refresh_queue()
        self.query_one("#proposal-list").focus()

    def _on_field(self, event: FieldEvent) -> None:
        if event.kind in ("loaded", "changed"):
            self.refresh_queue()

    # ------------------------------------------------------------------ queue
    @work(thread=True, exclusive=True, group="proposal-queue")
    def refresh_queue(self) -> None:
        field = self.app.field
        if field is None:
            return
        try:
            queue = proposals_mod.proposal_queue(
                field.root, field=field.snapshot(), include_decided=self.show_decided, with_checks=False, now=self.app.clock()
            )
        except MemtuiError as exc:
            self.app.call_from_thread(safe.notify, self.app, exc.message, severity="error")
            return
        self.app.call_from_thread(self._show_queue, queue)

    def _show_queue(self, queue) -> None:
        self.queue = queue
        colours = self.app.palette()
        widget = self.query_one("#proposal-list", OptionList)
        current = self.review.proposal.id if self.review else None
        widget.clear_options()
        self._ids.clear()
        pending = [e for e in queue.entries if e.pending]
        options = [Option(Text(f"✎ Pending proposals: {len(pending)}", style="bold"), disabled=True)]
        for problem in queue.problems:
            options.append(Option(Text(f"✖ {one_line(problem, 100)}", style=colours.get("error", "")), disabled=True))
        for number, entry in enumerate(queue.entries):
            option_id = f"p-{number}"
            self._ids[option_id] = entry.proposal.id
            options.append(Option(entry_prompt(entry, colours), id=option_id))
        if not queue.entries:
            options.append(Option(Text("  no proposals waiting", style="dim"), disabled=True))
        widget.add_options(options)
        target = current if current in self._ids.values() else next(iter(self._ids.values()), None)
        if target is not None:
            index = next(widget.get_option_index(k) for k, v in self._ids.items() if v == target)
            widget.highlighted = index
            self.load_review(target)
        else:
            self.review = None
            self.query_one("#proposal-review", Static).update(Text("✓ nothing to review", style="bold"))

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        proposal_id = self._ids.get(event.option.id or "")
        if proposal_id and (self.review is None or self.review.proposal.id != proposal_id):
            self.load_review(proposal_id)

    @work(thread=True, exclusive=True, group="proposal-review")
    def load_review(self, proposal_id: str) -> None:
        self.app.call_from_thread(
            self.query_one("#proposal-review", Static).update, Text(f"… loading {one_line(proposal_id)} and running the checks on its result", style="dim")
        )
        field = self.app.field
        try:
            review = proposals_mod.review_proposal(field.root, proposal_id, field=field.snapshot(), now=self.app.clock())
        except MemtuiError as exc:
            self.app.call_from_thread(self.query_one("#proposal-review", Static).update, Text(f"✖ {one_line(exc.message)}"))
            return
        self.app.call_from_thread(self._show_review, review)

    def _show_review(self, review) -> None:
        self.review = review
        self.render_review()

    def render_review(self) -> None:
        review = self.review
        if review is None:
            return
        colours = self.app.palette()
        entry = review.entry
        proposal = review.proposal
        head = Text()
        head.append_text(entry_prompt(entry, colours))
        head.append(f"\ncreated {one_line(proposal.created or '?')} · {one_line(proposal.location)}", style="dim")
        if entry.decision is not None:
            decision = entry.decision
            head.append(f"\n{one_line(entry.state)} by {one_line(decision.who)} on {one_line(decision.ts)}", style="bold")
            if decision.reason:
                head.append(f": {one_line(decision.reason, 200)}")
        head.append("\n\nRationale\n", style=f"bold {colours.get('primary', '')}")
        head.append(safe.block(proposal.rationale.strip() or "(none given)"))
        head.append("\n\nEvidence\n", style=f"bold {colours.get('primary', '')}")
        head.append("\n".join(f"• {one_line(e, 200)}" for e in proposal.evidence) or "(none given)")
        for problem in proposal.problems:
            head.append(f"\n✖ {one_line(problem, 200)}", style=colours.get("error", ""))
        for warning in proposal.warnings:
            head.append(f"\n▲ {one_line(warning, 200)}", style=colours.get("warning", ""))
        parts: list = [head]
        validation = entry.validation
        if validation.new_findings is not None:
            checks = Text("\n\nChecks on the result (as it would be after applying)\n", style=f"bold {colours.get('primary', '')}")
            checks.append_text(findings_text("new findings", validation.new_findings, colours, "error" if not validation.ok else "warning"))
            checks.append_text(findings_text("resolved findings", validation.resolved_findings or [], colours, "success"))
            parts.append(checks)
        parts.append(Text(f"\nChanges ({'side by side' if self.side else 'unified'}; s toggles)", style=f"bold {colours.get('primary', '')}"))
        for diff in review.diffs:
            parts.append(side_by_side(diff, colours) if self.side else unified(diff, colours))
        if review.three_way:
            parts.append(Text(f"\n◐ stale: {len(review.three_way)} page(s) changed on disk since the job's base; approving shows the three-way difference first", style=f"bold {colours.get('warning', '')}"))
        self.query_one("#proposal-review", Static).update(Group(*parts))

    # ------------------------------------------------------------------ decisions
    def action_toggle_side(self) -> None:
        self.side = not self.side
        self.render_review()

    def action_toggle_decided(self) -> None:
        self.show_decided = not self.show_decided
        self.notify("showing decided proposals too" if self.show_decided else "showing pending proposals", timeout=2)
        self.refresh_queue()

    def action_approve(self) -> None:
        self._approve()

    @work(exclusive=True, group="proposal-decide")
    async def _approve(self) -> None:
        review = self.review
        if review is None or not review.entry.pending:
            self.notify("choose a pending proposal first", severity="warning")
            return
        accept_stale = False
        if review.three_way:
            if await self.app.push_screen_wait(ThreeWayScreen(review, self.app.palette())) != "accept":
                return
            accept_stale = True
        else:
            body = Text(f"{one_line(review.proposal.id)} changes {len(review.proposal.pages)} page(s), all at once or none:\n")
            body.append("\n".join(f"• {one_line(p)}" for p in review.proposal.pages))
            new = review.entry.validation.new_findings or []
            if new:
                body.append(f"\n\n▲ the result has {len(new)} new finding(s); see the review.", style="bold")
            if await self.app.push_screen_wait(ChoiceDialog("Approve this proposal?", body, [("yes", "Approve"), ("no", "Cancel")], variant_of={"yes": "primary"})) != "yes":
                return
        field = self.app.field
        try:
            entry = proposals_mod.approve(field.root, review.proposal.id, accept_stale=accept_stale, fingerprint=review.fingerprint, field=field)
        except MemtuiError as exc:
            safe.notify(self.app, f"{exc.message} ({exc.hint})" if exc.hint else exc.message, title="not approved", severity="error", timeout=10)
            self.refresh_queue()
            return
        commit = f", commit {entry.commit[:10]}" if getattr(entry, "commit", None) else ""
        safe.notify(self.app, f"approved {review.proposal.id}{commit}", timeout=5)
        self._after_decision(review.proposal.pages)

    def action_reject(self) -> None:
        self._reject()

    @work(exclusive=True, group="proposal-decide")
    async def _reject(self) -> None:
        review = self.review
        if review is None or not review.entry.pending:
            self.notify("choose a pending proposal first", severity="warning")
            return
        reason = await self.app.push_screen_wait(TextDialog("Reject this proposal", f"Why is {one_line(review.proposal.id)} rejected?"))
        if not reason:
            return
        try:
            proposals_mod.reject(self.app.field.root, review.proposal.id, reason=reason)
        except MemtuiError as exc:
            safe.notify(self.app, exc.message, severity="error", timeout=10)
            return
        safe.notify(self.app, f"rejected {review.proposal.id}", timeout=4)
        self._after_decision([])

    def action_revert(self) -> None:
        self._revert()

    @work(exclusive=True, group="proposal-decide")
    async def _revert(self) -> None:
        review = self.review
        if review is None or review.entry.state != "approved":
            self.notify("choose an approved proposal (d shows decided ones)", severity="warning")
            return
        root = self.app.field.root
        try:
            plan = proposals_mod.plan_revert(root, review.proposal.id)
        except MemtuiError as exc:
            safe.notify(self.app, exc.message, severity="error", timeout=10)
            return
        colours = self.app.palette()
        parts: list = [Text(f"Revert {one_line(review.proposal.id)}: the pages return to their bytes from before the approval.\n", style="bold")]
        for page in plan.pages:
            parts.append(unified(page.diff, colours))
            if page.conflict and page.lost is not None:
                parts.append(Text(f"▲ {one_line(page.path)} changed since the approval; reverting discards:", style=f"bold {colours.get('warning', '')}"))
                parts.append(unified(page.lost, colours))
        force = bool(plan.conflicts)
        reason = await self.app.push_screen_wait(TextDialog("Revert this proposal", "Why is it reverted? (this counts toward the job's regret rate)"))
        if not reason:
            return
        choice = await self.app.push_screen_wait(
            ChoiceDialog("Revert?", Group(*parts), [("yes", "Revert" + (" (discard later edits)" if force else "")), ("no", "Cancel")])
        )
        if choice != "yes":
            return
        try:
            proposals_mod.revert(root, review.proposal.id, reason=reason, force=force)
        except MemtuiError as exc:
            safe.notify(self.app, exc.message, severity="error", timeout=10)
            return
        safe.notify(self.app, f"reverted {review.proposal.id}", timeout=4)
        self._after_decision(review.proposal.pages)

    def _after_decision(self, pages: list[str]) -> None:
        """Re-read the pages the decision wrote, moved or retired; re-analyse (proposal badges)."""
        self.review = None
        self.app.reload_paths(list(pages))
        self.app.request_analysis()
        self.refresh_queue()
