"""Themes are loaded from themes/ and remembered; an optional git commit after a save."""

from __future__ import annotations

import subprocess
from pathlib import Path

from memtui.resources import themes_dir
from memtui.tui.screens.dialogs import TextDialog
from memtui.tui.screens.editor import EditorScreen
from memtui.tui.settings import Settings
from memtui.tui.themes import load_themes, tag_colours
from tests.helpers import write_page
from tests.helpers_tui import SIZE, make_app, wait_for_screen, wait_ready


def test_bundled_themes_load_with_tag_colours() -> None:
    themes, problems = load_themes(themes_dir())
    assert problems == []
    names = {theme.name for theme in themes}
    assert {"memtui-dusk", "memtui-paper"} <= names
    for theme in themes:
        colours = tag_colours(theme.variables)
        assert all(colours[tag].startswith("#") for tag in ("stated", "observed", "inferred", "suggested"))


def test_a_broken_theme_file_is_reported_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "good.toml").write_text('name = "good"\nprimary = "#112233"\n')
    (tmp_path / "bad.toml").write_text("name = [unclosed\n")
    (tmp_path / "nameless.toml").write_text('primary = "#112233"\n')
    themes, problems = load_themes(tmp_path)
    assert [t.name for t in themes] == ["good"]
    assert sorted(p.path.name for p in problems) == ["bad.toml", "nameless.toml"]


async def test_theme_choice_is_remembered(tmp_path: Path) -> None:
    root = tmp_path / "field"
    write_page(root, "notes/a.md", "# A\n")
    app = make_app(root, theme="memtui-dusk")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        assert app.theme == "memtui-dusk"
        app.theme = "memtui-paper"
        await pilot.pause()
    assert Settings.load().theme == "memtui-paper"
    from memtui.tui.app import MemtuiApp

    again = MemtuiApp(root, use_index=False, watch=False)
    async with again.run_test(size=SIZE) as pilot:
        await wait_ready(again, pilot)
        assert again.theme == "memtui-paper"


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=Tester", "-c", "user.email=t@example.com", *args],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


async def test_commit_after_save_in_a_git_field(tmp_path: Path) -> None:
    root = tmp_path / "field"
    write_page(root, "notes/a.md", "# A\n\n- The sky is blue today [observed]\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "start")
    app = make_app(root)
    app.settings.commit_after_save = True
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        app.open_editor("notes/a.md")
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, EditorScreen)
        editor._replace_lines(2, 2, ["- The sky is grey today [observed]"])
        await pilot.press("ctrl+s")
        assert await wait_for_screen(app, pilot, TextDialog)
        assert app.screen.query_one("Input").value == "memtui: edit notes/a.md"
        await pilot.press("enter")
        await pilot.pause()
        await app.workers.wait_for_complete()
    log = _git(root, "log", "--format=%s", "-n", "2").splitlines()
    assert log == ["memtui: edit notes/a.md", "start"]
    assert _git(root, "status", "--porcelain", "notes/a.md") == ""


async def test_no_commit_unless_turned_on(tmp_path: Path) -> None:
    root = tmp_path / "field"
    write_page(root, "notes/a.md", "# A\n\n- The sky is blue today [observed]\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "start")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        app.open_editor("notes/a.md")
        await pilot.pause()
        app.screen._replace_lines(2, 2, ["- The sky is grey today [observed]"])
        await pilot.press("ctrl+s")
        await pilot.pause()
        await app.workers.wait_for_complete()
    assert _git(root, "log", "--format=%s").splitlines() == ["start"]
