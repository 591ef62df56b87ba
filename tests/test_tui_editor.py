"""Inline editing: byte-exact saves, conflicts with writes from other processes, helpers."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from memtui.tui.screens.dialogs import ChoiceDialog
from memtui.tui.screens.editor import (
    DiffScreen,
    EditorScreen,
    set_line_tag,
    supersede_line,
)
from tests.helpers import write_page
from tests.helpers_tui import SIZE, make_app, wait_ready

PAGE = (
    "---\r\n"
    "id: mem_x1\r\n"
    "title: Harbor   # the product\r\n"
    "kind: semantic\r\n"
    "x-agent-priority: 3       # unknown key, kept as is\r\n"
    "sources: [sessions/s1.md]\r\n"
    "---\r\n"
    "# Harbor\r\n"
    "\r\n"
    "- Harbor ships containers to Oakland every week [stated]\r\n"
    "- Owner: Dana Ruiz [observed]\r\n"
    "- Pricing is per tracked shipment\r\n"
)


@pytest.fixture
def field(tmp_path: Path) -> Path:
    root = tmp_path / "field"
    write_page(root, "projects/harbor.md", PAGE)
    write_page(root, "sessions/s1.md", "# session one\n")
    return root


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def open_editor(app, pilot, path: str = "projects/harbor.md") -> EditorScreen:
    await wait_ready(app, pilot)
    app.open_editor(path)
    await pilot.pause()
    assert isinstance(app.screen, EditorScreen)
    return app.screen


def replace_line(editor: EditorScreen, row: int, text: str) -> None:
    editor._replace_lines(row, row, [text])


async def choose(pilot, choice: str) -> None:
    await pilot.pause()
    assert isinstance(pilot.app.screen, ChoiceDialog), pilot.app.screen
    await pilot.click(f"#choice-{choice}")
    await pilot.pause()
    await pilot.pause()


async def test_edit_and_save_changes_only_the_edited_line_crlf(field: Path) -> None:
    app = make_app(field)
    target = field / "projects/harbor.md"
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot)
        replace_line(editor, 11, "- Pricing is per tracked shipment, $4 each [stated]")
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.pause()
        assert not editor.dirty
    expected = PAGE.replace("- Pricing is per tracked shipment\r\n", "- Pricing is per tracked shipment, $4 each [stated]\r\n")
    assert target.read_bytes() == expected.encode()


async def test_untouched_save_is_byte_identical_and_blob_kept(field: Path) -> None:
    app = make_app(field)
    target = field / "projects/harbor.md"
    before = target.read_bytes()
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot)
        replace_line(editor, 9, "- Harbor ships containers to Oakland every Tuesday [stated]")
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.pause()
    blobs = list((field / ".memtui" / "blobs").rglob("*"))
    assert any(p.is_file() and p.read_bytes() == before for p in blobs), "previous version kept"


async def test_tag_and_supersede_helpers(field: Path) -> None:
    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot)
        editor.area.cursor_location = (11, 0)
        await pilot.press("ctrl+t")
        await choose(pilot, "inferred")
        assert editor.area.document.get_line(11) == "- Pricing is per tracked shipment [inferred]"
        editor.area.cursor_location = (10, 3)
        await pilot.press("ctrl+o")
        await pilot.pause()
        struck = editor.area.document.get_line(10)
        assert struck.startswith("- ~~Owner: Dana Ruiz [observed]~~ superseded ")
        assert editor.area.document.get_line(11) == "- "
        assert editor.area.cursor_location == (11, 2)
        await pilot.press(*"Owner: Luis [stated]")
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.pause()
    text = (field / "projects/harbor.md").read_bytes().decode()
    assert "- ~~Owner: Dana Ruiz [observed]~~ superseded " in text
    assert "- Owner: Luis [stated]\r\n" in text
    assert "reviewed: true\r\n" in text
    assert "x-agent-priority: 3       # unknown key, kept as is\r\n" in text
    # The history now reads the inline form: Luis current, Dana superseded.
    from memtui.field.field import Field

    chains = Field.load(field, use_cache=False).history.lookup("projects/harbor.md")
    inline = [c for c in chains if c.form == "inline"][0]
    assert [v.status for v in inline.versions] == ["superseded", "current"]


def test_helper_functions() -> None:
    assert set_line_tag("- a claim", "stated") == "- a claim [stated]"
    assert set_line_tag("- a claim [suggested] (planning)", "stated") == "- a claim [stated] (planning)"
    assert supersede_line("  - Role: engineer [stated]", "2026-11-29") == (
        "  - ~~Role: engineer [stated]~~ superseded 2026-11-29",
        "  - ",
    )
    assert supersede_line("   ", "2026-11-29") is None
    assert supersede_line("- ~~old~~ superseded 2026-01-01", "2026-11-29") is None


async def _concurrent(field: Path, choice: str, check) -> None:
    app = make_app(field)
    target = field / "projects/harbor.md"
    theirs = PAGE.replace("every week", "every day").encode()
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot)
        replace_line(editor, 11, "- Pricing is per tracked shipment [stated]")
        target.write_bytes(theirs)  # another process writes while we edit
        await pilot.press("ctrl+s")
        await pilot.pause()
        if choice == "diff":
            await choose(pilot, "diff")
            assert isinstance(app.screen, DiffScreen)
            rendered = app.screen.query_one("#diff-body").render()
            assert "every day" in str(rendered) or app.screen.diff.removed >= 1
            await pilot.press("escape")
            await pilot.pause()
            await choose(pilot, "cancel")
        else:
            await choose(pilot, choice)
        await pilot.pause()
        check(editor, target, theirs)


async def test_concurrent_write_reload_theirs(field: Path) -> None:
    def check(editor, target, theirs):
        assert target.read_bytes() == theirs
        assert "every day" in editor.area.text and "[stated]" not in editor.area.document.get_line(11)
        assert not editor.dirty

    await _concurrent(field, "reload", check)


async def test_concurrent_write_keep_mine(field: Path) -> None:
    def check(editor, target, theirs):
        data = target.read_bytes().decode()
        assert "- Pricing is per tracked shipment [stated]\r\n" in data
        assert "every week" in data  # mine was based on the old version
        assert not editor.dirty

    await _concurrent(field, "mine", check)


async def test_concurrent_write_show_diff_then_cancel(field: Path) -> None:
    def check(editor, target, theirs):
        assert target.read_bytes() == theirs  # nothing written
        assert editor.dirty

    await _concurrent(field, "diff", check)


async def test_concurrent_write_save_as_copy(field: Path) -> None:
    def check(editor, target, theirs):
        assert target.read_bytes() == theirs
        copies = list((field / "projects").glob("harbor.conflict-*.md"))
        assert len(copies) == 1
        assert "- Pricing is per tracked shipment [stated]\r\n" in copies[0].read_bytes().decode()

    await _concurrent(field, "copy", check)


async def test_external_delete_recreate_and_discard(field: Path) -> None:
    target = field / "projects/harbor.md"
    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot)
        replace_line(editor, 11, "- Pricing is per tracked shipment [stated]")
        target.unlink()
        await pilot.press("ctrl+s")
        await choose(pilot, "recreate")
    assert "- Pricing is per tracked shipment [stated]" in target.read_text()

    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot)
        replace_line(editor, 11, "- something else [stated]")
        target.unlink()
        await pilot.press("ctrl+s")
        await choose(pilot, "discard")
        assert not isinstance(app.screen, EditorScreen)
    assert not target.exists()


async def test_quit_with_unsaved_edits_asks(field: Path) -> None:
    target = field / "projects/harbor.md"
    before = target.read_bytes()
    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot)
        replace_line(editor, 11, "- changed [stated]")
        await pilot.press("escape")
        await choose(pilot, "stay")
        assert app.screen is editor
        await pilot.press("escape")
        await choose(pilot, "discard")
        assert not isinstance(app.screen, EditorScreen)
    assert target.read_bytes() == before


async def test_invalid_frontmatter_is_shown_before_writing(field: Path) -> None:
    target = field / "projects/harbor.md"
    before = target.read_bytes()
    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot)
        replace_line(editor, 2, "title: Harbor: the product: broken")
        await pilot.press("ctrl+s")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ChoiceDialog)
        assert "frontmatter" in dialog.body.plain
        await choose(pilot, "fix")
        assert target.read_bytes() == before
        await pilot.press("ctrl+s")
        await choose(pilot, "save")
    assert b"title: Harbor: the product: broken\r\n" in target.read_bytes()


async def test_undo_redo(field: Path) -> None:
    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot)
        editor.area.cursor_location = (11, 0)
        await pilot.press("ctrl+t")
        await choose(pilot, "suggested")
        assert editor.dirty
        editor.area.focus()
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert not editor.dirty
        await pilot.press("ctrl+y")
        await pilot.pause()
        assert editor.area.document.get_line(11).endswith("[suggested]")


async def test_control_characters_are_placeholders_and_round_trip(tmp_path: Path) -> None:
    root = tmp_path / "field"
    data = b"# Note\n\nstatus \x1b]0;pwned\x07 ok \xe2\x80\xae x\nnext line\n"
    target = write_page(root, "notes/hostile.md", data)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot, "notes/hostile.md")
        assert "\x1b" not in editor.area.text and "\u202e" not in editor.area.text
        assert "\u241b" in editor.area.text  # ␛ shown instead
        replace_line(editor, 3, "next line, edited [observed]")
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.pause()
    assert target.read_bytes() == data.replace(b"next line\n", b"next line, edited [observed]\n")
