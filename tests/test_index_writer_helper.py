"""A large field's index writer in a helper process (``index/writer_helper.py``): real processes,
a real watcher and the real writer lock; the size from which it is used is lowered to one page."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from memtui.index import service as service_mod
from memtui.index.engine.readers import segment_readers
from memtui.index.store import IndexStore
from tests.helpers import write_page
from tests.helpers_index import (
    assert_matches_folder,
    page,
    search_paths,
    wait_for,
    watching,
)

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def helper_from_one_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(service_mod, "WRITER_HELPER_MIN_PAGES", 1)
    monkeypatch.delenv("MEMTUI_NO_WRITER_HELPER", raising=False)


def _gone(pid: int) -> bool:
    """The process has exited (a zombie not yet reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def _started(svc) -> int:
    helper = svc._helper
    assert helper is not None, "the writer's role went to a helper process"
    assert helper.opened.wait(30) and helper.writer, helper.failure
    return helper.proc.pid


def test_the_helper_keeps_the_index_current_and_this_process_searches_it(
    sample_field: Path, helper_from_one_page
) -> None:
    svc, recorder = watching(sample_field)
    try:
        pid = _started(svc)
        assert pid != os.getpid() and not _gone(pid)
        assert not IndexStore(svc.location).acquire_writer(), "the helper holds the writer lock"
        assert not svc._store.holds_writer()
        assert not svc.read_only and svc.state.mode in ("watching", "polling") and not svc.state.message
        write_page(sample_field, "notes/fresh.md", page("Fresh", "A pangolin walked by. [observed]"))
        assert svc.flush(10)
        assert search_paths(svc, "pangolin") == ["notes/fresh.md"]
        assert wait_for(lambda: "notes/fresh.md" in recorder.paths("changed"))  # the app re-reads it
        before = segment_readers(svc._searcher)
        write_page(sample_field, "notes/other.md", page("Other", "A tapir swam. [observed]"))
        assert svc.flush(10)
        assert search_paths(svc, "tapir") == ["notes/other.md"]
        kept = set(before) & set(segment_readers(svc._searcher))
        assert kept, "a commit in the same generation keeps the readers of the segments it did not touch"
        write_page(sample_field, "notes/fresh.md", page("Fresh", "An okapi now. [observed]"))
        (sample_field / "notes" / "other.md").unlink()
        assert svc.flush(10)
        assert search_paths(svc, "pangolin") == [] and search_paths(svc, "okapi") == ["notes/fresh.md"]
        assert search_paths(svc, "tapir") == []
        assert_matches_folder(svc)
        # The helper's busy flag comes in its state messages, and once in CI it still said busy
        # right after the flush (a watcher event after the helper's flush answered: this
        # process's own flush barrier is the suspect, not proven). It must settle, and soon.
        assert wait_for(lambda: not svc.writing(), timeout=2.0)
    finally:
        svc.close()
    assert _gone(pid), "closing the service stops its helper"
    store = IndexStore(svc.location)
    assert store.acquire_writer(), "and the writer lock is free again"
    store.release_writer()


def test_a_rebuild_and_a_rescan_are_done_by_the_helper(sample_field: Path, helper_from_one_page) -> None:
    svc, _ = watching(sample_field)
    try:
        _started(svc)
        before = svc.generation_dir
        phases: list[str] = []
        report = svc.rebuild(progress=lambda done, total, phase: phases.append(phase))
        assert report.rebuilt and svc.generation_dir != before and phases
        assert search_paths(svc, "public API decision")[0] == "decisions/public-api-trpc.md"
        svc.request_rescan()
        assert svc.flush(10)
        assert_matches_folder(svc)
    finally:
        svc.close()


def test_when_the_helper_dies_this_process_writes_the_index_again(sample_field: Path, helper_from_one_page) -> None:
    svc, _ = watching(sample_field)
    try:
        pid = _started(svc)
        os.kill(pid, signal.SIGKILL)
        taken_back = lambda: "keeps the index current itself" in svc.state.message  # noqa: E731
        assert wait_for(taken_back, timeout=15), "the lock is taken back within a supervision or two"
        assert svc._helper is None and svc._store.holds_writer() and svc._writer
        assert svc.state.mode in ("watching", "polling") and not svc.read_only
        write_page(sample_field, "notes/after.md", page("After", "A wombat dug. [observed]"))
        assert svc.flush(10)
        assert search_paths(svc, "wombat") == ["notes/after.md"]
    finally:
        svc.close()


def test_below_the_size_or_when_turned_off_the_writer_stays_in_process(sample_field: Path, monkeypatch) -> None:
    svc, _ = watching(sample_field)  # 70 pages, far below WRITER_HELPER_MIN_PAGES
    try:
        assert svc._helper is None and svc._store.holds_writer()
    finally:
        svc.close()
    monkeypatch.setattr(service_mod, "WRITER_HELPER_MIN_PAGES", 1)
    monkeypatch.setenv("MEMTUI_NO_WRITER_HELPER", "1")
    svc, _ = watching(sample_field)
    try:
        assert svc._helper is None and svc._store.holds_writer()
    finally:
        svc.close()


def test_the_helper_never_outlives_the_process_that_started_it(sample_field: Path) -> None:
    """``kill -9`` of the app: the helper sees its pipe close, closes the index and exits."""
    script = textwrap.dedent(
        f"""
        import sys, time
        from pathlib import Path
        from memtui.index import service
        service.WRITER_HELPER_MIN_PAGES = 1
        svc = service.IndexService(Path({str(sample_field)!r}))
        svc.open()
        svc.start_watching(lambda batch: None)
        assert svc._helper.opened.wait(30) and svc._helper.writer
        print(svc._helper.proc.pid, flush=True)
        time.sleep(120)
        """
    )
    env = {key: value for key, value in os.environ.items() if key != "MEMTUI_NO_WRITER_HELPER"}
    app = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=REPO, env=env)
    try:
        line = app.stdout.readline()
        assert line.strip().isdigit(), "the app process started its helper"
        pid = int(line)
        assert not _gone(pid)
        app.kill()
        app.wait(10)
        assert wait_for(lambda: _gone(pid), timeout=20), "the helper exits when the app is gone"
    finally:
        if app.poll() is None:
            app.kill()
        app.stdout.close()
    deadline = time.monotonic() + 10
    store = IndexStore(service_mod.IndexService(sample_field).location)
    while not store.acquire_writer():
        assert time.monotonic() < deadline, "nobody holds the writer lock once both are gone"
        time.sleep(0.1)
    store.release_writer()


async def test_the_app_with_its_writer_in_a_helper_shows_a_new_page_and_finds_it(
    sample_field: Path, helper_from_one_page
) -> None:
    from memtui.tui.widgets.page_table import PageTable
    from memtui.tui.widgets.status_bar import describe_sync
    from tests.helpers_tui import SIZE, make_app, wait_ready

    app = make_app(sample_field, use_index=True, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot, index=True)
        pid = _started(app.session.index)
        assert "read-only" not in describe_sync(app.session) and not app.session.index.read_only
        table = app.screen.query_one(PageTable)
        (sample_field / "notes" / "helper-wrote.md").write_text(page("Helper", "A quokka smiled. [observed]"))
        for _ in range(200):
            if "notes/helper-wrote.md" in table.keys() and search_paths(app.session.index, "quokka") == [
                "notes/helper-wrote.md"
            ]:
                break
            await pilot.pause(0.05)
        assert "notes/helper-wrote.md" in table.keys(), "the app read the page itself"
        assert search_paths(app.session.index, "quokka") == ["notes/helper-wrote.md"], (
            "and searches what the helper committed"
        )
    assert _gone(pid), "the app's exit stops the helper"
