"""``memtui index FIELD [--rebuild] [--info]``."""

from __future__ import annotations

import json
from pathlib import Path

from memtui.cli import main


def test_info_prints_the_location_before_and_after_a_build(sample_field: Path, tmp_path: Path, capsys) -> None:
    where = tmp_path / "idx"
    assert main(["index", str(sample_field), "--info", "--json", "--index-dir", str(where)]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["location"] == str(where) and info["state"] == "not built yet"
    assert not where.exists()  # --info changes nothing
    assert main(["index", str(sample_field), "--index-dir", str(where)]) == 0
    out = capsys.readouterr().out
    assert "built the index of" in out and "golden.yaml: recall@5 1.00" in out and str(where) in "".join(out.split())
    assert main(["index", str(sample_field), "--info", "--index-dir", str(where)]) == 0
    out = capsys.readouterr().out
    flat = "".join(out.split())  # a long path wraps in the table
    assert "ready" in out and "pages" in out and str(where) in flat and "nfkc-cjk2-stem" in flat


def test_index_twice_is_a_stat_only_check(sample_field: Path, capsys) -> None:
    assert main(["index", str(sample_field)]) == 0
    capsys.readouterr()
    assert main(["index", str(sample_field), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert not report["rebuilt"] and report["added"] == report["changed"] == report["removed"] == 0
    assert main(["index", str(sample_field), "--rebuild", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["rebuilt"] and report["rebuild_reason"] == "rebuild requested"


def test_index_a_zip_keeps_its_cache_in_the_user_cache(sample_field: Path, tmp_path: Path, capsys) -> None:
    import os

    from memtui.store.archive import export_field

    archive = tmp_path / "f.memoryfield.zip"
    export_field(sample_field, archive)
    assert main(["index", str(archive), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["location"].startswith(os.environ["XDG_CACHE_HOME"]) and report["read_only"]
    assert main(["search", str(archive), "public API decision", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["path"] == "decisions/public-api-trpc.md"
