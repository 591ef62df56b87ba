"""The signing key (issue 40): made whole or not at all, never read through a link."""

from __future__ import annotations

import os
from pathlib import Path

from memtui.store import locations, signing


def _key_path() -> Path:
    return locations.user_config_dir() / signing.KEY_FILE


def test_first_use_makes_a_whole_private_key() -> None:
    status = signing.key_status()
    path = _key_path()
    assert status.persistent and status.created and status.problem is None
    assert len(path.read_bytes()) == signing.KEY_BYTES
    assert path.stat().st_mode & 0o777 == 0o600
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_a_short_key_left_by_a_killed_run_is_replaced(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", os.fspath(tmp_path / "short"))
    path = _key_path()
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")  # a first run killed between create and write
    status = signing.key_status()
    assert status.persistent and status.repaired
    assert len(path.read_bytes()) == signing.KEY_BYTES
    data = b"a record"
    assert signing.verify(data, signing.sign(data))


def test_a_symlinked_key_is_never_read_and_says_why(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", os.fspath(tmp_path / "linked"))
    path = _key_path()
    path.parent.mkdir(parents=True)
    planted = tmp_path / "planted.key"
    planted.write_bytes(b"k" * signing.KEY_BYTES)  # a key someone else knows
    path.symlink_to(planted)
    status = signing.key_status()
    assert not status.persistent
    assert status.problem is not None and "symlink" in status.problem
    assert signing.signing_key()[0] != planted.read_bytes()
    assert path.is_symlink()  # left for the user to look at, not replaced
