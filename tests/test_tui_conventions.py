"""Everyday conventions: lists, search, narrow terminals, help, palette, history, themes, contrast."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from memtui.resources import themes_dir
from memtui.tui.contrast import NO_COLOR_THEME, ratio
from memtui.tui.screens.browse import BrowseScreen
from memtui.tui.screens.history import HistoryScreen
from memtui.tui.screens.page import PageScreen
from memtui.tui.screens.search import SearchScreen
from memtui.tui.settings import Settings
from memtui.tui.widgets.lists import SELECTED_MARK
from memtui.tui.widgets.page_table import PageTable
from memtui.tui.widgets.page_tree import PageTree
from tests.helpers_contrast import MINIMUM, failures
from tests.helpers_tui import (
    SIZE,
    make_app,
    page_list_open,
    rendered_text,
    screen_text,
    search_results,
    wait_for_screen,
    wait_ready,
)

NARROW = (80, 24)


async def settle(app, pilot) -> None:
    for _ in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause()


# --------------------------------------------------------------------------- lists


@pytest.mark.parametrize("size", [SIZE, NARROW])
async def test_the_last_row_of_the_page_list_is_reachable_and_visible(sample_field: Path, size) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=size) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(PageTable)
        await pilot.press("end")
        await pilot.pause()
        last = table.keys()[-1]
        assert table.cursor_key == last
        # no horizontal scrollbar can hide it: the content is exactly as wide as the view
        assert table.virtual_size.width <= table.scrollable_content_region.width
        assert table.scrollbar_size_horizontal == 0 or not table.show_horizontal_scrollbar
        top = int(table.scroll_y)
        assert top <= table.cursor < top + table.scrollable_content_region.height - 1
        assert app.screen.rows[last].path[:12] in screen_text(app)


async def test_narrow_terminal_keeps_identity_columns_and_sizes_the_state_column(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=NARROW) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(PageTable)
        shown = table.shown_columns()
        assert {"state", "title", "path"} <= set(shown)
        assert "kind" not in shown and "updated" not in shown
        widths = dict(zip([c.key for c in table.columns], table._widths))
        from rich.cells import cell_len

        widest_state = max(cell_len(cells[0][0]) for cells in table._cells.values())
        assert widths["state"] <= max(widest_state, len("state") + 2)
        assert widths["title"] >= 24 and widths["path"] >= 22
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        assert set(app.screen.query_one(PageTable).shown_columns()) == {
            "state",
            "title",
            "kind",
            "subject",
            "updated",
            "path",
        }


async def test_every_list_marks_its_selection_with_a_glyph(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        lines = screen_text(app).splitlines()
        assert any(line.startswith(SELECTED_MARK) for line in lines)  # the page list
        await pilot.press("v")  # the tree starts with a cursor
        await pilot.pause()
        tree = app.screen.query_one(PageTree)
        assert tree.cursor_line == 0 and tree.cursor_node is not None
        assert SELECTED_MARK in screen_text(app)
        await pilot.press("4")
        await settle(app, pilot)
        assert f"{SELECTED_MARK} ⛔" in screen_text(app)  # the quarantine queue
        await pilot.press("2")
        await pilot.press(*"tRPC")
        await settle(app, pilot)


async def test_the_page_list_draws_again_only_rows_that_changed(sample_field: Path) -> None:
    """A repaint reuses the rows drawn before (keys, an agent's changes, refills repaint the
    whole list); a row whose cells changed, the cursor's old and new rows and a new theme
    are drawn anew."""
    async with page_list_open(sample_field) as (app, pilot, table):
        drawn: list[str] = []
        render_cells = table._render_cells

        def counting(cells, base, *, marker=" "):
            drawn.append(marker + cells[0][0])
            return render_cells(cells, base, marker=marker)

        table._render_cells = counting
        rows = [line for line in screen_text(app).splitlines() if line.strip()]

        async def repaint() -> list[str]:
            drawn.clear()
            table.refresh()
            await pilot.pause()
            return [text for text in drawn if text != " state"]  # the header line is drawn each time

        assert await repaint() == []
        assert [line for line in screen_text(app).splitlines() if line.strip()] == rows
        drawn.clear()
        await pilot.press("down")
        await pilot.pause()
        assert sorted(text[0] for text in drawn if text != " state") == [" ", "▶"]  # the old row and the new
        assert await repaint() == []
        key = table.keys()[2]
        state, *rest = table._cells[key]
        table.update_cells(key, (state, ("A TITLE CHANGED ON DISK", ""), *rest[1:]))
        await pilot.pause()
        assert "A TITLE CHANGED ON DISK" in screen_text(app)
        assert len(await repaint()) == 0
        drawn.clear()
        app.theme = "memtui-paper" if app.theme != "memtui-paper" else "memtui-dusk"
        await pilot.pause()
        assert len([text for text in drawn if text != " state"]) >= min(table.row_count, 10)  # in the new colours
        assert await repaint() == []


async def test_folders_roll_up_what_is_inside_them(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("v")
        await pilot.pause()
        tree = app.screen.query_one(PageTree)
        labels = {
            node.data: node.label.plain for node in tree.root.children if node.data and node.data.startswith("dir:")
        }
        assert "⛔4 quar" in labels["dir:quarantine"]
        assert "▲" in labels["dir:notes"] and "◌1 unrev" in labels["dir:notes"]


async def test_slash_filters_the_page_list_in_place(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        screen = app.screen
        table = screen.query_one(PageTable)
        everything = table.row_count
        await pilot.press("slash")
        assert isinstance(app.screen, BrowseScreen)  # not the search screen
        await pilot.press(*"public api")
        await pilot.pause(0.3)
        keys = table.keys()
        assert 0 < len(keys) < everything
        assert "decisions/public-api-trpc.md" in keys
        await pilot.press("enter")
        await pilot.pause()
        assert screen.focused is table and table.row_count == len(keys)
        await pilot.press("slash", "escape")
        await pilot.pause(0.3)
        assert table.row_count == everything and screen.focused is table


# --------------------------------------------------------------------------- search


async def test_search_box_opens_the_highlighted_result_and_keeps_the_focus(sample_field: Path) -> None:
    app = make_app(sample_field, use_index=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot, index=True)
        await pilot.press("2")
        await pilot.press(*"public API decision")
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        await search_results(pilot, "public API decision")
        await settle(app, pilot)
        results = screen.query_one("#results")
        assert results.highlighted == 0
        await pilot.press("down")
        await pilot.pause()
        assert results.highlighted == 1 and screen.focused.id == "query"
        second = screen.hits[1].path
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PageScreen) and app.screen.path == second


async def test_search_errors_wait_for_a_pause_in_typing(sample_field: Path) -> None:
    app = make_app(sample_field, use_index=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot, index=True)
        await pilot.press("2")
        await pilot.press(*"*trpc")  # a leading wildcard is refused
        screen = app.screen
        await pilot.pause(0.3)
        state = str(screen.query_one("#search-state").render())
        assert "✖" not in state
        await pilot.pause(1.0)
        assert "✖" in str(screen.query_one("#search-state").render())


async def test_typing_in_the_results_edits_the_query(sample_field: Path) -> None:
    app = make_app(sample_field, use_index=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot, index=True)
        await pilot.press("2")
        await pilot.press(*"trpc")
        screen = app.screen
        await search_results(pilot, "trpc")
        screen.query_one("#results").focus()
        await pilot.press("x")
        await pilot.pause()
        assert screen.query_one("#query").value == "trpcx" and screen.focused.id == "query"


# --------------------------------------------------------------------------- narrow terminals, help


async def test_page_side_panel_folds_under_100_columns(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=NARROW) as pilot:
        await wait_ready(app, pilot)
        app.open_page("decisions/public-api-trpc.md")
        await pilot.pause()
        page = app.screen
        assert page.has_class("-narrow") and not page.query_one("#page-side").display
        await pilot.press("i")
        await pilot.pause()
        assert page.query_one("#page-side").display and not page.query_one("#page-body").display
        await pilot.press("i")
        await pilot.pause()
        assert page.query_one("#page-body").display
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        app.open_page("decisions/public-api-trpc.md")
        await pilot.pause()
        assert app.screen.query_one("#page-side").display


@pytest.mark.parametrize("width", [60, 80, 120])
async def test_help_key_stays_in_the_footer_at_every_width(sample_field: Path, width: int) -> None:
    from textual.widgets._footer import FooterKey

    app = make_app(sample_field)
    async with app.run_test(size=(width, 24)) as pilot:
        await wait_ready(app, pilot)
        for key in ("1", "4", "5"):
            await pilot.press(key)
            await settle(app, pilot)
            help_key = next(k for k in app.screen.query(FooterKey) if k.action in ("help", "app.help"))
            region = help_key.region
            assert region.width and region.x + region.width <= width


async def test_help_shows_this_screens_keys_first_then_global_ones(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("4")
        await settle(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause(0.3)
        text = rendered_text(app.screen.query_one("#help-keys"), width=160)
        assert text.index("This screen: Quarantine") < text.index("Everywhere") < text.index("Browse")
        assert "Undo" in text and "tab  shift+tab" in text and "ctrl+z  ctrl+y" in text


# --------------------------------------------------------------------------- palette


async def _palette_hits(app, pilot, query: str) -> list[str]:
    from textual.command import CommandPalette

    await pilot.press("ctrl+p")
    await pilot.pause()
    palette = app.screen
    assert isinstance(palette, CommandPalette)
    await pilot.press(*query)
    await pilot.pause(0.6)
    options = palette.query_one("CommandList")
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


async def test_palette_runs_screen_actions(sample_field: Path) -> None:
    from memtui.tui.screens.dialogs import ChoiceDialog

    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("4")
        await settle(app, pilot)
        hits = await _palette_hits(app, pilot, "approve")
        assert any("Quarantine queue: Approve" in hit for hit in hits)
        await pilot.press("enter")
        assert await wait_for_screen(app, pilot, ChoiceDialog, timeout=2.5)
        assert "Approve this page" in app.screen.dialog_title


async def test_palette_has_no_duplicates_and_no_screenshot_that_cannot_work(sample_field: Path, monkeypatch) -> None:
    import memtui.tui.app as app_module

    monkeypatch.setattr(app_module, "_screenshot_possible", lambda: False)
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert "Screenshot" not in titles and "Keys" not in titles and "Quit" in titles
        from memtui.tui.commands import ACTIONS

        names = [name for name, _, _ in ACTIONS] + titles
        assert len(names) == len(set(names))
        assert not {"Quit", "Keys"} & {name for name, _, _ in ACTIONS}
    monkeypatch.setattr(app_module, "_screenshot_possible", lambda: True)
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        assert "Screenshot" in [command.title for command in app.get_system_commands(app.screen)]


def test_screenshot_is_possible_only_with_a_writable_downloads_folder(tmp_path, monkeypatch) -> None:
    import textual.app

    from memtui.tui.app import _screenshot_possible

    monkeypatch.setattr(textual.app, "user_downloads_path", lambda: tmp_path / "missing")
    assert not _screenshot_possible()
    monkeypatch.setattr(textual.app, "user_downloads_path", lambda: tmp_path)
    assert _screenshot_possible()


# --------------------------------------------------------------------------- history


async def test_a_subjects_history_opens_from_the_palette_with_what_each_version_decided(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        hits = await _palette_hits(app, pilot, "history public-api")
        assert any("History: decision/public-api" in hit for hit in hits)
        await pilot.press("enter")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        expected = app.session.model_field().history.lookup(screen.target)
        assert [c.name for c in screen.chains] == [c.name for c in expected]  # as memtui history FIELD SUBJECT
        text = screen_text(app)
        assert "REST with an OpenAPI 3.1 spec" in text  # what the superseded version decided


# --------------------------------------------------------------------------- themes


async def test_theme_from_the_command_line_is_for_this_run_only(sample_field: Path) -> None:
    from memtui.tui.app import MemtuiApp

    Settings(theme="memtui-dusk").save()
    app = MemtuiApp(sample_field, use_index=False, watch=False, theme="memtui-paper")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        assert app.theme == "memtui-paper"
        await pilot.pause()
    assert Settings.load().theme == "memtui-dusk"
    app = MemtuiApp(sample_field, use_index=False, watch=False)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        assert app.theme == "memtui-dusk"
        app.theme = "memtui-paper"  # a choice made in the app is remembered
        await pilot.pause()
    assert Settings.load().theme == "memtui-paper"


# --------------------------------------------------------------------------- contrast


def _theme_pairs(data: dict) -> list[tuple[str, str, str, str]]:
    texts = ["foreground", "primary", "secondary", "accent", "warning", "error", "success"]
    backgrounds = ["background", "surface", "panel"]
    variables = data.get("variables", {})
    pairs = []
    for bg in backgrounds:
        for text in texts:
            pairs.append((text, data[text], bg, data[bg]))
        for name, value in variables.items():
            if name.startswith("tag-"):
                pairs.append((name, value, bg, data[bg]))
    pairs.append(("background (cursor text)", data["background"], "primary (cursor row)", data["primary"]))
    return pairs


def _rgb(value: str) -> tuple[int, int, int]:
    value = value.lstrip("#")
    return tuple(int(value[i : i + 2], 16) for i in (0, 2, 4))  # type: ignore[return-value]


@pytest.mark.parametrize("name", ["memtui-dusk", "memtui-paper", "memtui-nocolor"])
def test_theme_colours_are_readable_on_every_background(name: str) -> None:
    if name == "memtui-nocolor":
        theme = NO_COLOR_THEME
        data = {
            key: getattr(theme, key)
            for key in (
                "foreground",
                "background",
                "surface",
                "panel",
                "primary",
                "secondary",
                "accent",
                "warning",
                "error",
                "success",
            )
        }
        data["variables"] = theme.variables
    else:
        data = tomllib.loads((themes_dir() / f"{name}.toml").read_text())
    bad = [
        f"{text} {fg} on {bg} {bg_value}: {ratio(_rgb(fg), _rgb(bg_value)):.2f}"
        for text, fg, bg, bg_value in _theme_pairs(data)
        if ratio(_rgb(fg), _rgb(bg_value)) < MINIMUM
    ]
    assert not bad


async def _walk_screens(app, pilot, visit) -> None:
    """Every screen and the states the issue measured: selected rows, dialogs, decided items."""
    await wait_ready(app, pilot)
    await visit("browse")
    await pilot.press("v")
    await visit("tree")
    await pilot.press("v")
    app.open_page("decisions/public-api-trpc.md")
    await visit("page")
    await pilot.press("escape")
    app.open_history("decision/public-api")
    await visit("history")
    await pilot.press("escape")
    await pilot.press("3")
    await visit("overview")
    await pilot.press("4")
    await settle(app, pilot)
    await visit("quarantine")
    await pilot.press("a")
    await visit("approve dialog")
    await pilot.press("enter")
    await settle(app, pilot)
    await visit("quarantine after a decision")
    await pilot.press("d")
    await visit("decided")
    await pilot.press("5")
    await settle(app, pilot)
    await visit("proposals")
    await pilot.press("question_mark")
    await visit("help")
    await pilot.press("escape")
    await pilot.press("1")
    app.open_editor("decisions/public-api-trpc.md")
    await visit("editor")


@pytest.mark.parametrize("theme", ["memtui-dusk", "memtui-paper", "NO_COLOR"])
async def test_every_text_on_screen_is_readable(sample_field: Path, theme: str, monkeypatch) -> None:
    """Every text/background pair drawn, measured from the rendered segments: at least 4.5:1."""
    if theme == "NO_COLOR":
        monkeypatch.setenv("NO_COLOR", "1")
    app = make_app(sample_field, theme="memtui-dusk" if theme == "NO_COLOR" else theme)
    found: list[str] = []

    async def visit(name: str) -> None:
        from textual.screen import ModalScreen

        if not isinstance(app.screen, ModalScreen):  # a dialog's own worker waits for the answer
            await settle(app, pilot)
        await pilot.pause(0.2)
        app.clear_notifications()
        await pilot.pause()
        found.extend(f"{name}: {p.ratio:.2f} {p.fg} on {p.bg} {p.sample!r}" for p in failures(app))

    async with app.run_test(size=SIZE) as pilot:
        if theme == "NO_COLOR":
            assert app.theme == NO_COLOR_THEME.name
        await _walk_screens(app, pilot, visit)
    assert not found, "\n".join(found)
