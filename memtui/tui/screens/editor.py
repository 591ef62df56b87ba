"""Inline editing that never loses a byte, while agents keep writing to the same folder.

- The page is edited as text (frontmatter included); lines the human does not
  touch keep their exact bytes and line endings (``memtui.store.edit_buffer``).
- Save validates first (frontmatter that no longer parses, checks the edit newly
  breaks), then writes through the safe writer, bound to the content hash the
  editor loaded. If the file changed on disk meanwhile, the human chooses:
  reload theirs, keep mine, see the diff, or save mine as a copy beside it. If it
  was deleted: recreate or discard.
- Helpers for auditing: tag the current line, strike it through as superseded
  with today's date, set ``reviewed: true``.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections import Counter
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, Footer, Header, Static, TextArea

from memtui.errors import MemtuiError
from memtui.field import frontmatter
from memtui.field.body import LIST_MARKER_RE, TAG_RE
from memtui.field.checks import page_findings
from memtui.field.page import info_from_bytes, parse_bytes
from memtui.review import diffs, ledger
from memtui.store import gitrepo
from memtui.store.edit_buffer import EditBuffer, hidden_positions, open_buffer, to_bytes
from memtui.store.files import read_bytes, sha256_bytes
from memtui.store.safe_write import MUST_NOT_EXIST, write_page
from memtui.textsafety import one_line
from memtui.tui import safe
from memtui.tui.events import FieldEvent
from memtui.tui.screens.dialogs import ChoiceDialog, TextDialog
from memtui.tui.widgets.diff_view import side_by_side, unified

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
    prefix = marker_match.group(0) if marker_match else re.match(r"[ \t]*", line).group(0)
    content = line[len(prefix) :].rstrip()
    return f"{prefix}~~{content}~~ superseded {today}", prefix


class DiffScreen(ModalScreen[None]):
    """The difference between the disk version and the editor's version."""

    BINDINGS = [Binding("escape,q", "close", "Close"), Binding("t", "toggle", "Unified/side by side")]

    def __init__(self, title: str, diff: diffs.PageDiff, colours: dict[str, str]) -> None:
        super().__init__(classes="dialog-screen")
        self.diff_title = title
        self.diff = diff
        self.colours = colours
        self.side = False

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide-dialog"):
            yield Static(Text(self.diff_title, style="bold"), classes="dialog-title")
            with VerticalScroll(classes="dialog-body tall"):
                yield Static(unified(self.diff, self.colours), id="diff-body")
            yield Button("Close", id="close", variant="primary")

    def action_toggle(self) -> None:
        self.side = not self.side
        body = side_by_side(self.diff, self.colours) if self.side else unified(self.diff, self.colours)
        self.query_one("#diff-body", Static).update(body)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)


