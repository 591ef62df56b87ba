"""The watcher keeps the index equal to the folder: real folders, a real watchdog observer."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import pytest

from memtui.index import IndexService
from memtui.index import watcher as watcher_mod
from memtui.textsafety import has_hazards
from tests.helpers import write_page
from tests.helpers_index import (
    Recorder,
    assert_matches_folder,
    page,
    search_paths,
    wait_for,
    watching,
)

NOTE = "notes/pref-weekly-update-bullets.md"


@pytest.fixture
def live(sample_field: Path):
    svc, recorder = watching(sample_field)
    assert svc.state.mode == "watching"
    yield sample_field, svc, recorder
    svc.close()


def _add_word(path: Path, word: str) -> bytes:
    return (path.read_text() + f"\n- We saw a {word} today. [observed]\n").encode()


# ---------------------------------------------------------------------- editors' save patterns
def save_in_place(path: Path, data: bytes) -> None:
    with open(path, "r+b") as handle:
        handle.truncate(0)
        handle.write(data)


def save_temp_then_rename(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def save_like_vim(path: Path, data: bytes) -> None:
    backup = path.with_name(path.name + "~")
    probe = path.parent / "4913"  # vim checks it may create files in the folder
    probe.write_bytes(b"")
    probe.unlink()
    os.rename(path, backup)
    path.write_bytes(data)
    swap = path.with_name(f".{path.name}.swp")
    swap.write_bytes(b"vim swap")
    backup.unlink()


def save_like_jetbrains(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + "___jb_tmp___")
    old = path.with_name(path.name + "___jb_old___")
    tmp.write_bytes(data)
    os.rename(path, old)
    os.rename(tmp, path)
    old.unlink()


def save_like_emacs(path: Path, data: bytes) -> None:
    lock = path.with_name(f".#{path.name}")
    os.symlink("user@host.1234:1790000000", lock)  # emacs's lock is a dangling symlink
    backup = path.with_name(path.name + "~")
    shutil.copy2(path, backup)
    path.write_bytes(data)
    lock.unlink()


@pytest.mark.parametrize(
    "save", [save_in_place, save_temp_then_rename, save_like_vim, save_like_jetbrains, save_like_emacs]
)
def test_every_save_pattern_reaches_the_index(live, save) -> None:
    root, svc, recorder = live
    target = root / NOTE
    save(target, _add_word(target, "wombat"))
    assert svc.flush()
    assert search_paths(svc, "wombat") == [NOTE]
    assert NOTE in recorder.paths("changed")
    scratch = {p for p in svc.indexed_inputs() if p.endswith(("~", ".swp", "___", ".tmp")) or "/.#" in p}
    assert not scratch
    assert_matches_folder(svc)


def test_a_touch_changes_nothing_but_is_remembered(live) -> None:
    root, svc, recorder = live
    target = root / NOTE
    before = svc.indexed_inputs()
    os.utime(target, ns=(target.stat().st_atime_ns, target.stat().st_mtime_ns + 3_000_000_000))
    assert svc.flush()
    assert not recorder.paths("changed")
    assert svc.indexed_inputs() == before
    svc.close()
    again = IndexService(root)
    try:
        assert again.open().up_to_date  # the new mtime was stored: nothing to re-read
    finally:
        again.close()


def test_create_delete_and_move_are_reported_after_commit(live) -> None:
    root, svc, recorder = live
    found_in_callback: list[list[str]] = []
    svc.start_watching(lambda batch: found_in_callback.append(search_paths(svc, "okapi")))
    write_page(root, "notes/new.md", page("New", "An okapi grazed. [observed]"))
    assert svc.flush()
    assert "notes/new.md" in recorder.paths("added")
    assert ["notes/new.md"] in found_in_callback  # committed before subscribers hear of it
    os.rename(root / "notes/new.md", root / "notes/renamed.md")
    assert svc.flush()
    assert ("notes/new.md", "notes/renamed.md") in recorder.moved()
    assert search_paths(svc, "okapi") == ["notes/renamed.md"]
    (root / "notes/renamed.md").unlink()
    assert svc.flush()
    assert "notes/renamed.md" in recorder.paths("removed")
    assert search_paths(svc, "okapi") == []
    assert_matches_folder(svc)


def test_a_burst_of_500_writes(live) -> None:
    root, svc, _ = live
    for number in range(500):
        write_page(root, f"burst/b{number // 50}/page-{number}.md", page(f"Burst {number}", f"Item burstword{number}."))
    for number in range(0, 500, 5):  # rewrite a fifth of them at once
        write_page(root, f"burst/b{number // 50}/page-{number}.md", page(f"Burst {number}", f"Item rewritten{number}."))
    assert svc.flush(timeout=60)
    assert search_paths(svc, "burstword7") == ["burst/b0/page-7.md"]
    assert search_paths(svc, "rewritten5") == ["burst/b0/page-5.md"]
    assert search_paths(svc, "burstword5") == []
    assert_matches_folder(svc)


def test_a_folder_moved_in_moved_around_and_deleted(live, tmp_path: Path) -> None:
    root, svc, _recorder = live
    outside = tmp_path / "outside" / "imported"
    for number in range(30):
        write_page(outside, f"deep/p{number}.md", page(f"Imported {number}", f"Carries marker{number}. [stated]"))
    os.rename(outside, root / "imported")
    assert svc.flush()
    assert search_paths(svc, "marker12") == ["imported/deep/p12.md"]
    assert_matches_folder(svc)
    os.rename(root / "imported", root / "archive-2026")
    assert svc.flush()
    assert search_paths(svc, "marker12") == ["archive-2026/deep/p12.md"]
    assert_matches_folder(svc)
    shutil.rmtree(root / "archive-2026")
    shutil.rmtree(root / "quarantine")
    assert svc.flush()
    assert search_paths(svc, "marker12") == []
    assert not [p for p in svc.indexed_inputs() if p.startswith("quarantine/")]
    assert_matches_folder(svc)


def test_the_index_deleted_while_running_is_rebuilt(live) -> None:
    root, svc, recorder = live
    old = svc.generation_dir
    shutil.rmtree(svc.location)
    assert wait_for(lambda: svc.generation_dir != old and svc.generation_dir.is_dir(), timeout=20)
    assert svc.flush()
    assert recorder.batches and recorder.batches[-1].rescanned
    write_page(root, "notes/after.md", page("After", "A capybara after the rebuild. [observed]"))
    assert svc.flush()
    assert search_paths(svc, "capybara") == ["notes/after.md"]
    assert_matches_folder(svc)


def test_the_index_truncated_while_running_is_rebuilt(live) -> None:
    _root, svc, _ = live
    old = svc.generation_dir
    segment = max((p for p in old.iterdir() if p.suffix == ".seg"), key=lambda p: p.stat().st_size)
    with open(segment, "r+b") as handle:
        handle.truncate(100)
    assert wait_for(lambda: svc.generation_dir != old, timeout=20)
    assert svc.flush()
    assert svc.search("public API decision")[0].path == "decisions/public-api-trpc.md"
    assert_matches_folder(svc)


def test_a_fifo_named_like_a_page_does_not_block(live) -> None:
    root, svc, _ = live
    os.mkfifo(root / "notes/trap.md")
    write_page(root, "notes/after-trap.md", page("After", "A gecko passed. [observed]"))
    assert svc.flush()
    assert search_paths(svc, "gecko") == ["notes/after-trap.md"]
    assert "notes/trap.md" not in svc.indexed_inputs()


def test_a_failing_subscriber_does_not_stop_indexing(live) -> None:
    root, svc, _ = live

    def broken(batch) -> None:
        raise RuntimeError("subscriber bug")

    svc.start_watching(broken)
    write_page(root, "notes/one.md", page("One", "An ibex. [observed]"))
    assert svc.flush()
    assert "subscriber" in svc.state.message
    write_page(root, "notes/two.md", page("Two", "A kudu. [observed]"))
    assert svc.flush()
    assert search_paths(svc, "kudu") == ["notes/two.md"]


def test_a_dead_observer_is_replaced_and_the_folder_rescanned(live) -> None:
    root, svc, _recorder = live
    dead = svc._watcher.observer
    dead.stop()
    dead.join(5)
    write_page(root, "notes/unseen.md", page("Unseen", "A dugong while nobody watched. [observed]"))
    assert wait_for(lambda: svc._watcher.observer is not dead and svc.state.mode == "watching", timeout=20)
    assert wait_for(lambda: search_paths(svc, "dugong") == ["notes/unseen.md"], timeout=20)
    assert svc.flush()
    assert_matches_folder(svc)


def test_a_queue_overflow_triggers_a_full_rescan(sample_field: Path) -> None:
    svc = IndexService(sample_field)
    svc.open()
    # A change the watcher cannot see (made before it starts), like events lost in an overflow.
    write_page(sample_field, "notes/lost.md", page("Lost", "A manatee nobody reported. [observed]"))
    recorder = Recorder()
    svc.start_watching(recorder)
    try:
        assert svc.flush()
        assert search_paths(svc, "manatee") == []
        svc._watcher.listener.queue_overflow()
        assert wait_for(lambda: search_paths(svc, "manatee") == ["notes/lost.md"], timeout=20)
        assert "overflowed" in svc.state.message
        # The batch is reported after the commit a search may already see: wait for it too.
        assert wait_for(lambda: any(batch.rescanned for batch in recorder.batches), timeout=5)
        assert_matches_folder(svc)
    finally:
        svc.close()


def test_without_inotify_it_polls_and_says_so(sample_field: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_watches(listener):
        raise OSError(errno.ENOSPC, "inotify watch limit reached")

    monkeypatch.setattr(watcher_mod, "inotify_observer", no_watches)
    svc, _ = watching(sample_field)
    try:
        assert svc.state.mode == "polling"
        assert "watch limit" in svc.state.message and "polling" in svc.state.message
        write_page(sample_field, "notes/polled.md", page("Polled", "A quokka, found by polling. [observed]"))
        assert svc.flush(timeout=15)
        assert search_paths(svc, "quokka") == ["notes/polled.md"]
    finally:
        svc.close()


def test_folders_inotify_could_not_watch_switch_to_polling(live) -> None:
    root, svc, _ = live
    svc._watcher.listener.watch_failed(str(root / "notes"))
    assert wait_for(lambda: svc.state.mode == "polling", timeout=20)
    assert "could not watch 1 folder" in svc.state.message
    write_page(root, "notes/polled.md", page("Polled", "A numbat, found by polling. [observed]"))
    assert svc.flush(timeout=15)
    assert search_paths(svc, "numbat") == ["notes/polled.md"]


def test_hostile_text_stays_inert_in_results(live) -> None:
    _root, svc, _ = live
    hits = svc.search("vendor pricing update")
    hostile = next(h for h in hits if h.path == "quarantine/vendor-pricing-update.md")
    assert hostile.trust == "quarantined"
    assert not has_hazards(hostile.snippet)


def test_state_reports_modes_and_counts(sample_field: Path) -> None:
    svc = IndexService(sample_field)
    svc.open()
    try:
        assert svc.state.mode == "stopped" and svc.state.indexed_pages > 60
        svc.start_watching()
        state = svc.state
        assert state.mode == "watching" and state.last_sync is not None and state.pending == 0
    finally:
        svc.close()
    assert svc.state.mode == "stopped"


# ---------------------------------------------------------------------- how long a change waits
def test_a_finished_write_is_read_at_once_and_a_write_in_progress_waits_for_quiet() -> None:
    debouncer = watcher_mod.Debouncer()
    debouncer.add("notes/a.md", now=0.0)  # written to (more may come)
    debouncer.add("notes/b.md", now=0.05, complete=True)  # closed after writing, or renamed into place
    assert debouncer.take_due(now=0.05 + watcher_mod.COMPLETE_QUIET + 0.001) == [("notes/b.md", False)]
    assert debouncer.take_due(now=watcher_mod.QUIET - 0.01) == []
    assert debouncer.take_due(now=watcher_mod.QUIET + 0.001) == [("notes/a.md", False)]
    # Changes close together are read together (a move's two ends), whatever their waits.
    debouncer.add("notes/old.md", now=0.5)
    debouncer.add("notes/new.md", now=0.51, complete=True)
    assert sorted(debouncer.take_due(now=0.51 + watcher_mod.COMPLETE_QUIET + 0.001)) == [
        ("notes/new.md", False),
        ("notes/old.md", False),
    ]
    # A write after the close: the page is being written again, so it waits for quiet again.
    debouncer.add("notes/c.md", now=1.0, complete=True)
    debouncer.add("notes/c.md", now=1.005)
    assert debouncer.take_due(now=1.005 + watcher_mod.COMPLETE_QUIET + 0.001) == []
    assert debouncer.take_due(now=1.005 + watcher_mod.QUIET + 0.001) == [("notes/c.md", False)]
    # Written without pause: read at the latest MAX_WAIT after the first event.
    for step in range(40):
        debouncer.add("notes/d.md", now=2.0 + step * 0.05)
    assert debouncer.take_due(now=2.0 + watcher_mod.MAX_WAIT + 0.001) == [("notes/d.md", False)]


def test_the_watcher_says_which_events_finish_a_write(tmp_path: Path) -> None:
    root = tmp_path / "field"
    root.mkdir()
    seen: list[tuple[str, bool]] = []
    watcher = watcher_mod.FieldWatcher(
        root, lambda rel, is_dir, complete=False: seen.append((rel, complete)), lambda name: None
    )
    watcher.start()
    try:
        with open(root / "written.md", "w") as handle:  # created, modified, closed after writing
            handle.write("# One\n")
        (root / ".renamed.md.tmp").write_text("# Two\n")
        os.replace(root / ".renamed.md.tmp", root / "renamed.md")  # renamed into place
        assert wait_for(lambda: ("renamed.md", True) in seen and ("written.md", True) in seen, timeout=5)
        assert ("written.md", False) in seen  # the create and the modification came first
    finally:
        watcher.stop()


def test_an_agent_writing_without_pause_does_not_pile_up_segments(live) -> None:
    """New pages every 10 ms never leave the queue empty; the index still joins small segments
    (one bounded step at a time) instead of adding one per commit until the agent stops."""
    import time

    from memtui.index.service import BUSY_MAX_SEGMENTS

    root, svc, _ = live
    most = 0
    number = 300  # pages, one every 10 ms or slower: a count, so a loaded machine writes as many
    for written in range(number):
        write_page(root, f"agent/page-{written}.md", page(f"Agent {written}", f"Item agentword{written}."))
        try:
            most = max(most, svc.segment_count())
        except OSError:
            pass  # read from this thread while the writer replaced its table of contents
        time.sleep(0.01)
    assert most <= BUSY_MAX_SEGMENTS + 4
    assert svc.flush(timeout=60)
    assert search_paths(svc, f"agentword{number - 1}") == [f"agent/page-{number - 1}.md"]
    assert search_paths(svc, "agentword3") == ["agent/page-3.md"]
    assert_matches_folder(svc)
