"""The two-process full build gives the same index as the one-process build, and falls back safely."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from memtui.index import IndexService
from memtui.index import parallel as parallel_mod
from tests.helpers_index import assert_matches_folder, wait_for

QUERIES = ["public API decision", "Brightline SLA", "deploy*", "status:quarantined pricing", "kind:preference"]


def _build(root: Path, index_dir: Path, monkeypatch, *, parallel: bool):
    monkeypatch.setattr(parallel_mod, "PARALLEL_MIN_PAGES", 1 if parallel else 10**9)
    svc = IndexService(root, index_dir=index_dir)
    report = svc.open()
    return svc, report


def test_parallel_and_serial_builds_agree(sample_field: Path, tmp_path: Path, monkeypatch) -> None:
    if parallel_mod.worker_count() < 2:
        pytest.skip("one CPU: the build never runs in two processes")
    serial, _ = _build(sample_field, tmp_path / "serial", monkeypatch, parallel=False)
    parallel, report = _build(sample_field, tmp_path / "parallel", monkeypatch, parallel=True)
    try:
        assert report.rebuilt and not report.notes
        assert parallel.segment_count() == 2 and serial.segment_count() == 1
        assert parallel.indexed_inputs() == serial.indexed_inputs()
        assert parallel.indexed_statuses() == serial.indexed_statuses()
        for query in QUERIES:
            expected = [(h.path, round(h.score, 4), h.status, h.snippet) for h in serial.search(query, limit=30)]
            assert [
                (h.path, round(h.score, 4), h.status, h.snippet) for h in parallel.search(query, limit=30)
            ] == expected
        assert_matches_folder(parallel)
    finally:
        serial.close()
        parallel.close()


def test_helpers_that_write_a_segment_every_few_pages_build_the_same_index(
    sample_field: Path, tmp_path: Path, monkeypatch
) -> None:
    if parallel_mod.worker_count() < 2:
        pytest.skip("one CPU: the build never runs in two processes")
    serial, _ = _build(sample_field, tmp_path / "serial", monkeypatch, parallel=False)
    monkeypatch.setattr(parallel_mod, "SEGMENT_TEXT_BYTES", 4096)  # a segment every page or two
    parallel, report = _build(sample_field, tmp_path / "parallel", monkeypatch, parallel=True)
    try:
        assert report.rebuilt and not report.notes
        assert parallel.segment_count() > 10  # before the background merge joins them
        assert parallel.indexed_inputs() == serial.indexed_inputs()
        assert parallel.indexed_statuses() == serial.indexed_statuses()
        for query in QUERIES:
            expected = [(h.path, round(h.score, 4), h.status, h.snippet) for h in serial.search(query, limit=30)]
            assert [
                (h.path, round(h.score, 4), h.status, h.snippet) for h in parallel.search(query, limit=30)
            ] == expected
    finally:
        serial.close()
        parallel.close()


def test_a_failing_helper_falls_back_to_one_process(sample_field: Path, tmp_path: Path, monkeypatch) -> None:
    if parallel_mod.worker_count() < 2:
        pytest.skip("one CPU: the build never runs in two processes")
    monkeypatch.setattr(parallel_mod.HelperProcess, "MODULE", "memtui.index.no_such_helper")
    svc, report = _build(sample_field, tmp_path / "idx", monkeypatch, parallel=True)
    try:
        assert report.rebuilt and any("two-process build failed" in note for note in report.notes)
        assert svc.segment_count() == 1
        assert [p.name for p in (tmp_path / "idx").iterdir() if p.name.startswith("gen-")] == [svc.generation_dir.name]
        assert_matches_folder(svc)
    finally:
        svc.close()
    shutil.rmtree(tmp_path / "idx")


def test_the_two_segments_are_merged_when_idle(sample_field: Path, tmp_path: Path, monkeypatch) -> None:
    if parallel_mod.worker_count() < 2:
        pytest.skip("one CPU: the build never runs in two processes")
    from memtui.index import indexer as indexer_mod
    from memtui.index import service as service_mod

    monkeypatch.setattr(indexer_mod, "PARALLEL_MIN_PAGES", 1)  # merge in a helper process, as at 1,000+ pages
    monkeypatch.setattr(service_mod, "PARALLEL_MIN_PAGES", 1)
    monkeypatch.setattr(service_mod, "IDLE_BEFORE_FULL_MERGE", 0.3)
    svc, _ = _build(sample_field, tmp_path / "idx", monkeypatch, parallel=True)
    try:
        assert svc.segment_count() == 2
        # Whoosh re-quantises field lengths when it merges, so scores move a little; the order holds.
        before = [h.path for h in svc.search("public API decision", limit=8)]
        svc.start_watching()
        assert wait_for(lambda: svc.segment_count() == 1, timeout=30)
        assert [h.path for h in svc.search("public API decision", limit=8)] == before
        assert_matches_folder(svc)
    finally:
        svc.close()
    again = IndexService(sample_field, index_dir=tmp_path / "idx")
    try:
        assert again.open().up_to_date  # the manifest vouches for the merged files
    finally:
        again.close()


def test_pages_written_during_the_full_merge_are_searchable_at_once_and_kept(
    sample_field: Path, tmp_path: Path, monkeypatch
) -> None:
    """The full merge runs on a copy in a helper process: the writer keeps committing; when
    the merge is done, what was committed meanwhile is applied to the merged copy."""
    if parallel_mod.worker_count() < 2:
        pytest.skip("one CPU: the build never runs in two processes")
    import threading

    from memtui.index import indexer as indexer_mod
    from memtui.index import service as service_mod
    from tests.helpers import write_page
    from tests.helpers_index import search_paths

    release = threading.Event()

    class HeldBack(parallel_mod.BackgroundOptimize):
        """The helper's merge, reported only once the test lets it (a slow merge at 100k pages)."""

        def result(self):
            return super().result() if release.is_set() else None

    monkeypatch.setattr(service_mod, "PARALLEL_MIN_PAGES", 1)
    monkeypatch.setattr(service_mod, "IDLE_BEFORE_FULL_MERGE", 0.3)
    monkeypatch.setattr(service_mod, "BackgroundOptimize", HeldBack)
    monkeypatch.setattr(indexer_mod, "SMALL_SEGMENT_DOCS", 1)  # the build's two segments count as large
    svc, _ = _build(sample_field, tmp_path / "idx", monkeypatch, parallel=True)
    try:
        first = svc.generation_dir
        svc.start_watching()
        assert wait_for(lambda: svc._merge is not None, timeout=30)
        write_page(sample_field, "notes/zebrafinch.md", "# Zebrafinch sighting\n\nA zebrafinch was seen. [observed]\n")
        person = sample_field / "people/dana-ruiz.md"
        person.write_text(person.read_text() + "\nDana keeps a quokka. [stated]\n")
        (sample_field / "notes/offsite-logistics.md").unlink()
        assert svc.flush(10)
        assert svc._merge is not None and svc.generation_dir == first  # still merging: served by the old one
        assert search_paths(svc, "zebrafinch") == ["notes/zebrafinch.md"]
        release.set()
        assert wait_for(lambda: svc._merge is None and svc.generation_dir != first, timeout=30)
        assert search_paths(svc, "zebrafinch") == ["notes/zebrafinch.md"]
        assert search_paths(svc, "quokka") == ["people/dana-ruiz.md"]
        assert "notes/offsite-logistics.md" not in svc.indexed_inputs()
        assert_matches_folder(svc)
        assert wait_for(lambda: not first.exists(), timeout=30)  # removed once no reader holds it
        # The merged generation keeps the references: its first change is decided locally.
        merged = svc._gen
        assert merged.references is not None
        assert sorted(merged.references) == sorted(merged.records.references())
    finally:
        svc.close()
    again = IndexService(sample_field, index_dir=tmp_path / "idx")
    try:
        assert again.open().up_to_date
    finally:
        again.close()


