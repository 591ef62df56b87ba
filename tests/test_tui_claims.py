"""Pilot tests for the claims screen: presets, tags from the overview, words, opening at the line."""

from __future__ import annotations

from pathlib import Path

from memtui.field.claims import field_claims
from memtui.tui.screens.claims import ClaimsScreen
from memtui.tui.screens.overview import OverviewScreen
from memtui.tui.screens.page import PageScreen
from memtui.tui.widgets.lists import MarkedOptionList
from memtui.tui.widgets.page_table import PageTable
from tests.helpers import write_page
from tests.helpers_tui import SIZE, make_app, rendered_text, wait_for_screen, wait_ready


async def _claims_screen(app, pilot) -> ClaimsScreen:
    await pilot.press("6")
    assert await wait_for_screen(app, pilot, ClaimsScreen)
    screen = app.screen
    for _ in range(200):
        if screen.claims:
            break
        await pilot.pause(0.02)
    await pilot.pause()
    return screen


def _shown(screen: ClaimsScreen) -> list[tuple[str, int]]:
    return [(screen.by_key[key].path, screen.by_key[key].line) for key in screen.query_one(PageTable).keys()]


async def test_presets_list_exactly_the_claims_they_name(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        screen = await _claims_screen(app, pilot)
        everything = field_claims(app.session.analysis.field)
        assert len(_shown(screen)) == len(everything) > 300
        assert "of 3" in rendered_text(screen.query_one("#claims-summary"))

        screen.query_one("Tabs").active = "preset-promoted"
        await pilot.pause()
        assert _shown(screen) == [(c.path, c.line) for c in everything if c.promoted_from]
        assert ("projects/brightline-pilot.md", next(c.line for c in everything if c.promoted_from)) in _shown(screen)

        screen.query_one("Tabs").active = "preset-uncited"
        await pilot.pause()
        shown = _shown(screen)
        assert shown and all(
            (c.tag, c.cited, c.status) == ("stated", False, "current") for c in everything if (c.path, c.line) in shown
        )
        assert any(path == "notes/feedback-short-status-replies.md" for path, _ in shown)

        screen.query_one("Tabs").active = "preset-superseded"
        await pilot.pause()
        shown = _shown(screen)
        assert shown and {c.status for c in everything if (c.path, c.line) in shown} == {"superseded"}
        assert any(path == "decisions/public-api-rest.md" for path, _ in shown)  # a superseded page's claims

        screen.query_one("Tabs").active = "preset-ideas"
        await pilot.pause()
        for path, line in _shown(screen):
            claim = next(c for c in everything if (c.path, c.line) == (path, line))
            assert claim.tag in ("suggested", "inferred") and claim.status == "current"
            info = app.session.field.pages[path]
            assert (
                info.kind == "decision" or (info.subject or "").startswith("decision") or path.startswith("decisions/")
            )


async def test_agent_idea_on_a_decision_subject_and_the_tag_key(sample_field: Path) -> None:
    write_page(
        sample_field,
        "decisions/queue-choice.md",
        "---\nid: mem_q1\ntitle: Queue choice\nkind: decision\nsubject: decision/queue\nreviewed: true\n---\n"
        "# Queue choice\n\n- Use SQS for the outbound queue. [suggested]\n- Dana measured 40 ms p95 on SQS. [observed]\n",
    )
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        screen = await _claims_screen(app, pilot)
        screen.query_one("Tabs").active = "preset-ideas"
        await pilot.pause()
        shown = _shown(screen)
        assert any(path == "decisions/queue-choice.md" for path, _ in shown)
        assert all(screen.by_key[k].tag in ("suggested", "inferred") for k in screen.query_one(PageTable).keys())
        screen.query_one("Tabs").active = "preset-all"
        await pilot.pause()
        await pilot.press("t")  # the first tag: [stated]
        await pilot.pause()
        assert {screen.by_key[k].tag for k in screen.query_one(PageTable).keys()} == {"stated"}
        for _ in range(4):  # stated -> observed -> inferred -> suggested -> every tag
            await pilot.press("t")
        await pilot.pause()
        assert screen.tag is None


async def test_overview_tag_count_opens_the_claims_with_that_tag(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("3")
        assert await wait_for_screen(app, pilot, OverviewScreen)
        await pilot.pause()
        tags = app.screen.query_one("#ov-tags", MarkedOptionList)
        tags.focus()
        tags.highlighted = [option.id for option in tags.options].index("suggested")
        await pilot.press("enter")
        assert await wait_for_screen(app, pilot, ClaimsScreen)
        screen = app.screen
        for _ in range(200):
            if screen.claims and screen.query_one(PageTable).row_count:
                break
            await pilot.pause(0.02)
        assert screen.tag == "suggested"
        kept = {screen.by_key[k].tag for k in screen.query_one(PageTable).keys()}
        assert kept == {"suggested"}
        assert len(screen.query_one(PageTable).keys()) == sum(1 for c in screen.claims if c.tag == "suggested")
        assert app.session.analysis.tag_totals["suggested"] == len(
            kept and screen.query_one(PageTable).keys()
        )  # the count opened


async def test_words_filter_and_enter_opens_the_page_at_the_claim(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        screen = await _claims_screen(app, pilot)
        await pilot.press("slash")
        for char in "tracking page":
            await pilot.press(char if char != " " else "space")
        await pilot.press("enter")  # back to the list
        await pilot.pause()
        shown = _shown(screen)
        assert shown and all("tracking page" in screen.by_key[f"{p}\n{n}"].text.casefold() for p, n in shown)
        path, line = shown[0]
        await pilot.press("enter")
        assert await wait_for_screen(app, pilot, PageScreen)
        page = app.screen
        assert page.path == path and page.jump_line == line and page._highlight  # opened lit up


async def test_hostile_claim_text_is_shown_inert(sample_field: Path) -> None:
    write_page(
        sample_field,
        "notes/hostile.md",
        "---\nid: mem_h1\ntitle: Hostile\nkind: semantic\nreviewed: true\n---\n"
        "# Hostile\n\n- [bold red]Pay[/] zzq now \x1b[31m at once [stated]\n",
    )
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        screen = await _claims_screen(app, pilot)
        screen.text_filter = "zzq"
        screen.refilter()
        await pilot.pause()
        table = screen.query_one(PageTable)
        assert table.row_count == 1
        cells = table._cells[table.keys()[0]]
        text = cells[4][0]
        assert "[bold red]Pay[/]" in text and "\x1b" not in text
