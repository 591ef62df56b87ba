"""memtui.index.engine.bulk: the same best pages and scores as Whoosh's matchers, found faster.

A field of a few hundred pages with words in Zipf-like frequencies (English words and CJK
runs, so queries give dense and sparse postings alike), indexed for real; then some pages
rewritten and removed through the service, so the index has several segments and deleted
documents. For each query, the full pass and the partial pass are ranked by Whoosh's
collector and by ``bulk.top_docs``: the same pages in the same order, the same scores.
"""

from __future__ import annotations

import random
import time

import pytest
from whoosh import query as wq

from memtui.index import IndexService
from memtui.index import search as search_mod
from memtui.index.engine import bulk
from memtui.index.search import index_languages, parse_query
from tests.helpers import write_page

LATIN = [f"w{n}" for n in range(120)]
HAN = "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定"


def _words(rng: random.Random, count: int) -> list[str]:
    out = []
    for _ in range(count):
        if rng.random() < 0.5:
            out.append(LATIN[min(int(rng.paretovariate(1.1)) - 1, len(LATIN) - 1)])
        else:
            out.append("".join(rng.choice(HAN[: rng.choice((12, 30, len(HAN)))]) for _ in range(rng.choice((2, 3, 4)))))
    return out


def _page(rng: random.Random, number: int) -> str:
    lines = [f"- {' '.join(_words(rng, rng.randint(3, 12)))} [observed]" for _ in range(rng.randint(2, 12))]
    return f"---\ntitle: page {number}\n---\n# Page {number}\n\n" + "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> IndexService:
    rng = random.Random(3)
    root = tmp_path_factory.mktemp("bulk") / "field"
    for number in range(400):
        write_page(root, f"notes/p{number}.md", _page(rng, number))
    svc = IndexService(root, index_dir=root.parent / "index")
    svc.open()
    svc.start_watching()
    # Rewrites and removals: new segments beside the first, deleted documents in it.
    for number in range(0, 400, 9):
        write_page(root, f"notes/p{number}.md", _page(rng, 1000 + number))
    for number in range(5, 400, 37):
        (root / f"notes/p{number}.md").unlink()
    assert svc.flush(20)
    yield svc
    svc.close()


@pytest.fixture
def searcher(indexed):
    """The service's searcher, held as ``IndexService.search`` holds it (its lock): a commit the
    watcher makes late (it may still report the rewrites after the flush) would otherwise
    replace it from the writer thread and close its readers while a test reads them."""
    with indexed._search_lock:
        yield indexed._current_searcher()


def _queries() -> list[str]:
    rng = random.Random(11)
    out = []
    for _ in range(120):
        out.append(" ".join(_words(rng, rng.randint(1, 3))))
    out += ["w0", "w1 w2", "w119 w0", "的一", "的", "的 w0", "有和人这中 w3"]
    return out


def _whoosh(searcher, query, limit: int) -> list[tuple[float, int]]:
    """Whoosh's own ranking: the reference bulk is checked against (memtui searches with bulk)."""
    collector = searcher.collector(limit=limit)
    searcher.search_with_collector(query, collector)
    return [(hit.score, hit.docnum) for hit in collector.results()]


def _unscaled(query):
    """The query without the coordination bonus (Whoosh's ``CoordMatcher`` recounts the terms of
    its tree each time a collector prunes it, so its scores depend on the order it walks)."""
    if type(query) is wq.Or:
        return wq.Or([_unscaled(sub) for sub in query.subqueries], boost=query.boost)
    if type(query) in (wq.And, wq.DisjunctionMax):
        return query.apply(_unscaled)
    return query


def _has(query, kind) -> bool:
    return any(isinstance(node, kind) for node in search_mod._nodes(query))


def _same(ours: list[tuple[float, int]], theirs: list[tuple[float, int]]) -> None:
    assert len(ours) == len(theirs)
    for (score, docnum), (their_score, their_docnum) in zip(ours, theirs):
        assert score == pytest.approx(their_score, rel=1e-9, abs=1e-12)
        if docnum != their_docnum:  # a tie: floating-point sums in another order
            assert their_score == pytest.approx(score, rel=1e-9)


def test_the_index_under_test_has_segments_and_deleted_documents(searcher) -> None:
    assert len(searcher.reader().leaf_readers()) > 1
    assert any(reader.has_deletions() for reader, _ in searcher.reader().leaf_readers())


