"""Quarantine queue: notes from tainted sessions, grouped by what tainted them, reviewed one by one.

The reviewer sees everything (raw text with hidden characters made visible,
frontmatter, sources, lines that look like instructions aimed at an agent).
Approving or rejecting is bound to the content hash of what was shown; if the
page changed since, memtui shows it again instead of deciding.

A decision always applies to the highlighted item. Afterwards the item stays in
place, struck through, with its decision as a word; the cursor moves to the
next pending item and the focus returns to the list. ``z`` undoes the latest
decision (``memtui.review.undo``); ``d`` shows every decision from the ledger
(who, when, why), where ``z`` reopens the highlighted one. A page with danger
flags, and every bulk action, opens its confirmation with Cancel focused.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Header, OptionList, Static
from textual.widgets.option_list import Option

from memtui.errors import MemtuiError, StaleWriteError
from memtui.field.trust import nothing_waiting
from memtui.render.glyphs import TRUST
from memtui.review import ledger
from memtui.review import quarantine as quarantine_mod
from memtui.review import undo as undo_mod
from memtui.session.events import AnalysisReady, FieldLoaded, PagesChanged
from memtui.session.latest_only import LatestOnly
from memtui.textsafety import one_line, plural
from memtui.tui import safe
from memtui.tui.context import AppEvent, Context, SessionScreen
from memtui.tui.screens.dialogs import ChoiceDialog, ConfirmDialog, TextDialog
from memtui.tui.widgets.footer import MemtuiFooter
from memtui.tui.widgets.lists import FilterBox, FilterInPlace, MarkedOptionList, matches
from memtui.tui.widgets.status_bar import StatusBar

SEVERITY_STYLE = {"danger": "error", "notice": "warning"}


DECIDED_WORD = {"approved": ("✓", "success"), "rejected": ("⊘", "secondary")}


def item_prompt(item: quarantine_mod.QueueItem, colours: dict[str, str], decided: str | None = None) -> Text:
    """One queue item; a decided one is struck through and says its decision in words."""
    if decided:
        glyph, colour = DECIDED_WORD.get(decided, ("·", "secondary"))
        text = Text(f"{glyph} {decided.upper()} ", style=f"bold {colours.get(colour, '')}")
        text.append(one_line(item.title, 60), style="strike")
        text.append(f"\n  {one_line(item.path)}", style="strike")
        return text
    glyph, _, colour = TRUST.get(item.state, TRUST["unreviewed"])
    text = Text(f"{glyph} ", style=colours.get(colour, ""))
    text.append(one_line(item.title, 60), style="bold")
    danger, notice = item.flags.get("danger", 0), item.flags.get("notice", 0)
    if danger:
        text.append(f"  ⚑ {danger} danger", style=f"bold {colours.get('error', '')}")
    if notice:
        text.append(f"  ⚑ {notice} notice", style=colours.get("warning", ""))
    text.append(f"\n  {one_line(item.path)}", style="dim")
    if item.created:
        text.append(f"  {one_line(item.created[:10])}", style="dim")
    return text


def review_body(review: quarantine_mod.PageReview, colours: dict[str, str]) -> Table:
    """The whole page for review: facts, flags, then every raw line numbered."""
    layout = Table.grid(padding=(0, 0), expand=True)
    layout.add_column(ratio=1)
    head = Text()
    state = TRUST.get(review.state, TRUST["unreviewed"])
    head.append(f"{state.glyph} {review.state}", style=f"bold {colours.get(state.colour, '')}")
    head.append(f"   {one_line(review.path)}", style="bold")
    head.append(f"\nsha256 {review.sha256[:16]}…  (decisions are bound to this version)", style="dim")
    if review.source:
        head.append(f"\ntainted by: {one_line(review.source)}")
    if review.destination_problem:
        head.append(
            f"\n✖ approving cannot move it: {one_line(review.destination_problem)}", style=colours.get("error", "")
        )
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
        flag_text.append(
            f"\n⚑ {plural(len(flags), 'spot')} look{'s' if len(flags) == 1 else ''} like instructions or payloads aimed at an agent:\n",
            style=f"bold {colours.get('error', '')}",
        )
        for flag in flags:
            colour = colours.get(SEVERITY_STYLE.get(flag.severity, "warning"), "")
            flag_text.append(f"  L{flag.line} ⚑ {flag.severity} ", style=f"bold {colour}")
            flag_text.append(f"{one_line(flag.reason, 80)}: ", style="bold")
            flag_text.append(f"{one_line(flag.excerpt, 100)}\n")
    else:
        flag_text.append("\n✓ no instruction-like lines found\n", style=colours.get("success", ""))
    if review.hazards:
        kinds = sorted({kind for _, _, kind, _ in review.hazards})
        flag_text.append(
            f"▲ {plural(len(review.hazards), 'hidden/control character')} ({', '.join(kinds)}), shown as ⟨…⟩ and ␛-style symbols\n",
            style=colours.get("warning", ""),
        )
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


@dataclass
class Decided:
    """A decision made on this screen: the item stays in the list, struck through."""

    item: quarantine_mod.QueueItem
    source: str  # its queue group ("" for unreviewed pages)
    verb: str  # approved | rejected


class QuarantineScreen(FilterInPlace, SessionScreen):
    BINDINGS = [
        Binding("a", "approve", "Approve"),
        Binding("x", "reject", "Reject"),
        Binding("z", "undo", "Undo"),
        Binding("t", "approve_to", "Approve to…"),
        Binding("A", "approve_group", "Approve session"),
        Binding("X", "reject_group", "Reject session"),
        Binding("d", "toggle_decided", "Decided"),
        Binding("slash", "filter_list", "Filter", key_display="/"),
        Binding("o", "open_page", "Open page", show=False),
        Binding("escape", "back", "Back"),
    ]
    HELP_EXTRA = [("enter", "open the highlighted page"), ("tab", "between the list and the page")]

    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self._queue_reads = LatestOnly(self._read_queue, self.call_later)
        self.queue: quarantine_mod.QuarantineQueue | None = None
        self.review: quarantine_mod.PageReview | None = None
        self.show_decided = False
        self.records: list[ledger.DecisionRecord] = []
        self._decided: dict[str, Decided] = {}
        self._options: dict[
            str, tuple[str, str]
        ] = {}  # option id -> (kind, value); kinds: page, decided, group, record
        self._want: str | None = None  # the page to highlight once the queue is read again

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="review-main"):
            with Vertical(id="queue-pane"):
                yield FilterBox(id="list-filter")
                yield MarkedOptionList(id="queue")
            with VerticalScroll(id="review-scroll"):
                yield Static(id="review")
        yield StatusBar(self.ctx)
        yield MemtuiFooter()

    def on_mount(self) -> None:
        self.title = "Quarantine queue"
        self.ctx.events.subscribe(self, self._on_event)
        self.refresh_queue()
        self.query_one("#queue").focus()

    def _on_event(self, event: AppEvent) -> None:
        if isinstance(event, FieldLoaded | AnalysisReady | PagesChanged):
            self.refresh_queue()

    @property
    def queue_list(self) -> OptionList:
        return self.query_one("#queue", OptionList)

    # ------------------------------------------------------------------ queue
    def refresh_queue(self) -> None:
        """Read the queue again in a worker (one at a time; asked again meanwhile, once more after)."""
        self._queue_reads.request()

    @work(thread=True, exclusive=True, group="quarantine-queue", description="refresh_queue")
    def _read_queue(self) -> None:
        with self._queue_reads.reporting(self.app):
            field = self.session.field
            if field is None:
                return
            queue = quarantine_mod.quarantine_queue(field.snapshot())
            records = ledger.decision_records(ledger.read(field.root).entries, ledger.QUARANTINE_ACTIONS)
            self.app.call_from_thread(self._show_queue, queue, records)

    def _show_queue(self, queue: quarantine_mod.QuarantineQueue, records: list[ledger.DecisionRecord]) -> None:
        self.queue = queue
        self.records = records
        for path in [p for p in self._decided if queue.find(p) is not None]:
            del self._decided[path]  # back in the queue (undone, or written again)
        self._rebuild()

    def _group_items(
        self, source: str, pending: list[quarantine_mod.QueueItem]
    ) -> list[tuple[quarantine_mod.QueueItem, str | None]]:
        """The group's items in queue order, decided ones in the place they had."""
        items: list[tuple[quarantine_mod.QueueItem, str | None]] = [(item, None) for item in pending]
        items += [(d.item, d.verb) for d in self._decided.values() if d.source == source]
        items.sort(key=lambda pair: quarantine_mod.queue_order(pair[0]))
        return [pair for pair in items if matches(self.text_filter, pair[0].title, pair[0].path, source)]

    def _rebuild(self, *, highlight: str | None = None) -> None:
        """Fill the list from the queue and this screen's decisions; keep the highlight on the same page."""
        if self.queue is None:
            return
        widget = self.queue_list
        current = highlight or self._want or self._highlighted_value()
        self._want = None
        widget.clear_options()
        self._options.clear()
        options = self._decided_view_options() if self.show_decided else self._queue_options()
        widget.add_options(options)
        self._highlight(current)

    def _add(self, options: list[Option], prompt: Text, kind: str, value: str) -> None:
        option_id = f"o-{len(self._options)}"
        self._options[option_id] = (kind, value)
        options.append(Option(prompt, id=option_id))

    def _queue_options(self) -> list[Option]:
        queue = self.queue
        assert queue is not None  # _rebuild returns first while there is no queue
        colours = self.ctx.palette()
        options: list[Option] = []
        decided_here = len(self._decided)
        header = Text(f"⛔ Quarantined: {len(queue.quarantined)} waiting", style=f"bold {colours.get('error', '')}")
        if decided_here:
            header.append(f" · {decided_here} decided here (z undoes, d lists all)", style="")
        options.append(Option(header, disabled=True))
        sources = [group.source for group in queue.groups]
        sources += sorted({d.source for d in self._decided.values() if d.source and d.source not in sources})
        if not sources:
            options.append(Option(Text("nothing in quarantine", style="dim"), disabled=True))
        for source in sources:
            group = queue.group(source)
            items = self._group_items(source, group.items if group else [])
            if not items:
                continue
            waiting = len(group.items) if group else 0
            label = Text(f"from {one_line(source, 60)}", style="bold")
            label.append(f"  {plural(waiting, 'page')} waiting", style="dim")
            if group is not None and group.oldest:
                label.append(f", oldest {one_line(group.oldest[:10])}", style="dim")
            self._add(options, label, "group", source)
            for item, verb in items:
                self._add(options, item_prompt(item, colours, verb), "decided" if verb else "page", item.path)
        sessions = sorted(
            path
            for path, row in self.session.rows.items()
            if path.startswith("sessions/") and row.trust == "quarantined"
        )
        if sessions:
            note = Text(
                f"◇ {plural(len(sessions), 'tainted session transcript')} not counted: evidence, kept as is, never reviewed",
                style="dim",
            )
            options.append(Option(note, disabled=True))
        options.append(Option(Text(""), disabled=True))
        unreviewed = self._group_items("", queue.unreviewed)
        options.append(
            Option(
                Text(
                    f"◌ Unreviewed (not tainted): {len(queue.unreviewed)} waiting",
                    style=f"bold {colours.get('warning', '')}",
                ),
                disabled=True,
            )
        )
        for item, verb in unreviewed:
            self._add(options, item_prompt(item, colours, verb), "decided" if verb else "page", item.path)
        return options

    def _decided_view_options(self) -> list[Option]:
        colours = self.ctx.palette()
        options: list[Option] = [
            Option(
                Text(
                    f"Decided: {plural(len(self.records), 'decision')}, newest first (d: back to the queue)",
                    style="bold",
                ),
                disabled=True,
            )
        ]
        for index, record in enumerate(self.records):
            entry = record.entry
            if not matches(self.text_filter, entry.target, entry.who, entry.reason or ""):
                continue
            verb = undo_mod.VERB.get(entry.action, entry.action)
            glyph, colour = DECIDED_WORD.get(verb, ("·", "secondary"))
            prompt = Text(f"{glyph} {verb.upper()} ", style=f"bold {colours.get(colour, '')}")
            prompt.append(one_line(entry.target, 70), style="strike" if record.undone_by else "bold")
            if record.undone_by is not None:
                prompt.append("  UNDONE", style="bold")
            prompt.append(f"\n  {one_line(entry.who, 30)} · {one_line(entry.ts)}", style="dim")
            if entry.reason:
                prompt.append(f"\n  why: {one_line(entry.reason, 80)}")
            self._add(options, prompt, "record", str(index))
        if not self.records:
            options.append(Option(Text("no decisions yet", style="dim"), disabled=True))
        return options

    def _highlighted_value(self) -> str | None:
        widget = self.queue_list
        if widget.highlighted is None or widget.highlighted >= widget.option_count:
            return None
        option = widget.get_option_at_index(widget.highlighted)
        kind, value = self._options.get(option.id or "", ("", ""))
        return value if kind in ("page", "decided", "record") else None

    def _highlighted(self) -> tuple[str, str]:
        widget = self.queue_list
        if widget.highlighted is None or widget.highlighted >= widget.option_count:
            return "", ""
        option = widget.get_option_at_index(widget.highlighted)
        return self._options.get(option.id or "", ("", ""))

    def _highlight(self, value: str | None) -> None:
        """Highlight the option for ``value`` (a page path or record index), else the first pending page."""
        widget = self.queue_list
        order = list(self._options.items())
        target = next((oid for oid, (kind, v) in order if v == value and kind in ("page", "decided", "record")), None)
        if target is None:
            target = next((oid for oid, (kind, _) in order if kind in ("page", "record")), None)
        if target is None:
            target = next((oid for oid, (kind, _) in order if kind == "decided"), None)
        if target is None:
            widget.highlighted = None
            self.review = None
            analysis = self.session.analysis
            counts = analysis.counts if analysis is not None else {}
            message = "no decisions yet" if self.show_decided else nothing_waiting(counts)
            self.query_one("#review", Static).update(Text(message, style="bold"))
            return
        index = widget.get_option_index(target)
        if widget.highlighted == index:
            self._show_option(*self._options[target])
        widget.highlighted = index

    def _next_pending_after(self, path: str) -> str | None:
        """The first pending page after ``path`` in list order, else the last one before it."""
        order = [(kind, value) for kind, value in self._options.values() if kind in ("page", "decided")]
        paths = [value for _, value in order]
        start = paths.index(path) if path in paths else -1
        after = [value for kind, value in order[start + 1 :] if kind == "page"]
        before = [value for kind, value in order[: max(start, 0)] if kind == "page"]
        return after[0] if after else (before[-1] if before else None)

    def _current_group(self) -> str | None:
        kind, value = self._highlighted()
        if kind == "group":
            return value
        if kind == "page" and self.queue is not None:
            for group in self.queue.groups:
                if any(item.path == value for item in group.items):
                    return group.source
        return None

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._show_option(*self._options.get(event.option.id or "", ("", "")))

    def _show_option(self, kind: str, value: str) -> None:
        if kind == "page":
            self.show_review(value)
        elif kind == "group":
            self._show_group(value)
        elif kind == "decided":
            self._show_decided(value)
        elif kind == "record":
            self._show_record(int(value))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter opens the highlighted page (where it is now, for a decided one)."""
        kind, value = self._options.get(event.option.id or "", ("", ""))
        path = None
        if kind == "page":
            path = value
        elif kind == "decided":
            path = self._where_now(value)
        elif kind == "record":
            path = self._record_where(self.records[int(value)])
        if path and self.session.field is not None and path in self.session.field.pages:
            self.open_page(path)
        elif kind in ("decided", "record"):
            self.notify(
                "rejected pages live in .memtui/archive/ and are not pages any more; z brings one back", timeout=5
            )

    def show_review(self, path: str) -> None:
        field = self.session.field
        assert field is not None  # the queue it is picked from is read from the field
        try:
            review = quarantine_mod.inspect_page(field.root, path)
        except MemtuiError as exc:
            self.review = None
            self.query_one("#review", Static).update(Text(f"✖ {one_line(exc.message)}"))
            return
        self.review = review
        self.query_one("#review", Static).update(review_body(review, self.ctx.palette()))
        self.query_one("#review-scroll").scroll_home(animate=False)

    def _show_group(self, source: str) -> None:
        group = self.queue.group(source) if self.queue else None
        self.review = None
        if group is None:
            self.query_one("#review", Static).update(
                Text(f"every page from {one_line(source)} is decided", style="bold")
            )
            return
        text = Text(f"Session or source: {one_line(source)}\n\n", style="bold")
        for item in group.items:
            text.append_text(item_prompt(item, self.ctx.palette()))
            text.append("\n")
        text.append("\nA approves all of them, X rejects all of them (one confirmation, Cancel focused).", style="dim")
        self.query_one("#review", Static).update(text)

    def _where_now(self, path: str) -> str | None:
        record = next((r for r in self.records if r.entry.target == path and r.undone_by is None), None)
        return self._record_where(record) if record else None

    @staticmethod
    def _record_where(record: ledger.DecisionRecord) -> str | None:
        page = record.entry.pages[0] if record.entry.pages else {}
        if record.entry.action == ledger.QUARANTINE_REJECT:
            return None
        return page.get("moved_to") or page.get("path") or record.entry.target

    def _record_text(self, record: ledger.DecisionRecord) -> Text:
        entry = record.entry
        verb = undo_mod.VERB.get(entry.action, entry.action)
        text = Text(f"{verb.upper()}  ", style="bold")
        text.append(one_line(entry.target), style="bold")
        text.append(f"\nby {one_line(entry.who)} on {one_line(entry.ts)}")
        text.append("\nwhy: ", style="bold")
        text.append(one_line(entry.reason or "(no reason given)", 300))
        for page in entry.pages:
            moved = page.get("moved_to")
            text.append(f"\n• {one_line(str(page.get('path')))}")
            if moved:
                text.append(f" → {one_line(str(moved))}")
        if record.undone_by is not None:
            text.append(
                f"\n\nundone by {one_line(record.undone_by.who)} on {one_line(record.undone_by.ts)}", style="bold"
            )
        else:
            text.append("\n\nz reopens it (undo): the page goes back to the queue as it was.", style="dim")
        return text

    def _show_decided(self, path: str) -> None:
        self.review = None
        record = next((r for r in self.records if r.entry.target == path and r.undone_by is None), None)
        self.query_one("#review", Static).update(
            self._record_text(record) if record else Text(f"{one_line(path)}: decided")
        )

    def _show_record(self, index: int) -> None:
        self.review = None
        if 0 <= index < len(self.records):
            self.query_one("#review", Static).update(self._record_text(self.records[index]))

    # ------------------------------------------------------------------ views
    def action_toggle_decided(self) -> None:
        self.show_decided = not self.show_decided
        self.title = "Quarantine: decided" if self.show_decided else "Quarantine queue"
        self._rebuild(highlight="0" if self.show_decided else None)
        self.queue_list.focus()

    def refilter(self) -> None:
        self._rebuild()

    def filtered_list(self) -> OptionList:
        return self.queue_list

    def action_back(self) -> None:
        if self.show_decided:
            self.action_toggle_decided()
        else:
            self.app.switch_mode("browse")

    # ------------------------------------------------------------------ decisions
    def _target_review(self) -> quarantine_mod.PageReview | None:
        """The review of the highlighted pending page: decisions never aim anywhere else."""
        kind, value = self._highlighted()
        if self.show_decided or kind != "page":
            self.notify("highlight a page that waits for review first", severity="warning")
            return None
        if self.review is None or self.review.path != value:
            self.show_review(value)
        return self.review

    def action_approve(self) -> None:
        self._approve(ask_folder=False)

    def action_approve_to(self) -> None:
        self._approve(ask_folder=True)

    @work(exclusive=True, group="quarantine-decide", description="_approve")
    async def _approve(self, ask_folder: bool) -> None:
        review = self._target_review()
        if review is None:
            return
        folder = None
        if ask_folder:
            folder = await self.app.push_screen_wait(
                TextDialog(
                    "Approve to a folder", "Move the approved page into which folder?", value=review.move_to or "notes"
                )
            )
            if not folder:
                return
        where = folder or (
            review.destination if review.destination and review.destination != review.path else "where it is"
        )
        danger = sum(1 for flag in review.flags if flag.severity == "danger")
        body = Text()
        body.append(f"{one_line(review.path)}\n", style="bold")
        body.append(
            f"sets reviewed: true, reviewed_by, reviewed_at (nothing else changes)\nmoves it to: {one_line(where)}\n"
        )
        if review.flags:
            body.append(f"\n⚑ {plural(len(review.flags), 'instruction-like spot')} flagged in this page", style="bold")
            body.append(f" ({danger} danger): Cancel is focused.\n" if danger else ".\n", style="bold")
        body.append("\nIt is not added to MEMORY.md unless you choose so. z undoes the decision.", style="dim")
        choice = await self.app.push_screen_wait(
            ChoiceDialog(
                "Approve this page?",
                body,
                [("approve", "Approve"), ("memory", "Approve + add to MEMORY.md"), ("cancel", "Cancel")],
                variant_of={"approve": "error" if danger else "primary"},
                focus="cancel" if danger else "approve",
            )
        )
        if choice not in ("approve", "memory"):
            return
        field = self.session.field
        assert field is not None  # the review was read from it
        await self._decide(
            lambda: quarantine_mod.approve_pages(
                field.root,
                [(review.path, review.sha256)],
                to=folder,
                add_to_memory=choice == "memory",
                readonly=field.readonly,
                field=field.snapshot(),
            ),
            "approved",
        )

    def action_reject(self) -> None:
        self._reject()

    @work(exclusive=True, group="quarantine-decide", description="_reject")
    async def _reject(self) -> None:
        review = self._target_review()
        if review is None:
            return
        reason = await self.app.push_screen_wait(
            TextDialog(
                "Reject this page",
                f"Why is {one_line(review.path)} rejected? (it moves to .memtui/archive/, nothing is deleted; z undoes it)",
                placeholder="e.g. prompt injection from a web page",
            )
        )
        if not reason:
            return
        field = self.session.field
        assert field is not None  # the review was read from it
        await self._decide(
            lambda: quarantine_mod.reject_pages(
                field.root,
                [(review.path, review.sha256)],
                reason=reason,
                readonly=field.readonly,
            ),
            "rejected",
        )

    def action_approve_group(self) -> None:
        self._group_decision(approve=True)

    def action_reject_group(self) -> None:
        self._group_decision(approve=False)

    @work(exclusive=True, group="quarantine-decide", description="_group_decision")
    async def _group_decision(self, approve: bool) -> None:
        source = self._current_group()
        group = self.queue.group(source) if (self.queue and source and not self.show_decided) else None
        if group is None:
            self.notify("highlight a session group (or a page in one) first", severity="warning")
            return
        assert source  # the group was found by it
        field = self.session.field
        assert field is not None  # the queue was read from it
        # approve_pages and reject_pages take (path, hash or None); they only read the list.
        bound = group.bound()
        listing = Text("\n".join(f"• {one_line(path)}" for path, _ in bound))
        danger = sum(item.flags.get("danger", 0) for item in group.items)
        if danger:
            listing.append(f"\n\n⚑ {plural(danger, 'danger flag')} among them.", style="bold")
        if approve:
            ok = await self.app.push_screen_wait(
                ConfirmDialog(
                    f"Approve all {plural(len(bound), 'page')} from this session?",
                    Text.assemble(Text(f"{one_line(source)}\n\n", style="bold"), listing),
                    yes="Approve all",
                    danger=True,
                )
            )
            if ok != "yes":
                return
            await self._decide(
                lambda: quarantine_mod.approve_pages(field.root, bound, readonly=field.readonly),
                "approved",
            )
        else:
            reason = await self.app.push_screen_wait(
                TextDialog(
                    f"Reject all {plural(len(bound), 'page')} from this session",
                    f"Why? ({one_line(source)})",
                    placeholder="e.g. the session read a poisoned page",
                )
            )
            if not reason:
                return
            ok = await self.app.push_screen_wait(
                ConfirmDialog(f"Reject all {plural(len(bound), 'page')}?", listing, yes="Reject all", danger=True)
            )
            if ok != "yes":
                return
            await self._decide(
                lambda: quarantine_mod.reject_pages(field.root, bound, reason=reason, readonly=field.readonly),
                "rejected",
            )

    async def _decide(self, action, verb: str) -> None:
        try:
            decisions = action()
        except StaleWriteError as exc:
            safe.notify(
                self,
                f"{exc.message}: look at it again before deciding",
                title="changed since shown",
                severity="warning",
                timeout=8,
            )
            self.refresh_queue()
            if self.review is not None:
                self.show_review(self.review.path)
            return
        except MemtuiError as exc:
            safe.notify(self, f"{exc.message} ({exc.hint})" if exc.hint else exc.message, severity="error", timeout=10)
            return
        moved = [d.moved_to or d.path for d in decisions]
        safe.notify(self, f"{verb} {plural(len(decisions), 'page')}: {', '.join(moved[:3])} (z undoes)", timeout=5)
        self._mark_decided([d.path for d in decisions], verb)
        # Where each page was, where it went (archive paths are not pages), and MEMORY.md if asked to add it.
        self.session.reload_paths([d.path for d in decisions] + moved + ["MEMORY.md"])
        self.refresh_queue()

    def _mark_decided(self, paths: list[str], verb: str) -> None:
        """Keep the decided items in place, struck through; the cursor goes to the next pending one."""
        queue = self.queue
        if queue is None:
            return
        next_path = self._next_pending_after(paths[-1]) if paths else None
        while next_path in paths:
            next_path = self._next_pending_after(next_path)
        for path in paths:
            item = queue.find(path)
            if item is None:
                continue
            source = next((g.source for g in queue.groups if any(i.path == path for i in g.items)), "")
            self._decided[path] = Decided(item, source, verb)
            for group in queue.groups:
                group.items = [i for i in group.items if i.path != path]
            queue.groups = [g for g in queue.groups if g.items]
            queue.unreviewed = [i for i in queue.unreviewed if i.path != path]
        self.review = None
        self._rebuild(highlight=next_path or (paths[-1] if paths else None))
        self._want = next_path
        self.queue_list.focus()

    # ------------------------------------------------------------------ undo
    def action_undo(self) -> None:
        self._undo()

    @work(exclusive=True, group="quarantine-decide", description="_undo")
    async def _undo(self) -> None:
        field = self.session.field
        if field is None:
            safe.notify(self, "the field is still being read; try again in a moment", severity="warning")
            return
        root = field.root
        kind, value = self._highlighted()
        decision: ledger.LedgerEntry | None
        if self.show_decided and kind == "record":
            record = self.records[int(value)]
            if record.undone_by is not None:
                self.notify("that decision is already undone", severity="warning")
                return
            decision = record.entry
            if undo_mod.latest(root, kind=undo_mod.QUARANTINE, target=decision.target) != decision:
                self.notify("a later decision on that page is in force: undo that one first", severity="warning")
                return
        else:
            decision = undo_mod.latest(root, kind=undo_mod.QUARANTINE)
            if decision is None:
                self.notify("no decision to undo", severity="warning")
                return
        plan = undo_mod.plan_undo(root, decision)
        body = Text(f"{one_line(plan.summary)}\n", style="bold")
        if decision.reason:
            body.append(f"why it was decided: {one_line(decision.reason, 200)}\n")
        for page in plan.pages:
            body.append(f"\n• {page.what}: {one_line(page.path)}")
            if page.conflict:
                body.append("  (edited since: those edits are replaced, and kept in .memtui/blobs/)", style="bold")
        for problem in plan.problems:
            body.append(f"\n✖ {one_line(problem)}", style="bold")
        if plan.problems:
            await self.app.push_screen_wait(ChoiceDialog("This decision cannot be undone", body, [("ok", "OK")]))
            return
        risky = bool(plan.conflicts)
        choice = await self.app.push_screen_wait(
            ConfirmDialog(
                "Undo this decision?", body, yes="Undo (replace later edits)" if risky else "Undo", danger=risky
            )
        )
        if choice != "yes":
            return
        try:
            undone, _entry = undo_mod.undo(root, decision=decision, force=risky, readonly=field.readonly)
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
        self._decided.pop(undone.target, None)
        self._want = undone.target
        pages = [undone.target, "MEMORY.md"] + [str(p.get("moved_to")) for p in undone.pages if p.get("moved_to")]
        self.session.reload_paths([p for p in pages if not p.startswith(".memtui/")])
        if self.show_decided:
            self.show_decided = False
            self.title = "Quarantine queue"
        self.refresh_queue()
        self.queue_list.focus()

    def action_open_page(self) -> None:
        kind, value = self._highlighted()
        path = value if kind == "page" else (self._where_now(value) if kind == "decided" else None)
        if path:
            self.open_page(path)
