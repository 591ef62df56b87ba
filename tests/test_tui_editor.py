"""Inline editing: byte-exact saves, conflicts with writes from other processes, helpers."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from memtui.tui.screens.dialogs import ChoiceDialog
from memtui.tui.screens.editor import EditorScreen, set_line_tag, supersede_line
from tests.helpers import write_page
from tests.helpers_tui import SIZE, make_app, wait_for_screen, wait_ready

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
    expected = PAGE.replace(
        "- Pricing is per tracked shipment\r\n", "- Pricing is per tracked shipment, $4 each [stated]\r\n"
    )
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


async def test_concurrent_write_on_another_line_merges(field: Path) -> None:
    """Someone else fixes line 10 while I fix line 12: saving keeps both, no question asked."""
    target = field / "projects/harbor.md"
    theirs = PAGE.replace("every week", "every day").encode()
    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot)
        replace_line(editor, 11, "- Pricing is per tracked shipment [stated]")
        target.write_bytes(theirs)  # another process writes while we edit
        await pilot.press("ctrl+s")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen is editor
        expected = theirs.replace(
            b"- Pricing is per tracked shipment\r\n", b"- Pricing is per tracked shipment [stated]\r\n"
        )
        assert target.read_bytes() == expected  # CRLF kept, both edits in
        assert not editor.dirty and "every day" in editor.area.text
    assert sorted(p.name for p in (field / "projects").iterdir()) == ["harbor.md"]


OVERLAP_MINE = "- Pricing is per tracked shipment [stated]"
OVERLAP_THEIRS = PAGE.replace(
    "- Pricing is per tracked shipment\r\n", "- Pricing is per container [observed]\r\n"
).encode()


async def _overlap(field: Path, pilot, app, target: Path):
    from memtui.tui.screens.editor import MergeScreen

    editor = await open_editor(app, pilot)
    replace_line(editor, 11, OVERLAP_MINE)
    target.write_bytes(OVERLAP_THEIRS)
    await pilot.press("ctrl+s")
    assert await wait_for_screen(app, pilot, MergeScreen)
    return editor


async def test_overlapping_edits_show_three_ways_and_the_default_keeps_mine(field: Path) -> None:
    target = field / "projects/harbor.md"
    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        editor = await _overlap(field, pilot, app, target)
        merge = app.screen
        assert merge.focused.id == "edit"  # the focused choice never drops my edits
        (conflict,) = merge.result.conflicts
        assert conflict.base == ("- Pricing is per tracked shipment\r\n",)
        assert conflict.mine[0].startswith(OVERLAP_MINE) and "per container" in conflict.theirs[0]
        await pilot.press("enter")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.screen is editor
        text = editor.area.text
        assert OVERLAP_MINE in text and "per container" in text and "<<<<<<< mine" in text
        assert editor.dirty
        assert target.read_bytes() == OVERLAP_THEIRS  # nothing written yet
        # saving with the markers still there asks first
        await pilot.press("ctrl+s")
        await choose(pilot, "fix")
        assert target.read_bytes() == OVERLAP_THEIRS
    kept = list((field / ".memtui" / "conflicts" / "projects").glob("harbor.*.md"))
    assert len(kept) == 1 and OVERLAP_MINE.encode() in kept[0].read_bytes()
    assert sorted(p.name for p in (field / "projects").iterdir()) == ["harbor.md"]  # never a second page


@pytest.mark.parametrize("side", ["mine", "theirs"])
async def test_overlapping_edits_resolved_for_one_side(field: Path, side: str) -> None:
    target = field / "projects/harbor.md"
    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        editor = await _overlap(field, pilot, app, target)
        await pilot.click(f"#{side}")
        await app.workers.wait_for_complete()
        await pilot.pause()
        data = target.read_bytes().decode()
        if side == "mine":
            assert OVERLAP_MINE + "\r\n" in data and "per container" not in data
        else:
            assert data == OVERLAP_THEIRS.decode()
        assert not editor.dirty


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
        assert app.screen.focused.id == "choice-stay"  # Enter keeps editing
        await choose(pilot, "stay")
        assert app.screen is editor
        await pilot.press("escape")
        await choose(pilot, "discard")
        assert not isinstance(app.screen, EditorScreen)
    assert target.read_bytes() == before


async def test_ctrl_q_with_unsaved_edits_asks_and_can_save(field: Path) -> None:
    target = field / "projects/harbor.md"
    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot)
        replace_line(editor, 11, "- changed [stated]")
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceDialog) and app.screen.focused.id == "choice-stay"
        await pilot.press("enter")  # the default keeps editing
        await pilot.pause()
        assert app.is_running and app.screen is editor and editor.dirty
        await pilot.press("ctrl+q")
        await choose(pilot, "save")
        await app.workers.wait_for_complete()
        await pilot.pause()
    assert b"- changed [stated]" in target.read_bytes()
    assert app.return_code == 0


async def test_ctrl_q_without_edits_quits_at_once(field: Path) -> None:
    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        await open_editor(app, pilot)
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app.is_running


async def test_hang_up_keeps_unsaved_edits_under_memtui(field: Path) -> None:
    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot)
        replace_line(editor, 11, "- half-written thought [stated]")
        app._hang_up()  # what closing the terminal window (SIGHUP) runs
        await pilot.pause()
    kept = list((field / ".memtui" / "unsaved" / "projects").glob("harbor.*.md"))
    assert len(kept) == 1 and b"- half-written thought [stated]\r\n" in kept[0].read_bytes()
    # the next editor on that page says where they are
    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        await open_editor(app, pilot)
        messages = [n.message for n in app._notifications]
        assert any(".memtui/unsaved/projects/harbor." in m for m in messages)


async def test_editor_opens_at_the_line_being_read_and_finds_and_goes_to_lines(field: Path) -> None:
    lines = "".join(f"- fact number {n} [stated]\n" for n in range(1, 80))
    write_page(field, "notes/long.md", "---\ntitle: Long\n---\n" + lines + "- Owner: Dana Ruiz [observed]\n")
    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        app.open_page("notes/long.md")
        await pilot.pause()
        page = app.screen
        page.query_one("#page-body").scroll_to(y=30, animate=False)
        await pilot.pause()
        line = page.reading_line()
        assert line == 34  # body line 1 is file line 4
        await pilot.press("e")
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, EditorScreen)
        assert editor.area.cursor_location == (33, 0)
        await pilot.press("ctrl+f")
        await pilot.press(*"dana")
        await pilot.pause()
        assert editor.area.selected_text == "Dana"
        await pilot.press("enter")  # next match wraps to the same one
        await pilot.pause()
        assert editor.area.selected_text == "Dana"
        await pilot.press("escape")  # closes the find box, not the editor
        await pilot.pause()
        assert app.screen is editor and editor.area.has_focus
        await pilot.press("ctrl+g")
        await pilot.pause()
        await pilot.press("ctrl+u", *"3", "enter")
        await pilot.pause()
        assert editor.area.cursor_location == (2, 0)


async def test_save_offers_to_set_updated(tmp_path: Path) -> None:
    root = tmp_path / "field"
    target = write_page(root, "notes/a.md", "---\ntitle: A\nupdated: 2026-01-01\n---\n- one [stated]\n")
    import datetime as _dt

    today = _dt.date.today().isoformat()
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot, "notes/a.md")
        replace_line(editor, 4, "- one, revised [stated]")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceDialog) and app.screen.focused.id == "choice-yes"
        await choose(pilot, "yes")
        await app.workers.wait_for_complete()
        assert f"updated: {today}\n".encode() in target.read_bytes()
        # "never" is remembered and no longer asks
        replace_line(editor, 4, "- one, revised twice [stated]")
        await pilot.press("ctrl+s")
        await choose(pilot, "never")
        await app.workers.wait_for_complete()
        assert app.settings.bump_updated == "never"
        replace_line(editor, 4, "- one, thrice [stated]")
        await pilot.press("ctrl+s")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not isinstance(app.screen, ChoiceDialog)
        assert b"thrice" in target.read_bytes()


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


async def test_a_long_page_is_edited_without_joining_its_text_or_laying_out_at_each_key(tmp_path: Path) -> None:
    """Textual's TextArea read the whole text for each line it drew (0.6 ms a line at 50,000
    lines), and the status line laid the screen out at each cursor move: a key took 55-200 ms
    on a 50,000-line page. The text is joined once per edit; a cursor move repaints."""
    from textual.screen import Screen

    root = tmp_path / "field"
    write_page(
        root, "notes/long.md", "# Long\n\n" + "".join(f"- line {n} of a long log [observed]\n" for n in range(3000))
    )
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        editor = await open_editor(app, pilot, "notes/long.md")
        area = editor.area
        await pilot.pause()
        assert area.text is area.text  # kept, not joined at each reading
        layouts: list[int] = []
        original = Screen._refresh_layout

        def counting(self, *args, **kwargs):
            layouts.append(1)
            return original(self, *args, **kwargs)

        Screen._refresh_layout = counting
        try:
            for key in ("down", "down", "end", "down"):
                await pilot.press(key)
                await pilot.pause()
        finally:
            Screen._refresh_layout = original
        assert area.cursor_location == (3, len(area.document.get_line(3)))
        assert "L4:" in str(editor.query_one("#editor-status").render())
        assert len(layouts) <= 1  # a scroll may reflow the screen once, not each key
        await pilot.press(*"XYZ")
        await pilot.pause()
        assert area.text.split("\n")[3].endswith("XYZ") and area.document.get_line(3).endswith("XYZ")
        assert editor.dirty and area.text.count("XYZ") == 1
        await pilot.press("backspace", "backspace", "backspace")
        await pilot.pause()
        assert not editor.dirty
