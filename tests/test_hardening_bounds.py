"""Issue 40, item 15: every read has a bound, and nothing in a field blocks a reader.

A 1 GB sparse ledger made ``check`` take 2 GB; 512 MB aictx side files took 1 GB; a
symlink to ``/dev/zero`` where an archived copy was ran undo out of memory; a FIFO named
like a page hung every command. Each command here runs in its own process: its peak
memory shows what it read, and its timeout that it never waited on a FIFO.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from memtui.store import files
from tests.helpers import write_page
from tests.test_hardening_sizes import MEMORY_LIMIT_KB, run_measured, sparse_page

GIB = 1024**3


def _aictx_field(root: Path) -> Path:
    write_page(root, "config.json", '{"version": 5, "project": {"id": "project.x", "name": "X"}}')
    body = "Body of a decision.\n"
    write_page(root, "memory/decisions/a.md", body)
    write_page(root, "memory/decisions/a.json", json.dumps({"id": "decision.a", "type": "decision", "title": "A"}))
    write_page(root, "memory/decisions/b.md", "Another decision.\n")
    return root


def test_a_sparse_ledger_is_streamed_and_its_long_line_reported(tmp_path: Path) -> None:
    root = tmp_path / "field"
    write_page(root, "notes/a.md", "A fact. [observed]\n")
    sparse_page(root / ".memtui" / "ledger.jsonl", b'{"not": "signed"}\n', size=GIB)
    result, peak = run_measured("check", os.fspath(root), "--json")
    assert result.returncode in (0, 1), result.stderr.decode()
    assert peak < MEMORY_LIMIT_KB, f"check peaked at {peak // 1024} MB for a 1 GB sparse ledger"


def test_huge_aictx_side_files_are_not_read_and_say_so(tmp_path: Path) -> None:
    root = _aictx_field(tmp_path / "field")
    sparse_page(root / "memory" / "decisions" / "b.json", b"{", size=512 * 1024**2)
    sparse_page(root / "events.jsonl", b'{"id": "decision.a"}\n', size=512 * 1024**2)
    sparse_page(root / "relations" / "r.json", b"{", size=512 * 1024**2)
    result, peak = run_measured("check", os.fspath(root), "--json")
    assert result.returncode in (0, 1), result.stderr.decode()
    assert peak < MEMORY_LIMIT_KB, f"check peaked at {peak // 1024} MB for 512 MB side files"
    out = json.loads(result.stdout)
    problems = [f for f in out["findings"] if f["path"] == "memory/decisions/b.md"]
    assert any("over memtui's cap" in f["message"] for f in problems), problems


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_named_like_a_page_never_blocks_a_command(tmp_path: Path) -> None:
    root = tmp_path / "field"
    write_page(root, "CLAUDE.md", "# Project\n")
    write_page(root, "notes/a.md", "A fact. [observed]\n")
    (root / ".claude" / "x").mkdir(parents=True)
    os.mkfifo(root / ".claude" / "x" / "a.md")
    os.mkfifo(root / "notes" / "b.md")
    for argv in (["check", os.fspath(root)], ["claims", os.fspath(root)], ["search", os.fspath(root), "fact"]):
        result, _peak = run_measured(*argv)  # a hang fails on the helper's timeout
        assert result.returncode in (0, 1), (argv, result.stderr.decode())


def test_the_reader_refuses_links_devices_and_oversized_files(tmp_path: Path) -> None:
    root = tmp_path / "field"
    root.mkdir()
    (root / "zero.md").symlink_to("/dev/zero")
    with pytest.raises(OSError) as caught:
        files.read_bytes(root / "zero.md")
    assert caught.value.errno == errno.ELOOP
    (root / "sub").symlink_to(tmp_path)  # a folder on the way that is a link
    (tmp_path / "secret.md").write_text("outside")
    with pytest.raises(OSError):
        files.read_bytes("sub/secret.md", under=root)
    sparse_page(root / "big.md", b"x", size=10 * 1024**2)
    with pytest.raises(files.FileTooLarge) as too_large:
        files.read_bytes(root / "big.md", max_bytes=1024**2, kind="a page")
    assert "over memtui's cap of 1 MB for a page" in str(too_large.value)


def test_lines_are_read_in_chunks_and_an_overlong_one_is_counted_not_kept(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    path.write_bytes(b"one\n\n" + b"x" * 5000 + b"\nlast")
    fd = os.open(path, os.O_RDONLY)
    lines = list(files.LineFile(fd, max_line=1000))
    assert [(line.number, line.data, line.size) for line in lines] == [
        (1, b"one", 3),
        (2, b"", 0),
        (3, None, 5000),
        (4, b"last", 4),
    ]
