"""Live updates: another process writes to the field while memtui is open (real watcher)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from memtui.tui.screens.editor import EditorScreen
from memtui.tui.screens.page import PageScreen
from memtui.tui.widgets.page_table import PageTable
from tests.helpers_tui import (
    SIZE,
    make_app,
    page_list_open,
    rendered_text,
    screen_text,
    wait_ready,
)

WAIT = 10.0  # generous upper bound for a loaded CI machine; the benchmark measures latency


def write_from_another_process(path: Path, text: str) -> None:
    code = "import sys, pathlib; p = pathlib.Path(sys.argv[1]); p.parent.mkdir(parents=True, exist_ok=True); p.write_text(sys.argv[2])"
    subprocess.run([sys.executable, "-c", code, str(path), text], check=True)


async def wait_for(pilot, condition, timeout: float = WAIT) -> bool:
    steps = int(timeout / 0.05)
    for _ in range(steps):
        if condition():
            return True
        await pilot.pause(0.05)
    return condition()


async def test_a_page_written_by_another_process_appears_without_moving_the_cursor(sample_field: Path) -> None:
    app = make_app(sample_field, use_index=True, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot, index=True)
        table = app.screen.query_one(PageTable)
        table.move_to("people/dana-ruiz.md")
        await pilot.pause()
        cursor_key, on_screen = table.cursor_key, table.cursor - table.scroll_y
        write_from_another_process(
            sample_field / "notes/agent-wrote-this.md",
            "---\ntitle: Written live\nkind: semantic\n---\n# Written live\n\n- Agents keep writing here. [observed]\n",
        )
        assert await wait_for(pilot, lambda: "notes/agent-wrote-this.md" in table.keys())
        # The cursor stays on the same page, on the same screen row (a row added
        # above it scrolls the list by one instead of moving the page under the eye).
        assert table.cursor_key == cursor_key and table.cursor - table.scroll_y == on_screen
        messages = [n.message for n in app._notifications]
        assert any("agent-wrote-this" in m for m in messages)
        # The index found it too.
        assert await wait_for(
            pilot,
            lambda: any(h.path == "notes/agent-wrote-this.md" for h in app.session.index.search("agents keep writing")),
        )
        # A deletion disappears from the list.
        (sample_field / "notes/agent-wrote-this.md").unlink()
        assert await wait_for(pilot, lambda: "notes/agent-wrote-this.md" not in table.keys())


async def test_the_open_page_refreshes_when_it_changes_on_disk(sample_field: Path) -> None:
    app = make_app(sample_field, use_index=True, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot, index=True)
        app.open_page("people/dana-ruiz.md")
        await pilot.pause()
        page = app.screen
        assert isinstance(page, PageScreen)
        target = sample_field / "people/dana-ruiz.md"
        write_from_another_process(target, target.read_text() + "\n- Dana now also runs hiring. [stated]\n")
        body = page.query_one("#page-body")
        assert await wait_for(pilot, lambda: "Dana now also runs hiring" in rendered_text(body, width=160))


async def test_the_editor_keeps_unsaved_edits_and_says_the_disk_changed(sample_field: Path) -> None:
    app = make_app(sample_field, use_index=True, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot, index=True)
        app.open_editor("people/dana-ruiz.md")
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, EditorScreen)
        editor._replace_lines(0, 0, ["---"])  # no change in text yet: not dirty
        target = sample_field / "people/dana-ruiz.md"
        write_from_another_process(target, target.read_text() + "\n- First external line. [stated]\n")
        assert await wait_for(pilot, lambda: "First external line" in editor.area.text), "clean editor reloads"
        row = editor.area.document.line_count - 1
        editor._replace_lines(row, row, ["- My unsaved line. [stated]"])
        assert editor.dirty
        write_from_another_process(target, target.read_text() + "\n- Second external line. [stated]\n")
        assert await wait_for(pilot, lambda: editor.disk_changed)
        assert "My unsaved line" in editor.area.text and "Second external line" not in editor.area.text
        notice = rendered_text(editor.query_one("#editor-notice"), width=160)
        assert "changed on disk" in notice


async def test_the_status_line_and_tabs_repaint_without_laying_out_the_screen(sample_field: Path) -> None:
    """While an agent writes, the status line and the tab counts were set several times a
    second, each time laying out the whole screen again (at 10,000 pages about half the
    renders of a write storm): unchanged, nothing is redrawn; changed, only they repaint."""
    from textual.widgets import Static, Tab

    from memtui.tui.page_list import filter_counts
    from memtui.tui.widgets.status_bar import StatusBar

    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        layouts: list[str] = []
        for widget in [app.screen.query_one("#status-text", Static), *app.screen.query(Tab)]:
            original = widget.refresh

            def refresh(*regions, _original=original, _name=widget.id, **kwargs):
                if kwargs.get("layout") or kwargs.get("recompose"):
                    layouts.append(_name)
                return _original(*regions, **kwargs)

            widget.refresh = refresh
        bar = app.screen.query_one(StatusBar)
        shown = rendered_text(app.screen.query_one("#status-text", Static))
        for _ in range(3):
            bar.refresh_status()
            app.screen._set_tab_labels(filter_counts(app.screen.rows))
        await pilot.pause()
        assert layouts == []
        app.session.field.readonly = True  # the line changes: it repaints, still without a layout
        bar.refresh_status()
        await pilot.pause()
        assert "read-only" in rendered_text(app.screen.query_one("#status-text", Static)) != shown
        assert layouts == []
        counts = filter_counts(app.screen.rows)
        tab = app.screen.query_one("#filter-all", Tab)
        app.screen._set_tab_labels({**counts, "all": counts["all"] + 1})  # as wide as before: a repaint
        await pilot.pause()
        assert tab.label_text.endswith(f" {counts['all'] + 1:,}") and f"{counts['all'] + 1:,}" in screen_text(app)
        assert layouts == []
        app.screen._set_tab_labels({**counts, "all": 123_456})  # wider: the bar is laid out again
        await pilot.pause()
        assert tab.label_text.endswith(" 123,456") and "123,456" in screen_text(app)
        assert layouts and set(layouts) == {"filter-all"}


async def test_rows_coming_and_going_move_the_scrollbar_without_laying_out_the_screen(sample_field: Path) -> None:
    """A page list taller than the screen that gains or loses rows (an agent writing) sets its
    height and scrollbar only; a list that starts or stops needing a scrollbar is laid out."""
    async with page_list_open(sample_field) as (app, pilot, table):
        layouts: list[int] = []
        original = table.refresh

        def refresh(*regions, **kwargs):
            if kwargs.get("layout"):
                layouts.append(table.row_count)
            return original(*regions, **kwargs)

        table.refresh = refresh
        rows = [(key, table._cells[key]) for key in table.keys()]
        assert len(rows) > table.scrollable_content_region.height
        cells = rows[0][1]
        table.set_rows([*rows, ("zz/new-page.md", cells)])
        await pilot.pause()
        assert table.virtual_size.height == len(rows) + 2 and layouts == []
        await pilot.press("end")
        await pilot.pause()
        assert table.cursor_key == "zz/new-page.md" and table.scroll_y == table.max_scroll_y > 0
        table.set_rows(rows[:-5])
        await pilot.pause()
        assert table.virtual_size.height == len(rows) - 4 and layouts == []
        assert table.scroll_y <= table.max_scroll_y
        table.set_rows(rows[:3])  # no scrollbar any more
        await pilot.pause()
        assert layouts and set(layouts) == {3} and table.virtual_size.height == 4


async def test_pages_changed_in_a_burst_are_told_in_one_notice_then_the_rest_in_the_next(sample_field: Path) -> None:
    """Each commit of the index put up a notice of its own (18 a second while an agent wrote):
    the first change is told at once, what follows within ``ANNOUNCE_EVERY`` in one more."""
    from memtui.index import ChangeBatch
    from memtui.session import session as session_module
    from tests.helpers import write_page
    from tests.helpers_field import page

    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)

        def notices() -> list[str]:
            return [n.message for n in app._notifications if n.title == "changed on disk"]

        for number in range(6):
            write_page(sample_field, f"notes/burst-{number}.md", page(f"Burst {number}", "Written fast. [observed]"))
            app.session.apply_changes(ChangeBatch(added=[f"notes/burst-{number}.md"]))
            await pilot.pause(0.05)
        assert notices() == ["updated: notes/burst-0.md"]
        assert await wait_for(pilot, lambda: len(notices()) == 2, timeout=session_module.ANNOUNCE_EVERY + 3)
        assert notices()[1] == "updated: notes/burst-1.md, notes/burst-2.md, notes/burst-3.md and 2 more"
        await pilot.pause(0.3)
        assert len(notices()) == 2  # nothing left to tell
