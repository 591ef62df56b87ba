"""The page view on long pages: drawn row by row, highlights, search matches, no needless re-renders."""

from __future__ import annotations

import time
from pathlib import Path

from memtui.index.model import SearchHit
from memtui.tui.screens.page import PageScreen
from memtui.tui.screens.search import SearchScreen, query_words
from tests.helpers import write_page
from tests.helpers_tui import SIZE, make_app, screen_text, wait_for_screen, wait_ready

LONG = 50_000
OPEN_LIMIT = 5.0  # seconds: generous for a loaded CI machine (0.3 s measured; 64 s before the Line API)


def long_page(lines: int = LONG) -> str:
    """Frontmatter, then ``lines`` body lines: tagged claims, a heading every 500 lines, a
    wikilink every 1,000, a line long enough to wrap every 97, "zebra" on a few."""
    out = ["---", "title: Long log", "kind: episodic", "---"]
    for number in range(len(out) + 1, lines + 1):
        if number % 500 == 0:
            out.append(f"## Part {number // 500}")
        elif number % 1000 == 1:
            out.append(f"- Line {number} points at [[b]]. [observed]")
        elif number % 97 == 0:
            out.append(f"- Line {number} is long: " + "words that wrap around " * 12 + "[inferred]")
        elif number in (2_002, 30_002, 45_002):
            out.append(f"- Line {number} saw a zebra. [stated]")
        else:
            out.append(f"- Line {number} fact. [stated]")
    return "\n".join(out) + "\n"


def make_field(tmp_path: Path, body: str | None = None) -> Path:
    root = tmp_path / "field"
    write_page(root, "notes/long.md", body if body is not None else long_page())
    write_page(root, "notes/b.md", "---\ntitle: Bee\n---\n# B\n\n- A short page. [stated]\n")
    return root


async def open_whole(app, pilot, path: str, **options) -> PageScreen:
    """Open a page and wait until all of it is read (a long one is read in slices)."""
    app.open_page(path, **options)
    assert await wait_for_screen(app, pilot, PageScreen)
    return await read_whole(app.screen, pilot)


