"""Every ``@work`` of the app names its description.

Without one, Textual's decorator builds a description from the ``repr`` of every
argument at each call, on the calling thread: for ``save_rows(analysis)`` that was the
repr of 10,000 page rows and every finding, 1.3 s of the UI thread per analysis while
an agent wrote pages (seen with py-spy in the write-storm benchmark).
"""

from __future__ import annotations

import ast
from pathlib import Path

TUI = Path(__file__).resolve().parent.parent / "memtui" / "tui"


def test_every_worker_decorator_names_its_description() -> None:
    missing = []
    seen = 0
    for path in sorted(TUI.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for decorator in node.decorator_list:
                call = decorator if isinstance(decorator, ast.Call) else None
                name = getattr(
                    call.func if call else decorator, "id", getattr(call.func if call else decorator, "attr", None)
                )
                if name != "work":
                    continue
                seen += 1
                if call is None or not any(k.arg == "description" for k in call.keywords):
                    missing.append(f"{path.relative_to(TUI)}:{node.lineno} {node.name}")
    assert seen > 15  # the session's own threads are named by AppHost.run_thread
    assert missing == []


async def test_refills_asked_for_faster_than_they_finish_never_run_side_by_side(tmp_path, monkeypatch) -> None:
    """A cancelled thread worker runs on to its end: refills started while one ran piled up
    (each with a copy of every row), and an agent writing pages drove the app at 100,000
    pages to 18 GB. One runs at a time, and the newest rows are shown in the end."""
    import asyncio
    import shutil
    import threading
    import time

    from memtui.session.events import PagesChanged
    from memtui.tui.screens import browse
    from tests.conftest import SAMPLE_FIELD
    from tests.helpers_tui import SIZE, make_app, wait_ready

    root = tmp_path / "field"
    shutil.copytree(SAMPLE_FIELD, root)
    running, most, calls = [0], [0], [0]
    lock = threading.Lock()
    real = browse.fill_list

    def slow_fill(*args):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            calls[0] += 1
            seconds = min(0.6, 0.02 * 3 ** calls[0])  # each slower than the last: the machine is busier
        try:
            time.sleep(seconds)
            return real(*args)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(browse, "fill_list", slow_fill)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        screen = app.screen
        gone = next(iter(app.session.rows))
        for _ in range(30):
            app.events.publish(PagesChanged((), ()))
            await asyncio.sleep(0.02)
        app.session.rows = {path: row for path, row in app.session.rows.items() if path != gone}  # the newest state
        app.events.publish(PagesChanged((), ()))
        for _ in range(300):
            await pilot.pause(0.02)
            if (
                not getattr(getattr(screen, "_fills", None), "running", False)
                and screen._reload_timer is None
                and gone not in screen.rows
            ):
                break
        assert most[0] == 1
        assert gone not in screen.rows and len(screen.rows) == len(app.session.rows)


def test_latest_only_runs_one_at_a_time_and_then_only_the_newest_request() -> None:
    from memtui.session.latest_only import LatestOnly

    started: list[str] = []
    later: list = []
    runs = LatestOnly(started.append, later.append)
    runs.request("a")
    runs.request("b")
    runs.request("c")  # replaces b
    assert started == ["a"] and runs.running
    runs.finished()
    assert started == ["a"] and not runs.running and len(later) == 1  # started later, not inside finished()
    later.pop()()
    assert started == ["a", "c"] and runs.running
    runs.finished()
    assert later == [] and not runs.running


def test_latest_only_with_hold_counts_its_pause_as_running() -> None:
    """A paced worker (the row cache: a pause after each write): requests during the pause wait
    and only the newest runs when the pause ends; nothing starts beside it."""
    from memtui.session.latest_only import LatestOnly

    started: list[str] = []
    later: list = []
    runs = LatestOnly(started.append, later.append, hold=True)
    runs.request("a")
    runs.finished()
    assert runs.running and len(later) == 1 and runs.last_seconds >= 0  # a pause even with nothing waiting
    runs.request("b")  # during the pause: waits
    assert started == ["a"]
    later.pop()()
    assert started == ["a", "b"] and runs.running
    runs.request("c")
    runs.request("d")  # replaces c
    runs.finished()
    assert started == ["a", "b"] and runs.running and len(later) == 1
    runs.request("e")  # during the pause: replaces d, starts nothing
    assert started == ["a", "b"]
    later.pop()()
    assert started == ["a", "b", "e"] and runs.running
    runs.finished()
    later.pop()()  # the pause ends with nothing asked for
    assert later == [] and not runs.running
    runs.request("f")
    assert started == ["a", "b", "e", "f"]  # after the pause, a request starts at once


async def test_the_index_writer_never_waits_for_a_busy_app(tmp_path) -> None:
    """After each commit the index's thread hands the change to the app. It waited for the app
    to take it (call_from_thread): up to 115 ms a commit while an agent wrote, the index falling
    behind whenever the screen was slow. Now it posts and goes on; the app applies it after."""
    import shutil
    import threading
    import time

    from memtui.index import ChangeBatch
    from tests.conftest import SAMPLE_FIELD
    from tests.helpers import write_page
    from tests.helpers_field import page
    from tests.helpers_tui import SIZE, make_app, wait_ready

    root = tmp_path / "field"
    shutil.copytree(SAMPLE_FIELD, root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        write_page(root, "notes/handed-over.md", page("Handed over", "Posted, not waited for. [observed]"))
        returned = []

        def writer_thread() -> None:
            started = time.perf_counter()
            app.session.on_index_commit(ChangeBatch(added=["notes/handed-over.md"]))
            returned.append(time.perf_counter() - started)

        thread = threading.Thread(target=writer_thread)
        thread.start()
        time.sleep(0.5)  # the app's loop is busy (this test holds it)
        thread.join(timeout=5)
        assert returned and returned[0] < 0.25
        for _ in range(100):
            await pilot.pause(0.02)
            if "notes/handed-over.md" in app.session.field.pages:
                break
        assert "notes/handed-over.md" in app.session.field.pages


async def test_a_worker_that_cannot_start_as_the_app_closes_is_no_failure(tmp_path) -> None:
    """Seen at 100,000 pages as a write storm ended: a worker asked for while the app closed
    found the thread pool shut down, and Textual's report of that took minutes and 11 GB. A
    worker failing while the app runs is still a failure."""
    import shutil

    import pytest
    from textual.worker import WorkerFailed

    from tests.conftest import SAMPLE_FIELD
    from tests.helpers_tui import SIZE, make_app, wait_ready

    root = tmp_path / "field"
    shutil.copytree(SAMPLE_FIELD, root)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
    app._handle_exception(WorkerFailed(RuntimeError("Executor shutdown has been called")))
    assert app._exception is None and app.return_code in (None, 0)

    running = make_app(root)
    failure = WorkerFailed(RuntimeError("a real failure"))
    with pytest.raises(WorkerFailed):
        async with running.run_test(size=SIZE) as pilot:
            await wait_ready(running, pilot)
            running._handle_exception(failure)
            await pilot.pause()
    assert running._exception is failure and running.return_code == 1
