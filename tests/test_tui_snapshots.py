"""How each screen looks, on a small fixture field, in two themes (pytest-textual-snapshot).

Update the stored SVGs after an intended change with ``pytest --snapshot-update``
and review the report. Anything that varies between runs is fixed here: the
field is copied to a folder with the same name, file times are set, the clock
is frozen, search timings are hidden and the index watcher is off.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
from pathlib import Path

import pytest

from memtui.tui.app import MemtuiApp
from memtui.tui.settings import Settings
from tests.helpers_tui import SIZE, screen_settled, screen_still, search_results

FIXTURE = Path(__file__).parent / "fixtures" / "snap-field"
THEMES = ["memtui-dusk", "memtui-paper"]
FIXED_TIME = _dt.datetime(2026, 11, 29, 12, 0, tzinfo=_dt.UTC)


@pytest.fixture
def snap_field(tmp_path: Path) -> Path:
    root = tmp_path / "snap-field"
    shutil.copytree(FIXTURE, root)
    stamp = FIXED_TIME.timestamp()
    for folder, _, files in os.walk(root):
        for name in files:
            os.utime(os.path.join(folder, name), (stamp, stamp))
    return root


def make(root: Path, theme: str, *, use_index: bool = False) -> MemtuiApp:
    app = MemtuiApp(
        root, use_index=use_index, watch=False, theme=theme, settings=Settings(theme=theme, bump_updated="never")
    )
    app.ctx.show_timings = False
    app.ctx.clock = lambda: FIXED_TIME
    return app


async def settle(pilot, *, index: bool = False) -> None:
    app = pilot.app
    await app.ready.wait()
    if index:
        await app.index_ready.wait()
    for _ in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause()
    await screen_settled(app, pilot)
    app.clear_notifications()
    await pilot.pause()


def still_after(run_before):
    """``run_before``, then a wait until the screen stops changing (``screen_still``)."""

    async def run(pilot) -> None:
        await run_before(pilot)
        for widget in pilot.app.screen.query("Input, TextArea"):
            widget.cursor_blink = False  # a blinking cursor is drawn on or off by the clock
        await screen_still(pilot.app, pilot)

    return run


@pytest.mark.parametrize("theme", THEMES)
def test_browse(snap_compare, snap_field, theme):
    async def run_before(pilot):
        await settle(pilot)

    assert snap_compare(make(snap_field, theme), terminal_size=SIZE, run_before=still_after(run_before))


@pytest.mark.parametrize("theme", THEMES)
def test_browse_tree(snap_compare, snap_field, theme):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("v")
        await pilot.pause()

    assert snap_compare(make(snap_field, theme), terminal_size=SIZE, run_before=still_after(run_before))


@pytest.mark.parametrize("theme", THEMES)
def test_page_view(snap_compare, snap_field, theme):
    async def run_before(pilot):
        await settle(pilot)
        pilot.app.open_page("decisions/api-trpc.md")
        await pilot.pause()

    assert snap_compare(make(snap_field, theme), terminal_size=SIZE, run_before=still_after(run_before))


@pytest.mark.parametrize("theme", THEMES)
def test_provenance_side_by_side(snap_compare, snap_field, theme):
    """A claim's [cite:1] followed: the cited transcript lines beside the claim, both lit up."""

    async def run_before(pilot):
        await settle(pilot)
        pilot.app.open_page("decisions/api-rest.md")
        await pilot.pause()
        page = pilot.app.screen
        page.follow_link(next(i for i, link in enumerate(page.links) if link.kind == "cite"))
        await pilot.pause()
        await pilot.pause()

    assert snap_compare(make(snap_field, theme), terminal_size=SIZE, run_before=still_after(run_before))


@pytest.mark.parametrize("theme", THEMES)
def test_page_view_hostile_raw(snap_compare, snap_field, theme):
    async def run_before(pilot):
        await settle(pilot)
        pilot.app.open_page("quarantine/vendor-update.md")
        await pilot.pause()
        await pilot.press("r")
        await pilot.pause()

    assert snap_compare(make(snap_field, theme), terminal_size=SIZE, run_before=still_after(run_before))


@pytest.mark.parametrize("theme", THEMES)
def test_history_as_of(snap_compare, snap_field, theme):
    async def run_before(pilot):
        await settle(pilot)
        pilot.app.open_history("decisions/api-trpc.md")
        await pilot.pause()
        await pilot.press("a", *"2026-05-01", "enter")
        await pilot.pause()

    assert snap_compare(make(snap_field, theme), terminal_size=SIZE, run_before=still_after(run_before))


@pytest.mark.parametrize("theme", THEMES)
def test_search(snap_compare, snap_field, theme):
    async def run_before(pilot):
        await settle(pilot, index=True)
        await pilot.press("2")
        await pilot.press(*"public API decision")
        await search_results(pilot, "public API decision")
        await settle(pilot)

    assert snap_compare(make(snap_field, theme, use_index=True), terminal_size=SIZE, run_before=still_after(run_before))


@pytest.mark.parametrize("theme", THEMES)
def test_overview(snap_compare, snap_field, theme):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("3")
        await pilot.pause()

    assert snap_compare(make(snap_field, theme), terminal_size=SIZE, run_before=still_after(run_before))


@pytest.mark.parametrize("theme", THEMES)
def test_quarantine_queue(snap_compare, snap_field, theme):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)

    assert snap_compare(make(snap_field, theme), terminal_size=SIZE, run_before=still_after(run_before))