async def read_whole(page: PageScreen, pilot) -> PageScreen:
    """Wait until the page is read to its end (slices between keys: under a loaded parallel
    suite 10 s was once not enough; the benchmark measures the time)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if page.body_rows is not None and page.body_rows.complete:
            break
        await pilot.pause(0.02)
    await pilot.pause()
    return page


def highlighted_on_screen(app, page: PageScreen) -> list[int]:
    """The screen lines of the body drawn reversed (a highlight)."""
    body = page.body
    region = body.content_region
    x = region.x + body.rows.gutter_width + 1
    return [y for y in range(region.y, region.bottom) if app.screen.get_style_at(x, y).reverse]


async def test_a_50000_line_page_opens_at_once_and_reaches_its_end(tmp_path: Path) -> None:
    app = make_app(make_field(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        started = time.perf_counter()
        app.open_page("notes/long.md")
        assert await wait_for_screen(app, pilot, PageScreen)
        await pilot.pause()
        opened = time.perf_counter() - started
        page = app.screen
        assert "Line 5 fact." in screen_text(app)
        assert opened < OPEN_LIMIT
        await pilot.press("down")  # keys are answered while the rest is read
        await pilot.pause()
        assert page.body.scroll_y == 1
        page = await read_whole(page, pilot)
        assert len(page.parsed.body.lines) == LONG - 4
        await pilot.press("end")
        await pilot.pause()
        text = screen_text(app)
        assert f"Line {LONG - 1} fact." in text and f"## Part {LONG // 500}" in text  # the last line
        await pilot.press("home")
        await pilot.pause()
        assert page.body.scroll_y == 0 and "Line 5 fact." in screen_text(app)
        # Only the rows shown were styled: a handful, not 50,000.
        assert len(page.body._strips) < 200


async def test_the_start_of_a_long_page_shows_before_the_rest_is_read(tmp_path: Path, monkeypatch) -> None:
    # What each render showed, recorded as it happens: polling for it raced the background
    # read under load (the whole page could be read between two polls).
    shown: list[tuple[bool, int]] = []
    real = PageScreen.render_page

    def recording(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        result = real(self, *args, **kwargs)
        if self.body_rows is not None:
            shown.append((self.body_rows.complete, len(self.body.rows)))
        return result

    monkeypatch.setattr(PageScreen, "render_page", recording)
    app = make_app(make_field(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        app.open_page("notes/long.md")
        page = await open_whole(app, pilot, "notes/long.md")
        complete, rows = shown[0]
        assert not complete and rows < LONG // 10  # the first render: the first 64 KB
        assert page.body_rows.complete and len(page.body.rows) == LONG - 4


async def test_open_page_highlights_lines_and_scrolls_to_them(tmp_path: Path) -> None:
    app = make_app(make_field(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        page = await open_whole(app, pilot, "notes/long.md", highlight=(40_010, 40_011))
        await pilot.pause()
        rows = page.body.rows
        assert page.body.highlighted == (rows.row_of(40_010), rows.row_of(40_011))
        assert page.body.row_visible(rows.row_of(40_010)) and page.body.row_visible(rows.row_of(40_011))
        text = screen_text(app)
        assert "Line 40010 fact." in text and "Line 40011 fact." in text
        assert len(highlighted_on_screen(app, page)) == 2
        # On a page already open: show_lines moves the highlight.
        page.show_lines(12, 12)
        await pilot.pause()
        assert page.body.highlighted == (rows.row_of(12), rows.row_of(12))
        assert "Line 12 fact." in screen_text(app) and len(highlighted_on_screen(app, page)) == 1
        # e opens the editor at the reader's line, near the highlight.
        assert 9 <= page.reading_line() <= 12


async def test_n_and_N_walk_the_search_matches(tmp_path: Path) -> None:
    app = make_app(make_field(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        page = await open_whole(
            app, pilot, "notes/long.md", line=30_002, highlight=(30_002, 30_002), matches=[30_002], terms=["Zebra"]
        )
        assert page.matches == [2_002, 30_002, 45_002] and page.match_index == 1
        assert "match 2 of 3" in screen_text(app)
        await pilot.press("n")
        await pilot.pause()
        assert page.match_index == 2 and "Line 45002 saw a zebra." in screen_text(app)
        assert page.body.highlighted == (page.body.rows.row_of(45_002),) * 2
        await pilot.press("n")  # past the last: the first
        await pilot.pause()
        assert page.match_index == 0 and "Line 2002 saw a zebra." in screen_text(app)
        await pilot.press("N")
        await pilot.pause()
        assert page.match_index == 2 and "match 3 of 3" in screen_text(app)
        # Links keep their own keys: ] selects the next link, Enter follows it.
        page.selected_link = None
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert page.selected_link == 0 and page.links[0].line == 1001
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PageScreen) and app.screen.path == "notes/b.md"


async def test_without_matches_n_does_nothing_and_is_not_in_the_footer(tmp_path: Path) -> None:
    app = make_app(make_field(tmp_path, body="# A\n\nSee [[b]] and [[c]].\n"))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        page = await open_whole(app, pilot, "notes/long.md")
        assert page.check_action("next_match", ()) is False
        assert "Next match" not in screen_text(app) and "Next link" in screen_text(app)
        await pilot.press("n")
        await pilot.pause()
        assert page.selected_link is None and app.screen is page


async def test_a_search_hit_opens_its_page_lit_up_with_the_query_words(tmp_path: Path) -> None:
    assert query_words('Zebra "saw a" kind:semantic #tag NOT lion -(cat*)') == ["zebra", "saw a", "lion", "cat"]
    app = make_app(make_field(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        app.switch_mode("search")
        await pilot.pause()
        search = app.screen
        assert isinstance(search, SearchScreen)
        search._last_query = "zebra"
        hit = SearchHit(
            path="notes/long.md",
            id=None,
            title="Long log",
            status="current",
            trust="unknown",
            score=1.0,
            snippet="saw a zebra",
            line=30_002,
        )
        search._open_hit(hit)
        assert await wait_for_screen(app, pilot, PageScreen)
        page = await read_whole(app.screen, pilot)
        assert page.terms == ["zebra"] and page.matches == [2_002, 30_002, 45_002]
        assert page.body.highlighted == (page.body.rows.row_of(30_002),) * 2


async def test_changes_elsewhere_in_the_field_do_not_redraw_the_body(tmp_path: Path) -> None:
    root = make_field(
        tmp_path, body="---\ntitle: Short\n---\n# Short\n\n" + "".join(f"- Fact {n}. [stated]\n" for n in range(200))
    )
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        page = await open_whole(app, pilot, "notes/long.md")
        await pilot.press("pagedown")
        await pilot.pause()
        shows, top = page.body.shows, page.body.scroll_y
        write_page(root, "notes/b.md", "---\ntitle: Bee again\n---\n# B\n\n- Changed. [stated]\n")
        app.session.reload_paths(["notes/b.md"])  # a "changed" event for another page, then the analysis
        await wait_ready(app, pilot)
        await pilot.pause()
        assert page.body.shows == shows and page.body.scroll_y == top
        app.session.reload_paths(["notes/long.md"])  # its own bytes did not change either
        await wait_ready(app, pilot)
        assert page.body.shows == shows
        write_page(
            root,
            "notes/long.md",
            "---\ntitle: Short\n---\n# Short\n\n- New first fact. [stated]\n"
            + "".join(f"- Fact {n}. [stated]\n" for n in range(200)),
        )
        app.session.reload_paths(["notes/long.md"])
        await wait_ready(app, pilot)
        await pilot.pause()
        assert page.body.shows == shows + 1
        assert "New first fact." in page.body.export_text()
        assert page.body.scroll_y > 0  # the reader stays where they were