class EditorScreen(Screen):
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("ctrl+t", "tag_line", "Tag line", priority=True),
        Binding("ctrl+o", "supersede_line", "Supersede line", priority=True),
        Binding("ctrl+r", "mark_reviewed", "Reviewed", priority=True),
        Binding("alt+z", "toggle_wrap", "Wrap", priority=True),
        Binding("escape", "leave", "Close", priority=True),
    ]

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        self.buffer: EditBuffer | None = None
        self.base_hash: str | None = None
        self.saved_text = ""
        self.disk_changed = False

    @property
    def abspath(self) -> Path:
        return Path(self.app.field.root, *self.path.split("/"))

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="editor-notice")
        area = TextArea(
            "",
            soft_wrap=self.app.settings.soft_wrap,
            show_line_numbers=True,
            tab_behavior="indent",
            id="editor",
        )
        if "markdown" in area.available_languages:
            area.language = "markdown"
        yield area
        yield Static(id="editor-status")
        yield Footer()

    def on_mount(self) -> None:
        self.title = f"Edit: {one_line(self.path)}"
        self.app.field_signal.subscribe(self, self._on_field)
        if not self.load():
            return
        self.query_one(TextArea).focus()

    # ------------------------------------------------------------------ state
    @property
    def area(self) -> TextArea:
        return self.query_one("#editor", TextArea)

    @property
    def dirty(self) -> bool:
        return self.buffer is not None and self.area.text != self.saved_text

    def load(self, data: bytes | None = None) -> bool:
        """Load the page from disk (or ``data``); False when it cannot be edited."""
        if data is None:
            result = read_bytes(self.abspath)
            if result is None:
                safe.notify(self.app, f"{self.path} no longer exists", severity="error")
                self.app.pop_screen()
                return False
            data = result[0]
        try:
            self.buffer = open_buffer(data)
        except MemtuiError as exc:
            safe.notify(self.app, f"{exc.message}: {exc.hint}", title="cannot edit", severity="error", timeout=10)
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
            text.append("▲ the file changed on disk since you opened it; saving will ask what to do\n", style="bold")
        if self.buffer and self.buffer.hidden_count:
            positions = hidden_positions(self.buffer, self.area.text)[:6]
            where = ", ".join(f"L{line}:{col} {what}" for line, col, what in positions)
            text.append(
                f"▲ {self.buffer.hidden_count} hidden or control character(s) are shown as single symbols "
                f"(␛ and similar); deleting a symbol deletes the character. {where}",
            )
        text.rstrip()
        notice.update(text)
        notice.display = bool(text.plain)

    def _update_status(self) -> None:
        row, column = self.area.cursor_location
        status = Text(f" L{row + 1}:{column + 1}")
        status.append("  ● modified" if self.dirty else "  ✓ saved", style="bold" if self.dirty else "dim")
        status.append(f"  wrap {'on' if self.area.soft_wrap else 'off'}", style="dim")
        if self.buffer is not None:
            ending = "CRLF" if self.buffer.newline == "\r\n" else "LF"
            status.append(f"  {ending}{'  BOM' if self.buffer.bom else ''}  UTF-8", style="dim")
        self.query_one("#editor-status", Static).update(status)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        self._update_status()

    def on_text_area_selection_changed(self, event: TextArea.SelectionChanged) -> None:
        self._update_status()

    def _on_field(self, event: FieldEvent) -> None:
        if event.kind != "changed" or (self.path not in event.paths and self.path not in event.removed):
            return
        result = read_bytes(self.abspath)
        if result is not None and sha256_bytes(result[0]) == self.base_hash:
            return  # our own save, or a touch
        if not self.dirty and result is not None:
            self.load(result[0])
            safe.notify(self.app, f"{self.path} changed on disk; reloaded (you had no unsaved edits)", timeout=4)
            return
        self.disk_changed = True
        self._update_notice()
        what = "was deleted" if result is None else "changed"
        safe.notify(self.app, f"{self.path} {what} on disk; your edits are kept, saving will ask what to do", severity="warning", timeout=6)

    # ------------------------------------------------------------------ helpers
    def _replace_lines(self, start_row: int, end_row: int, lines: list[str]) -> None:
        """Replace rows [start_row, end_row] with ``lines`` as one undoable edit."""
        document = self.area.document
        end_col = len(document.get_line(end_row))
        self.area.replace("\n".join(lines), (start_row, 0), (end_row, end_col))

    def action_tag_line(self) -> None:
        self._ask_tag()

    @work(exclusive=True, group="editor-dialog")
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
        now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
        try:
            new_text = frontmatter.set_keys(
                text,
                {"reviewed": True, "reviewed_by": ledger.reviewer_name(root=self.app.field.root), "reviewed_at": now},
            )
        except MemtuiError as exc:
            safe.notify(self.app, f"{exc.message} ({exc.hint})", severity="error")
            return
        old_lines, new_lines = text.split("\n"), new_text.split("\n")
        first = next((i for i, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b), min(len(old_lines), len(new_lines)))
        tail = 0
        while tail < min(len(old_lines), len(new_lines)) - first and old_lines[-1 - tail] == new_lines[-1 - tail]:
            tail += 1
        old_end = len(old_lines) - tail - 1
        replacement = new_lines[first : len(new_lines) - tail]
        if old_end < first:  # pure insertion before row `first`
            self.area.insert("\n".join(replacement) + "\n", (first, 0))
        else:
            self._replace_lines(first, old_end, replacement)
        self.notify("reviewed: true set in the frontmatter (save to keep it)", timeout=3)

    def action_toggle_wrap(self) -> None:
        self.area.soft_wrap = not self.area.soft_wrap
        self.app.settings.soft_wrap = self.area.soft_wrap
        self.app.settings.save()
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
        field = self.app.field
        before = Counter((f.rule, f.message) for f in page_findings(field, info_from_bytes(self.path, self.buffer.original, len(self.buffer.original), 0)))
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

    @work(exclusive=True, group="editor-save")
    async def save(self) -> bool:
        """Validate, resolve conflicts with the disk, write. Returns True when written."""
        if self.buffer is None:
            return False
        data = to_bytes(self.buffer, self.area.text)
        problems = self._validate(data)
        if problems:
            body = Text("\n".join(one_line(p, 300) for p in problems))
            choice = await self.app.push_screen_wait(
                ChoiceDialog("This edit has problems", body, [("fix", "Keep editing"), ("save", "Save anyway")], variant_of={"fix": "primary"})
            )
            if choice != "save":
                return False
        expected = self.base_hash
        target_path = self.path
        result = read_bytes(self.abspath)
        if result is None:
            choice = await self.app.push_screen_wait(
                ChoiceDialog(
                    "The page was deleted on disk",
                    Text(f"{one_line(self.path)} no longer exists. Recreate it with your version, or discard your edits?"),
                    [("recreate", "Recreate"), ("discard", "Discard my edits"), ("cancel", "Cancel")],
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
            while True:
                choice = await self.app.push_screen_wait(
                    ChoiceDialog(
                        "The page changed on disk",
                        Text(
                            f"{one_line(self.path)} was changed by someone else since you opened it.\n"
                            "Reload theirs (your edits are dropped), keep mine (overwrite theirs), "
                            "look at the difference, or save yours as a copy beside it."
                        ),
                        [("reload", "Reload theirs"), ("mine", "Keep mine"), ("diff", "Show diff"), ("copy", "Save as copy"), ("cancel", "Cancel")],
                    )
                )
                if choice == "diff":
                    diff = diffs.page_diff(self.path, disk, data)
                    await self.app.push_screen_wait(DiffScreen("Disk version (before) → your version (after)", diff, self.app.palette()))
                    continue
                break
            if choice == "reload":
                self.load(disk)
                self.notify("reloaded the disk version", timeout=3)
                return False
            if choice == "mine":
                expected = sha256_bytes(disk)  # overwrite exactly what we showed; a newer change still stops us
            elif choice == "copy":
                target_path = self._copy_path()
                expected = MUST_NOT_EXIST
            else:
                return False
        try:
            write_page(self.app.field.root, target_path, data, expected_hash=expected, readonly=self.app.field.readonly)
        except MemtuiError as exc:
            safe.notify(self.app, f"{exc.message} ({exc.hint})", title="not saved", severity="error", timeout=10)
            return False
        if target_path == self.path:
            self.buffer = open_buffer(data)
            self.base_hash = sha256_bytes(data)
            self.saved_text = self.area.text
            self.disk_changed = False
            safe.notify(self.app, f"saved {self.path}", timeout=3)
        else:
            safe.notify(self.app, f"your version was saved as {target_path}; the page keeps the disk version", timeout=8)
        self._update_notice()
        self._update_status()
        self.app.reload_paths([target_path])
        await self._maybe_commit(target_path)
        return True

    def _copy_path(self) -> str:
        stem, _, _ = self.path.rpartition(".md")
        stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        candidate = f"{stem}.conflict-{stamp}.md"
        number = 2
        while Path(self.app.field.root, *candidate.split("/")).exists():
            candidate = f"{stem}.conflict-{stamp}-{number}.md"
            number += 1
        return candidate

    async def _maybe_commit(self, path: str) -> None:
        root = self.app.field.root
        if not self.app.settings.commit_after_save or not gitrepo.is_field_repo(root):
            return
        message = await self.app.push_screen_wait(
            TextDialog("Commit this save", "Commit message (Escape: do not commit)", value=f"memtui: edit {path}")
        )
        if not message:
            return
        try:
            commit = gitrepo.commit_paths(root, [path], message)
        except MemtuiError as exc:
            safe.notify(self.app, f"git commit failed: {exc.message}", severity="error", timeout=10)
            return
        if commit:
            safe.notify(self.app, f"committed {commit[:10]}", timeout=3)

    # ------------------------------------------------------------------ leave
    def action_leave(self) -> None:
        self.leave()

    @work(exclusive=True, group="editor-dialog")
    async def leave(self) -> None:
        if self.dirty:
            choice = await self.app.push_screen_wait(
                ChoiceDialog(
                    "Unsaved edits",
                    Text(f"{one_line(self.path)} has edits that are not saved."),
                    [("save", "Save"), ("discard", "Discard"), ("stay", "Keep editing")],
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
