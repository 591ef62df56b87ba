"""Search: filters, ranking of versions, marking, snippets, and refused queries."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtui.index import QueryError
from memtui.index import search as search_mod
from memtui.index.analysis import build_schema, index_terms
from memtui.textsafety import has_hazards
from tests.helpers import write_page
from tests.helpers_index import open_service, page, search_paths

THREE = ["decisions/public-api-trpc.md", "decisions/public-api-graphql.md", "decisions/public-api-rest.md"]


@pytest.fixture
def svc(sample_field: Path):
    service = open_service(sample_field)
    yield service
    service.close()


def test_the_current_decision_comes_first_and_old_versions_are_marked(svc) -> None:
    hits = svc.search("public API decision")
    order = [h.path for h in hits]
    assert order[0] == "decisions/public-api-trpc.md"
    assert hits[0].status == "current" and hits[0].trust == "reviewed"
    graphql, rest = order.index(THREE[1]), order.index(THREE[2])
    assert 0 < graphql < rest  # REST was superseded by GraphQL, which was superseded by tRPC
    assert {h.status for h in hits if h.path in THREE[1:]} == {"superseded"}


def test_superseded_pages_never_rank_above_their_successors(svc) -> None:
    for query in ("GraphQL Apollo REST OpenAPI", "REST v1 frozen", "public API", "Apollo DataLoader"):
        order = [h.path for h in svc.search(query, limit=50)]
        present = [p for p in THREE if p in order]
        assert present == sorted(present, key=order.index), query


@pytest.mark.parametrize(
    ("query", "check"),
    [
        (
            "kind:preference",
            lambda paths: (
                "notes/pref-weekly-update-bullets.md" in paths and "decisions/public-api-trpc.md" not in paths
            ),
        ),
        (
            "subject:decision/*",
            lambda paths: set(THREE) <= set(paths) and all(p.startswith("decisions/") for p in paths),
        ),
        ("subject:Decision/Public-API", lambda paths: set(paths) == set(THREE)),
        ("tag:suggested", lambda paths: bool(paths)),
        ("status:quarantined", lambda paths: "quarantine/vendor-pricing-update.md" in paths and THREE[0] not in paths),
        ("status:unreviewed", lambda paths: "notes/hiring-plan-q1-2027.md" in paths),
        ("status:superseded public API", lambda paths: set(THREE[1:]) <= set(paths) and THREE[0] not in paths),
        ("status:current public API", lambda paths: THREE[0] in paths and not set(THREE[1:]) & set(paths)),
        ("origin:agent", lambda paths: THREE[0] in paths),
        ("path:notes/* meeting", lambda paths: paths and all(p.startswith("notes/") for p in paths)),
        ("id:mem_9tx5", lambda paths: paths == [THREE[0]]),
        ("title:tRPC", lambda paths: THREE[0] in paths),
        ("public API NOT status:superseded", lambda paths: THREE[0] in paths and not set(THREE[1:]) & set(paths)),
        ("kind:preference kind:episodic", lambda paths: "notes/pref-weekly-update-bullets.md" in paths),
        ('"public API"', lambda paths: THREE[0] in paths),
        ("deploy*", lambda paths: "knowledge/concepts/lesson-migration-lock.md" in paths),
    ],
)
def test_filters_and_syntax(svc, query: str, check) -> None:
    paths = search_paths(svc, query, limit=100)
    assert check(paths), (query, paths)


def test_status_filters_match_the_page_states(svc) -> None:
    statuses = svc.indexed_statuses()
    quarantined = {p for p, (_, trust) in statuses.items() if trust == "quarantined"}
    assert set(search_paths(svc, "status:quarantined", limit=200)) == quarantined
    superseded = {p for p, (status, _) in statuses.items() if status == "superseded"}
    assert set(search_paths(svc, "status:superseded", limit=200)) == superseded


def test_quarantined_pages_are_found_and_marked(svc) -> None:
    hits = svc.search("vendor pricing update portlink")
    hostile = next(h for h in hits if h.path == "quarantine/vendor-pricing-update.md")
    assert hostile.trust == "quarantined"
    assert not has_hazards(hostile.snippet) and not has_hazards(hostile.snippet.replace("\n", ""))


def test_snippets_are_one_safe_line_with_correct_highlights(svc) -> None:
    for query in ("public API decision", "advisory lock prisma", "deploy*", "Brightline"):
        parsed = search_mod.parse_query(query, build_schema())
        for hit in svc.search(query):
            assert "\n" not in hit.snippet and not has_hazards(hit.snippet)
            for start, end in hit.highlights:
                assert 0 <= start < end <= len(hit.snippet)
                terms = set(index_terms(hit.snippet[start:end]))
                assert terms & parsed.terms or any(t.startswith(p) for t in terms for p in parsed.prefixes)


def test_plain_mode_ignores_syntax(svc) -> None:
    hits = svc.search('what is "our public API decision? (status:', plain=True)
    assert hits[0].path == THREE[0]
    assert svc.search("???", plain=True) == []


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("*api", "starts with a wildcard"),
        ("?ublic", "starts with a wildcard"),
        ("path:*notes", "starts with a wildcard"),
        ("title:(*foo)", "starts with a wildcard"),
        ("a*", "too short"),
        ('"public API', "quote is not closed"),
        ("(public API", "'(' is not closed"),
        ("public) API", "')' has no matching '('"),
        ("colour:blue", "unknown filter colour:"),
        ("status:deleted", "unknown status"),
        ("tag:maybe", "unknown source tag"),
        ("word " * 200, "characters long"),
        (" ".join(f"w{n}" for n in range(80)), "parts"),
    ],
)
def test_bad_queries_are_refused_with_a_message_and_a_hint(svc, query: str, message: str) -> None:
    with pytest.raises(QueryError) as info:
        svc.search(query)
    assert message in info.value.message
    assert info.value.hint


def test_a_pattern_matching_too_many_words_is_refused(sample_field: Path) -> None:
    for number in range(search_mod.MAX_EXPANSION + 20):
        write_page(sample_field, f"many/p{number}.md", page(f"Page {number}", f"The word zz{number}q."))
    service = open_service(sample_field)
    try:
        with pytest.raises(QueryError) as info:
            service.search("zz*")
        assert "more than" in info.value.message
        assert search_paths(service, "zz7q") == ["many/p7.md"]
        assert search_paths(service, "path:many/* zz7q") == ["many/p7.md"]  # a path filter is not limited
    finally:
        service.close()


def test_a_search_past_the_time_limit_returns_what_it_found(svc, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(search_mod, "TIME_LIMIT", 0.0)
    hits = svc.search("public API decision")
    assert hits.timed_out
    assert all(h.path for h in hits)


def test_quarantined_text_ranks_below_the_same_text_reviewed(tmp_path: Path) -> None:
    """Text from outside that no one reviewed is found, but below a page saying the same."""
    body = "The billing webhook retries three times with backoff."
    write_page(tmp_path, "notes/webhook.md", "---\ntitle: Billing webhook\nreviewed: true\n---\n" + body + "\n")
    write_page(
        tmp_path,
        "inbox/webhook.md",
        "---\ntitle: Billing webhook\ntaint: external\nsources: [https://example.test/post]\n---\n" + body + "\n",
    )
    service = open_service(tmp_path)
    try:
        hits = service.search("billing webhook retries")
        assert [(h.path, h.trust) for h in hits] == [
            ("notes/webhook.md", "reviewed"),
            ("inbox/webhook.md", "quarantined"),
        ]
        assert hits[1].score == pytest.approx(hits[0].score * search_mod.QUARANTINED_FACTOR, rel=0.2)
    finally:
        service.close()
