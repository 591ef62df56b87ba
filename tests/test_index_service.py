"""IndexService.open: build, warm open, incremental update, rebuilds, trust, roles."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.index import IndexService, IndexUnavailableError
from memtui.index import indexer as indexer_mod
from memtui.index.analysis import RECIPE
from memtui.index.store import (
    MANIFEST_FILE,
    POINTER_FILE,
    read_manifest,
    write_manifest,
)
from tests.helpers import write_page
from tests.helpers_index import (
    assert_matches_folder,
    fresh_inputs,
    open_service,
    page,
    search_paths,
    wait_for,
    watching,
)

REPO = Path(__file__).resolve().parent.parent


def test_first_open_builds_an_index_equal_to_the_folder(sample_field: Path) -> None:
    svc = IndexService(sample_field)
    seen_phases: set[str] = set()
    report = svc.open(progress=lambda done, total, phase: seen_phases.add(phase))
    try:
        assert report.rebuilt and report.rebuild_reason == "no index yet"
        assert report.pages == len(fresh_inputs(sample_field))
        assert {"reading", "indexing"} <= seen_phases
        assert report.golden is not None and report.golden["passed"]  # the sample's golden.yaml
        assert not svc.read_only
        assert (
            svc.location
            == Path(os.environ["XDG_CACHE_HOME"]) / "memtui" / "fields" / svc.location.parts[-3] / "cache" / "index"
        )
        assert_matches_folder(svc)
    finally:
        svc.close()
    svc.close()  # idempotent


def test_warm_open_reads_no_page(sample_field: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    open_service(sample_field).close()
    reads: list[str] = []
    real = indexer_mod.read_page_doc

    def counting(root, path):
        reads.append(path)
        return real(root, path)

    monkeypatch.setattr(indexer_mod, "read_page_doc", counting)
    svc = IndexService(sample_field)
    report = svc.open()
    try:
        assert report.up_to_date and not report.rebuilt
        assert reads == []
        assert svc.search("public API decision")[0].path == "decisions/public-api-trpc.md"
    finally:
        svc.close()


def test_reopen_updates_only_what_changed(sample_field: Path) -> None:
    open_service(sample_field).close()
    write_page(sample_field, "notes/added.md", page("Added note", "A quetzal appeared. [observed]"))
    target = sample_field / "people/dana-ruiz.md"
    target.write_text(target.read_text() + "\n- Dana adopted a narwhal. [stated]\n")
    (sample_field / "notes/q3-digest.md").unlink()
    touched = sample_field / "people/hannah-lee.md"
    os.utime(touched, ns=(touched.stat().st_atime_ns, touched.stat().st_mtime_ns + 5_000_000_000))
    svc = IndexService(sample_field)
    report = svc.open()
    try:
        assert not report.rebuilt
        assert (report.added, report.changed, report.removed, report.touched) == (1, 1, 1, 1)
        assert search_paths(svc, "quetzal") == ["notes/added.md"]
        assert search_paths(svc, "narwhal") == ["people/dana-ruiz.md"]
        assert "notes/q3-digest.md" not in svc.indexed_inputs()
        assert_matches_folder(svc)
    finally:
        svc.close()
    again = IndexService(sample_field)
    try:
        assert again.open().up_to_date  # the touch was recorded: nothing to re-read now
    finally:
        again.close()


def test_a_new_version_supersedes_the_old_on_reopen(sample_field: Path) -> None:
    open_service(sample_field).close()
    write_page(
        sample_field,
        "decisions/public-api-grpc.md",
        page(
            '"Public API decision: gRPC"',
            "The public API decision is now gRPC. [stated]",
            id="mem_grpc",
            subject="decision/public-api",
            supersedes="[mem_9tx5]",
        ),
    )
    svc = open_service(sample_field)
    try:
        statuses = svc.indexed_statuses()
        assert statuses["decisions/public-api-trpc.md"][0] == "superseded"
        assert statuses["decisions/public-api-grpc.md"][0] == "current"
        hits = svc.search("public API decision")
        order = [h.path for h in hits]
        assert order[0] == "decisions/public-api-grpc.md"
        for old in ("decisions/public-api-trpc.md", "decisions/public-api-graphql.md", "decisions/public-api-rest.md"):
            assert order.index(old) > 0
            assert next(h for h in hits if h.path == old).status == "superseded"
    finally:
        svc.close()


def _generation(svc: IndexService) -> Path:
    gen = svc.generation_dir
    assert gen is not None
    return gen


def _truncate_segment(gen: Path) -> None:
    segment = max((p for p in gen.iterdir() if p.suffix == ".seg"), key=lambda p: p.stat().st_size)
    with open(segment, "r+b") as handle:
        handle.truncate(segment.stat().st_size // 2)


def _write_garbage_manifest(gen: Path) -> None:
    (gen / MANIFEST_FILE).write_text("{not json")


def _drop_manifest(gen: Path) -> None:
    (gen / MANIFEST_FILE).unlink()


def _add_stray_file(gen: Path) -> None:
    (gen / "_MAIN_99.toc").write_bytes(b"\x80\x04not a toc")


def _sign_with_another_key(gen: Path) -> None:
    data = json.loads((gen / MANIFEST_FILE).read_text())
    data["hmac"] = "0" * 64
    (gen / MANIFEST_FILE).write_text(json.dumps(data))


def _point_nowhere(gen: Path) -> None:
    (gen.parent / POINTER_FILE).write_text("gen-missing\n")


def _point_outside(gen: Path) -> None:
    (gen.parent / POINTER_FILE).write_text("../../etc\n")


@pytest.mark.parametrize(
    "damage",
    [
        _truncate_segment,
        _write_garbage_manifest,
        _drop_manifest,
        _add_stray_file,
        _sign_with_another_key,
        _point_nowhere,
        _point_outside,
    ],
)
def test_a_damaged_or_foreign_index_is_rebuilt_without_a_traceback(sample_field: Path, damage) -> None:
    svc = open_service(sample_field)
    old = _generation(svc)
    svc.close()
    damage(old)
    svc = IndexService(sample_field)
    try:
        report = svc.open()
        assert report.rebuilt and report.rebuild_reason
        assert _generation(svc) != old
        assert not old.exists()  # the stray generation is cleaned up
        assert_matches_folder(svc)
    finally:
        svc.close()


def test_an_index_from_another_user_key_is_not_trusted(sample_field: Path, tmp_path: Path, monkeypatch) -> None:
    svc = open_service(sample_field)
    old = _generation(svc)
    svc.close()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "someone-else"))
    svc = IndexService(sample_field)
    try:
        report = svc.open()
        assert report.rebuilt and "not signed" in report.rebuild_reason
        assert _generation(svc) != old
    finally:
        svc.close()


def _pretend_old_recipe(gen: Path) -> None:
    manifest = read_manifest(gen)
    write_manifest(
        gen, {**RECIPE, "analyzer": "an older analyzer"}, status_day=manifest.status_day, pages=manifest.pages
    )


def test_a_recipe_change_rebuilds_and_swaps_when_golden_passes(sample_field: Path) -> None:
    svc = open_service(sample_field)
    old = _generation(svc)
    svc.close()
    _pretend_old_recipe(old)
    svc = IndexService(sample_field)
    try:
        report = svc.open()
        assert report.rebuilt and report.rebuild_reason == "the index recipe changed"
        assert report.golden["passed"]
        assert _generation(svc) != old and not svc.read_only
    finally:
        svc.close()


def test_a_recipe_change_keeps_the_old_index_while_the_new_one_fails_golden(sample_field: Path) -> None:
    svc = open_service(sample_field)
    old = _generation(svc)
    svc.close()
    (sample_field / "golden.yaml").write_text(
        "min_recall: 1.0\nk: 1\nquestions:\n"
        "  - question: what is our public API decision\n    expect: [decisions/public-api-rest.md]\n"
    )
    _pretend_old_recipe(old)
    svc = IndexService(sample_field)
    try:
        report = svc.open()
        assert report.golden is not None and not report.golden["passed"]
        assert (old.parent / POINTER_FILE).read_text().strip() == old.name
        assert svc.read_only and svc.state.mode == "down" and "golden" in svc.state.message
        assert svc.search("public API decision")  # the old index still answers
        forced = svc.rebuild(force=True)
        assert forced.rebuilt and not svc.read_only
        assert (old.parent / POINTER_FILE).read_text().strip() != old.name
        assert_matches_folder(svc)
    finally:
        svc.close()


def test_unusual_pages_are_indexed_without_errors(sample_field: Path) -> None:
    write_page(sample_field, "notes/binary.md", b"\x00\x01\x02binary")
    write_page(sample_field, "notes/empty.md", b"")
    write_page(sample_field, "notes/latin1.md", "caf\xe9 r\xe9sum\xe9 ocelot".encode("latin-1"))
    write_page(sample_field, "notes/huge.md", "ocelot " * 400_000)
    write_page(
        sample_field, "notes/crlf.md", "---\r\ntitle: Windows note\r\n---\r\n# Heading\r\nA jaguarundi. [stated]\r\n"
    )
    (sample_field / "notes/link.md").symlink_to(sample_field / "notes/crlf.md")
    bad_name = os.fsdecode(b"notes/bad-\xff-name.md")
    write_page(sample_field, bad_name, page("Odd name", "An axolotl lives here. [observed]"))
    svc = open_service(sample_field)
    try:
        inputs = svc.indexed_inputs()
        for path in (
            "notes/binary.md",
            "notes/empty.md",
            "notes/latin1.md",
            "notes/huge.md",
            "notes/crlf.md",
            bad_name,
        ):
            assert path in inputs
        assert "notes/link.md" not in inputs
        assert search_paths(svc, "jaguarundi") == ["notes/crlf.md"]
        assert search_paths(svc, "axolotl") == [bad_name]
        assert "notes/latin1.md" in search_paths(svc, "ocelot")
        assert_matches_folder(svc)
    finally:
        svc.close()


def test_index_dir_is_overridable(sample_field: Path, tmp_path: Path) -> None:
    where = tmp_path / "elsewhere"
    svc = open_service(sample_field, index_dir=where)
    try:
        assert svc.location == where
        assert (where / POINTER_FILE).is_file() and _generation(svc).parent == where
    finally:
        svc.close()


def test_a_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    svc = IndexService(tmp_path / "nope")
    with pytest.raises(IndexUnavailableError) as info:
        svc.open()
    assert "no such folder" in info.value.message and info.value.hint


def test_a_zip_field_is_indexed_read_only_in_the_user_cache(sample_field: Path, tmp_path: Path) -> None:
    from memtui.store.archive import export_field, extract_for_reading

    archive = tmp_path / "sample.memoryfield.zip"
    export_field(sample_field, archive)
    root = extract_for_reading(archive)
    svc = IndexService(root, readonly_field=True, source=archive)
    try:
        report = svc.open()
        assert report.rebuilt and svc.read_only
        assert str(svc.location).startswith(os.environ["XDG_CACHE_HOME"])
        svc.start_watching(lambda batch: None)
        assert svc.state.mode == "read-only"
        assert svc.search("public API decision")[0].path == "decisions/public-api-trpc.md"
    finally:
        svc.close()


def test_a_second_service_searches_read_only_and_follows_the_writer(sample_field: Path) -> None:
    writer = open_service(sample_field)
    writer.start_watching(lambda batch: None)
    reader = IndexService(sample_field)
    try:
        report = reader.open()
        assert report.read_only and reader.read_only
        assert reader.state.mode == "read-only" and "read-only" in reader.state.message
        assert search_paths(reader, "public API decision")[0] == "decisions/public-api-trpc.md"
        write_page(sample_field, "notes/fresh.md", page("Fresh", "A pangolin walked by. [observed]"))
        assert writer.flush()
        assert wait_for(lambda: search_paths(reader, "pangolin") == ["notes/fresh.md"])
        with pytest.raises(IndexUnavailableError):
            reader.rebuild()
        writer.rebuild()  # a new generation: the reader follows the pointer
        write_page(sample_field, "notes/later.md", page("Later", "A tapir arrived. [observed]"))
        assert writer.flush()
        assert wait_for(lambda: search_paths(reader, "tapir") == ["notes/later.md"])
    finally:
        reader.close()
        writer.close()


def test_a_second_process_searches_read_only_and_never_waits(sample_field: Path) -> None:
    writer = open_service(sample_field)
    try:
        env = dict(os.environ)
        command = [sys.executable, "-m", "memtui", "search", str(sample_field), "public API decision", "--json"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env, cwd=REPO, check=False)
        assert done.returncode == 0, done.stderr
        assert "read-only" in done.stderr
        hits = json.loads(done.stdout)
        assert hits[0]["path"] == "decisions/public-api-trpc.md"
        index_cmd = [sys.executable, "-m", "memtui", "index", str(sample_field)]
        done = subprocess.run(index_cmd, capture_output=True, text=True, timeout=60, env=env, cwd=REPO, check=False)
        assert done.returncode == 0 and "read-only" in done.stderr
        assert "Traceback" not in done.stderr
    finally:
        writer.close()


def test_searching_after_commits_reuses_unchanged_segments_and_sees_every_change(sample_field: Path) -> None:
    """Whoosh's own refresh reused no segment reader (it files them by generation and looks
    them up by segment id) and could close one twice ("Reader already closed")."""
    from memtui.index.engine.readers import segment_readers

    svc, _ = watching(sample_field)
    try:
        assert search_paths(svc, "capybara") == []
        before = segment_readers(svc._searcher)
        write_page(sample_field, "notes/swimmer.md", page("Swimmer", "The capybara swims. [observed]"))
        assert svc.flush()
        assert search_paths(svc, "capybara") == ["notes/swimmer.md"]
        after = segment_readers(svc._searcher)
        kept = set(before) & set(after)
        assert kept, "the segments this commit did not touch are read with the readers already open"
        assert all(after[segment] is before[segment] for segment in kept)
        assert all(reader.is_closed for segment, reader in before.items() if segment not in after)
        # A rewrite deletes the page's old document from its segment: that reader is not reused.
        write_page(sample_field, "notes/swimmer.md", page("Swimmer", "The tapir swims. [observed]"))
        assert svc.flush()
        assert search_paths(svc, "capybara") == [] and search_paths(svc, "tapir") == ["notes/swimmer.md"]
        (sample_field / "notes" / "swimmer.md").unlink()
        assert svc.flush()
        assert search_paths(svc, "tapir") == []
        for number in range(12):  # commits, small merges, and a search after each
            write_page(sample_field, f"notes/burst-{number}.md", page(f"Burst {number}", f"Okapi {number}. [observed]"))
            assert svc.flush()
            assert len(search_paths(svc, "okapi", limit=50)) == number + 1
        assert_matches_folder(svc)
    finally:
        svc.close()
