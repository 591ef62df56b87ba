"""Quarantine queue: notes from tainted sessions, grouped by what tainted them, reviewed one by one.

The reviewer sees everything (raw text with hidden characters made visible,
frontmatter, sources, lines that look like instructions aimed at an agent).
Approving or rejecting is bound to the content hash of what was shown; if the
page changed since, memtui shows it again instead of deciding.
"""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, OptionList, Static
from textual.widgets.option_list import Option

from memtui.errors import MemtuiError, StaleWriteError
from memtui.review import quarantine as quarantine_mod
from memtui.textsafety import one_line
from memtui.tui import safe
from memtui.tui.events import FieldEvent
from memtui.tui.screens.dialogs import ChoiceDialog, ConfirmDialog, TextDialog
from memtui.tui.widgets.status_bar import StatusBar

SEVERITY_STYLE = {"danger": "error", "notice": "warning"}


def item_prompt(item: quarantine_mod.QueueItem, colours: dict[str, str]) -> Text:
    glyph, colour = ("⛔", "error") if item.state == "quarantined" else ("◌", "warning")
    text = Text(f"  {glyph} ", style=colours.get(colour, ""))
    text.append(one_line(item.title, 60), style="bold")
    danger, notice = item.flags.get("danger", 0), item.flags.get("notice", 0)
    if danger:
        text.append(f"  ⚑ {danger} danger", style=f"bold {colours.get('error', '')}")
    if notice:
        text.append(f"  ⚑ {notice} notice", style=colours.get("warning", ""))
    text.append(f"\n    {one_line(item.path)}", style="dim")
    if item.created:
        text.append(f"  {one_line(item.created[:10])}", style="dim")
    return text


def review_body(review: quarantine_mod.PageReview, colours: dict[str, str]) -> Table:
    """The whole page for review: facts, flags, then every raw line numbered."""
    layout = Table.grid(padding=(0, 0), expand=True)
    layout.add_column(ratio=1)
    head = Text()
    state_glyph = "⛔ quarantined" if review.state == "quarantined" else f"◌ {review.state}"
    head.append(state_glyph, style=f"bold {colours.get('error' if review.state == 'quarantined' else 'warning', '')}")
    head.append(f"   {one_line(review.path)}", style="bold")
    head.append(f"\nsha256 {review.sha256[:16]}…  (decisions are bound to this version)", style="dim")
    if review.source:
        head.append(f"\ntainted by: {one_line(review.source)}")
    if review.destination_problem:
        head.append(f"\n✖ approving cannot move it: {one_line(review.destination_problem)}", style=colours.get("error", ""))
    elif review.destination and review.destination != review.path:
        head.append(f"\napproving moves it to: {one_line(review.destination)}")
    else:
        head.append("\napproving keeps it where it is")
    if review.frontmatter_error:
        head.append(f"\n✖ frontmatter: {one_line(review.frontmatter_error)}", style=colours.get("error", ""))
    if review.sources:
        head.append("\nsources: ", style="bold")
        head.append(one_line("; ".join(review.sources), 300))
    layout.add_row(head)
    flags = review.flags
    flag_text = Text()
    if flags:
        flag_text.append(f"\n⚑ {len(flags)} spot(s) look like instructions or payloads aimed at an agent:\n", style=f"bold {colours.get('error', '')}")
        for flag in flags:
            colour = colours.get(SEVERITY_STYLE.get(flag.severity, "warning"), "")
            flag_text.append(f"  L{flag.line} ⚑ {flag.severity} ", style=f"bold {colour}")
            flag_text.append(f"{one_line(flag.reason, 80)}: ", style="bold")
            flag_text.append(f"{one_line(flag.excerpt, 100)}\n")
    else:
        flag_text.append("\n✓ no instruction-like lines found\n", style=colours.get("success", ""))
    if review.hazards:
        kinds = sorted({kind for _, _, kind, _ in review.hazards})
        flag_text.append(f"▲ {len(review.hazards)} hidden/control character(s) ({', '.join(kinds)}), shown as ⟨…⟩ and ␛-style symbols\n", style=colours.get("warning", ""))
    layout.add_row(flag_text)
    raw = Table.grid(padding=(0, 1), expand=True)
    raw.add_column(justify="right", style="dim", no_wrap=True)
    raw.add_column(no_wrap=True, width=1)
    raw.add_column(ratio=1, overflow="fold")
    flagged = review.flagged_lines()
    for number, line in enumerate(review.lines, start=1):
        marker = Text(" ")
        body = Text(line)
        if "<!--" in line:
            body.stylize(f"reverse {colours.get('warning', '')}", line.index("<!--"))
        if number in flagged:
            marker = Text("⚑", style=f"bold {colours.get('error', '')}")
            body.stylize(f"bold {colours.get('error', '')}")
        raw.add_row(str(number), marker, body)
    layout.add_row(Text("raw file (every byte; nothing hidden):", style="bold"))
    layout.add_row(raw)
    return layout


