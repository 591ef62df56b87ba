"""``memtui search`` and ``memtui index`` from the command line."""

from __future__ import annotations

import json
from pathlib import Path

from memtui.cli import main


def test_search_json_lists_hits_with_their_status(sample_field: Path, capsys) -> None:
    assert main(["search", str(sample_field), "public", "API", "decision", "--json", "--limit", "5"]) == 0
    hits = json.loads(capsys.readouterr().out)
    assert len(hits) == 5
    assert {"path", "id", "title", "status", "score", "snippet"} <= set(hits[0])
    assert hits[0]["path"] == "decisions/public-api-trpc.md" and hits[0]["status"] == "current"
    superseded = [h for h in hits if h["status"] == "superseded"]
    assert {h["path"] for h in superseded} >= {"decisions/public-api-graphql.md", "decisions/public-api-rest.md"}


def test_search_table_marks_versions_and_quarantine(sample_field: Path, capsys) -> None:
    assert main(["search", str(sample_field), "public API decision vendor pricing", "--limit", "30"]) == 0
    out = capsys.readouterr().out
    assert "● current" in out and "↷ superseded" in out and "quarantined" in out
    assert "\x1b]0;" not in out and "\u202e" not in out  # the hostile page's controls stay inert


def test_a_bad_query_is_a_message_not_a_traceback(sample_field: Path, capsys) -> None:
    assert main(["search", str(sample_field), "*api"]) == 1
    err = capsys.readouterr().err
    assert "error:" in err and "hint:" in err and "Traceback" not in err
    assert main(["search", str(sample_field), "x", "--limit", "0"]) == 1


def test_search_a_missing_field(tmp_path: Path, capsys) -> None:
    assert main(["search", str(tmp_path / "missing"), "x"]) == 2
    assert "no such folder" in capsys.readouterr().err
