"""Issue 12, item 3: a forged cache is never trusted.

The index manifest used to record names, sizes and mtimes only, which anyone who
can write the cache controls: a same-size table of contents with its mtime
restored was unpickled (running the forger's code). The page cache
(then ``pages.json``) and the row cache (``rows.json``) were unsigned and trusted
when size and mtime matched: a forged entry hid a quarantined page.
"""

from __future__ import annotations

import json
import marshal
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
from whoosh.filedb.filestore import FileStorage
from whoosh.index import TOC

from memtui.field import page_cache, trust
from memtui.field.field import Field, scan
from memtui.index import IndexService
from memtui.index.store import UntrustedIndex, check_files, read_manifest
from memtui.render.glyphs import PENDING
from memtui.review import quarantine
from memtui.session import row_cache
from memtui.store import locations
from tests.helpers_field import run_cli_json

HOSTILE = "quarantine/vendor-pricing-update.md"


class _Payload:
    """Unpickling this runs a command: what a forged index would do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _toc(gen_dir: Path) -> Path:
    (toc,) = gen_dir.glob("_MAIN_*.toc")
    return toc


def forge_toc(gen_dir: Path, marker: Path) -> None:
    """Replace the pickled segment list at the end of the table of contents with a payload.

    The file keeps its size, and its mtime is set back, so size and mtime alone cannot tell.
    """
    toc = _toc(gen_dir)
    original = toc.read_bytes()
    st = toc.stat()
    generation = int(toc.name.split("_")[2].split(".")[0])
    segments = TOC.read(FileStorage(str(gen_dir)), "MAIN", gen=generation).segments
    tail = pickle.dumps(segments, -1)
    assert original.endswith(tail)
    payload = pickle.dumps(_Payload(marker), -1)
    assert len(payload) <= len(tail)
    forged = original[: len(original) - len(tail)] + payload + b"\x00" * (len(tail) - len(payload))
    assert len(forged) == len(original)
    toc.write_bytes(forged)
    os.utime(toc, ns=(st.st_atime_ns, st.st_mtime_ns))


def forge_segment(gen_dir: Path) -> Path:
    segment = max(gen_dir.glob("MAIN_*.seg"), key=lambda p: p.stat().st_size)
    st = segment.stat()
    data = bytearray(segment.read_bytes())
    data[len(data) // 2] ^= 0xFF
    segment.write_bytes(bytes(data))
    os.utime(segment, ns=(st.st_atime_ns, st.st_mtime_ns))
    return segment


@pytest.fixture
def built(sample_field: Path) -> tuple[Path, Path]:
    svc = IndexService(sample_field)
    svc.open()
    gen = svc.generation_dir
    svc.close()
    return sample_field, gen


def test_the_manifest_signs_content_hashes(built) -> None:
    _, gen = built
    manifest = read_manifest(gen)
    for name, entry in manifest.files.items():
        assert len(entry) == 5 and len(entry[4]) == 64, name


def test_a_forged_table_of_contents_is_refused_before_it_is_unpickled(built, tmp_path: Path) -> None:
    root, gen = built
    marker = tmp_path / "forged-index-ran"
    forge_toc(gen, marker)
    with pytest.raises(UntrustedIndex, match="not what was indexed"):
        check_files(gen, read_manifest(gen))
    svc = IndexService(root)
    try:
        report = svc.open()
        assert report.rebuilt and "not what was indexed" in report.rebuild_reason
        assert svc.search("public API decision")
    finally:
        svc.close()
    assert not marker.exists()


def test_a_reader_refuses_a_forged_index_too(built, tmp_path: Path) -> None:
    root, gen = built
    marker = tmp_path / "forged-index-ran"
    writer = IndexService(root)
    writer.open()  # holds the writer lock: the next one opens read-only
    try:
        forge_toc(writer.generation_dir, marker)
        result = subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from memtui.cli import main; sys.exit(main())",
                "search",
                os.fspath(root),
                "public API",
            ],
            capture_output=True,
            timeout=120,
        )
        assert result.returncode != 0 and b"Traceback" not in result.stderr
    finally:
        writer.close()
    assert not marker.exists()


def test_files_with_moved_stamps_are_hashed_once_then_vouched_for_again(built) -> None:
    """A copy or a new hard link moves every file's ctime: the writer hashes them, finds the
    content indexed, and signs the new stamps, so later opens do not hash them again; a forgery
    made after that is still refused."""
    root, gen = built
    for path in gen.iterdir():
        if path.name.startswith(("_MAIN_", "MAIN_")):
            os.link(path, path.with_name(path.name + ".link"))  # moves the inode's ctime
            os.unlink(path.with_name(path.name + ".link"))
    assert check_files(gen, read_manifest(gen))  # every Whoosh file hashed
    svc = IndexService(root)
    try:
        assert not svc.open().rebuilt
    finally:
        svc.close()
    assert check_files(gen, read_manifest(gen)) == {}
    segment = forge_segment(gen)
    with pytest.raises(UntrustedIndex, match=segment.name):
        check_files(gen, read_manifest(gen))


def test_a_forged_segment_of_the_same_size_is_refused(built) -> None:
    root, gen = built
    segment = forge_segment(gen)
    with pytest.raises(UntrustedIndex, match=segment.name):
        check_files(gen, read_manifest(gen))
    svc = IndexService(root)
    try:
        assert svc.open().rebuilt
    finally:
        svc.close()


def test_an_untouched_index_opens_without_hashing(built, monkeypatch) -> None:
    from memtui.index import store as store_mod

    root, gen = built
    hashed: list[Path] = []
    real = store_mod._hash_file
    monkeypatch.setattr(store_mod, "_hashed", {})
    monkeypatch.setattr(store_mod, "_hash_file", lambda path: hashed.append(path) or real(path))
    svc = IndexService(root)
    try:
        assert not svc.open().rebuilt
    finally:
        svc.close()
    assert hashed == []


def test_a_copied_index_is_trusted_after_its_content_is_checked(built) -> None:
    import shutil

    root, gen = built
    copy = gen.with_name(gen.name + "-copy")
    shutil.copytree(gen, copy, copy_function=shutil.copy2)  # same mtimes, new ctimes and inodes
    shutil.rmtree(gen)
    copy.rename(gen)
    svc = IndexService(root)
    try:
        assert not svc.open().rebuilt
    finally:
        svc.close()


# --------------------------------------------------------------------------- the page and row caches


def _forge_info(info):
    import dataclasses

    meta = {k: v for k, v in info.meta.items() if k not in ("taint", "origin")}
    meta["reviewed"] = True
    return dataclasses.replace(info, meta=meta)


def test_a_forged_page_cache_entry_does_not_hide_a_quarantined_page(sample_field: Path, capsys) -> None:
    Field.load(sample_field)
    cache_dir = locations.default_cache_dir(sample_field)
    path = page_cache.cache_path(cache_dir)
    head, _, body = path.read_bytes().partition(b"\n")
    infos = page_cache.read_infos(cache_dir)
    assert HOSTILE in infos  # the real cache is read
    forged = [_forge_info(info) if info.path == HOSTILE else info for info in infos.values()]
    blob = marshal.dumps(next(page_cache.rows(forged)))
    mac = body[4:36]  # the real chunk's HMAC, on the forged chunk
    path.write_bytes(head + b"\n" + len(blob).to_bytes(4, "little") + mac + blob)
    assert page_cache.read_infos(cache_dir) == {}
    field = Field.load(sample_field)
    assert field.trust(HOSTILE) == trust.QUARANTINED
    code, data, _ = run_cli_json(["quarantine", "list", sample_field], capsys)
    assert HOSTILE in [p["path"] for group in data["quarantined"] for p in group["pages"]]
    assert quarantine.quarantine_queue(field).find(HOSTILE) is not None


def test_a_page_cache_signed_with_another_key_is_not_used(sample_field: Path, tmp_path: Path, monkeypatch) -> None:
    Field.load(sample_field)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "another-user"))
    cache_dir = locations.default_cache_dir(sample_field)
    assert page_cache.read_infos(cache_dir) == {}
    _, pending = Field.open_cached(sample_field)
    assert len(pending) == len(scan(sample_field)[0])  # every page is read again


async def test_forged_rows_are_never_shown(sample_field: Path) -> None:
    from tests.helpers_tui import SIZE, make_app, wait_ready

    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        cache_dir = app.session.field.cache_dir
    path = cache_dir / row_cache.ROW_CACHE
    header, _, body = path.read_bytes().partition(b"\n")
    rows = json.loads(body)
    rows[HOSTILE][row_cache._STAMP + row_cache._FIELDS.index("trust")] = trust.REVIEWED
    path.write_bytes(header + b"\n" + json.dumps(rows).encode())
    loaded = row_cache.load_rows(cache_dir, scan(sample_field)[0])
    assert loaded[HOSTILE].trust == PENDING
