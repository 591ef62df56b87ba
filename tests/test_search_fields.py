"""Search on real text (issue 14): frontmatter (aliases, tags, description, name),
identifiers and phrases, and ranking (all words first, names before bodies)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtui.index import QueryError
from memtui.index.records import SearchMeta, search_meta
from tests.helpers import write_page
from tests.helpers_index import open_service, search_paths

ALIAS = """---
title: Harbor Driver app
aliases: [Trucker app, HDA]
tags: [mobile, project/harbor]
---
- The mobile app drayage drivers use at the terminal gate. [stated]
"""
BODY_ONLY = """---
title: Gate notes
---
- Drivers asked whether the trucker app works offline; the trucker app team said yes. [observed]
"""
TAGGED = """---
title: Weekly sync
tags:
  - Meeting
  - project/alpha
---
- Budget for Q1 agreed. #budget [stated]
- A heading-like line: # not a tag, and page.md#L12 is not a tag either. [observed]
"""
WORD_MEETING = """---
title: Notes
---
- The meeting about the budget moved to Friday. [stated]
"""
DESCRIBED = """---
title: Cold storage
description: Reefer containers need a powered slot within 30 minutes of discharge.
---
- See the terminal rules. [stated]
"""
CLAUDE = """---
name: terse-replies
description: The user wants terse replies without preamble.
type: feedback
---
The user wants terse replies without preamble. [stated]

