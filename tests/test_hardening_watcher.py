"""Issue 12, the watcher: items 15 to 18, with real processes and a real terminal (tmux).

15. With a relative field path (``cd FIELD && memtui``, the default use) the
    watcher dropped every event while the status bar said "watching".
16. The field folder moved away, deleted or recreated while the app runs.
17. A second memtui on the same field never updated.
18. ``memtui search`` while the app commits failed about one time in twenty;
    a read-only cache folder was reported as "another memtui is updating".
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memtui.index import IndexService
from memtui.index.watcher import FieldWatcher
from tests import terminal
from tests.helpers import write_page
from tests.helpers_index import Recorder, page, wait_for

pytestmark = pytest.mark.skipif(not terminal.available(), reason="tmux is not installed")


# New pages go to a folder that sorts just below the cursor (on IDENTITY.md, the first row),
# so the browse list (by path) shows them on screen: rows above the cursor scroll out of view.
LIVE = "a-live"


def agent_writes(path: Path, text: str) -> None:
    code = "import sys, pathlib; p = pathlib.Path(sys.argv[1]); p.parent.mkdir(parents=True, exist_ok=True); p.write_text(sys.argv[2])"
    subprocess.run([sys.executable, "-c", code, str(path), text], check=True)


def memtui(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*terminal.memtui_script().split(), *args], capture_output=True, text=True, timeout=120, cwd=cwd
    )


def found_by_search(field: Path, word: str, *, cwd: Path | None = None) -> list[str]:
    result = memtui("search", str(field), word, "--json", cwd=cwd)
    return [hit["path"] for hit in json.loads(result.stdout)] if result.returncode == 0 else []


@pytest.fixture
def tty():
    term = terminal.Terminal()
    yield term
    term.close()


# --------------------------------------------------------------------------- item 15


async def test_cd_field_and_memtui_sees_changes_live(sample_field: Path, tty: terminal.Terminal) -> None:
    tty.run(sample_field)
    assert tty.wait_for("watching"), tty.screen()
    agent_writes(
        sample_field / LIVE / "zebra-live.md",
        "---\ntitle: Zebra crossing live note\n---\n- written while memtui runs [observed]\n",
    )
    assert tty.wait_for("Zebra crossing live note"), tty.screen()
    assert wait_for(
        lambda: found_by_search(Path("."), "zebra", cwd=sample_field) == [f"{LIVE}/zebra-live.md"], timeout=30
    )
    assert "watching" in tty.screen()


def test_a_watcher_on_a_relative_path_reports_events(sample_field: Path, monkeypatch) -> None:
    monkeypatch.chdir(sample_field)
    seen: list[str] = []
    watcher = FieldWatcher(Path("."), lambda rel, is_dir, complete=False: seen.append(rel), lambda name: None)
    watcher.start()
    try:
        agent_writes(sample_field / "notes" / "relative.md", "# Relative\n")
        assert wait_for(lambda: "notes/relative.md" in seen, timeout=10)
    finally:
        watcher.stop()


# --------------------------------------------------------------------------- item 16


async def test_the_field_folder_moved_away_and_recreated(sample_field: Path, tty: terminal.Terminal) -> None:
    tty.run(sample_field)
    assert tty.wait_for("watching"), tty.screen()
    away = sample_field.with_name("field-moved-away")
    sample_field.rename(away)
    assert tty.wait_for("field folder gone"), tty.screen()
    assert "watching" not in tty.screen()
    shutil.copytree(away, sample_field, symlinks=True)  # a new folder at the same path
    agent_writes(sample_field / LIVE / "okapi.md", "---\ntitle: Okapi after the move\n---\n- new [observed]\n")
    assert tty.wait_for("Okapi after the move"), tty.screen()
    assert tty.wait_for("watching"), tty.screen()
    agent_writes(sample_field / LIVE / "quokka.md", "---\ntitle: Quokka in the new folder\n---\n- live [observed]\n")
    assert tty.wait_for("Quokka in the new folder"), tty.screen()  # the new folder is watched


def test_the_service_says_the_folder_is_gone_and_rearms_when_it_is_back(sample_field: Path, tmp_path: Path) -> None:
    recorder = Recorder()
    svc = IndexService(sample_field)
    svc.open()
    svc.start_watching(recorder)
    try:
        away = tmp_path / "away"
        sample_field.rename(away)
        assert wait_for(lambda: svc.state.mode == "gone", timeout=10)
        assert "moved away or deleted" in svc.state.message
        assert any("moved away or deleted" in b.notice for b in recorder.batches)
        away.rename(sample_field)  # moved back
        assert wait_for(lambda: svc.state.mode == "watching", timeout=10)
        write_page(sample_field, "notes/back.md", page("Back", "A kinkajou came back. [observed]"))
        assert wait_for(lambda: [h.path for h in svc.search("kinkajou")] == ["notes/back.md"], timeout=10)
        shutil.rmtree(sample_field)  # deleted ...
        assert wait_for(lambda: svc.state.mode == "gone", timeout=10)
        gone_at = len(recorder.batches)
        sample_field.mkdir()
        write_page(sample_field, "notes/new.md", page("New", "A fossa in a new folder. [observed]"))  # ... recreated
        assert wait_for(lambda: svc.state.mode == "watching", timeout=10)
        assert wait_for(lambda: [h.path for h in svc.search("fossa")] == ["notes/new.md"], timeout=10)
        # A new folder, or one the file system gave the old folder's inode (then it is "back"):
        # either way it was said and rescanned.
        assert any(b.rescanned and ("replaced" in b.notice or "back" in b.notice) for b in recorder.batches[gone_at:])
    finally:
        svc.close()


# --------------------------------------------------------------------------- item 17


async def test_two_memtuis_on_one_field_both_stay_current(sample_field: Path, tty: terminal.Terminal) -> None:
    first = tty.run(sample_field)
    assert tty.wait_for("watching", window=first), tty.screen(first)
    second = tty.run(sample_field)
    assert tty.wait_for("read-only", window=second), tty.screen(second)
    agent_writes(sample_field / LIVE / "tapir.md", "---\ntitle: Tapir seen by both\n---\n- both [observed]\n")
    assert tty.wait_for("Tapir seen by both", window=first), tty.screen(first)
    assert tty.wait_for("Tapir seen by both", window=second), tty.screen(second)
    tty.keys("C-q", window=first)  # the first one exits: the second takes over the index
    assert tty.wait_for("watching", window=second), tty.screen(second)
    agent_writes(sample_field / LIVE / "saola.md", "---\ntitle: Saola after the handover\n---\n- one [observed]\n")
    assert tty.wait_for("Saola after the handover", window=second), tty.screen(second)
    assert wait_for(lambda: found_by_search(sample_field, "saola") == [f"{LIVE}/saola.md"], timeout=30)


def test_a_reader_service_follows_and_takes_over(sample_field: Path) -> None:
    writer = IndexService(sample_field)
    writer.open()
    writer.start_watching()
    follower = Recorder()
    reader = IndexService(sample_field)
    try:
        assert reader.open().read_only
        reader.start_watching(follower)
        write_page(sample_field, "notes/one.md", page("One", "A numbat. [observed]"))
        assert wait_for(lambda: "notes/one.md" in [p for b in follower.batches for p in b.changed], timeout=10)
        assert wait_for(lambda: [h.path for h in reader.search("numbat")] == ["notes/one.md"], timeout=10)
        writer.close()
        assert wait_for(lambda: not reader.read_only, timeout=10)
        write_page(sample_field, "notes/two.md", page("Two", "A dugong. [observed]"))
        assert wait_for(lambda: [h.path for h in reader.search("dugong")] == ["notes/two.md"], timeout=10)
    finally:
        reader.close()
        writer.close()


# --------------------------------------------------------------------------- item 18


def test_search_while_the_app_commits_never_fails(sample_field: Path) -> None:
    writer = IndexService(sample_field)
    writer.open()
    writer.start_watching()
    stop = threading.Event()

    def keep_writing() -> None:
        number = 0
        while not stop.is_set():
            number += 1
            write_page(
                sample_field, f"notes/busy-{number % 7}.md", page(f"Busy {number}", f"Capybara {number}. [observed]")
            )
            time.sleep(0.05)

    agent = threading.Thread(target=keep_writing, daemon=True)
    agent.start()
    failures = []
    try:
        for _ in range(15):  # each a whole process, over about a hundred commits
            result = memtui("search", str(sample_field), "capybara", "--json")
            if result.returncode != 0 or "Traceback" in result.stderr:
                failures.append(result.stderr)
    finally:
        stop.set()
        agent.join()
        writer.close()
    assert failures == [], failures[0][-3000:] if failures else ""


def _immutable(paths: list[Path], on: bool) -> None:
    for path in paths:
        subprocess.run(["chattr", "+i" if on else "-i", str(path)], check=True, capture_output=True)


def test_an_unwritable_cache_folder_is_reported_as_what_it_is(sample_field: Path) -> None:
    svc = IndexService(sample_field)
    svc.open()
    location = svc.location
    svc.close()
    locked = [location, *location.iterdir()]
    if os.geteuid() == 0:
        if shutil.which("chattr") is None:
            pytest.skip("root without chattr: a folder cannot be made unwritable")
        try:
            _immutable(locked, True)
        except subprocess.CalledProcessError:
            pytest.skip("this file system has no immutable flag")
    else:
        for path in locked:
            path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        result = memtui("search", str(sample_field), "public API decision", "--json")
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)[0]["path"] == "decisions/public-api-trpc.md"
        assert "cannot write the index folder" in result.stderr and "another memtui" not in result.stderr
    finally:
        if os.geteuid() == 0:
            _immutable(locked, False)
        else:
            for path in locked:
                path.chmod(0o755 if path.is_dir() else 0o644)
