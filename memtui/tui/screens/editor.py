"""Inline editing that never loses a byte, while agents keep writing to the same folder.

- The page is edited as text (frontmatter included); lines the human does not
  touch keep their exact bytes and line endings (``memtui.store.edit_buffer``).
- Save validates first (frontmatter that no longer parses, checks the edit newly
  breaks), offers to set ``updated:`` (setting: ask, always, never), then writes
  through the safe writer, bound to the content hash the editor loaded.
- If the file changed on disk meanwhile, the edits are merged three ways against
  the version the editor loaded (``memtui.store.merge3``): edits on different
  lines are saved together at once; overlapping edits show base, mine and theirs
  side by side, and the focused choice keeps both sides in the editor, marked,
  for the human to finish. Your version is also kept under ``.memtui/conflicts/``
  (never as a second page). If the page was deleted: recreate or discard.
- What the reviewer sees is what gets saved and signed: when the text being saved
  is marked reviewed (``reviewed: true``, ``reviewed_by``), a change from disk is
  never merged into it unseen: the incoming lines are shown, the merge is put in
  the editor and nothing is written until the reviewer saves it again.
- Opens at the line the reader was on; ``ctrl+f`` finds in the page, ``ctrl+g``
  goes to a line.
- Helpers for auditing: tag the current line, strike it through as superseded
  with today's date, set ``reviewed: true``.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import os
import re
from collections import Counter
from pathlib import Path
from typing import cast

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Header, Input, Static, TextArea
from textual.widgets.text_area import Document, Selection, WrappedDocument

from memtui.errors import MemtuiError
from memtui.field import frontmatter
from memtui.field.body import LIST_MARKER_RE, TAG_RE
from memtui.field.checks import page_findings
from memtui.field.page import info_from_bytes, parse_bytes
from memtui.field.trust import is_reviewed_value
from memtui.review import ledger
from memtui.session.events import PagesChanged
from memtui.store import gitrepo, merge3
from memtui.store.edit_buffer import EditBuffer, hidden_positions, open_buffer, to_bytes
from memtui.store.files import read_bytes, sha256_bytes
from memtui.store.safe_write import MUST_NOT_EXIST, write_page
from memtui.textsafety import one_line, plural
from memtui.tui import safe, unsaved
from memtui.tui.context import AppEvent, Context, SessionScreen
from memtui.tui.screens.dialogs import ChoiceDialog, TextDialog
from memtui.tui.widgets.footer import MemtuiFooter

TAGS = ("stated", "observed", "inferred", "suggested")


def set_line_tag(line: str, tag: str) -> str:
    """Give a line exactly one source tag: replace the last one, or add it at the end."""
    matches = list(TAG_RE.finditer(line))
    if matches:
        last = matches[-1]
        return line[: last.start()] + f"[{tag}]" + line[last.end() :]
    stripped = line.rstrip()
    return f"{stripped} [{tag}]" + line[len(stripped) :]


def supersede_line(line: str, today: str) -> tuple[str, str] | None:
    """(struck line, start of its replacement line), or None for a blank or already struck line."""
    if not line.strip() or "~~" in line:
        return None
    marker_match = LIST_MARKER_RE.match(line)
    if marker_match:
        prefix = marker_match.group(0)
    else:
        indent = re.match(r"[ \t]*", line)
        assert indent is not None  # the pattern matches the empty string too
        prefix = indent.group(0)
    content = line[len(prefix) :].rstrip()
    return f"{prefix}~~{content}~~ superseded {today}", prefix


class _CountedWrappedDocument(WrappedDocument):
    """Its height is the length of a list it keeps anyway: Textual sums the wrap offsets of
    every line instead, on every line it draws (50,000 lines: 0.1-0.3 s a keystroke)."""

    @property
    def height(self) -> int:
        return len(self._offset_to_line_info)


class _TextKeptDocument(Document):
    """Its text joined once per edit, not at each reading: Textual's TextArea reads the whole
    text for every line it draws (to know whether to show a placeholder): at 50,000 lines
    0.6 ms a line, 20-40 ms a keystroke."""

    _text: str | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._text = super().text
        return self._text

    def replace_range(self, start, end, text: str):  # noqa: ANN001, ANN201 - Document's signature
        self._text = None
        return super().replace_range(start, end, text)


class _UpgradedOnSet:
    """An attribute TextArea sets to an object of Textual's ``plain`` class: the object is
    given our subclass ``ours`` (same state, a cheaper method) as it is set."""

    def __init__(self, plain: type, ours: type) -> None:
        self.plain, self.ours = plain, ours

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = f"_{name}"

    def __get__(self, obj, owner=None):  # noqa: ANN001, ANN204 - a descriptor's signature
        return self if obj is None else getattr(obj, self.slot)

    def __set__(self, obj, value) -> None:  # noqa: ANN001 - a descriptor's signature
        if type(value) is self.plain:
            value.__class__ = self.ours
        setattr(obj, self.slot, value)


class PageTextArea(TextArea):
    """The editor's TextArea: a wrapped document whose height is counted, not summed, and a
    document whose text is kept between edits."""

    wrapped_document = _UpgradedOnSet(WrappedDocument, _CountedWrappedDocument)
    document = _UpgradedOnSet(Document, _TextKeptDocument)


def _cell(lines: tuple[str, ...], style: str = "") -> Text:
    if not lines:
        return Text("(nothing)", style="italic")
    return Text("\n".join(one_line(line.rstrip("\r\n")) for line in lines), style=style)


def _disk_notice(abspath: str | os.PathLike[str]) -> str:
    """What saving will do now that another writer changed the page: said as ``save`` does it."""
    if not os.path.lexists(abspath):
        return "the file was deleted on disk since you opened it; saving asks whether to recreate it"
    return (
        "the file changed on disk since you opened it; saving merges those changes with yours, asks where "
        "both changed the same or adjacent lines, and, if the page is marked reviewed, shows you the changes "
        "and saves nothing"
    )


def _marked_reviewed(data: bytes) -> bool:
    """Does the page's frontmatter say it was reviewed (``reviewed: true`` or a date, a ``reviewed_by``)?"""
    meta = parse_bytes("page.md", data).frontmatter.data
    return bool(meta.get("reviewed_by")) or is_reviewed_value(meta.get("reviewed"))


