"""Hazard 21 (issue 40): a relative XDG_CONFIG_HOME / XDG_CACHE_HOME must not put memtui's key or caches in the field.

Class: Links out of the field / Forged or replayed state. ``memtui check`` run inside the
field with ``XDG_CONFIG_HOME=cfg`` used to resolve ``cfg`` against the field: the signing key
(which vouches for the ledger, the journal and every signed cache) landed where the agent
under audit can read it, and the caches it signs where the agent can write them. The XDG spec
says a relative value is invalid and ignored; memtui falls back to ``~/.config`` and ``~/.cache``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.store import locations, signing


def _files_under(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*")}


def _run_check_inside(field: Path, home: Path, config: str, cache: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("XDG_")}
    env.update({"HOME": str(home), "XDG_CONFIG_HOME": config, "XDG_CACHE_HOME": cache, "PYTHONIOENCODING": "utf-8"})
    return subprocess.run(
        [sys.executable, "-m", "memtui", "check", str(field)],
        cwd=field,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("config", "cache"),
    [("cfg", "cache"), ("./.config", "./.cache"), ("../outside-cfg", "../outside-cache")],
)
def test_h21_relative_xdg_dirs_put_no_key_and_no_cache_in_the_field(
    tmp_path: Path, sample_field: Path, config: str, cache: str
) -> None:
    """Links out of the field: a relative XDG value is ignored; the key and the cache go under $HOME."""
    home = tmp_path / "home"
    home.mkdir()
    before = _files_under(sample_field)
    result = _run_check_inside(sample_field, home, config, cache)
    assert result.returncode in (0, 1), result.stderr
    assert "Traceback" not in result.stderr

    created = _files_under(sample_field) - before
    assert not created, f"memtui check wrote into the field: {sorted(created)}"
    assert not list(sample_field.rglob(signing.KEY_FILE)), "the signing key is inside the field"
    for relative in (config, cache):  # nor beside it, where a relative value resolved
        assert not (sample_field / relative).exists()

    key = home / ".config" / "memtui" / signing.KEY_FILE
    assert key.is_file() and key.stat().st_size == signing.KEY_BYTES
    assert (home / ".cache" / "memtui").is_dir(), "the cache did not go to ~/.cache/memtui"
    assert list((home / ".cache" / "memtui").rglob("*")), "nothing was cached under ~/.cache/memtui"


def test_h21_absolute_xdg_dirs_are_still_honoured(tmp_path: Path, sample_field: Path) -> None:
    """The fix must not ignore valid values: an absolute XDG folder is where the key and cache go."""
    home = tmp_path / "home"
    home.mkdir()
    config, cache = tmp_path / "xdg-config", tmp_path / "xdg-cache"
    result = _run_check_inside(sample_field, home, str(config), str(cache))
    assert result.returncode in (0, 1), result.stderr
    assert (config / "memtui" / signing.KEY_FILE).is_file()
    assert list((cache / "memtui").rglob("*"))
    assert not (home / ".config").exists() and not (home / ".cache").exists()


def test_h21_relative_values_and_a_relative_home_fall_back_to_absolute_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Links out of the field: no variable spelling yields a folder relative to the current one."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    for value in ("cfg", "./cfg", "../cfg", "~/cfg", ""):
        monkeypatch.setenv("XDG_CONFIG_HOME", value)
        monkeypatch.setenv("XDG_CACHE_HOME", value)
        assert locations.user_config_dir() == tmp_path / "home" / ".config" / "memtui"
        assert locations.user_cache_dir() == tmp_path / "home" / ".cache" / "memtui"
    monkeypatch.setenv("HOME", "relative-home")  # the same attack one variable up
    monkeypatch.setenv("XDG_CONFIG_HOME", "cfg")
    assert locations.user_config_dir().is_absolute()
    assert not locations.user_config_dir().is_relative_to(tmp_path)
