"""Provenance side by side: following a citation shows the cited lines beside the claim."""

from __future__ import annotations

import asyncio
from pathlib import Path

from memtui.field.page import line_anchor
from memtui.tui.screens.page import PageScreen
from memtui.tui.screens.provenance import ProvenanceScreen
from memtui.tui.widgets.page_table import PageTable
from tests.helpers import write_page
from tests.helpers_tui import SIZE, make_app, rendered_text, wait_for_screen, wait_ready
from tests.test_tui_claims import _claims_screen

TRANSCRIPT = "".join(f"- 10:{n:02d} line {n} of the call\n" for n in range(1, 41))
DECISION = """---
title: Public API decision
subject: decision/public-api
sources: [sessions/2026-08-20-planning.md#L13-L18, "https://example.com/outside"]
---
# Public API

- Maya decided the public API moves to tRPC [cite:1]. [stated]
- A vendor said so on their blog [cite:2]. [observed]
- See the call itself: [the minutes](../sessions/2026-08-20-planning.md#L30-L32). [observed]
- Nobody cited this. [stated]
"""


def _field(tmp_path: Path) -> Path:
    root = tmp_path / "field"
    write_page(root, "sessions/2026-08-20-planning.md", "# Planning call\n\n" + TRANSCRIPT)
    write_page(root, "decisions/public-api.md", DECISION)
    write_page(root, "notes/other.md", "# Other\n\nNothing here. [observed]\n")
    return root


def _line_of(text: str, words: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if words in line)


def _pane_text(widget) -> str:
    return rendered_text(widget)


async def _open_decision(app, pilot) -> PageScreen:
    app.open_page("decisions/public-api.md")
    assert await wait_for_screen(app, pilot, PageScreen)
    await pilot.pause()
    return app.screen


async def _follow_first_citation(app, pilot) -> tuple[PageScreen, ProvenanceScreen]:
    page = await _open_decision(app, pilot)
    page.follow_link(next(i for i, link in enumerate(page.links) if link.kind == "cite"))
    assert await wait_for_screen(app, pilot, ProvenanceScreen)
    await pilot.pause()
    return page, app.screen


def test_line_anchors_name_the_cited_lines() -> None:
    assert line_anchor("sessions/a.md#L13-L18") == (13, 18)
    assert line_anchor("sessions/a.md#L13-18") == (13, 18)
    assert line_anchor("sessions/a.md#L7") == (7, 7)
    assert line_anchor("sessions/a.md#L18-L13") == (13, 18)
    assert line_anchor("sessions/a.md#L7 (the call)") == (7, 7)
    for no_line in ("sessions/a.md", "a.md#Lunch", "a.md#L12abc", "a.md#L0", "a.md#section"):
        assert line_anchor(no_line) is None


async def test_a_citation_opens_the_cited_lines_beside_the_claim(tmp_path: Path) -> None:
    root = _field(tmp_path)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        page = await _open_decision(app, pilot)
        claim_line = _line_of(DECISION, "moves to tRPC")
        cite = next(i for i, link in enumerate(page.links) if link.kind == "cite" and link.target == "1")
        page.selected_link = cite
        await pilot.press("enter")
        assert await wait_for_screen(app, pilot, ProvenanceScreen)
        screen = app.screen
        await pilot.pause()
        await pilot.pause()
        # Right: the transcript, its lines 13 to 18 lit up and in view.
        assert screen.path == "sessions/2026-08-20-planning.md"
        body = screen.body
        rows = body.rows
        assert body.highlighted == (rows.row_of(13), rows.row_of(18))
        assert body.row_visible(rows.row_of(13)) and body.row_visible(rows.row_of(18))
        # Left: the decision page, the claim's own line lit up and in view.
        claim = screen.claim_body
        assert claim.highlighted == (claim.rows.row_of(claim_line),) * 2
        assert claim.row_visible(claim.rows.row_of(claim_line))
        assert "moves to tRPC" in _pane_text(claim)
        assert "line 11 of the call" in _pane_text(body)  # line 13 of the file: "# Planning call", "", then 11
        titles = rendered_text(screen.query_one("#claim-title")) + rendered_text(screen.query_one("#source-title"))
        assert f"decisions/public-api.md  L{claim_line}" in titles
        assert "L13-18" in titles and "[cite:1]" in titles
        # Both are in sight on one screen: the two panes sit side by side.
        assert claim.region.width > 30 and body.region.width > 30
        assert claim.region.x + claim.region.width <= body.region.x
        # tab moves between them; the scrolling keys scroll the focused one.
        assert app.focused is body
        await pilot.press("tab")
        assert app.focused is claim
        # o: the cited page alone, still lit up; escape twice: back to the claim's page.
        await pilot.press("o")
        assert await wait_for_screen(app, pilot, PageScreen)
        await pilot.pause()
        alone = app.screen
        assert type(alone) is PageScreen and alone.path == "sessions/2026-08-20-planning.md"
        assert alone.body.highlighted == (alone.body.rows.row_of(13), alone.body.rows.row_of(18))
        await pilot.press("escape")
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is page


