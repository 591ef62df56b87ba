"""Proposals queue: maintenance ("dream") jobs' edits, reviewed with the diff in view.

Each proposal shows its job, age, pages, state (ready / stale / conflicting /
invalid), its rationale and evidence, a per-page diff (unified or side by side,
changed words highlighted, source tags coloured), and the checks that would be
new or resolved after applying. Approving a stale proposal first shows the
three-way difference. Every decision goes to the ledger.

A decision always applies to the highlighted proposal, and only once its review
has loaded. Afterwards it stays in place, struck through, with its decision as
a word; the cursor moves to the next pending proposal and the focus returns to
the list. ``z`` undoes the latest decision (the proposal is pending again and
the approval does not count toward the regret rate, shown in the list header);
``d`` lists decided proposals with who, when and why. Revert shows what it
will change before asking why.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Header, OptionList, Static
from textual.widgets.option_list import Option

from memtui.errors import MemtuiError
from memtui.render.diff import unified
from memtui.render.review import entry_prompt, review_parts, three_way_parts
from memtui.review import ledger
from memtui.review import proposals as proposals_mod
from memtui.review import undo as undo_mod
from memtui.session.events import FieldLoaded, PagesChanged, ProposalsChanged
from memtui.session.latest_only import LatestOnly
from memtui.textsafety import one_line, plural
from memtui.tui import safe
from memtui.tui.context import AppEvent, Context, SessionScreen
from memtui.tui.screens.dialogs import ChoiceDialog, ConfirmDialog, TextDialog
from memtui.tui.widgets.footer import MemtuiFooter
from memtui.tui.widgets.lists import FilterBox, FilterInPlace, MarkedOptionList, matches
from memtui.tui.widgets.status_bar import StatusBar


def regret_text(stats: proposals_mod.Stats, colours: dict[str, str]) -> Text:
    """The regret rate per job kind (approved proposals later reverted / approved), for the list header."""
    total = stats.total
    if not total.approved:
        return Text("regret rate: none approved yet", style="dim")
    rate = total.regret_rate or 0.0
    text = Text(
        f"regret rate {rate:.0%} ({total.reverted}/{total.approved} reverted)",
        style=f"bold {colours.get('warning' if rate else 'success', '')}",
    )
    jobs = [f"{one_line(job, 20)} {s.reverted}/{s.approved}" for job, s in stats.jobs.items() if s.approved]
    if jobs:
        text.append(": " + ", ".join(jobs), style="")
    return text


def change_lines(proposal: proposals_mod.Proposal) -> Text:
    """Every page a proposal changes, creates or retires, one per line."""
    words = {"modify": "changes", "create": "creates", "delete": "retires (to .memtui/archive/retired/)"}
    text = Text()
    for change in proposal.changes:
        text.append(f"\n• {words.get(change.action, change.action)} ", style="bold")
        text.append(one_line(change.path))
        if change.noop:
            text.append("  (already on disk)", style="dim")
    return text


class ThreeWayScreen(ModalScreen[str | None]):
    """A stale proposal: what changed on disk since its base, and what it would do now."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, review: proposals_mod.Review, colours: dict[str, str]) -> None:
        super().__init__(classes="dialog-screen")
        self.review = review
        self.colours = colours

    def compose(self) -> ComposeResult:
        parts: list[RenderableType] = [
            Text(
                "This proposal is stale: pages changed on disk after the job read them. "
                "Approving replaces what is on disk now with the proposed versions.\n",
                style="bold",
            )
        ]
        parts.extend(three_way_parts(self.review, self.colours))
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


