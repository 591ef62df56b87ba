"""The review loop: decisions aimed at the highlighted item only, kept in place, undoable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtui.review import ledger
from memtui.store.locations import state_dir
from memtui.tui.screens.dialogs import ChoiceDialog, ConfirmDialog, TextDialog
from memtui.tui.screens.page import PageScreen
from memtui.tui.screens.proposals import ProposalsScreen
from memtui.tui.screens.quarantine import QuarantineScreen
from tests.helpers_tui import SIZE, make_app, wait_ready

PORTLINK = "quarantine/portlink-pricing-2027.md"
TRACKSTREAM = "quarantine/trackstream-2027-list-price.md"
EDI = "quarantine/edi-214-status-codes.md"
HOSTILE = "quarantine/vendor-pricing-update.md"
DEDUPE = "2026-11-27-dedupe-01"
EXPIRE = "2026-11-27-expire-01"


pytestmark = pytest.mark.usefixtures("reviewer_maya")


def _ledger(root: Path) -> list[dict]:
    path = state_dir(root) / "ledger.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def settle(app, pilot) -> None:
    for _ in range(3):
        await app.workers.wait_for_complete()
        await pilot.pause()


async def open_queue(app, pilot, key: str, screen_type):
    await wait_ready(app, pilot)
    await pilot.press(key)
    for _ in range(200):
        await pilot.pause(0.02)
        if isinstance(app.screen, screen_type) and app.screen.queue is not None:
            break
    await settle(app, pilot)
    return app.screen


async def until_review(app, pilot, screen: ProposalsScreen, proposal_id: str) -> None:
    for _ in range(200):
        await pilot.pause(0.02)
        if screen.review is not None and screen.review.proposal.id == proposal_id:
            return
    raise AssertionError(f"{proposal_id} never loaded")


def option_text(screen, value: str) -> str:
    widget = screen.queue_list
    for option_id, (_kind, v) in screen._options.items():
        if v == value:
            return widget.get_option(option_id).prompt.plain
    raise AssertionError(f"no option for {value}")


async def answer(pilot, text: str) -> None:
    assert isinstance(pilot.app.screen, TextDialog)
    await pilot.press(*text)
    await pilot.press("enter")
    await pilot.pause()


# --------------------------------------------------------------------------- quarantine


async def test_a_decided_page_stays_struck_the_cursor_moves_on_and_the_next_key_decides_the_next_page(
    sample_field: Path,
) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_queue(app, pilot, "4", QuarantineScreen)
        assert screen._highlighted() == ("page", PORTLINK)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceDialog) and app.screen.focused.id == "choice-approve"
        await pilot.press("enter")
        await settle(app, pilot)
        # the decided item stays in place, struck through, with its decision as a word
        assert screen._highlighted() == ("page", TRACKSTREAM)
        assert "APPROVED" in option_text(screen, PORTLINK)
        assert screen.focused is screen.queue_list
        assert screen.review is not None and screen.review.path == TRACKSTREAM
        # the next keys decide the page now on screen, nothing else
        await pilot.press("x")
        await pilot.pause()
        await answer(pilot, "list price rumour")
        await settle(app, pilot)
        assert "REJECTED" in option_text(screen, TRACKSTREAM)
        assert screen._highlighted() == ("page", EDI)
    decided = [(e["action"], e["target"]) for e in _ledger(sample_field)]
    assert decided == [("quarantine-approve", PORTLINK), ("quarantine-reject", TRACKSTREAM)]


async def test_z_undoes_the_latest_decision(sample_field: Path) -> None:
    before = (sample_field / HOSTILE).read_bytes()
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_queue(app, pilot, "4", QuarantineScreen)
        screen._highlight(HOSTILE)
        await pilot.pause()
        await pilot.press("x")
        await pilot.pause()
        await answer(pilot, "prompt injection")
        await settle(app, pilot)
        assert not (sample_field / HOSTILE).exists()
        await pilot.press("z")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog) and app.screen.focused.id == "choice-yes"
        assert "rejected quarantine/vendor-pricing-update.md" in app.screen.body.plain
        await pilot.press("enter")
        await settle(app, pilot)
        assert (sample_field / HOSTILE).read_bytes() == before
        assert screen._highlighted() == ("page", HOSTILE)
        assert "REJECTED" not in option_text(screen, HOSTILE)
    assert [e["action"] for e in _ledger(sample_field)] == ["quarantine-reject", "decision-undo"]


async def test_danger_flags_and_bulk_actions_focus_cancel(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_queue(app, pilot, "4", QuarantineScreen)
        screen._highlight(HOSTILE)
        await pilot.pause()
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceDialog) and app.screen.focused.id == "choice-cancel"
        await pilot.press("enter")  # a then Enter no longer approves an injection attempt
        await settle(app, pilot)
        screen._highlight(PORTLINK)
        await pilot.pause()
        await pilot.press("A")  # approve the whole session
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog) and app.screen.focused.id == "choice-no"
        assert "danger" in app.screen.body.plain
        await pilot.press("enter")
        await settle(app, pilot)
    assert _ledger(sample_field) == []
    assert (sample_field / HOSTILE).exists()


async def test_the_decided_view_shows_who_when_why_and_reopens(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_queue(app, pilot, "4", QuarantineScreen)
        screen._highlight(EDI)
        await pilot.pause()
        await pilot.press("x")
        await pilot.pause()
        await answer(pilot, "duplicate of a reviewed page")
        await settle(app, pilot)
        await pilot.press("d")
        await pilot.pause()
        assert screen.show_decided and screen._highlighted()[0] == "record"
        text = option_text(screen, "0")
        assert "REJECTED" in text and EDI in text and "maya" in text and "duplicate of a reviewed page" in text
        await pilot.press("z")
        await pilot.pause()
        await pilot.press("enter")
        await settle(app, pilot)
        assert not screen.show_decided
        assert (sample_field / EDI).exists()
        assert screen._highlighted() == ("page", EDI)


async def test_enter_on_a_queue_item_opens_it(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_queue(app, pilot, "4", QuarantineScreen)
        screen._highlight(EDI)
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, PageScreen) and app.screen.path == EDI


async def test_slash_filters_the_queue_in_place(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_queue(app, pilot, "4", QuarantineScreen)
        await pilot.press("slash")
        await pilot.press(*"edi")
        await pilot.pause()
        pages = [v for kind, v in screen._options.values() if kind == "page"]
        assert pages == [EDI]
        await pilot.press("enter")  # back to the list, filter kept
        await pilot.pause()
        assert screen.focused is screen.queue_list
        await pilot.press("slash", "escape")
        await pilot.pause()
        assert len([v for kind, v in screen._options.values() if kind == "page"]) == 5
        assert screen.focused is screen.queue_list


async def test_the_queue_count_matches_the_command_line(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_queue(app, pilot, "4", QuarantineScreen)
        assert app.session.analysis.counts["quarantined"] == len(screen.queue.quarantined) == 4
        assert app.session.analysis.counts["tainted_sessions"] == 1
        status = app.screen.query_one("#status-text").render()
        assert "4 quarantined" in str(status)
        header = screen.queue_list.get_option_at_index(0).prompt.plain
        assert "4 waiting" in header
        notes = [screen.queue_list.get_option_at_index(i).prompt.plain for i in range(screen.queue_list.option_count)]
        assert any("1 tainted session transcript not counted" in note for note in notes)


# --------------------------------------------------------------------------- proposals


async def test_proposal_decisions_stay_in_place_are_undoable_and_show_the_regret_rate(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_queue(app, pilot, "5", ProposalsScreen)
        screen._highlight(DEDUPE)
        await until_review(app, pilot, screen, DEDUPE)
        await pilot.press("a")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ChoiceDialog)
        body = dialog.body.plain
        assert "changes notes/brightline-pilot-sla.md" in body and "retires" in body  # every page it changes or retires
        await pilot.press("enter")
        await settle(app, pilot)
        assert screen.focused is screen.proposal_list
        assert screen._highlighted_id() == EXPIRE  # the next pending one
        decided = next(oid for oid, pid in screen._ids.items() if pid == DEDUPE)
        assert "APPROVED" in screen.proposal_list.get_option(decided).prompt.plain
        header = screen.proposal_list.get_option_at_index(0).prompt.plain
        assert "regret rate 0% (0/1 reverted)" in header
        # revert: the diff comes first, the reason after
        screen._highlight(DEDUPE)
        await until_review(app, pilot, screen, DEDUPE)
        await pilot.press("u")
        await pilot.pause()
        assert isinstance(app.screen, ChoiceDialog) and "Revert" in app.screen.dialog_title
        await pilot.press("enter")
        await pilot.pause()
        await answer(pilot, "both pages were needed")
        await settle(app, pilot)
        header = screen.proposal_list.get_option_at_index(0).prompt.plain
        assert "regret rate 100% (1/1 reverted)" in header
        # approve another and take it back with z: pending again, not counted as regret
        screen._highlight(EXPIRE)
        await until_review(app, pilot, screen, EXPIRE)
        await pilot.press("a")
        await pilot.pause()
        await pilot.press("enter")
        await settle(app, pilot)
        await pilot.press("z")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmDialog)
        await pilot.press("enter")
        await settle(app, pilot)
        assert screen.queue.get(EXPIRE).pending
        header = screen.proposal_list.get_option_at_index(0).prompt.plain
        assert "regret rate 100% (1/1 reverted)" in header
    actions = [(e["action"], e["target"]) for e in _ledger(sample_field)]
    assert actions == [
        ("proposal-approve", DEDUPE),
        ("proposal-revert", DEDUPE),
        ("proposal-approve", EXPIRE),
        ("decision-undo", EXPIRE),
    ]


async def test_a_decision_waits_for_the_highlighted_review(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_queue(app, pilot, "5", ProposalsScreen)
        screen._highlight(DEDUPE)
        await until_review(app, pilot, screen, DEDUPE)
        screen.review = None  # as while the next one loads
        await pilot.press("x")
        await pilot.pause()
        assert isinstance(app.screen, ProposalsScreen)
        assert any("still loading" in n.message for n in app._notifications)
    assert _ledger(sample_field) == []


async def test_enter_opens_the_proposal_review(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_queue(app, pilot, "5", ProposalsScreen)
        await pilot.press("enter")
        await pilot.pause()
        assert screen.focused is screen.query_one("#review-scroll")
        await pilot.press("escape")
        await pilot.pause()
        assert screen.focused is screen.proposal_list


async def test_ledger_in_force_after_tui_undo(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_queue(app, pilot, "5", ProposalsScreen)
        screen._highlight(DEDUPE)
        await until_review(app, pilot, screen, DEDUPE)
        await pilot.press("x")
        await pilot.pause()
        await answer(pilot, "keep both")
        await settle(app, pilot)
        await pilot.press("z", "enter")
        await settle(app, pilot)
    assert ledger.in_force(ledger.read(sample_field).entries) == []