class QuarantineScreen(Screen):
    BINDINGS = [
        Binding("a", "approve", "Approve"),
        Binding("x", "reject", "Reject"),
        Binding("t", "approve_to", "Approve to…"),
        Binding("A", "approve_group", "Approve session"),
        Binding("X", "reject_group", "Reject session"),
        Binding("o", "open_page", "Open page"),
        Binding("escape", "app.switch_mode('browse')", "Back"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.queue: quarantine_mod.QuarantineQueue | None = None
        self.review: quarantine_mod.PageReview | None = None
        self._options: dict[str, tuple[str, str]] = {}  # option id -> ("page", path) | ("group", source)

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="review-main"):
            yield OptionList(id="queue")
            with VerticalScroll(id="review-scroll"):
                yield Static(id="review")
        yield StatusBar()
        yield Footer()

    def on_mount(self) -> None:
        self.title = "Quarantine queue"
        self.app.field_signal.subscribe(self, self._on_field)
        self.refresh_queue()
        self.query_one("#queue").focus()

    def _on_field(self, event: FieldEvent) -> None:
        if event.kind in ("loaded", "analysed", "changed"):
            self.refresh_queue()

    # ------------------------------------------------------------------ queue
    @work(thread=True, exclusive=True, group="quarantine-queue")
    def refresh_queue(self) -> None:
        field = self.app.field
        if field is None:
            return
        queue = quarantine_mod.quarantine_queue(field.snapshot())
        self.app.call_from_thread(self._show_queue, queue)

    def _show_queue(self, queue: quarantine_mod.QuarantineQueue) -> None:
        self.queue = queue
        colours = self.app.palette()
        widget = self.query_one("#queue", OptionList)
        current = self._current_page()
        widget.clear_options()
        self._options.clear()
        options: list[Option] = []
        header = Text(f"⛔ Quarantined: {len(queue.quarantined)}", style=f"bold {colours.get('error', '')}")
        options.append(Option(header, disabled=True))
        if not queue.groups:
            options.append(Option(Text("  nothing in quarantine", style="dim"), disabled=True))
        for number, group in enumerate(queue.groups):
            label = Text(f"▸ from {one_line(group.source, 60)}", style="bold")
            label.append(f"  {len(group.items)} page(s), oldest {one_line((group.oldest or '?')[:10])}", style="dim")
            option_id = f"g-{number}"
            self._options[option_id] = ("group", group.source)
            options.append(Option(label, id=option_id))
            for index, item in enumerate(group.items):
                option_id = f"q-{number}-{index}"
                self._options[option_id] = ("page", item.path)
                options.append(Option(item_prompt(item, colours), id=option_id))
        sessions = sorted(path for path, row in self.app.rows.items() if path.startswith("sessions/") and row.trust == "quarantined")
        if sessions:
            note = Text(f"  ◇ {len(sessions)} tainted session transcript(s): evidence, kept as is, not reviewable", style="dim")
            options.append(Option(note, disabled=True))
        options.append(Option(Text(""), disabled=True))
        options.append(Option(Text(f"◌ Unreviewed (not tainted): {len(queue.unreviewed)}", style=f"bold {colours.get('warning', '')}"), disabled=True))
        for index, item in enumerate(queue.unreviewed):
            option_id = f"u-{index}"
            self._options[option_id] = ("page", item.path)
            options.append(Option(item_prompt(item, colours), id=option_id))
        widget.add_options(options)
        target = current or next((path for kind, path in self._options.values() if kind == "page"), None)
        if target:
            self._highlight(target)
        else:
            self.query_one("#review", Static).update(Text("✓ nothing waits for review", style="bold"))
            self.review = None

    def _highlight(self, path: str) -> None:
        widget = self.query_one("#queue", OptionList)
        for option_id, (kind, value) in self._options.items():
            if kind == "page" and value == path:
                widget.highlighted = widget.get_option_index(option_id)
                self.show_review(path)
                return

    def _current_page(self) -> str | None:
        return self.review.path if self.review else None

    def _current_group(self) -> str | None:
        widget = self.query_one("#queue", OptionList)
        if widget.highlighted is None:
            return None
        option = widget.get_option_at_index(widget.highlighted)
        kind, value = self._options.get(option.id or "", ("", ""))
        if kind == "group":
            return value
        if kind == "page" and self.queue is not None:
            for group in self.queue.groups:
                if any(item.path == value for item in group.items):
                    return group.source
        return None

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        kind, value = self._options.get(event.option.id or "", ("", ""))
        if kind == "page":
            self.show_review(value)
        elif kind == "group":
            self._show_group(value)

    def show_review(self, path: str) -> None:
        try:
            review = quarantine_mod.inspect_page(self.app.field.root, path)
        except MemtuiError as exc:
            self.review = None
            self.query_one("#review", Static).update(Text(f"✖ {one_line(exc.message)}"))
            return
        self.review = review
        self.query_one("#review", Static).update(review_body(review, self.app.palette()))
        self.query_one("#review-scroll").scroll_home(animate=False)

    def _show_group(self, source: str) -> None:
        group = self.queue.group(source) if self.queue else None
        self.review = None
        if group is None:
            return
        text = Text(f"Session or source: {one_line(source)}\n\n", style="bold")
        for item in group.items:
            text.append_text(item_prompt(item, self.app.palette()))
            text.append("\n")
        text.append("\nA approves all of them, X rejects all of them (one confirmation each).", style="dim")
        self.query_one("#review", Static).update(text)

    # ------------------------------------------------------------------ decisions
    def _refresh_after(self, paths: list[str]) -> None:
        self.app.reload_paths(paths)
        self.refresh_queue()

    def action_approve(self) -> None:
        self._approve(ask_folder=False)

    def action_approve_to(self) -> None:
        self._approve(ask_folder=True)

    @work(exclusive=True, group="quarantine-decide")
    async def _approve(self, ask_folder: bool) -> None:
        review = self.review
        if review is None:
            self.notify("choose a page first", severity="warning")
            return
        folder = None
        if ask_folder:
            folder = await self.app.push_screen_wait(
                TextDialog("Approve to a folder", "Move the approved page into which folder?", value=review.move_to or "notes")
            )
            if not folder:
                return
        where = folder or (review.destination if review.destination and review.destination != review.path else "where it is")
        body = Text()
        body.append(f"{one_line(review.path)}\n", style="bold")
        body.append(f"sets reviewed: true, reviewed_by, reviewed_at (nothing else changes)\nmoves it to: {one_line(where)}\n")
        if review.flags:
            body.append(f"\n⚑ {len(review.flags)} instruction-like spot(s) flagged in this page.\n", style="bold")
        body.append("\nIt is not added to MEMORY.md unless you choose so.", style="dim")
        choice = await self.app.push_screen_wait(
            ChoiceDialog("Approve this page?", body, [("approve", "Approve"), ("memory", "Approve + add to MEMORY.md"), ("cancel", "Cancel")], variant_of={"approve": "primary"})
        )
        if choice not in ("approve", "memory"):
            return
        await self._decide(
            lambda: quarantine_mod.approve_pages(
                self.app.field.root, [(review.path, review.sha256)], to=folder, add_to_memory=choice == "memory", readonly=self.app.field.readonly
            ),
            "approved",
        )

    def action_reject(self) -> None:
        self._reject()

    @work(exclusive=True, group="quarantine-decide")
    async def _reject(self) -> None:
        review = self.review
        if review is None:
            self.notify("choose a page first", severity="warning")
            return
        reason = await self.app.push_screen_wait(
            TextDialog("Reject this page", f"Why is {one_line(review.path)} rejected? (it moves to .memtui/archive/, nothing is deleted)", placeholder="e.g. prompt injection from a web page")
        )
        if not reason:
            return
        await self._decide(
            lambda: quarantine_mod.reject_pages(self.app.field.root, [(review.path, review.sha256)], reason=reason, readonly=self.app.field.readonly),
            "rejected",
        )

    def action_approve_group(self) -> None:
        self._group_decision(approve=True)

    def action_reject_group(self) -> None:
        self._group_decision(approve=False)

    @work(exclusive=True, group="quarantine-decide")
    async def _group_decision(self, approve: bool) -> None:
        source = self._current_group()
        group = self.queue.group(source) if (self.queue and source) else None
        if group is None:
            self.notify("choose a session group (or a page in one) first", severity="warning")
            return
        bound = group.bound()
        listing = Text("\n".join(f"• {one_line(path)}" for path, _ in bound))
        if approve:
            ok = await self.app.push_screen_wait(
                ConfirmDialog(f"Approve all {len(bound)} page(s) from this session?", Text.assemble(Text(f"{one_line(source)}\n\n", style="bold"), listing), yes="Approve all")
            )
            if ok != "yes":
                return
            await self._decide(lambda: quarantine_mod.approve_pages(self.app.field.root, bound, readonly=self.app.field.readonly), "approved")
        else:
            reason = await self.app.push_screen_wait(
                TextDialog(f"Reject all {len(bound)} page(s) from this session", f"Why? ({one_line(source)})", placeholder="e.g. the session read a poisoned page")
            )
            if not reason:
                return
            await self._decide(lambda: quarantine_mod.reject_pages(self.app.field.root, bound, reason=reason, readonly=self.app.field.readonly), "rejected")

    async def _decide(self, action, verb: str) -> None:
        try:
            decisions = action()
        except StaleWriteError as exc:
            safe.notify(self.app, f"{exc.message}: look at it again before deciding", title="changed since shown", severity="warning", timeout=8)
            self.refresh_queue()
            if self.review is not None:
                self.show_review(self.review.path)
            return
        except MemtuiError as exc:
            safe.notify(self.app, f"{exc.message} ({exc.hint})" if exc.hint else exc.message, severity="error", timeout=10)
            return
        moved = [d.moved_to or d.path for d in decisions]
        safe.notify(self.app, f"{verb} {len(decisions)} page(s): {', '.join(moved[:3])}", timeout=5)
        self.review = None
        # Where each page was, where it went (archive paths are not pages), and MEMORY.md if asked to add it.
        self._refresh_after([d.path for d in decisions] + moved + ["MEMORY.md"])

    def action_open_page(self) -> None:
        if self.review is not None:
            self.app.open_page(self.review.path)