**Why:** long answers were skimmed. [stated]
"""
IDENT = """---
title: Brain API
---
- The memory service lives in scripts/erbing_brain_api.py and calls retryWithJitter on failure. [observed]
- Its config is file-name.md in the repo root. [observed]
"""
PY_ONLY = """---
title: Python notes
---
- Every script is a .py file; the api module is small. [stated]
"""
PHRASE_APART = """---
title: Versions
---
- The API stays stable while the public docs move. [stated]
"""
PHRASE_TOGETHER = """---
title: Decision
---
- The public API moves to tRPC. [stated]
"""
ID_PAGE = """---
id: mem_k7q2
title: Kestrel vendor
---
- Kestrel sells chassis tracking. [stated]
"""
ID_MENTIONED = """---
title: Vendor list
---
- Vendors: see mem_k7q2 for Kestrel, and others. [stated]
"""


@pytest.fixture
def svc(tmp_path: Path):
    root = tmp_path / "field"
    for rel, text in {
        "projects/driver-app.md": ALIAS,
        "notes/gate.md": BODY_ONLY,
        "notes/sync.md": TAGGED,
        "notes/plain.md": WORD_MEETING,
        "notes/cold.md": DESCRIBED,
        "memory/feedback_terse.md": CLAUDE,
        "notes/brain.md": IDENT,
        "notes/python.md": PY_ONLY,
        "notes/apart.md": PHRASE_APART,
        "notes/together.md": PHRASE_TOGETHER,
        "knowledge/kestrel.md": ID_PAGE,
        "notes/vendors.md": ID_MENTIONED,
    }.items():
        write_page(root, rel, text)
    service = open_service(root)
    yield service
    service.close()


# ---------------------------------------------------------------------- frontmatter
def test_a_page_is_found_by_its_alias_and_the_alias_outranks_a_body(svc) -> None:
    assert search_paths(svc, "trucker app")[:2] == ["projects/driver-app.md", "notes/gate.md"]
    assert search_paths(svc, "HDA") == ["projects/driver-app.md"]
    assert search_paths(svc, "title:trucker") == ["projects/driver-app.md"]


def test_frontmatter_and_inline_tags_are_filters(svc) -> None:
    assert search_paths(svc, "#meeting") == ["notes/sync.md"]  # not the page that says "meeting"
    assert search_paths(svc, "ftag:MEETING") == ["notes/sync.md"]
    assert set(search_paths(svc, "#project")) == {"notes/sync.md", "projects/driver-app.md"}  # nested tags
    assert search_paths(svc, "#project/alpha") == ["notes/sync.md"]
    assert search_paths(svc, "#budget") == ["notes/sync.md"]  # an inline #tag in the body
    assert search_paths(svc, "#budget agreed") == ["notes/sync.md"]
    assert search_paths(svc, "#budget friday") == []
    assert search_paths(svc, "ftag:proj*") != []
    assert search_paths(svc, "#l12") == [] and search_paths(svc, "#not") == []
    assert "notes/plain.md" in search_paths(svc, "meeting")  # the word is still a word


def test_source_tag_filtering_stays_tag(svc) -> None:
    assert "notes/sync.md" in search_paths(svc, "tag:stated")
    with pytest.raises(QueryError) as info:
        svc.search("tag:meeting")
    assert "ftag:meeting" in info.value.hint and "#meeting" in info.value.hint


def test_description_and_claude_code_name_are_searchable(svc) -> None:
    hits = svc.search("reefer powered slot")
    assert hits[0].path == "notes/cold.md"
    assert "Reefer" in hits[0].snippet  # the description is the snippet when the body has no match
    assert search_paths(svc, "terse-replies")[0] == "memory/feedback_terse.md"
    assert search_paths(svc, "terse replies preamble")[0] == "memory/feedback_terse.md"


def test_search_meta_reads_the_keys_in_their_usual_shapes() -> None:
    assert search_meta({}) == SearchMeta()
    meta = search_meta(
        {"aliases": ["A", 2, None, True], "tags": "x, y", "description": " d ", "name": "n", "language": "ru"}
    )
    assert meta == SearchMeta(aliases=("A", "2"), tags=("x", "y"), description="d", name="n", lang="ru")
    assert search_meta({"alias": "Solo", "tags": "#one #two"}).tags == ("#one", "#two")
    assert search_meta({"alias": "Solo"}).aliases == ("Solo",)
    assert search_meta({"tag": ["a"], "tags": None}).tags == ("a",)
    assert search_meta({"aliases": {"not": "a list"}, "tags": 3}).aliases == ()


# ---------------------------------------------------------------------- identifiers and phrases
def test_an_identifier_is_found_whole_and_only_where_it_is(svc) -> None:
    assert search_paths(svc, "erbing_brain_api.py") == ["notes/brain.md"]  # not every page with "py" or "api"
    assert search_paths(svc, "scripts/erbing_brain_api.py") == ["notes/brain.md"]
    assert search_paths(svc, "retryWithJitter") == ["notes/brain.md"]
    assert search_paths(svc, "file-name.md") == ["notes/brain.md"]


def test_an_identifier_is_found_by_its_parts(svc) -> None:
    assert search_paths(svc, "erbing brain")[0] == "notes/brain.md"
    assert search_paths(svc, "jitter")[0] == "notes/brain.md"
    assert search_paths(svc, "retry jitter")[0] == "notes/brain.md"
    assert search_paths(svc, "erbing-brain-api.py") == ["notes/brain.md"]  # other joiners: the parts in order


def test_a_quoted_query_is_a_phrase(svc) -> None:
    assert search_paths(svc, '"public API"') == ["notes/together.md"]
    assert set(search_paths(svc, "public API")[:2]) == {"notes/together.md", "notes/apart.md"}
    assert search_paths(svc, '"API public"') == []


def test_a_page_with_the_words_of_a_phrase_apart_is_a_partial_match_when_it_holds_another_word(svc) -> None:
    hits = svc.search('"public API" stable')  # one holds the phrase, the other "stable": neither both
    assert {(h.path, h.partial) for h in hits} == {("notes/apart.md", True), ("notes/together.md", True)}
    hits = svc.search('"public API" moves')
    assert [(h.path, h.partial) for h in hits][0] == ("notes/together.md", False)
    assert ("notes/apart.md", True) in [(h.path, h.partial) for h in hits]  # "moves" and the words apart


def test_a_phrase_matches_other_forms_of_its_words_and_skips_stop_words(tmp_path: Path) -> None:
    root = tmp_path / "field"
    write_page(root, "notes/deploy.md", "---\ntitle: Ops\n---\n- We deployed the apps to Fly on Monday. [stated]\n")
    write_page(root, "notes/apart.md", "---\ntitle: Apps\n---\n- Apps we deployed elsewhere. [stated]\n")
    svc = open_service(root)
    try:
        assert search_paths(svc, '"deploying an app"') == ["notes/deploy.md"]
        assert search_paths(svc, '"Deployed the APPS"') == ["notes/deploy.md"]
    finally:
        svc.close()


def test_a_phrase_is_checked_in_the_whole_of_a_long_page(tmp_path: Path) -> None:
    root = tmp_path / "field"
    filler = "- Filler line about shipments and containers. [observed]\n" * 8000  # ~440 KB
    write_page(root, "notes/long.md", f"---\ntitle: Long\n---\n{filler}- The public API moves to tRPC. [stated]\n")
    write_page(root, "notes/apart.md", PHRASE_APART)
    svc = open_service(root)
    try:
        assert search_paths(svc, '"public API"') == ["notes/long.md"]
    finally:
        svc.close()


def test_phrases_left_unchecked_at_the_time_limit_are_listed_as_partial_with_a_note(svc, monkeypatch) -> None:
    from memtui.index import search

    monkeypatch.setattr(search, "PHRASE_CHECK_TIME", 0.0)
    hits = svc.search('"public API"')
    assert {(h.path, h.partial) for h in hits} == {("notes/together.md", True), ("notes/apart.md", True)}
    assert hits.notes and "listed as partial" in hits.notes[0]
    assert not svc.search("public").notes  # no phrase, nothing to say


# ---------------------------------------------------------------------- ranking
def test_pages_with_every_word_come_first_then_partial_matches_marked(svc) -> None:
    hits = svc.search("kestrel chassis tracking")
    assert [(h.path, h.partial) for h in hits] == [("knowledge/kestrel.md", False), ("notes/vendors.md", True)]
    assert hits[1].to_json()["partial"] is True and hits[0].to_json()["partial"] is False


def test_a_title_or_id_match_beats_a_body_match(svc) -> None:
    assert search_paths(svc, "mem_k7q2") == ["knowledge/kestrel.md", "notes/vendors.md"]
    assert search_paths(svc, "id:mem_k7q2") == ["knowledge/kestrel.md"]
    assert search_paths(svc, "gate")[0] == "notes/gate.md"  # the title says it; the other page's body does
