"""The index's text analysis and its fast Whoosh writer agree with Whoosh's own paths."""

from __future__ import annotations

import random
from collections import Counter

from whoosh import fields, index
from whoosh.qparser import QueryParser
from whoosh.writing import SegmentWriter

from memtui.index.analysis import (
    ExactField,
    PageText,
    WordSet,
    build_schema,
    codec,
    index_terms,
    prefix_of,
    query_analyzer,
)
from memtui.index.fastwrite import INLINE_LIMIT, FastSegmentWriter
from memtui.index.search import parse_query

SAMPLES = [
    "Public API decisions: REST, GraphQL and tRPC were decided in 2026.",
    "The the THE a an of: stop words and one-letter words (x y z) vanish.",
    "Ünïcödé wörds, ÇA VA, İstanbul, straße and naïve café — mixed_case_Words_42.",
    "deploy deployed deploying deployment deployments redeploy",
    "tabs\tand\r\nCRLF lines\u00a0with\u2009odd spaces; hyphen-ated and dot.ted.words",
    "",
    "x" * 60 + " long-word-" + "y" * 45 + " ok",
]


def _query_terms(text: str) -> Counter:
    return Counter(token.text for token in query_analyzer()(text))


def test_index_terms_match_the_query_analyzer() -> None:
    rng = random.Random(3)
    alphabet = "abcdeéÄßİı _-.,:;!?'\"\n\t0123456789QWERTY"
    samples = list(SAMPLES) + ["".join(rng.choice(alphabet) for _ in range(200)) for _ in range(200)]
    for text in samples:
        assert index_terms(text) == _query_terms(text), text


def test_stems_and_stop_words() -> None:
    terms = index_terms("The decisions is decided; decision!")
    assert "the" not in terms and "is" not in terms
    assert terms["decis"] == 2 and terms["decid"] == 1


def test_prefix_of_finds_every_form() -> None:
    assert prefix_of("deploy") == "deplo"  # "deploy" -> "deploi", "deployment" -> "deploy"
    assert prefix_of("shipment") == "shipment"


def test_pattern_queries_keep_their_letters() -> None:
    assert str(parse_query("deploy*", build_schema()).query) == "text:deplo*"
    assert str(parse_query("deployed", build_schema()).query) == "text:deploi"


def _schema() -> fields.Schema:
    return fields.Schema(
        path=ExactField(stored=True, unique=True),
        kind=ExactField(lower=True),
        tag=WordSet(),
        title=PageText(stored=True, field_boost=2.0),
        body=PageText(),
        rec=fields.STORED(),
    )


def _documents(count: int) -> list[dict]:
    rng = random.Random(11)
    vocabulary = [f"w{n}" for n in range(300)] + ["common"] * 50 + ["rare-one", "rare-two"]
    docs = []
    for number in range(count):
        words = rng.choices(vocabulary, k=rng.randint(5, 80))
        docs.append(
            {
                "path": f"notes/p{number}.md",
                "kind": rng.choice(["Semantic", "episodic"]),
                "tag": " ".join(rng.sample(["stated", "observed", "inferred"], k=rng.randint(0, 3))),
                "title": " ".join(rng.choices(vocabulary, k=3)),
                "body": " ".join(words) + (f" unique{number // 3}" if number % 2 else ""),
                "rec": (number, {"n": number}),
            }
        )
    return docs


def _dump(ix) -> dict:
    """Everything searchable: per term, the postings (doc path, weight, value) and the stats."""
    out = {}
    with ix.reader() as reader:
        paths = {docnum: stored["path"] for docnum, stored in reader.iter_docs()}
        out["stored"] = sorted((stored["path"], stored.get("title"), stored.get("rec")) for _, stored in reader.iter_docs())
        for fieldname, btext in reader.all_terms():
            postings = reader.postings(fieldname, btext)
            items = []
            while postings.is_active():
                # Formats without values report None (a block) or b"" (inlined): both mean "none".
                items.append((paths[postings.id()], round(postings.weight(), 6), postings.value() or None))
                postings.next()
            out[(fieldname, btext)] = (
                sorted(items),
                reader.doc_frequency(fieldname, btext),
                round(reader.frequency(fieldname, btext), 6),
            )
        for fieldname in ("title", "body"):
            out[("length", fieldname)] = sorted(
                (paths[d], reader.doc_field_length(d, fieldname)) for d in paths
            )
    return out


def _scores(ix, query: str) -> list[tuple[str, float]]:
    with ix.searcher() as searcher:
        parsed = QueryParser("body", ix.schema).parse(query)
        return [(hit["path"], round(hit.score, 6)) for hit in searcher.search(parsed, limit=None)]


def test_fast_writer_builds_the_same_index_as_whoosh(tmp_path) -> None:
    docs = _documents(400)
    built = {}
    for name, writer_class in (("stock", SegmentWriter), ("fast", FastSegmentWriter)):
        folder = tmp_path / name
        folder.mkdir()
        ix = index.create_in(str(folder), _schema())
        writer = writer_class(ix, codec=codec())
        for doc in docs:
            writer.add_document(**doc)
        writer.commit()
        built[name] = ix
    stock, fast = _dump(built["stock"]), _dump(built["fast"])
    assert stock == fast
    rare = [key for key, value in fast.items() if isinstance(key, tuple) and key[0] == "body"
            and value[1] <= INLINE_LIMIT]
    assert rare, "the sample must exercise inlined posting lists"
    for query in ("common", "w1 OR w2", "rare-one", "title:w5 common"):
        assert _scores(built["stock"], query) == _scores(built["fast"], query)


def _build_with_changes(folder, writer_class) -> list:
    docs = _documents(120)
    ix = index.create_in(str(folder), _schema())
    snapshots = []
    for start in range(0, 120, 30):  # four segments
        writer = writer_class(ix, codec=codec())
        for doc in docs[start : start + 30]:
            writer.add_document(**doc)
        writer.commit(merge=False)
    writer = writer_class(ix, codec=codec())
    writer.delete_by_term("path", "notes/p3.md")
    writer.update_document(**{**docs[4], "body": "replaced text"})
    writer.commit(merge=False)
    snapshots.append((_dump(ix), _scores(ix, "common replaced"), len(ix._segments())))
    writer = writer_class(ix, codec=codec())
    writer.commit(optimize=True)  # merges every segment (through the grouped pool for the fast writer)
    snapshots.append((_dump(ix), _scores(ix, "common replaced"), len(ix._segments())))
    return snapshots


def test_fast_writer_updates_deletes_and_merges_like_whoosh(tmp_path) -> None:
    (tmp_path / "stock").mkdir()
    (tmp_path / "fast").mkdir()
    stock = _build_with_changes(tmp_path / "stock", SegmentWriter)
    fast = _build_with_changes(tmp_path / "fast", FastSegmentWriter)
    assert fast == stock
    dump, _scores_after, segments = fast[-1]
    assert segments == 1
    assert [path for path, _, _ in dump[("body", b"replac")][0]] == ["notes/p4.md"]
    assert "notes/p3.md" not in {path for path, _, _ in dump["stored"]}
