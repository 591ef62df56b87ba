"""Shared fixtures. Every test works on copies in tmp_path; nothing writes into sample-field/."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SAMPLE_FIELD = REPO / "sample-field"


def pytest_xdist_auto_num_workers(config) -> int:
    """``-n auto``: a worker per core and one more (tests wait on terminals, watchers, git);
    MEMTUI_TEST_WORKERS overrides."""
    chosen = os.environ.get("MEMTUI_TEST_WORKERS", "")
    if chosen.isdigit():
        return int(chosen)
    return min((os.cpu_count() or 1) + 1, 8)


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path_factory, monkeypatch):
    """Keep memtui's user cache and settings out of the real home folder."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))


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

