"""Shared fixtures. Every test works on copies in tmp_path; nothing writes into sample-field/."""

from __future__ import annotations

import asyncio
import inspect
import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLE_FIELD = REPO / "sample-field"


def pytest_xdist_auto_num_workers(config) -> int:
    """``-n auto``: three workers per core. Tests spend nearly half their time waiting
    (terminals, watchers, git, a debounce), so a core keeps more than one busy: on two cores
    the suite took 141-172 s with four workers and 152 s with six; with two other busy
    processes beside it, 253 s with four and 215 s with six. MEMTUI_TEST_WORKERS overrides."""
    chosen = os.environ.get("MEMTUI_TEST_WORKERS", "")
    if chosen.isdigit():
        return int(chosen)
    return min(3 * (os.cpu_count() or 1), 8)


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory, monkeypatch):
    """Keep memtui's user cache and settings out of the real home folder."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))


@pytest.fixture(autouse=True)
def _fresh_claim_memory(monkeypatch):
    """Each test starts with no claims held in memory: one test's pages must not answer another's
    (an overlay whose claims came only from an earlier test's memory passed in the suite and
    failed alone)."""
    from memtui.field import claims

    monkeypatch.setattr(claims, "CACHE", claims.ClaimCache())


@pytest.fixture
def reviewer_maya(monkeypatch):
    """Decisions are recorded as made by "maya" (modules use it with ``usefixtures``)."""
    monkeypatch.setenv("MEMTUI_REVIEWER", "maya")


@pytest.fixture
def sample_field(tmp_path: Path) -> Path:
    """A private copy of the bundled sample field."""
    target = tmp_path / "sample-field"
    shutil.copytree(SAMPLE_FIELD, target, symlinks=True, ignore=shutil.ignore_patterns(".memtui"))
    return target


@pytest.fixture
async def _eager_tasks():
    """Run an async test's tasks the way ``App.run`` does on Python 3.12+: started eagerly.

    Textual's ``run_test`` keeps the loop's default task factory, while a real launch sets
    ``asyncio.eager_task_factory``, which changes the order in which widgets mount (memtui
    did not start at all on 3.12+ while every Pilot test passed). Each async test gets the
    real order.
    """
    factory = getattr(asyncio, "eager_task_factory", None)
    if factory is None:
        yield
        return
    loop = asyncio.get_running_loop()
    previous = loop.get_task_factory()
    loop.set_task_factory(factory)
    try:
        yield
    finally:
        loop.set_task_factory(previous)


def pytest_collection_modifyitems(config, items):
    for item in items:
        function = getattr(item, "function", None)
        if function is not None and inspect.iscoroutinefunction(function):
            item.fixturenames.append("_eager_tasks")
