"""The analysis makes room for the search index: it calls back between its steps, and the session
waits there while the index has changes to commit, within a budget per analysis."""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from types import SimpleNamespace

from memtui.dialects.open import open_field
from memtui.field.check_memo import CheckMemo
from memtui.session.analysis import analyse
from memtui.session.session import INDEX_FIRST_S, Session

SAMPLE = Path(__file__).resolve().parent.parent / "sample-field"


def test_the_analysis_calls_back_between_its_steps(tmp_path: Path) -> None:
    root = tmp_path / "field"
    shutil.copytree(SAMPLE, root)
    field = open_field(str(root))
    calls: list[float] = []
    with_pauses = analyse(field.snapshot(), CheckMemo(), between=lambda: calls.append(time.perf_counter()))
    plain = analyse(field.snapshot())
    assert len(calls) >= 3
    assert with_pauses.rows == plain.rows and with_pauses.findings == plain.findings


class _Index:
    def __init__(self, busy: bool) -> None:
        self.busy = busy
        self.asked = 0

    def writing(self) -> bool:
        self.asked += 1
        return self.busy


def test_the_session_waits_for_a_busy_index_within_the_budget_of_one_analysis() -> None:
    app = SimpleNamespace(index=_Index(busy=True))
    budget = [INDEX_FIRST_S]
    started = time.perf_counter()
    Session._let_index_write(app, budget)
    waited = time.perf_counter() - started
    assert INDEX_FIRST_S * 0.9 <= waited and budget[0] <= 0
    asked = app.index.asked
    Session._let_index_write(app, budget)  # the budget is spent: no more waiting in this analysis
    assert app.index.asked == asked


def test_an_idle_index_costs_the_analysis_nothing() -> None:
    app = SimpleNamespace(index=_Index(busy=False))
    budget = [INDEX_FIRST_S]
    Session._let_index_write(app, budget)
    assert app.index.asked == 1 and budget[0] > INDEX_FIRST_S * 0.9
    Session._let_index_write(SimpleNamespace(index=None), budget)  # no index (yet): nothing to wait for