@pytest.mark.parametrize("limit", [1, 5, 40])
def test_bulk_ranks_every_query_as_whoosh_does(searcher, limit: int) -> None:
    langs = index_languages(searcher)
    compared = 0
    for text in _queries():
        parsed = parse_query(text, searcher.schema, langs=langs)
        for query in (parsed.query, parsed.partial):
            if query is None or _has(query, wq.DisjunctionMax):
                continue  # Whoosh's DisjunctionMax scores another page's posting (see below)
            query = _unscaled(query)
            try:
                ours = bulk.top_docs(searcher, query, limit, time.monotonic() + 30)
            except bulk.Unsupported:
                continue
            _same(ours, _whoosh(searcher, query, limit))
            compared += 1
    assert compared > 150  # both passes of most queries, single CJK characters (prefixes) too


def test_deleted_documents_are_never_returned(searcher) -> None:
    live = {hit.docnum for hit in searcher.search(wq.Every(), limit=None)}
    for text in _queries():
        parsed = parse_query(text, searcher.schema, langs=index_languages(searcher))
        for query in (parsed.query, parsed.partial):
            if query is None:
                continue
            try:
                found = bulk.top_docs(searcher, query, 1000, time.monotonic() + 30)
            except bulk.Unsupported:
                continue
            assert {docnum for _, docnum in found} <= live


def test_the_coordination_bonus_rises_with_the_terms_a_page_holds(searcher) -> None:
    """``Or(scale=s)`` of T terms: (sum of the scores + (m - 1) / (T - s)^2) * (T - 1) / T for a
    page holding m of them (the formula of Whoosh's CoordMatcher, with T fixed)."""
    terms = [wq.Term("text", word) for word in ("w0", "w1", "w2", "w3")]
    plain = {d: v for v, d in bulk.top_docs(searcher, wq.Or(terms), 10_000, time.monotonic() + 30)}
    per_term = [{d for _, d in bulk.top_docs(searcher, t, 10_000, time.monotonic() + 30)} for t in terms]
    scaled = {d: v for v, d in bulk.top_docs(searcher, wq.Or(terms, scale=0.9), 10_000, time.monotonic() + 30)}
    assert set(scaled) == set(plain) and len(plain) > 50
    count = len(terms)
    for docnum, score in scaled.items():
        matching = sum(docnum in docs for docs in per_term)
        assert score == pytest.approx((plain[docnum] + (matching - 1) / (count - 0.9) ** 2) * (count - 1) / count)
    # The best pages of the union are found through MaxScore as by scoring every page.
    best = bulk.top_docs(searcher, wq.Or(terms, scale=0.9), 5, time.monotonic() + 30)
    assert [d for _, d in best] == sorted(scaled, key=lambda d: (-scaled[d], d))[:5]


def test_a_disjunction_scores_each_page_by_its_own_best_part(searcher) -> None:
    a, b = wq.Term("text", "w0"), wq.Term("text", "w7")
    union = {docnum: score for score, docnum in bulk.top_docs(searcher, wq.Or([a]), 10_000, time.monotonic() + 30)}
    other = {docnum: score for score, docnum in bulk.top_docs(searcher, wq.Or([b]), 10_000, time.monotonic() + 30)}
    best = {
        docnum: score
        for score, docnum in bulk.top_docs(searcher, wq.DisjunctionMax([a, b]), 10_000, time.monotonic() + 30)
    }
    assert set(best) == set(union) | set(other)
    for docnum, score in best.items():
        assert score == pytest.approx(max(union.get(docnum, 0.0), other.get(docnum, 0.0)))


def test_shapes_it_does_not_score_are_left_to_whoosh(indexed, searcher) -> None:
    for query in (
        wq.Not(wq.Term("text", "w0")),
        wq.Phrase("text", ["w0", "w1"]),
        wq.Wildcard("text", "w1*"),
        wq.Or([wq.Term("text", "w0"), wq.Term("text", "w1")], minmatch=2),
        wq.Prefix("status", "cur"),
    ):
        with pytest.raises(bulk.Unsupported):
            bulk.top_docs(searcher, query, 10, time.monotonic() + 30)
    # ... and a search with them still works, through Whoosh.
    assert indexed.search("w0 NOT w1", limit=5) is not None


def test_a_passed_deadline_stops_it(searcher) -> None:
    with pytest.raises(bulk.OutOfTime):
        bulk.top_docs(searcher, wq.Or([wq.Term("text", "w0"), wq.Term("text", "w1")]), 10, time.monotonic() - 1)
