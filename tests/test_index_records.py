"""The records snapshot: a warm open reads page stamps, not every record (issue 15).

Real folders, a real index, real watchers; the snapshot is written when the writer
closes, used only for the very commit it describes, vouched for by the manifest.
"""

from __future__ import annotations

import json
from pathlib import Path

from memtui.index import IndexService
from memtui.index.record_table import SNAPSHOT_FILE, RecordTable, read_snapshot
from tests.helpers import write_page
from tests.helpers_index import assert_matches_folder, page, search_paths, wait_for


def _open(root: Path, index_dir: Path) -> IndexService:
    svc = IndexService(root, index_dir=index_dir)
    svc.open()
    return svc


def _first_snapshot(root: Path, index_dir: Path) -> Path:
    """Build the index once and close it: its records snapshot."""
    first = _open(root, index_dir)
    first.close()
    return first.generation_dir / SNAPSHOT_FILE


def _reopened(root: Path, index_dir: Path) -> tuple[IndexService, RecordTable]:
    svc = _open(root, index_dir)
    return svc, svc._gen.records


def test_a_warm_open_reads_stamps_and_the_records_only_when_asked(sample_field: Path, tmp_path: Path) -> None:
    index_dir = tmp_path / "idx"
    first = _open(sample_field, index_dir)
    full = {path: record for path, record in first._gen.records.load_all().items()}
    first.close()
    assert (first.generation_dir / SNAPSHOT_FILE).is_file()

    svc, table = _reopened(sample_field, index_dir)
    try:
        assert len(table) == len(full) and table.loaded == 0  # nothing read but the snapshot
        assert svc._gen.references is not None  # statuses can be decided locally at once
        # Each record, read on demand, is the record the index stores.
        some = sorted(full)[:5]
        for path in some:
            assert table[path] == full[path]
        assert table.loaded == 5
        assert dict(table.load_all()) == full
        assert sorted(table.references()) == sorted(
            (path, target)
            for path, record in full.items()
            for target in (*record.page_info().supersedes, *record.page_info().superseded_by)
        )
    finally:
        svc.close()


def test_changes_after_a_warm_open_read_only_what_they_touch(sample_field: Path, tmp_path: Path) -> None:
    index_dir = tmp_path / "idx"
    _open(sample_field, index_dir).close()
    svc, table = _reopened(sample_field, index_dir)
    svc.start_watching()
    try:
        write_page(sample_field, "notes/new-okapi.md", page("Okapi", "An okapi was seen today. [observed]"))
        plain = "notes/feedback-short-status-replies.md"  # supersedes nothing, nothing names it
        write_page(sample_field, plain, (sample_field / plain).read_text() + "- Also an okapi. [stated]\n")
        assert wait_for(
            lambda: (
                sorted(search_paths(svc, "okapi")) == ["notes/feedback-short-status-replies.md", "notes/new-okapi.md"]
            )
        )
        assert table is svc._gen.records
        assert table.loaded <= 2  # the pages written (and nothing else): statuses decided locally
        # A change that can move other pages' statuses (supersedes dropped) reads them all, as it must.
        write_page(
            sample_field, "notes/pref-weekly-update-bullets.md", page("Weekly update", "Bullets, and a tapir. [stated]")
        )
        assert wait_for(lambda: search_paths(svc, "tapir") == ["notes/pref-weekly-update-bullets.md"])
        assert table.loaded == len(table)
        assert_matches_folder(svc)
    finally:
        svc.close()
    # Closed after changes: the next snapshot describes the new commit.
    again, table = _reopened(sample_field, index_dir)
    try:
        assert table.loaded == 0 and "notes/new-okapi.md" in table
        assert table.stamp("notes/new-okapi.md")[0] == (sample_field / "notes/new-okapi.md").stat().st_size
        assert sorted(search_paths(again, "okapi")) == ["notes/feedback-short-status-replies.md", "notes/new-okapi.md"]
    finally:
        again.close()


def test_pages_changed_while_memtui_was_closed_are_found_by_their_stamps(sample_field: Path, tmp_path: Path) -> None:
    index_dir = tmp_path / "idx"
    _open(sample_field, index_dir).close()
    write_page(sample_field, "notes/pref-weekly-update-bullets.md", page("Weekly update", "A tapir now. [stated]"))
    (sample_field / "notes/q3-digest.md").unlink()
    svc, _table = _reopened(sample_field, index_dir)
    try:
        report_paths = search_paths(svc, "tapir")
        assert report_paths == ["notes/pref-weekly-update-bullets.md"]
        assert "notes/q3-digest.md" not in svc.indexed_inputs()
        assert_matches_folder(svc)
    finally:
        svc.close()


