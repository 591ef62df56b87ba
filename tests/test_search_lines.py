"""A search hit's snippet is a line of the page, with its line number in the file: the
line with the query's words (a current line before a struck-through one), or with
``tag:`` the line carrying that source tag (issue 11)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memtui.cli import main
from tests.helpers import write_page
from tests.helpers_index import open_service

HOSTING = """---
title: Hosting
subject: decision/hosting
---
# Hosting

- ~~Deploy on Heroku~~ superseded 2026-04-03 [stated]
- Deploy on Fly.io, two regions. [stated] [cite:1]
- Maybe move the workers to Render later. [suggested]
- Costs are about the same. [inferred]
"""


@pytest.fixture
def field(tmp_path: Path) -> Path:
    root = tmp_path / "field"
    write_page(root, "decisions/hosting.md", HOSTING)
    # CRLF line ends and a byte order mark: lines are still counted as an editor counts them.
    crlf = "\ufeff" + HOSTING.replace("title: Hosting", "title: Hosting copy").replace("\n", "\r\n")
    (root / "decisions").mkdir(parents=True, exist_ok=True)
    (root / "decisions" / "hosting-crlf.md").write_bytes(crlf.encode("utf-8"))
    return root


def hits_by_path(svc, query: str) -> dict:
    return {hit.path: hit for hit in svc.search(query, limit=10)}


def test_the_snippet_is_the_current_line_and_says_where_it_is(field: Path) -> None:
    svc = open_service(field)
    try:
        hits = hits_by_path(svc, "deploy")
        for path in ("decisions/hosting.md", "decisions/hosting-crlf.md"):
            assert hits[path].snippet.startswith("Deploy on Fly.io"), hits[path].snippet
            assert hits[path].line == 8
        struck = hits_by_path(svc, "deploy heroku")["decisions/hosting.md"]
        assert "Heroku" in struck.snippet and struck.line == 7  # only the struck line holds both words
    finally:
        svc.close()


def test_tag_filters_make_the_tagged_line_the_snippet(field: Path) -> None:
    svc = open_service(field)
    try:
        hit = hits_by_path(svc, "tag:suggested")["decisions/hosting.md"]
        assert hit.snippet.startswith("Maybe move the workers to Render") and hit.line == 9
        hit = hits_by_path(svc, "tag:inferred costs")["decisions/hosting-crlf.md"]
        assert hit.snippet.startswith("Costs are about the same") and hit.line == 10
        hit = hits_by_path(svc, "tag:stated")["decisions/hosting.md"]
        assert hit.snippet.startswith("Deploy on Fly.io") and hit.line == 8  # current before struck
        hit = hits_by_path(svc, "tag:sugg* render")["decisions/hosting.md"]
        assert hit.line == 9
        hit = hits_by_path(svc, "deploy NOT tag:suggested")
        assert hit == {}  # the pages hold a [suggested] line: excluded, not a snippet rule
    finally:
        svc.close()


def test_search_json_gives_the_line(field: Path, capsys) -> None:
    assert main(["search", str(field), "tag:suggested", "--json"]) == 0
    found = {hit["path"]: hit for hit in json.loads(capsys.readouterr().out)}
    assert found["decisions/hosting.md"]["line"] == 9