class ProposalsScreen(FilterInPlace, SessionScreen):
    BINDINGS = [
        Binding("a", "approve", "Approve"),
        Binding("x", "reject", "Reject"),
        Binding("z", "undo", "Undo"),
        Binding("u", "revert", "Revert"),
        Binding("s", "toggle_side", "Side by side"),
        Binding("d", "toggle_decided", "Decided"),
        Binding("slash", "filter_list", "Filter", key_display="/"),
        Binding("escape", "back", "Back"),
    ]
    HELP_EXTRA = [
        ("enter", "open the highlighted proposal (its diff gets the focus)"),
        ("tab", "between the list and the review"),
    ]

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._queue_reads = LatestOnly(self._read_queue, self.call_later)
        self.queue: proposals_mod.Queue | None = None
        self.review: proposals_mod.Review | None = None
        self.side = False
        self.show_decided = False
        self.stats: proposals_mod.Stats | None = None
        self._ids: dict[str, str] = {}
        self._decided_here: set[str] = set()
        self._want: str | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="review-main"):
            with Vertical(id="queue-pane"):
                yield FilterBox(id="list-filter")
                yield MarkedOptionList(id="proposal-list")
            with VerticalScroll(id="review-scroll"):
                yield Static(id="proposal-review")
        yield StatusBar(self.ctx)
        yield MemtuiFooter()

    def on_mount(self) -> None:
        self.title = "Proposals"
        self.ctx.events.subscribe(self, self._on_event)
        self.refresh_queue()
        self.query_one("#proposal-list").focus()

    def _on_event(self, event: AppEvent) -> None:
        if isinstance(event, FieldLoaded | PagesChanged | ProposalsChanged):
            self.refresh_queue()

    @property
    def proposal_list(self) -> OptionList:
        return self.query_one("#proposal-list", OptionList)

    # ------------------------------------------------------------------ queue
    def refresh_queue(self) -> None:
        """Read the queue again in a worker (one at a time; asked again meanwhile, once more after)."""
        self._queue_reads.request()

    @work(thread=True, exclusive=True, group="proposal-queue", description="refresh_queue")
    def _read_queue(self) -> None:
        with self._queue_reads.reporting(self.app):
            field = self.session.field
            if field is None:
                return
            try:
                queue = proposals_mod.proposal_queue(
                    field.root, field=field.snapshot(), include_decided=True, with_checks=False, now=self.ctx.clock()
                )
                stats = proposals_mod.stats(field.root)
            except MemtuiError as exc:
                self.app.call_from_thread(safe.notify, self.app, exc.message, severity="error")
                return
            self.app.call_from_thread(self._show_queue, queue, stats)

    def _show_queue(self, queue: proposals_mod.Queue, stats: proposals_mod.Stats) -> None:
        self.queue = queue
        self.stats = stats
        self._decided_here = {
            pid for pid in self._decided_here if (entry := queue.get(pid)) is not None and not entry.pending
        }
        self._rebuild()

    def _shown_entries(self) -> list[proposals_mod.QueueEntry]:
        queue = self.queue
        assert queue is not None  # _rebuild returns first while there is no queue
        entries = []
        for entry in queue.entries:
            if self.show_decided:
                keep = not entry.pending
            else:
                keep = entry.pending or entry.proposal.id in self._decided_here
            if keep and matches(self.text_filter, entry.proposal.id, entry.proposal.job, *entry.proposal.pages):
                entries.append(entry)
        if self.show_decided:
            entries.sort(key=lambda e: e.decision.ts if e.decision else "", reverse=True)
        return entries

    def _rebuild(self, *, highlight: str | None = None) -> None:
        if self.queue is None:
            return
        queue = self.queue
        colours = self.ctx.palette()
        widget = self.proposal_list
        current = highlight or self._want or self._highlighted_id()
        self._want = None
        widget.clear_options()
        self._ids.clear()
        pending = [e for e in queue.entries if e.pending]
        if self.show_decided:
            header = Text("Decided proposals, newest first (d: back to pending)", style="bold")
        else:
            header = Text(f"✎ Pending proposals: {len(pending)}", style="bold")
        header.append("\n")
        header.append_text(regret_text(self.stats, colours) if self.stats else Text(""))
        options = [Option(header, disabled=True)]
        for problem in queue.problems:
            options.append(Option(Text(f"✖ {one_line(problem, 100)}", style=colours.get("error", "")), disabled=True))
        entries = self._shown_entries()
        for number, entry in enumerate(entries):
            option_id = f"p-{number}"
            self._ids[option_id] = entry.proposal.id
            options.append(Option(entry_prompt(entry, colours), id=option_id))
        if not entries:
            message = "no decided proposals" if self.show_decided else "no proposals waiting"
            options.append(Option(Text(message, style="dim"), disabled=True))
        widget.add_options(options)
        self._highlight(current)

    def _highlight(self, proposal_id: str | None) -> None:
        widget = self.proposal_list
        ids = list(self._ids.items())
        target = next((oid for oid, pid in ids if pid == proposal_id), None)
        if target is None:
            queue = self.queue
            assert queue is not None  # _rebuild filled the list from it
            target = next((oid for oid, pid in ids if (e := queue.get(pid)) is not None and e.pending), None)
        if target is None and ids:
            target = ids[0][0]
        if target is None:
            self.review = None
            widget.highlighted = None
            self.query_one("#proposal-review", Static).update(Text("✓ nothing to review", style="bold"))
            return
        index = widget.get_option_index(target)
        if widget.highlighted == index and (self.review is None or self.review.proposal.id != self._ids[target]):
            self.load_review(self._ids[target])
        widget.highlighted = index

    def _highlighted_id(self) -> str | None:
        widget = self.proposal_list
        if widget.highlighted is None or widget.highlighted >= widget.option_count:
            return None
        return self._ids.get(widget.get_option_at_index(widget.highlighted).id or "")

    def _next_pending_after(self, proposal_id: str) -> str | None:
        order = list(self._ids.values())
        start = order.index(proposal_id) if proposal_id in order else -1

        def pending(pid: str) -> bool:
            assert self.queue is not None  # the list's proposals are the queue's
            return (e := self.queue.get(pid)) is not None and e.pending and pid != proposal_id

        after = [pid for pid in order[start + 1 :] if pending(pid)]
        before = [pid for pid in order[: max(start, 0)] if pending(pid)]
        return after[0] if after else (before[-1] if before else None)

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        proposal_id = self._ids.get(event.option.id or "")
        if proposal_id and (self.review is None or self.review.proposal.id != proposal_id):
            self.review = None
            self.load_review(proposal_id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter opens the proposal: the focus goes to its review (rationale, checks, diff)."""
        if self._ids.get(event.option.id or ""):
            self.query_one("#review-scroll").focus()

    @work(thread=True, exclusive=True, group="proposal-review", description="load_review")
    def load_review(self, proposal_id: str) -> None:
        self.app.call_from_thread(
            self.query_one("#proposal-review", Static).update,
            Text(f"… loading {one_line(proposal_id)} and running the checks on its result", style="dim"),
        )
        field = self.session.field
        assert field is not None  # the proposal was listed from it
        try:
            review = proposals_mod.review_proposal(
                field.root, proposal_id, field=field.snapshot(), now=self.ctx.clock()
            )
        except MemtuiError as exc:
            self.app.call_from_thread(
                self.query_one("#proposal-review", Static).update, Text(f"✖ {one_line(exc.message)}")
            )
            return
        self.app.call_from_thread(self._show_review, review)

    def _show_review(self, review: proposals_mod.Review) -> None:
        if review.proposal.id != self._highlighted_id():
            return  # the cursor moved on while this loaded
        self.review = review
        self.render_review()

    def render_review(self) -> None:
        review = self.review
        if review is None:
            return
        colours = self.ctx.palette()
        entry = review.entry
        parts = review_parts(review, colours, side=self.side, hint="s toggles")
        if entry.decision is not None:
            if entry.state == "approved":
                parts.insert(
                    1,
                    Text(
                        "z undoes the approval (pending again); u reverts it (counts toward the regret rate)",
                        style="dim",
                    ),
                )
            elif entry.state == "rejected":
                parts.insert(1, Text("z undoes the rejection (pending again)", style="dim"))
        self.query_one("#proposal-review", Static).update(Group(*parts))

    # ------------------------------------------------------------------ views
    def action_toggle_side(self) -> None:
        self.side = not self.side
        self.render_review()

    def action_toggle_decided(self) -> None:
        self.show_decided = not self.show_decided
        self.title = "Proposals: decided" if self.show_decided else "Proposals"
        self.review = None
        self._rebuild()
        self.proposal_list.focus()

    def refilter(self) -> None:
        self._rebuild()

    def filtered_list(self) -> OptionList:
        return self.proposal_list

    def action_back(self) -> None:
        if self.focused is self.query_one("#review-scroll"):
            self.proposal_list.focus()
        elif self.show_decided:
            self.action_toggle_decided()
        else:
            self.app.switch_mode("browse")

    # ------------------------------------------------------------------ decisions
    def _target(self, *, pending: bool) -> proposals_mod.Review | None:
        """The loaded review of the highlighted proposal: decisions never aim anywhere else."""
        highlighted = self._highlighted_id()
        review = self.review
        if highlighted is None:
            self.notify("highlight a proposal first", severity="warning")
            return None
        if review is None or review.proposal.id != highlighted:
            safe.notify(self, f"{highlighted} is still loading; try again in a moment", severity="warning")
            return None
        if pending and not review.entry.pending:
            safe.notify(self, f"{highlighted} is already {review.entry.state} (z undoes that)", severity="warning")
            return None
        return review

    def action_approve(self) -> None:
        self._approve()

    @work(exclusive=True, group="proposal-decide", description="_approve")
    async def _approve(self) -> None:
        review = self._target(pending=True)
        if review is None:
            return
        accept_stale = False
        if review.three_way:
            if await self.app.push_screen_wait(ThreeWayScreen(review, self.ctx.palette())) != "accept":
                return
            accept_stale = True
        else:
            proposal = review.proposal
            body = Text(f"{one_line(proposal.id)} ({one_line(proposal.job)}) applies all of these or none:")
            body.append_text(change_lines(proposal))
            new = review.entry.validation.new_findings or []
            if new:
                body.append(f"\n\n▲ the result has {plural(len(new), 'new finding')}; see the review.", style="bold")
            body.append("\n\nz undoes the approval.", style="dim")
            choice = await self.app.push_screen_wait(
                ChoiceDialog(
                    "Approve this proposal?",
                    body,
                    [("yes", "Approve"), ("no", "Cancel")],
                    variant_of={"yes": "primary"},
                    focus="no" if new else "yes",
                )
            )
            if choice != "yes":
                return
        field = self.session.field
        assert field is not None  # the review was read from it
        try:
            entry = proposals_mod.approve(
                field.root, review.proposal.id, accept_stale=accept_stale, fingerprint=review.fingerprint, field=field
            )
        except MemtuiError as exc:
            safe.notify(
                self,
                f"{exc.message} ({exc.hint})" if exc.hint else exc.message,
                title="not approved",
                severity="error",
                timeout=10,
            )
            self.refresh_queue()
            return
        commit = f", commit {entry.commit[:10]}" if entry.commit else ""
        safe.notify(self, f"approved {review.proposal.id}{commit} (z undoes)", timeout=5)
        self._after_decision(review, review.proposal.pages, "approved", entry)

    def action_reject(self) -> None:
        self._reject()

    @work(exclusive=True, group="proposal-decide", description="_reject")
    async def _reject(self) -> None:
        review = self._target(pending=True)
        if review is None:
            return
        reason = await self.app.push_screen_wait(
            TextDialog("Reject this proposal", f"Why is {one_line(review.proposal.id)} rejected? (z undoes it)")
        )
        if not reason:
            return
        field = self.session.field
        assert field is not None  # the review was read from it
        try:
            entry = proposals_mod.reject(field.root, review.proposal.id, reason=reason)
        except MemtuiError as exc:
            safe.notify(self, exc.message, severity="error", timeout=10)
            return
        safe.notify(self, f"rejected {review.proposal.id} (z undoes)", timeout=4)
        self._after_decision(review, [], "rejected", entry)

    def action_revert(self) -> None:
        self._revert()

    @work(exclusive=True, group="proposal-decide", description="_revert")
    async def _revert(self) -> None:
        review = self._target(pending=False)
        if review is None:
            return
        if review.entry.state != "approved":
            self.notify("only an approved proposal can be reverted (d shows decided ones)", severity="warning")
            return
        field = self.session.field
        assert field is not None  # the review was read from it
        root = field.root
        try:
            plan = proposals_mod.plan_revert(root, review.proposal.id)
        except MemtuiError as exc:
            safe.notify(self, exc.message, severity="error", timeout=10)
            return
        colours = self.ctx.palette()
        parts: list = [
            Text(
                f"Revert {one_line(review.proposal.id)}: the pages return to their bytes from before the approval. It counts toward the job's regret rate.\n",
                style="bold",
            )
        ]
        for page in plan.pages:
            parts.append(unified(page.diff, colours))
            if page.conflict and page.lost is not None:
                parts.append(
                    Text(
                        f"▲ {one_line(page.path)} changed since the approval; reverting discards:",
                        style=f"bold {colours.get('warning', '')}",
                    )
                )
                parts.append(unified(page.lost, colours))
        force = bool(plan.conflicts)
        choice = await self.app.push_screen_wait(
            ChoiceDialog(
                "Revert? This is what it changes",
                Group(*parts),
                [("yes", "Revert" + (" (discard later edits)" if force else "") + "…"), ("no", "Cancel")],
                variant_of={"yes": "error" if force else "primary"},
                focus="no" if force else "yes",
            )
        )
        if choice != "yes":
            return
        reason = await self.app.push_screen_wait(
            TextDialog("Revert this proposal", "Why is it reverted? (this counts toward the job's regret rate)")
        )
        if not reason:
            return
        try:
            entry = proposals_mod.revert(root, review.proposal.id, reason=reason, force=force)
        except MemtuiError as exc:
            safe.notify(self, exc.message, severity="error", timeout=10)
            return
        safe.notify(self, f"reverted {review.proposal.id}", timeout=4)
        self._after_decision(review, review.proposal.pages, "reverted", entry)

    def _after_decision(
        self, review: proposals_mod.Review, pages: list[str], state: str, entry: ledger.LedgerEntry
    ) -> None:
        """The proposal stays in place, struck through; the cursor goes to the next pending one."""
        proposal_id = review.proposal.id
        next_id = self._next_pending_after(proposal_id)
        queue_entry = self.queue.get(proposal_id) if self.queue else None
        if queue_entry is not None:
            queue_entry.state, queue_entry.flags, queue_entry.decision = state, [], entry
        self._decided_here.add(proposal_id)
        self.review = None
        self._rebuild(highlight=next_id or proposal_id)
        self._want = next_id
        self.proposal_list.focus()
        self.session.reload_paths(list(pages))
        self.session.request_analysis()
        self.refresh_queue()

    # ------------------------------------------------------------------ undo
    def action_undo(self) -> None:
        self._undo()

    @work(exclusive=True, group="proposal-decide", description="_undo")
    async def _undo(self) -> None:
        field = self.session.field
        if field is None:
            safe.notify(self, "the field is still being read; try again in a moment", severity="warning")
            return
        root = field.root
        highlighted = self._highlighted_id()
        entry = self.queue.get(highlighted) if (self.queue and highlighted) else None
        if entry is not None and not entry.pending and (self.show_decided or highlighted in self._decided_here):
            decision = undo_mod.latest(root, kind=undo_mod.PROPOSALS, target=highlighted)
            if decision is None:
                safe.notify(
                    self,
                    f"{highlighted} was {entry.state}: that cannot be undone (revert an approval with u)",
                    severity="warning",
                )
                return
        else:
            decision = undo_mod.latest(root, kind=undo_mod.PROPOSALS)
            if decision is None:
                self.notify("no decision to undo", severity="warning")
                return
        plan = undo_mod.plan_undo(root, decision)
        colours = self.ctx.palette()
        parts: list = [Text(f"Undo: {one_line(plan.summary)}\n", style="bold")]
        if not plan.pages:
            parts.append(Text("No page changes: the proposal is pending again."))
        for page in plan.pages:
            if page.diff is not None:
                parts.append(unified(page.diff, colours))
            if page.conflict:
                parts.append(
                    Text(
                        f"▲ {one_line(page.path)} changed since the approval: undoing replaces those edits (kept in .memtui/blobs/)",
                        style="bold",
                    )
                )
        for problem in plan.problems:
            parts.append(Text(f"✖ {one_line(problem)}", style="bold"))
        if plan.problems:
            await self.app.push_screen_wait(
                ChoiceDialog("This decision cannot be undone", Group(*parts), [("ok", "OK")])
            )
            return
        risky = bool(plan.conflicts)
        choice = await self.app.push_screen_wait(
            ConfirmDialog(
                "Undo this decision?",
                Group(*parts),
                yes="Undo (replace later edits)" if risky else "Undo",
                danger=risky,
            )
        )
        if choice != "yes":
            return
        try:
            undone, _ = undo_mod.undo(root, decision=decision, force=risky, readonly=field.readonly)
        except MemtuiError as exc:
            safe.notify(
                self,
                f"{exc.message} ({exc.hint})" if exc.hint else exc.message,
                title="not undone",
                severity="error",
                timeout=10,
            )
            return
        safe.notify(self, f"undone: {undo_mod.describe(undone)}", timeout=5)
        self._decided_here.discard(undone.target)
        self._want = undone.target
        self.review = None
        if self.show_decided:
            self.show_decided = False
            self.title = "Proposals"
        queue_entry = self.queue.get(undone.target) if self.queue else None
        self.session.reload_paths(list(queue_entry.proposal.pages) if queue_entry else [])
        self.session.request_analysis()
        self.refresh_queue()
        self.proposal_list.focus()