def test_a_snapshot_of_another_commit_is_not_used(sample_field: Path, tmp_path: Path) -> None:
    index_dir = tmp_path / "idx"
    snapshot = _first_snapshot(sample_field, index_dir)
    old = snapshot.read_bytes()
    svc = _open(sample_field, index_dir)
    svc.start_watching()
    write_page(sample_field, "notes/another.md", page("Another", "A quokka. [observed]"))
    assert wait_for(lambda: search_paths(svc, "quokka") == ["notes/another.md"])
    # Killed before it could write a new snapshot: the one on disk is of the commit before.
    svc._save_snapshot = lambda: None
    svc.close()
    assert snapshot.read_bytes() == old
    again, table = _reopened(sample_field, index_dir)
    try:
        assert table.loaded == len(table)  # read from the index, as before snapshots
        assert "notes/another.md" in table
    finally:
        again.close()


def test_a_forged_snapshot_is_never_read(sample_field: Path, tmp_path: Path) -> None:
    index_dir = tmp_path / "idx"
    snapshot = _first_snapshot(sample_field, index_dir)
    data = json.loads(snapshot.read_bytes())
    data["sizes"] = [1 for _ in data["sizes"]]
    snapshot.write_bytes(json.dumps(data).encode())  # the manifest's hash no longer matches
    svc = _open(sample_field, index_dir)
    try:
        assert svc._gen.records.loaded == len(svc._gen.records)  # rebuilt: every record from pages read now
        assert_matches_folder(svc)
    finally:
        svc.close()


def test_a_malformed_snapshot_is_not_used(tmp_path: Path) -> None:
    good = {
        "format": 3,
        "toc": 3,
        "paths": ["a.md", "b.md"],
        "sizes": [1, 2],
        "mtimes": [5, 6],
        "sides": [None, [1, 10, 11]],
        "idents": [None, [7, 8, 9]],
        "refs": {"b.md": ["a"]},
    }

    def read(**change):
        (tmp_path / SNAPSHOT_FILE).write_text(json.dumps({**good, **change}))
        return read_snapshot(tmp_path, 3)

    stamps, refs = read()
    assert stamps == {"a.md": (1, 5, None, None), "b.md": (2, 6, [1, 10, 11], (7, 8, 9))} and refs == {"b.md": ("a",)}
    assert read(idents=[None, "x"])[0]["b.md"][3] is None  # not an ident: the page is read again
    assert read_snapshot(tmp_path, 4) is None  # another commit
    for change in (
        {"format": 2},  # no idents: every page would pass on size and mtime alone
        {"idents": [None]},
        {"paths": ["a.md", 7]},
        {"paths": ["a.md", "a.md"]},
        {"sizes": [1]},
        {"sides": [None, "x"]},
        {"refs": {"b.md": "a"}},
        {"refs": {"b.md": [1]}},
        {"refs": []},
    ):
        assert read(**change) is None, change
    (tmp_path / SNAPSHOT_FILE).write_text("not json")
    assert read_snapshot(tmp_path, 3) is None


def test_the_folder_is_compared_with_the_stamps_new_changed_removed_and_sidecars() -> None:
    from memtui.field.field import ScanEntry

    table = RecordTable(
        stubs={
            "same.md": (10, 5, None),
            "grown.md": (10, 5, None),
            "gone.md": (10, 5, None),
            "side-same.md": (10, 5, [True, 3, 7]),
            "side-moved.md": (10, 5, [True, 3, 7]),
            "side-new.md": (10, 5, [False, 0, 0]),
        }
    )
    entries = [
        ScanEntry("same.md", 10, 5, (99, 99)),  # read without a sidecar: what is beside it does not count
        ScanEntry("grown.md", 11, 5),
        ScanEntry("new.md", 10, 5),
        ScanEntry("side-same.md", 10, 5, (3, 7)),
        ScanEntry("side-moved.md", 10, 5, (3, 8)),
        ScanEntry("side-new.md", 10, 5, (1, 1)),
    ]
    differ, removed = table.compare(entries)
    assert sorted(differ) == ["grown.md", "new.md", "side-moved.md", "side-new.md"]
    assert removed == ["gone.md"]
    assert table.compare([e for e in entries if e.path != "new.md"] + [ScanEntry("gone.md", 10, 5)]) == (
        ["grown.md", "side-moved.md", "side-new.md"],
        [],
    )