def test_small_segments_are_joined_a_bounded_step_at_a_time(sample_field: Path, tmp_path: Path, monkeypatch) -> None:
    """The writer commits nothing while it merges: a step joins the smallest segments only up
    to SMALL_MERGE_BYTES (at least two), and steps go on until one small segment is left."""
    from memtui.index import indexer as indexer_mod
    from tests.helpers import write_page

    svc = IndexService(sample_field, index_dir=tmp_path / "idx")
    svc.open()
    gen = svc._gen
    try:
        for number in range(12):  # twelve commits: twelve one-page segments
            rel = f"notes/step-{number}.md"
            write_page(sample_field, rel, f"# Step {number}\n\n- The okapi number {number}. [observed]\n")
            gen.apply(gen.plan_paths(sample_field, [rel]))
        assert gen.segment_count() == 13 and gen.merge_plan() == "small"
        one_page = max(gen._segment_bytes(s) for s in gen.ix._segments() if s.doc_count_all() == 1)
        monkeypatch.setattr(indexer_mod, "SMALL_MERGE_BYTES", one_page * 3)
        step = gen.small_merge_step()
        assert 2 <= len(step) <= 3
        steps = 0
        while gen.merge_plan() == "small":
            before = gen.segment_count()
            gen.merge("small")
            steps += 1
            assert before - 3 < gen.segment_count() < before  # at most three joined, at least two
        assert steps > 3 and gen.segment_count() <= 2
        # The two big enough to make one step too long are left to the whole merge.
        monkeypatch.setattr(indexer_mod, "SMALL_MERGE_BYTES", 1)
        write_page(sample_field, "notes/step-last.md", "# Last\n\n- The last okapi. [observed]\n")
        gen.apply(gen.plan_paths(sample_field, ["notes/step-last.md"]))
        assert gen.small_merge_step() == [] and gen.merge_plan() == "all"
        count = gen.segment_count()
        gen.merge("small")
        assert gen.segment_count() == count  # nothing committed
        assert [h.path for h in svc.search("okapi", limit=20)].count("notes/step-last.md") == 1
    finally:
        svc.close()