_INCOMING_LINES = 40


def _incoming(base: bytes, disk: bytes) -> Text:
    """The lines another writer changed since the editor opened the page, made inert."""
    old = base.decode("utf-8", "surrogateescape").splitlines()
    new = disk.decode("utf-8", "surrogateescape").splitlines()
    out = Text("Changed on disk since you opened the page (- removed, + added):\n")
    shown = 0
    for line in difflib.unified_diff(old, new, lineterm="", n=0):
        if line.startswith(("---", "+++", "@@")):
            continue
        if shown == _INCOMING_LINES:
            out.append("… more: read them in the editor\n", style="dim")
            break
        out.append(one_line(line, 300) + "\n", style="bold" if line.startswith("+") else "")
        shown += 1
    return out


class MergeScreen(ModalScreen[str | None]):
    """Overlapping edits: the base, your edits and the disk's, side by side, per conflict.

    The focused choice keeps both sides in the editor, marked, so nothing is dropped.
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, path: str, result: merge3.MergeResult, kept: str | None, colours: dict[str, str]) -> None:
        super().__init__(classes="dialog-screen")
        self.path = path
        self.result = result
        self.kept = kept
        self.colours = colours

    def compose(self) -> ComposeResult:
        conflicts = self.result.conflicts
        intro = Text(
            f"{one_line(self.path)} changed on disk while you edited it. Edits on different lines were merged; "
            f"{plural(len(conflicts), 'place was', 'places were')} changed on both sides:\n",
            style="bold",
        )
        if self.kept:
            intro.append(f"Your whole version is kept in {one_line(self.kept)} whatever you choose.\n", style="")
        table = Table(expand=True, show_lines=True)
        table.add_column("line", justify="right", no_wrap=True, width=5)
        table.add_column("base (what you opened)", ratio=1, overflow="fold")
        table.add_column("mine (your edits)", ratio=1, overflow="fold")
        table.add_column("theirs (on disk now)", ratio=1, overflow="fold")
        for conflict in conflicts:
            table.add_row(
                str(conflict.mine_start),
                _cell(conflict.base),
                _cell(conflict.mine, f"bold {self.colours.get('success', '')}"),
                _cell(conflict.theirs, f"bold {self.colours.get('warning', '')}"),
            )
        with Vertical(classes="dialog wide-dialog"):
            yield Static(Text("Both you and someone else changed the same lines", style="bold"), classes="dialog-title")
            with VerticalScroll(classes="dialog-body tall"):
                yield Static(intro)
                yield Static(table)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Edit both, marked", id="edit", variant="primary")
                yield Button("Keep mine there", id="mine")
                yield Button("Take theirs there", id="theirs")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#edit", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None if event.button.id == "cancel" else event.button.id)

    def action_cancel(self) -> None:
        self.dismiss(None)


class EditorScreen(SessionScreen):
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("ctrl+t", "tag_line", "Tag line", priority=True),
        Binding("ctrl+o", "supersede_line", "Supersede line", priority=True),
        Binding("ctrl+r", "mark_reviewed", "Reviewed", priority=True),
        Binding("ctrl+f", "find", "Find", priority=True),
        Binding("ctrl+g", "goto_line", "Go to line", priority=True),
        Binding("alt+z", "toggle_wrap", "Wrap", priority=True),
        Binding("escape", "leave", "Close", priority=True),
    ]
    HELP_EXTRA = [("ctrl+z ctrl+y", "undo / redo an edit"), ("enter (in find)", "next match")]

    def __init__(self, ctx: Context, path: str, *, line: int | None = None) -> None:
        super().__init__(ctx)
        self.path = path
        self.start_line = line
        self.buffer: EditBuffer | None = None
        self.base_hash: str | None = None
        self.saved_text = ""
        self.disk_changed = False
        self._status_message = ""
        self._shown_dirty = False

    @property
    def root(self) -> Path:
        """The folder the field's pages are in."""
        field = self.session.field
        return field.root if field is not None else self.session.root

    @property
    def abspath(self) -> Path:
        return Path(self.root, *self.path.split("/"))

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="editor-notice")
        area = PageTextArea(
            "",
            soft_wrap=self.ctx.settings.soft_wrap,
            show_line_numbers=True,
            tab_behavior="indent",
            id="editor",
        )
        if "markdown" in area.available_languages:
            area.language = "markdown"
        yield area
        yield Input(placeholder="find in the page (enter: next match, escape: back to the text)", id="editor-find")
        yield Static(id="editor-status")
        yield MemtuiFooter()

    def on_mount(self) -> None:
        self.title = f"Edit: {one_line(self.path)}"
        self.ctx.events.subscribe(self, self._on_event)
        self.query_one("#editor-find").display = False
        if not self.load():
            return
        if self.start_line:
            self.go_to_line(self.start_line)
            self.call_after_refresh(self.go_to_line, self.start_line)  # centred once the editor has its size
        self.query_one(TextArea).focus()
        unsaved.announce_kept(self, self.root, self.path)  # only copies memtui recorded are the reviewer's

    # ------------------------------------------------------------------ state
    @property
    def area(self) -> TextArea:
        return self.query_one("#editor", TextArea)

    @property
    def dirty(self) -> bool:
        return self.buffer is not None and self.area.text != self.saved_text

    def unsaved_bytes(self) -> bytes | None:
        """The page as the editor holds it, when that differs from what was saved."""
        return to_bytes(self.buffer, self.area.text) if self.buffer is not None and self.dirty else None

    def load(self, data: bytes | None = None) -> bool:
        """Load the page from disk (or ``data``); False when it cannot be edited."""
        if data is None:
            result = read_bytes(self.abspath)
            if result is None:
                safe.notify(self, f"{self.path} no longer exists", severity="error")
                self.app.pop_screen()
                return False
            data = result[0]
        try:
            self.buffer = open_buffer(data)
        except MemtuiError as exc:
            safe.notify(self, f"{exc.message}: {exc.hint}", title="cannot edit", severity="error", timeout=10)
            self.app.pop_screen()
            return False
        self.base_hash = sha256_bytes(data)
        self.disk_changed = False
        location = self.area.cursor_location
        self.area.load_text(self.buffer.text)
        self.saved_text = self.area.text
        row = min(location[0], self.area.document.line_count - 1)
        self.area.cursor_location = (row, 0)
        self._update_notice()
        self._update_status()
        return True

    def _update_notice(self) -> None:
        notice = self.query_one("#editor-notice", Static)
        text = Text()
        if self.disk_changed:
            text.append(f"▲ {_disk_notice(self.abspath)}\n", style="bold")
        if self.buffer and self.buffer.hidden_count:
            positions = hidden_positions(self.buffer, self.area.text)[:6]
            where = ", ".join(f"L{line}:{col} {what}" for line, col, what in positions)
            text.append(
                f"▲ {plural(self.buffer.hidden_count, 'hidden or control character')} shown as single symbols "
                f"(␛ and similar); deleting a symbol deletes the character. {where}",
            )
        text.rstrip()
        notice.update(text)
        notice.display = bool(text.plain)

    def _update_status(self, message: str | None = None, *, dirty: bool | None = None) -> None:
        """``dirty``: known already (a cursor move leaves it as it was; comparing the whole
        text on each move cost 5-10 ms on a 50,000-line page)."""
        if message is not None:
            self._status_message = message
        self._shown_dirty = dirty = self.dirty if dirty is None else dirty
        row, column = self.area.cursor_location
        status = Text(f" L{row + 1}:{column + 1}")
        if self._status_message:
            status.append(f"  {self._status_message}", style="bold")
        status.append("  ● modified" if dirty else "  ✓ saved", style="bold" if dirty else "dim")
        status.append(f"  wrap {'on' if self.area.soft_wrap else 'off'}", style="dim")
        if self.buffer is not None:
            ending = "CRLF" if self.buffer.newline == "\r\n" else "LF"
            status.append(f"  {ending}{'  BOM' if self.buffer.bom else ''}  UTF-8", style="dim")
        # One line of a fixed size: each cursor move repaints it, not a layout of the screen
        # (a layout draws every widget again: 20 ms a keystroke).
        self.query_one("#editor-status", Static).update(status, layout=False)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self._update_status("")

    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        self._update_status(dirty=self._shown_dirty)

    def _on_event(self, event: AppEvent) -> None:
        if not isinstance(event, PagesChanged) or not event.touches(self.path):
            return
        result = read_bytes(self.abspath)
        if result is not None and sha256_bytes(result[0]) == self.base_hash:
            return  # our own save, or a touch
        if not self.dirty and result is not None:
            self.load(result[0])
            safe.notify(self, f"{self.path} changed on disk; reloaded (you had no unsaved edits)", timeout=4)
            return
        self.disk_changed = True
        self._update_notice()
        safe.notify(
            self,
            f"{one_line(self.path)}: {_disk_notice(self.abspath)}; your edits are kept",
            severity="warning",
            timeout=6,
        )

    # ------------------------------------------------------------------ helpers
    def _replace_lines(self, start_row: int, end_row: int, lines: list[str]) -> None:
        """Replace rows [start_row, end_row] with ``lines`` as one undoable edit."""
        document = self.area.document
        end_col = len(document.get_line(end_row))
        self.area.replace("\n".join(lines), (start_row, 0), (end_row, end_col))

    def go_to_line(self, line: int) -> None:
        """Put the cursor at the start of file line ``line`` (1-based), centred on screen."""
        row = max(0, min(line - 1, self.area.document.line_count - 1))
        self.area.cursor_location = (row, 0)
        self.area.scroll_cursor_visible(center=True, animate=False)

    def _apply_text(self, new_text: str) -> None:
        """Replace the editor text with ``new_text`` as one undoable edit of the lines that differ."""
        text = self.area.text
        old_lines, new_lines = text.split("\n"), new_text.split("\n")
        if old_lines == new_lines:
            return
        first = next(
            (i for i, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b), min(len(old_lines), len(new_lines))
        )
        tail = 0
        while tail < min(len(old_lines), len(new_lines)) - first and old_lines[-1 - tail] == new_lines[-1 - tail]:
            tail += 1
        old_end = len(old_lines) - tail - 1
        replacement = new_lines[first : len(new_lines) - tail]
        if old_end < first:  # pure insertion before row `first`
            self.area.insert("\n".join(replacement) + "\n", (first, 0))
        else:
            self._replace_lines(first, old_end, replacement)

    def action_find(self) -> None:
        box = self.query_one("#editor-find", Input)
        if box.display and box.has_focus:
            self._find_next(box.value, skip_current=True)
            return
        box.display = True
        selected = self.area.selected_text
        if selected and "\n" not in selected:
            box.value = selected
        box.focus()

    def _close_find(self) -> None:
        box = self.query_one("#editor-find", Input)
        box.display = False
        self.area.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "editor-find" and event.value:
            self._find_next(event.value, skip_current=False)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "editor-find":
            event.stop()
            self._find_next(event.value, skip_current=True)

    def _find_next(self, query: str, *, skip_current: bool) -> bool:
        """Select the next match of ``query`` (ignoring case) from the cursor, wrapping around."""
        if not query:
            return False
        text = self.area.text
        folded, needle = text.lower(), query.lower()
        if len(folded) != len(text) or len(needle) != len(query):
            folded, needle = text, query  # a case mapping changed the length: match exactly
        # TextArea declares a DocumentBase; it always holds a Document (syntax-aware or plain).
        document = cast(Document, self.area.document)
        selection = self.area.selection
        start = document.get_index_from_location(max(selection) if skip_current else min(selection))
        found = folded.find(needle, start)
        if found < 0:
            found = folded.find(needle)
        if found < 0:
            self._update_status(f"no match for {one_line(query, 40)}")
            return False
        begin = document.get_location_from_index(found)
        self.area.selection = Selection(begin, document.get_location_from_index(found + len(needle)))
        self.area.scroll_cursor_visible(center=True, animate=False)
        self._update_status(f"match at L{begin[0] + 1}")
        return True

    def action_goto_line(self) -> None:
        self._ask_line()

    @work(exclusive=True, group="editor-dialog", description="_ask_line")
    async def _ask_line(self) -> None:
        count = self.area.document.line_count
        answer = await self.app.push_screen_wait(
            TextDialog("Go to line", f"Line number (1-{count}):", value=str(self.area.cursor_location[0] + 1))
        )
        if not answer:
            return
        try:
            number = int(answer)
        except ValueError:
            self.notify("write a line number", severity="warning")
            return
        self.go_to_line(number)

    def action_tag_line(self) -> None:
        self._ask_tag()

    @work(exclusive=True, group="editor-dialog", description="_ask_tag")
    async def _ask_tag(self) -> None:
        row = self.area.cursor_location[0]
        line = self.area.document.get_line(row)
        if not line.strip():
            self.notify("the line is empty", severity="warning")
            return
        choice = await self.app.push_screen_wait(
            ChoiceDialog(
                "Source tag for this line",
                Text(one_line(line, 200)),
                [(tag, f"[{tag}]") for tag in TAGS] + [("cancel", "Cancel")],
            )
        )
        if choice in TAGS:
            self._replace_lines(row, row, [set_line_tag(line, choice)])
            self.area.cursor_location = (row, len(self.area.document.get_line(row)))

    def action_supersede_line(self) -> None:
        row = self.area.cursor_location[0]
        line = self.area.document.get_line(row)
        result = supersede_line(line, _dt.date.today().isoformat())
        if result is None:
            self.notify("nothing to supersede on this line (blank, or already struck through)", severity="warning")
            return
        struck, prefix = result
        self._replace_lines(row, row, [struck, prefix])
        self.area.cursor_location = (row + 1, len(prefix))

    def action_mark_reviewed(self) -> None:
        text = self.area.text
        now = _dt.datetime.now(_dt.UTC).replace(microsecond=0)
        try:
            new_text = frontmatter.set_keys(
                text,
                {"reviewed": True, "reviewed_by": ledger.reviewer_name(root=self.root), "reviewed_at": now},
            )
        except MemtuiError as exc:
            safe.notify(self, f"{exc.message} ({exc.hint})", severity="error")
            return
        self._apply_text(new_text)
        self.notify("reviewed: true set in the frontmatter (save to keep it)", timeout=3)

    def action_toggle_wrap(self) -> None:
        self.area.soft_wrap = not self.area.soft_wrap
        self.ctx.settings.soft_wrap = self.area.soft_wrap
        self.ctx.settings.save()
        self._update_status()

    # ------------------------------------------------------------------ save
    def action_save(self) -> None:
        self.save()

    def _validate(self, data: bytes) -> list[str]:
        """Problems the edit introduces: unparseable frontmatter, newly broken checks."""
        problems: list[str] = []
        parsed = parse_bytes(self.path, data)
        fm = parsed.frontmatter
        if fm.error:
            problems.append(f"✖ frontmatter line {fm.error_line}: {fm.error}")
        field = self.session.field
        assert field is not None  # the app edits a page of a loaded field
        assert self.buffer is not None  # save() returns first without one
        before = Counter(
            (f.rule, f.message)
            for f in page_findings(
                field, info_from_bytes(self.path, self.buffer.original, len(self.buffer.original), 0)
            )
        )
        after = page_findings(field, info_from_bytes(self.path, data, len(data), 0))
        for finding in after:
            key = (finding.rule, finding.message)
            if before[key] > 0:
                before[key] -= 1
                continue
            if finding.rule in ("yaml-invalid", "frontmatter-unclosed", "frontmatter-not-mapping"):
                continue  # already reported above
            where = f" line {finding.line}" if finding.line else ""
            problems.append(f"▲ {finding.rule}{where}: {finding.message}")
        return problems

    @work(exclusive=True, group="editor-save", description="save")
    async def save(self) -> bool:
        """Validate, offer to set ``updated:``, merge with changes on disk, write. True when written."""
        if self.buffer is None:
            return False
        if merge3.has_markers(self.area.text):
            choice = await self.app.push_screen_wait(
                ChoiceDialog(
                    "Merge markers are still in the page",
                    Text(
                        "Lines like <<<<<<< mine and >>>>>>> theirs mark places both sides changed. "
                        "Keep one side (or both) and delete the marker lines, then save."
                    ),
                    [("fix", "Keep editing"), ("save", "Save with the markers")],
                    variant_of={"fix": "primary"},
                )
            )
            if choice != "save":
                return False
        if not await self._offer_updated():
            return False
        data = to_bytes(self.buffer, self.area.text)
        problems = self._validate(data)
        if problems:
            body = Text("\n".join(one_line(p, 300) for p in problems))
            choice = await self.app.push_screen_wait(
                ChoiceDialog(
                    "This edit has problems",
                    body,
                    [("fix", "Keep editing"), ("save", "Save anyway")],
                    variant_of={"fix": "primary"},
                )
            )
            if choice != "save":
                return False
        expected = self.base_hash
        result = read_bytes(self.abspath)
        merged_from_disk = False
        if result is None:
            choice = await self.app.push_screen_wait(
                ChoiceDialog(
                    "The page was deleted on disk",
                    Text(
                        f"{one_line(self.path)} no longer exists. Recreate it with your version, or discard your edits?"
                    ),
                    [("recreate", "Recreate"), ("discard", "Discard my edits"), ("cancel", "Cancel")],
                    variant_of={"recreate": "primary", "discard": "error"},
                )
            )
            if choice == "discard":
                self.saved_text = self.area.text
                self.app.pop_screen()
                return False
            if choice != "recreate":
                return False
            expected = MUST_NOT_EXIST
        elif sha256_bytes(result[0]) != self.base_hash:
            disk = result[0]
            merged = merge3.merge3(self.buffer.original, data, disk)
            if (clean := merged.merged) is not None:  # no conflict
                data = clean
            else:
                kept = self._keep_mine(data)
                choice = await self.app.push_screen_wait(MergeScreen(self.path, merged, kept, self.ctx.palette()))
                if choice == "edit":
                    self._load_merge(disk, merged.resolve())
                    safe.notify(
                        self,
                        "both versions are in the editor between <<<<<<< and >>>>>>> lines: keep what is right, delete the markers, save",
                        title="finish the merge",
                        timeout=10,
                    )
                    return False
                if choice not in (merge3.MINE, merge3.THEIRS):
                    return False
                data = merged.resolve(choice)
            if _marked_reviewed(data):
                # What the reviewer sees is what gets saved and signed: a review mark is never
                # written over lines they have not seen. Show what came in, put the merge in the
                # editor (the disk's version its base), write nothing: the next save signs it.
                await self.app.push_screen_wait(
                    ChoiceDialog(
                        "The page changed on disk: read the changes before you sign it",
                        _incoming(self.buffer.original, disk),
                        [("show", "Show the merge in the editor")],
                        variant_of={"show": "primary"},
                    )
                )
                self._load_merge(disk, data)
                safe.notify(
                    self,
                    f"{self.path} is marked reviewed: the changes made on disk are now in the editor, nothing "
                    "was saved; read the page, then save to sign it",
                    title="not saved yet",
                    timeout=10,
                )
                return False
            expected = sha256_bytes(disk)  # what we merged with; a newer change still stops us
            merged_from_disk = True
        field = self.session.field
        assert field is not None  # the app edits a page of a loaded field
        try:
            write_page(self.root, self.path, data, expected_hash=expected, readonly=field.readonly)
        except MemtuiError as exc:
            safe.notify(self, f"{exc.message} ({exc.hint})", title="not saved", severity="error", timeout=10)
            return False
        if merged_from_disk:
            self.load(data)
            safe.notify(self, f"saved {self.path}, merged with the changes made on disk meanwhile", timeout=6)
        else:
            self.buffer = open_buffer(data)
            self.base_hash = sha256_bytes(data)
            self.saved_text = self.area.text
            self.disk_changed = False
            safe.notify(self, f"saved {self.path}", timeout=3)
        self._update_notice()
        self._update_status()
        self.session.reload_paths([self.path])
        await self._maybe_commit(self.path)
        return True

    def _keep_mine(self, data: bytes) -> str | None:
        """Your whole version, kept under .memtui/conflicts/ (never as a page)."""
        try:
            return unsaved.keep_copy(self.root, self.path, data, folder=merge3.CONFLICTS_DIR)
        except (OSError, MemtuiError) as exc:
            safe.notify(self, f"could not keep a copy of your version: {exc}", severity="error", timeout=10)
            return None

    def _load_merge(self, disk: bytes, marked: bytes) -> None:
        """The disk version becomes the base; the editor holds the marked merge, unsaved."""
        self.buffer = open_buffer(disk)
        self.base_hash = sha256_bytes(disk)
        self.saved_text = self.buffer.text
        self.disk_changed = False
        self._apply_text(open_buffer(marked).text)
        self._update_notice()
        self._update_status()

    async def _offer_updated(self) -> bool:
        """Set ``updated:`` to now when the page has it and the edit did not touch it (setting: ask/always/never).

        False: the human cancelled the save.
        """
        mode = self.ctx.settings.bump_updated
        if mode == "never" or self.buffer is None or self.area.text == self.buffer.text:
            return True
        fm_now = frontmatter.parse(self.area.text)
        fm_then = frontmatter.parse(self.buffer.text)
        if fm_now.error or "updated" not in fm_now.data or fm_now.data.get("updated") != fm_then.data.get("updated"):
            return True
        old = fm_now.data.get("updated")
        value = _updated_value(old)
        shown = frontmatter.normalise(value)
        if mode != "always":
            choice = await self.app.push_screen_wait(
                ChoiceDialog(
                    "Set updated: too?",
                    Text(
                        f"This page says updated: {one_line(str(frontmatter.normalise(old)))}. "
                        f"Set it to {shown} with this save?\n\n"
                        "Always and Never are remembered (change it again from the command palette)."
                    ),
                    [("yes", f"Set updated: {shown}"), ("no", "Leave it"), ("always", "Always"), ("never", "Never")],
                    variant_of={"yes": "primary"},
                )
            )
            if choice is None:
                return False
            if choice in ("always", "never"):
                self.ctx.settings.bump_updated = choice
                self.ctx.settings.save()
            if choice in ("no", "never"):
                return True
        try:
            self._apply_text(frontmatter.set_keys(self.area.text, {"updated": value}))
        except MemtuiError as exc:
            safe.notify(self, f"updated: not set: {exc.message}", severity="warning")
        return True

    async def _maybe_commit(self, path: str) -> None:
        root = self.root
        if not self.ctx.settings.commit_after_save or not gitrepo.is_field_repo(root):
            return
        message = await self.app.push_screen_wait(
            TextDialog("Commit this save", "Commit message (Escape: do not commit)", value=f"memtui: edit {path}")
        )
        if not message:
            return
        try:
            commit = gitrepo.commit_paths(root, [path], message)
        except MemtuiError as exc:
            safe.notify(self, f"git commit failed: {exc.message}", severity="error", timeout=10)
            return
        if commit:
            safe.notify(self, f"committed {commit[:10]}", timeout=3)

    # ------------------------------------------------------------------ leave
    def action_leave(self) -> None:
        if self.query_one("#editor-find", Input).has_focus:
            self._close_find()
            return
        self.leave()

    @work(exclusive=True, group="editor-dialog", description="leave")
    async def leave(self) -> None:
        if self.dirty:
            choice = await self.app.push_screen_wait(
                ChoiceDialog(
                    "Unsaved edits",
                    Text(f"{one_line(self.path)} has edits that are not saved."),
                    [("stay", "Keep editing"), ("save", "Save"), ("discard", "Discard")],
                    variant_of={"save": "primary", "discard": "error"},
                )
            )
            if choice == "save":
                worker = self.save()
                saved = await worker.wait()
                if not saved:
                    return
            elif choice != "discard":
                return
        self.app.pop_screen()


def _updated_value(old):
    """Now, in the form the page already uses: a date stays a date, a timestamp a UTC timestamp."""
    if isinstance(old, _dt.date) and not isinstance(old, _dt.datetime):
        return _dt.date.today()
    if isinstance(old, str) and len(old.strip()) == 10:
        return _dt.date.today()
    return _dt.datetime.now(_dt.UTC).replace(microsecond=0)
