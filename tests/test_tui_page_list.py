"""The browse list made from the last one (after a few rows changed) is the list made from
every row: the same rows in the same order, the same tab counts, the same column widths."""

from __future__ import annotations

import random

import pytest

from memtui.render.glyphs import PENDING
from memtui.session.rows import FILTERS, PageRow, make_cells
from memtui.tui import page_list
from memtui.tui.page_list import SORTS, fill_list

FITTED = (("state", 0, 7),)
TRUSTS = ("reviewed", "unreviewed", "quarantined", "unknown", PENDING)
STATUSES = ("current", "superseded", "stale", "unknown")


def _row(rng: random.Random, path: str) -> PageRow:
    return make_cells(
        PageRow(
            path,
            rng.choice(["Alpha", "beta", "Gamma note", "delta", "Alpha"]),
            rng.choice(["", "note", "decision"]),
            rng.choice(["", "release", "Release", "pricing"]),
            rng.choice(["", "2026-11-30", "2026-12-01"]),
            rng.choice(TRUSTS),
            rng.choice(STATUSES),
            rng.choice([0, 0, 1]),
            rng.choice([0, 2]),
            rng.choice([0, 0, 1]),
        )
    )


def _same(made, whole) -> None:
    assert [row.path for row in made.visible] == [row.path for row in whole.visible]
    assert made.prepared.keys == whole.prepared.keys
    assert made.prepared.index == whole.prepared.index == {key: i for i, key in enumerate(made.prepared.keys)}
    assert made.prepared.cells == whole.prepared.cells
    assert made.prepared.fit == whole.prepared.fit
    assert made.counts == whole.counts


@pytest.mark.parametrize("step", [7, page_list.STEP])  # rows per step of the walks made in C
@pytest.mark.parametrize("sort", SORTS)
def test_a_refill_from_the_last_list_is_the_list_made_from_every_row(sort: str, step: int, monkeypatch) -> None:
    monkeypatch.setattr(page_list, "STEP", step)
    rng = random.Random(sort)
    rows = {f"notes/p{n:03}.md": _row(rng, f"notes/p{n:03}.md") for n in range(300)}
    for filter_name, query, reverse in [
        ("all", "", False),
        ("unreviewed", "", True),
        ("findings", "alpha", False),
        ("superseded", "", True),
        ("all", "release", True),
    ]:
        assert filter_name in FILTERS
        state = fill_list(rows, filter_name, query, sort, reverse, FITTED)
        current = dict(rows)
        for _ in range(40):
            current = dict(current)  # the app hands each refill a copy of its rows
            for _ in range(rng.randint(1, 6)):
                action = rng.random()
                if action < 0.5:
                    path = rng.choice(list(current))
                    current[path] = _row(rng, path)  # a new row object: what an analysis makes for a change
                elif action < 0.75:
                    current.pop(rng.choice(list(current)))
                else:
                    path = f"new/q{rng.randrange(10**6)}.md"
                    current[path] = _row(rng, path)
            state = fill_list(current, filter_name, query, sort, reverse, FITTED, state)
            _same(state, fill_list(current, filter_name, query, sort, reverse, FITTED))


def test_a_refill_takes_out_and_puts_back_only_the_rows_that_changed(monkeypatch) -> None:
    """Only changed rows are given their sort key again; a kept list out of step (a row not where
    its key says) is made again from every row instead of being trusted."""
    rng = random.Random(5)
    rows = {f"p{n:04}.md": _row(rng, f"p{n:04}.md") for n in range(2000)}
    state = fill_list(rows, "all", "", "title", False, FITTED)
    keyed = []
    real = page_list.sort_key

    def counting(name):
        key = real(name)
        return lambda row: keyed.append(row.path) or key(row)

    monkeypatch.setattr(page_list, "sort_key", counting)
    changed = dict(rows)
    changed["p0007.md"] = _row(rng, "p0007.md")
    again = fill_list(changed, "all", "", "title", False, FITTED, state)
    assert sorted(set(keyed)) == ["p0007.md"] and len(keyed) == 2  # the old row out, the new one in
    _same(again, fill_list(changed, "all", "", "title", False, FITTED))
    state.ascending.reverse()  # out of step with its keys
    keyed.clear()
    remade = fill_list(changed, "all", "", "title", False, FITTED, state)
    assert len(keyed) > 1000
    _same(remade, fill_list(changed, "all", "", "title", False, FITTED))


async def test_sorting_by_state_puts_what_needs_review_first_and_knows_every_state(tmp_path) -> None:
    """The sample field has pages with no review record and stale pages: the state sort had no
    rank for them and the app failed on the fifth ``s``."""
    import shutil

    from memtui.tui.page_list import STATE_RANK
    from tests.conftest import SAMPLE_FIELD
    from tests.helpers_tui import SIZE, make_app, wait_ready

    root = tmp_path / "field"
    shutil.copytree(SAMPLE_FIELD, root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        screen = app.screen
        while screen.sort != "state":
            await pilot.press("s")
            await pilot.pause(0.05)
        await pilot.pause(0.2)
        listed = [row for row in screen._visible_rows()]
        shown = screen.query_one("#page-list").keys()
        states = {state for row in listed for state in row.states()}
        assert {"unknown", "quarantined"} <= states and states <= set(STATE_RANK)
        ranks = [min((STATE_RANK[s] for s in app.session.rows[path].states()), default=10) for path in shown]
        assert ranks == sorted(ranks) and len(shown) == len(app.session.rows)
        assert app.session.rows[shown[0]].trust == "quarantined"
    assert app.return_code in (None, 0) and app._exception is None