async def test_a_markdown_link_with_a_line_anchor_opens_side_by_side(tmp_path: Path) -> None:
    root = _field(tmp_path)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        page = await _open_decision(app, pilot)
        link = next(i for i, target in enumerate(page.links) if target.kind == "url")
        page.follow_link(link)
        assert await wait_for_screen(app, pilot, ProvenanceScreen)
        await pilot.pause()
        screen = app.screen
        rows = screen.body.rows
        assert screen.body.highlighted == (rows.row_of(30), rows.row_of(32))
        assert screen.claim_body.highlighted[0] == screen.claim_body.rows.row_of(_line_of(DECISION, "the minutes"))


async def test_a_citation_outside_the_field_says_so_and_stays(tmp_path: Path) -> None:
    root = _field(tmp_path)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        page = await _open_decision(app, pilot)
        cite = next(i for i, link in enumerate(page.links) if link.kind == "cite" and link.target == "2")
        page.follow_link(cite)
        await pilot.pause()
        assert app.screen is page
        assert any("outside this field" in str(n.message) for n in app._notifications)


async def test_the_claims_list_opens_a_claims_evidence_beside_it(tmp_path: Path) -> None:
    root = _field(tmp_path)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        screen = await _claims_screen(app, pilot)
        table = screen.query_one(PageTable)
        key = next(k for k in table.keys() if "moves to tRPC" in screen.by_key[k].text)
        assert table.move_to(key)
        await pilot.press("p")
        assert await wait_for_screen(app, pilot, ProvenanceScreen)
        provenance = app.screen
        for _ in range(100):  # the claim's page is read in a worker
            if provenance.claim_rows is not None:
                break
            await pilot.pause(0.02)
        await pilot.pause()
        line = _line_of(DECISION, "moves to tRPC")
        assert provenance.claim_body.highlighted == (provenance.claim_body.rows.row_of(line),) * 2
        assert provenance.body.highlighted == (provenance.body.rows.row_of(13), provenance.body.rows.row_of(18))
        # An uncited claim says it cites nothing, and nothing opens.
        await pilot.press("escape")
        await pilot.pause()
        key = next(k for k in table.keys() if "Nobody cited this" in screen.by_key[k].text)
        assert table.move_to(key)
        await pilot.press("p")
        await pilot.pause()
        assert app.screen is screen
        assert any("cites no evidence" in str(n.message) for n in app._notifications)


async def test_on_a_narrow_terminal_the_claim_sits_above_its_evidence(tmp_path: Path) -> None:
    root = _field(tmp_path)
    app = make_app(root)
    async with app.run_test(size=(80, 30)) as pilot:
        await wait_ready(app, pilot)
        _page, screen = await _follow_first_citation(app, pilot)
        claim, body = screen.claim_body, screen.body
        assert claim.region.height >= 3 and body.region.height >= 10
        assert claim.region.y + claim.region.height <= body.region.y
        assert "moves to tRPC" in _pane_text(claim)
        assert body.row_visible(body.rows.row_of(13))


async def test_the_claim_pane_says_when_its_page_changed_on_disk(tmp_path: Path) -> None:
    root = _field(tmp_path)
    app = make_app(root, use_index=True, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot, index=True)
        page, screen = await _follow_first_citation(app, pilot)
        write_page(root, "decisions/public-api.md", DECISION.replace("tRPC", "gRPC"))
        for _ in range(250):
            if screen.claim_changed:
                break
            await asyncio.sleep(0.02)
        assert screen.claim_changed
        await pilot.pause()
        assert "changed on disk since" in rendered_text(screen.query_one("#claim-title"))
        await pilot.press("escape")
        for _ in range(100):
            if "gRPC" in _pane_text(page.body):
                break
            await pilot.pause(0.02)
        assert "gRPC" in _pane_text(page.body)
