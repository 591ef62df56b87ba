"""Page text is data: markup renders literally, escape sequences never reach the terminal."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from memtui.tui import safe
from memtui.tui.screens.dialogs import LinkDialog
from memtui.tui.screens.page import PageScreen
from memtui.tui.widgets.page_table import PageTable
from memtui.tui.widgets.page_tree import PageTree
from tests.helpers import write_page
from tests.helpers_tui import SIZE, make_app, rendered_text, screen_text, wait_ready

HOSTILE_TITLE = "[@click=app.quit]x"
HOSTILE = (
    "---\n"
    'title: "[@click=app.quit]x"\n'
    'subject: "[/]"\n'
    "kind: semantic\n"
    "---\n"
    "# [bold red]Loud[/] heading\n\n"
    "- Click [@click=app.quit]here[/] now [observed]\n"
    "- Escapes: \x1b[2J\x1b]0;pwned\x07 and \x9b31m and \u202egnp.exe [observed]\n"
    "- A [docs](https://evil.example/steal) link [observed]\n"
)


@pytest.fixture
def hostile_field(tmp_path: Path) -> Path:
    root = tmp_path / "field"
    write_page(root, "notes/hostile.md", HOSTILE)
    write_page(root, "notes/plain.md", "---\ntitle: Plain\n---\n# Plain\n\nNothing to see. [stated]\n")
    return root


async def test_markup_in_a_title_is_shown_literally_and_clicking_does_nothing(hostile_field: Path) -> None:
    app = make_app(hostile_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        assert "[@click=app.quit]x" in screen_text(app)
        table = app.screen.query_one(PageTable)
        row = table.keys().index("notes/hostile.md") + 1
        # Click every cell of the row: nothing may quit the app.
        for x in range(0, table.region.width, 3):
            await pilot.click(PageTable, offset=(x, row))
            await pilot.pause()
            if isinstance(app.screen, PageScreen):
                await pilot.press("escape")
                await pilot.pause()
        assert app.is_running
        await pilot.press("v")  # tree view labels
        await pilot.pause()
        tree = app.screen.query_one(PageTree)
        for node in list(tree._walk(tree.root)):
            if node.data == "dir:notes":
                node.expand()
        await pilot.pause()
        assert "[@click=app.quit]x" in screen_text(app)
        assert app.is_running


async def test_page_view_shows_markup_and_escapes_as_text(hostile_field: Path) -> None:
    app = make_app(hostile_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        app.open_page("notes/hostile.md")
        await pilot.pause()
        body = rendered_text(app.screen.query_one("#page-body"))
        assert "[bold red]Loud[/]" in body
        assert "[@click=app.quit]here[/]" in body
        assert "\x1b" not in body and "\x9b" not in body and "\u202e" not in body
        assert "\u241b[2J" in body and "\u27e8RLO\u27e9" in body
        assert app.screen.title == HOSTILE_TITLE
        # Clicking anywhere in the body follows nothing but our own link spans.
        region = app.screen.query_one("#page-body").region
        for y in range(region.height):
            await pilot.click(offset=(region.x + 6, region.y + y))
        await pilot.pause()
        assert app.is_running


async def test_markdown_link_shows_its_real_target_first(hostile_field: Path) -> None:
    app = make_app(hostile_field)
    opened: list[str] = []
    app.open_url = lambda url, **kw: opened.append(url)  # never launch a browser in tests
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        app.open_page("notes/hostile.md")
        await pilot.pause()
        page = app.screen
        url = next(i for i, link in enumerate(page.links) if link.kind == "url")
        page.follow_link(url)
        await pilot.pause()
        assert isinstance(app.screen, LinkDialog)
        assert "https://evil.example/steal" in screen_text(app)
        assert opened == []
        await pilot.press("escape")
        await pilot.pause()
        assert opened == []


async def test_notifications_with_page_text_are_not_markup(hostile_field: Path) -> None:
    app = make_app(hostile_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        safe.notify(app, "changed: [@click=app.quit]x and \x1b[2J")
        await pilot.pause()
        notification = list(app._notifications)[-1]
        assert notification.markup is False
        assert "\x1b" not in notification.message
        assert "[@click=app.quit]x" in notification.message


def test_safe_line_never_markup() -> None:
    from rich.console import Console

    text = safe.line("[bold]x[/] \x1b[31m")
    console = Console(file=io.StringIO(), force_terminal=True, color_system=None)
    console.print(text)
    out = console.file.getvalue()
    assert "[bold]x[/]" in out and "\x1b[31m" not in out
