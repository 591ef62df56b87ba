"""Segments are read through their memory map, not copied onto the heap (issue 15: memory)."""

from __future__ import annotations

import io
import os
import pickle
from pathlib import Path

import pytest

from memtui.index import IndexService
from memtui.index.engine.mapped_files import ViewFile, ViewIO
from tests.helpers_index import search_paths


def test_a_view_reads_seeks_and_unpickles_as_bytesio_does() -> None:
    data = pickle.dumps([{"a": 1, "b": "x" * 300}, list(range(500))], protocol=pickle.HIGHEST_PROTOCOL)
    data += b"line one\nline two\nend"
    view, plain = ViewIO(memoryview(data)), io.BytesIO(data)
    assert pickle.load(view) == pickle.load(plain)
    assert view.tell() == plain.tell()
    for file in (view, plain):
        file.seek(-3, os.SEEK_END)
    assert view.read() == plain.read() == b"end"
    assert view.read(5) == plain.read(5) == b""
    start = len(data) - len(b"line one\nline two\nend")
    view.seek(start)
    assert view.peek(4) == b"line" and view.tell() == start
    assert view.readline() == b"line one\n"
    assert list(view) == [b"line two\n", b"end"]
    view.seek(2)
    view.seek(3, os.SEEK_CUR)
    assert view.read(4) == data[5:9]
    target = bytearray(6)
    assert view.readinto(target) == 6 and bytes(target) == data[9:15]
    with pytest.raises(ValueError):
        view.seek(-1)


def test_a_reader_reads_its_segments_in_place(sample_field: Path, tmp_path: Path) -> None:
    svc = IndexService(sample_field, index_dir=tmp_path / "idx")
    try:
        svc.open()
        assert search_paths(svc, "weekly")
        reader = svc._gen.ix.reader()
        try:
            leaves = [leaf for leaf, _ in reader.leaf_readers()]
            opened = []
            for leaf in leaves:
                leaf.doc_field_length(0, "text")  # opens the lengths column
                leaf.stored_fields(0)  # and the stored fields
                opened += [file for file, *_ in leaf._perdoc._colfiles.values()]
                opened += [leaf._terms._dbfile, leaf._terms._postfile]
            assert len(opened) >= 4 * len(leaves) > 0
            assert all(isinstance(file, ViewFile) for file in opened), opened
        finally:
            reader.close()
    finally:
        svc.close()


def test_lengths_read_at_once_are_whooshs_own(sample_field: Path, tmp_path: Path) -> None:
    from memtui.index.engine.scoring import _column_lengths

    svc = IndexService(sample_field, index_dir=tmp_path / "idx")
    try:
        svc.open()
        reader = svc._gen.ix.reader()
        try:
            checked = 0
            for leaf, _ in reader.leaf_readers():
                for fieldname in ("text", "title", "head", "no-such-field"):
                    expected = [leaf.doc_field_length(n, fieldname, 1) for n in range(leaf.doc_count_all())]
                    assert _column_lengths(leaf, fieldname) == expected, fieldname
                    checked += sum(1 for length in expected if length not in (None, 1))
            assert checked > 20  # real lengths were compared, not only defaults
        finally:
            reader.close()
    finally:
        svc.close()


def test_the_merge_helper_reads_segments_in_place_too() -> None:
    """The helper that merges a build's segments (``buildworker``, "optimize") opens its index
    without ``store``: what it imports for that must install the mapped files on its own."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from memtui.index.analysis import build_schema, codec\n"
        "from memtui.index.engine.fastwrite import FastSegmentWriter\n"
        "from whoosh.filedb import compound\n"
        "from memtui.index.engine.mapped_files import ViewFile\n"
        "assert 'memtui.index.store' not in sys.modules\n"
        "print(compound.BufferFile is ViewFile)\n"
    )
    root = Path(__file__).resolve().parent.parent
    out = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