@pytest.mark.parametrize("theme", THEMES)
def test_proposals_diff(snap_compare, snap_field, theme):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)

    assert snap_compare(make(snap_field, theme), terminal_size=SIZE, run_before=still_after(run_before))


@pytest.mark.parametrize("theme", THEMES)
def test_proposals_side_by_side(snap_compare, snap_field, theme):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("5")
        await settle(pilot)
        await pilot.press("s")
        await pilot.pause()

    assert snap_compare(make(snap_field, theme), terminal_size=SIZE, run_before=still_after(run_before))


@pytest.mark.parametrize("theme", THEMES)
def test_editor(snap_compare, snap_field, theme):
    async def run_before(pilot):
        await settle(pilot)
        pilot.app.open_editor("quarantine/vendor-update.md")
        await pilot.pause()

    assert snap_compare(make(snap_field, theme), terminal_size=SIZE, run_before=still_after(run_before))


@pytest.mark.parametrize("theme", THEMES)
def test_help(snap_compare, snap_field, theme):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()

    assert snap_compare(make(snap_field, theme), terminal_size=SIZE, run_before=still_after(run_before))


NARROW = (80, 24)


@pytest.mark.parametrize("theme", THEMES)
def test_quarantine_after_a_decision(snap_compare, snap_field, theme, monkeypatch):
    """The decided page stays in place, struck through with its decision; the cursor is on the next one."""
    monkeypatch.setenv("MEMTUI_REVIEWER", "maya")

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        await pilot.press("x")
        await pilot.pause()
        await pilot.press(*"prompt injection", "enter")
        await settle(pilot)

    assert snap_compare(make(snap_field, theme), terminal_size=SIZE, run_before=still_after(run_before))


@pytest.mark.parametrize("theme", THEMES)
def test_approve_dialog_with_danger_flags(snap_compare, snap_field, theme):
    """Cancel has the focus: a then Enter does not approve an injection attempt."""

    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        await pilot.press("a")
        await pilot.pause(0.3)

    assert snap_compare(make(snap_field, theme), terminal_size=SIZE, run_before=still_after(run_before))


@pytest.mark.parametrize("theme", THEMES)
def test_browse_narrow(snap_compare, snap_field, theme):
    """80x24: title and path keep their room, kind and updated give way, ? stays in the footer."""

    async def run_before(pilot):
        await settle(pilot)

    assert snap_compare(make(snap_field, theme), terminal_size=NARROW, run_before=still_after(run_before))


@pytest.mark.parametrize("theme", THEMES)
def test_page_view_narrow(snap_compare, snap_field, theme):
    """Under 100 columns the side panel folds away; i brings it back."""

    async def run_before(pilot):
        await settle(pilot)
        pilot.app.open_page("decisions/api-trpc.md")
        await pilot.pause()

    assert snap_compare(make(snap_field, theme), terminal_size=NARROW, run_before=still_after(run_before))


@pytest.mark.parametrize("theme", THEMES)
def test_browse_filtered_in_place(snap_compare, snap_field, theme):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("slash", *"api")
        await pilot.pause(0.1)
        await screen_settled(pilot.app, pilot)

    assert snap_compare(make(snap_field, theme), terminal_size=SIZE, run_before=still_after(run_before))


@pytest.mark.parametrize("theme", THEMES)
def test_help_from_the_quarantine_screen(snap_compare, snap_field, theme):
    async def run_before(pilot):
        await settle(pilot)
        await pilot.press("4")
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause(0.3)

    assert snap_compare(make(snap_field, theme), terminal_size=SIZE, run_before=still_after(run_before))


@pytest.mark.parametrize("theme", THEMES)
def test_merge_dialog(snap_compare, snap_field, theme, monkeypatch):
    """Overlapping edits: base, mine and theirs side by side; 'Edit both, marked' has the focus."""
    import functools

    from memtui.tui import unsaved

    monkeypatch.setattr(unsaved, "keep_copy", functools.partial(unsaved.keep_copy, now=FIXED_TIME.replace(tzinfo=None)))

    async def run_before(pilot):
        await settle(pilot)
        pilot.app.open_editor("decisions/api-trpc.md")
        await pilot.pause()
        editor = pilot.app.screen
        row = next(i for i, line in enumerate(editor.area.text.split("\n")) if line.startswith("- "))
        line = editor.area.document.get_line(row)
        editor._replace_lines(row, row, [line + " (confirmed by Maya)"])
        target = snap_field / "decisions/api-trpc.md"
        target.write_bytes(target.read_bytes().replace(line.encode(), (line + " (per the log)").encode()))
        await pilot.press("ctrl+s")
        for _ in range(50):
            await pilot.pause(0.05)
            if type(pilot.app.screen).__name__ == "MergeScreen":
                break

    assert snap_compare(make(snap_field, theme), terminal_size=SIZE, run_before=still_after(run_before))


def test_browse_no_color(snap_compare, snap_field, monkeypatch):
    """NO_COLOR: greys that stay readable; the selection is a glyph and a reversed row."""
    monkeypatch.setenv("NO_COLOR", "1")

    async def run_before(pilot):
        await settle(pilot)

    assert snap_compare(make(snap_field, "memtui-dusk"), terminal_size=SIZE, run_before=still_after(run_before))
