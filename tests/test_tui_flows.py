"""Pilot tests for the reading flows: browse, open a page, follow links and citations, history."""

from __future__ import annotations

from pathlib import Path

from memtui.tui.screens.browse import BrowseScreen
from memtui.tui.screens.history import HistoryScreen
from memtui.tui.screens.page import PageScreen
from memtui.tui.widgets.page_table import PageTable
from tests.helpers import write_page
from tests.helpers_tui import SIZE, make_app, rendered_text, wait_ready


async def test_browse_lists_every_page_with_badges(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        screen = app.screen
        assert isinstance(screen, BrowseScreen)
        table = screen.query_one(PageTable)
        assert table.row_count == len(app.session.field) >= 40
        rows = screen.rows
        assert "quarantined" in rows["quarantine/vendor-pricing-update.md"].states()
        assert "superseded" in rows["decisions/public-api-rest.md"].states()
        assert "unreviewed" in rows["notes/hiring-plan-q1-2027.md"].states()
        assert "findings" in rows["knowledge/entities/portlink.md"].states()


async def test_filters_and_sorting(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        screen = app.screen
        table = screen.query_one(PageTable)
        screen.query_one("Tabs").active = "filter-quarantined"
        await pilot.pause()
        keys = table.keys()
        assert keys and all(screen.rows[k].trust == "quarantined" for k in keys)
        screen.query_one("Tabs").active = "filter-superseded"
        await pilot.pause()
        assert set(table.keys()) >= {"decisions/public-api-rest.md", "decisions/public-api-graphql.md"}
        screen.query_one("Tabs").active = "filter-all"
        await pilot.pause()
        screen.sort, screen.reverse = "title", False
        screen._fill()
        titles = [screen.rows[k].title.casefold() for k in table.keys()]
        assert titles == sorted(titles)
        await pilot.press("r")
        titles = [screen.rows[k].title.casefold() for k in table.keys()]
        assert titles == sorted(titles, reverse=True)


async def test_open_page_follow_link_and_citation(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        table = app.screen.query_one(PageTable)
        assert table.move_to("decisions/public-api-trpc.md")
        await pilot.press("enter")
        await pilot.pause()
        page = app.screen
        assert isinstance(page, PageScreen) and page.path == "decisions/public-api-trpc.md"
        kinds = [link.kind for link in page.links]
        assert "wiki" in kinds and "cite" in kinds
        # Follow the first wikilink with the keyboard.
        wiki = next(i for i, link in enumerate(page.links) if link.kind == "wiki")
        page.selected_link = wiki
        await pilot.press("enter")
        await pilot.pause()
        followed = app.screen
        assert isinstance(followed, PageScreen) and followed.path != page.path
        expected = app.session.field.resolve(page.links[wiki].target, near=page.path).path
        assert followed.path == expected
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is page
        # A citation opens the session it points at.
        cite = next(i for i, link in enumerate(page.links) if link.kind == "cite")
        page.follow_link(cite)
        await pilot.pause()
        assert isinstance(app.screen, PageScreen)
        assert app.screen.path.startswith("sessions/")


async def test_click_on_a_link_follows_it(tmp_path: Path) -> None:
    root = tmp_path / "field"
    write_page(root, "notes/a.md", "# A\n\nSee [[b]] for more.\n")
    write_page(root, "notes/b.md", "---\ntitle: Bee\n---\n# B\n")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        app.open_page("notes/a.md")
        await pilot.pause()
        body = app.screen.query_one("#page-body")
        # Find the cell of "[[b]]" on screen (its style carries the link index) and click it.
        clicked = False
        for y in range(6):
            for x in range(body.region.width):
                style = app.screen.get_style_at(body.region.x + x, body.region.y + y)
                if style.meta.get("memtui-link") == 0:
                    await pilot.click(offset=(body.region.x + x, body.region.y + y))
                    clicked = True
                    break
            if clicked:
                break
        await pilot.pause()
        assert clicked
        assert isinstance(app.screen, PageScreen) and app.screen.path == "notes/b.md"


async def test_history_screen_three_versions_and_as_of(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        app.open_history("decisions/public-api-trpc.md")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, HistoryScreen)
        frontmatter_chain = next(c for c in screen.chains if c.form == "frontmatter")
        statuses = [(v.path, v.status) for v in frontmatter_chain.versions]
        assert statuses == [
            ("decisions/public-api-rest.md", "superseded"),
            ("decisions/public-api-graphql.md", "superseded"),
            ("decisions/public-api-trpc.md", "current"),
        ]
        await pilot.press("a")
        await pilot.press(*"2026-05-01", "enter")
        await pilot.pause()
        summary = rendered_text(screen.query_one("#as-of-summary"))
        assert "GraphQL" in summary
        await pilot.press("c")
        await pilot.pause()
        assert screen.as_of is None


async def test_history_inline_form(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        app.open_history("projects/harbor.md")
        await pilot.pause()
        chain = next(c for c in app.screen.chains if c.form == "inline" and "Public API" in c.name)
        values = [(v.value, v.status) for v in chain.versions]
        assert [s for _, s in values] == ["superseded", "superseded", "current"]
        assert values[-1][0].startswith("tRPC")


async def test_empty_folder_gets_a_clear_message(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    (root / "readme.txt").write_text("not a page")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        message = app.screen.query_one("#browse-message")
        assert message.display
        assert "No pages here" in rendered_text(message)


async def test_help_and_command_palette(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert type(app.screen).__name__ == "HelpScreen"
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"tRPC")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PageScreen)
        assert "trpc" in app.screen.path


async def test_raw_toggle_shows_exact_bytes_visibly(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        app.open_page("quarantine/vendor-pricing-update.md")
        await pilot.pause()
        await pilot.press("r")
        await pilot.pause()
        rendered = rendered_text(app.screen.query_one("#page-body"))
        assert "\x1b" not in rendered and "\u202e" not in rendered
        assert "\u241b]0;pwned\u2407" in rendered  # ␛]0;pwned␇
        assert "\u27e8RLO\u27e9" in rendered
