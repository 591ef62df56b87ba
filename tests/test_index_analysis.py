"""The index's text analysis and its fast Whoosh writer agree with Whoosh's own paths,
and the query side analyses a word exactly as the page side does."""

from __future__ import annotations

import random
import unicodedata
from collections import Counter

import pytest
from whoosh import fields, index
from whoosh.qparser import QueryParser
from whoosh.query import And
from whoosh.reading import SegmentReader
from whoosh.writing import SegmentWriter

from memtui.index.analysis import (
    ExactField,
    PageText,
    PageTextValue,
    WordSet,
    build_schema,
    codec,
    detect_language,
    index_terms,
    inline_tags,
    language_code,
    normalize_tag,
    prefix_of,
    query_analyzer,
    tag_terms,
    term_counts,
)
from memtui.index.engine.fastwrite import INLINE_LIMIT, FastSegmentWriter
from memtui.index.search import CharPrefix, QueryBuilder, Unit, parse_query

SAMPLES = [
    "Public API decisions: REST, GraphQL and tRPC were decided in 2026.",
    "The the THE a an of: stop words and one-letter words (x y z) vanish.",
    "Ünïcödé wörds, ÇA VA, İstanbul, straße and naïve café — mixed_case_Words_42.",
    "deploy deployed deploying deployment deployments redeploy",
    "tabs\tand\r\nCRLF lines\u00a0with\u2009odd spaces; hyphen-ated and dot.ted.words",
    "",
    "x" * 60 + " long-word-" + "y" * 45 + " ok",
    "给飞书机器人发消息之前，先做安全检查。Deploy 到 staging。",
    "ボリュームの保存場所は /var/lib/docker です。ｶﾀｶﾅ and ＡＢＣ full width.",
    "검색엔진을 사용합니다. 猫",
    "Поисковая система, поисковой системы; ёлка и Ёж — безопасность.",
    "erbing_brain_api.py retryWithJitter XMLHttpRequest file-name.md v1.2.3 maya@harbor.io INC-0042 tRPC iPhone",
    unicodedata.normalize("NFD", "café crème brûlée, Ελληνικά τόνοι, हिन्दी शब्द"),
]
LANGS = ["", "en", "de", "fr", "ru", "uk", "zh", "ja"]
ALPHABET = "abcdeéÄßİı _-.,:;!?'\"\n\t0123456789QWERTY/@#飞书安全检查ボリュームの検索엔진поиск\u0301"


def _random_samples(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 200))) for _ in range(count)]


def _tokens(text, lang: str = "") -> list[tuple[str, int]]:
    # Whoosh tokenizers reuse one Token object: read each as it comes.
    return [(t.text, t.pos) for t in query_analyzer(lang)(text, positions=True)]


@pytest.mark.parametrize("lang", LANGS)
def test_index_terms_match_the_query_analyzer(lang: str) -> None:
    for text in SAMPLES + _random_samples(150, 3):
        assert index_terms(text, lang) == Counter(term for term, _ in _tokens(text, lang)), text


@pytest.mark.parametrize("lang", LANGS)
def test_the_counts_of_a_field_of_several_parts_match_the_query_analyzer(lang: str) -> None:
    for text in SAMPLES + _random_samples(150, 5):
        parts = PageTextValue(("A title, twice", text, "the body " + text, "给飞书" * 3, text), lang)
        expected = Counter(token.text for token in query_analyzer()(parts))
        assert Counter(term_counts(parts)) == expected, text


def _primary_sequence(text: str, lang: str) -> tuple[str, ...]:
    """A text's primary terms in position order: what a phrase of that text must find."""
    primary: dict[int, str] = {}
    for token in query_analyzer(lang)(text, positions=True):
        if token.primary:
            primary.setdefault(token.pos, token.text)
    return tuple(primary[at] for at in sorted(primary))


@pytest.mark.parametrize("lang", LANGS)
def test_a_query_word_finds_the_terms_the_page_has(lang: str) -> None:
    """Whatever a page says, each unit the same text makes in a query holds a term the page
    has, in the page's language; primary terms of a phrase are the page's, in order."""
    words = [w for text in SAMPLES + _random_samples(60, 7) for w in text.split()]
    builder = QueryBuilder("text", [lang] if lang else [])
    for word in words:
        page_terms = set(index_terms(word, lang))
        for unit in builder.word(word):
            if isinstance(unit.query, CharPrefix):  # one CJK character: a term starting with it
                assert any(t.startswith(c) for c in unit.terms for t in page_terms), (word, unit.terms)
            else:
                assert unit.terms & page_terms, (word, unit.terms, page_terms)
        primary = _primary_sequence(word, lang)
        if primary:
            sequences = {words for unit in builder.phrase(word) for words in _alternatives(unit)}
            assert primary in sequences, (word, primary, sequences)  # the page's own sequence is a variant


def _alternatives(unit: Unit) -> list[tuple[str, ...]]:
    """The word sequences a phrase unit accepts (a one-word phrase: its terms)."""
    if unit.phrase is not None:
        return list(unit.phrase.alternatives)
    return [(term,) for term in unit.terms]


def test_stems_and_stop_words() -> None:
    terms = index_terms("The decisions is decided; decision!")
    assert "the" not in terms and "is" not in terms
    assert terms["decis"] == 2 and terms["decid"] == 1
    assert set(index_terms("поисковая система и в на", "ru")) == {"поисков", "систем"}
    assert set(index_terms("Die Häuser", "de")) == {"die", "haus"}  # German has no stop list here


def test_cjk_runs_become_bigrams_and_characters() -> None:
    assert index_terms("给飞书") == Counter({"给飞": 1, "飞书": 1, "书": 1})  # bigrams and the last character
    assert index_terms("猫") == Counter({"猫": 1})
    assert index_terms("ｶﾀｶﾅ") == index_terms("カタカナ")  # NFKC: half-width kana
    assert index_terms("ＡＢＣ Café") == index_terms("abc CAFE")


def test_identifiers_are_indexed_whole_and_by_their_parts() -> None:
    assert set(index_terms("erbing_brain_api.py")) == {"erbing_brain_api.py", "erb", "brain", "api", "py"}
    assert set(index_terms("retryWithJitter")) == {"retrywithjitter", "retri", "jitter"}
    assert set(index_terms("tRPC iPhone")) == {"trpc", "iphon"}  # a one-letter hump keeps a word whole
    assert set(index_terms("file-name.md")) == {"file-name.md", "file", "name", "md"}
    # In a phrase the parts follow one another; the whole is never part of a phrase.
    assert _primary_sequence("see retryWithJitter now", "") == ("see", "retri", "jitter", "now")


def test_language_detection() -> None:
    assert detect_language("The public API decision was made in August, and it is final for all of us.") == "en"
    assert (
        detect_language("Die Häuser und die Gärten sind sehr schön, aber nicht für uns, und wir haben keine Zeit.")
        == "de"
    )
    assert detect_language("Это поисковая система для проверки памяти и всего остального, что есть в заметке.") == "ru"
    assert detect_language("Це пошукова система для перевірки пам'яті та всього іншого, що є в нотатці.") == "uk"
    assert detect_language("飞书机器人的权限配置清单，包括消息发送和接收的全部权限，以及更多内容。") == "zh"
    assert detect_language("ボリュームの保存場所は、Docker の内部にあります。これは日本語のテキストです。") == "ja"
    assert detect_language("검색엔진을 사용합니다. 이것은 한국어 문장입니다. 더 많은 글자가 필요합니다.") == "ko"
    assert detect_language("anything at all", declared="ru-RU") == "ru"
    assert detect_language("Gärten", path="de/notes/x.md") == "de"
    assert (
        detect_language("The folder says it, the text says English: it is what it is, and that is all.", path="it/x.md")
        == "en"
    )
    assert language_code("Russian") == language_code("русский") == "ru" and language_code("klingon") == ""


def test_tags_are_normalised_and_nested() -> None:
    assert normalize_tag("#Project/Alpha") == "project/alpha" and normalize_tag(" Café ") == "cafe"
    assert tag_terms(["#a/b/c", "B"]) == ["a/b/c", "a", "a/b", "b"]
    body = "Met #Maya-team about #项目/一期.\n# Heading\nsee page.md#L12 and a#b\n```\n#include <x>\n```\n#2024 #v2"
    assert inline_tags(body) == ["Maya-team", "项目/一期", "v2"]


def test_prefix_of_finds_every_form() -> None:
    assert prefix_of("deploy") == "deplo"  # "deploy" -> "deploi", "deployment" -> "deploy"
    assert prefix_of("shipment") == "shipment"
    assert prefix_of("поисковая", ["ru"]) == "поисков"


def test_pattern_queries_keep_their_letters() -> None:
    assert str(parse_query("deploy*", build_schema()).query) == "text:deplo*"
    assert str(parse_query("deployed", build_schema()).query) == "text:deploi"


def test_a_phrase_finds_the_pages_holding_its_words_and_is_checked_on_their_text() -> None:
    parsed = parse_query('"public API" deploy', build_schema())
    assert isinstance(parsed.query, And)  # the index holds no positions: every word, in any order
    assert [phrase.alternatives for phrase in parsed.phrases] == [(("public", "api"),)]
    assert parse_query('"deploy"', build_schema()).phrases == []  # one word: nothing to check
    identifier = parse_query("retryWithJitter", build_schema())
    assert identifier.phrases[0].alternatives == (("retrywithjitter",), ("retri", "jitter"))


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
        out["stored"] = sorted(
            (stored["path"], stored.get("title"), stored.get("rec")) for _, stored in reader.iter_docs()
        )
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
            out[("length", fieldname)] = sorted((paths[d], reader.doc_field_length(d, fieldname)) for d in paths)
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
    rare = [
        key for key, value in fast.items() if isinstance(key, tuple) and key[0] == "body" and value[1] <= INLINE_LIMIT
    ]
    assert rare, "the sample must exercise inlined posting lists"
    for query in ("common", "w1 OR w2", "rare-one", "title:w5 common"):
        assert _scores(built["stock"], query) == _scores(built["fast"], query)
    # "uniqueN" is in at most two pages: its postings are inlined in the term entry.
    doc = docs[7]
    unique = doc["body"].split()[-1]
    assert unique == "unique2" and fast[("body", b"unique2")][1] <= INLINE_LIMIT
    assert doc["path"] in [p for p, _ in _scores(built["fast"], unique)]
    assert _scores(built["stock"], unique) == _scores(built["fast"], unique)


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
    writer.add_document(**{**docs[5], "path": "notes/new.md", "body": "common replaced words added beside a merge"})
    # Merges every segment (the fast writer reads them term by term as it writes) with a page
    # of the writer's own: its postings and the merged ones joined per term.
    writer.commit(optimize=True)
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
    assert "notes/p3.md" not in {path for path, _, _ in dump["stored"]}
    assert sorted(path for path, _, _ in dump[("body", b"replac")][0]) == ["notes/new.md", "notes/p4.md"]


def test_a_merge_keeps_no_posting_of_the_merged_segments_in_memory(tmp_path) -> None:
    ix = index.create_in(str(tmp_path), _schema())
    docs = _documents(60)
    for start in (0, 30):
        writer = FastSegmentWriter(ix, codec=codec())
        for doc in docs[start : start + 30]:
            writer.add_document(**doc)
        writer.commit(merge=False)
    writer = FastSegmentWriter(ix, codec=codec())
    for segment in ix._segments():
        writer.add_reader(SegmentReader(ix.storage, ix.schema, segment))
    assert writer.pool.fields == {} and len(writer.pool.sources) == 2  # read when written
    writer.cancel()


def test_compact_hash_buckets_write_the_term_file_whoosh_writes() -> None:
    from whoosh.filedb.filestore import RamStorage
    from whoosh.filedb.filetables import OrderedHashReader, OrderedHashWriter

    from memtui.index.engine.fastwrite import PositionBucket, _compact_buckets

    keys = sorted({f"term{n * 7919 % 5003}".encode() for n in range(3000)})
    storage = RamStorage()
    written = {}
    for name in ("stock", "compact"):
        writer = OrderedHashWriter(storage.create_file(name))
        writer.add(keys[0], b"v0")
        if name == "compact":  # the entry made before the buckets are swapped is kept
            assert all(type(bucket) is PositionBucket for bucket in _compact_buckets(writer))
        for key in keys[1:]:
            writer.add(key, b"v" + key)
        writer.close()
        written[name] = storage.open_file(name).read()
    assert written["compact"] == written["stock"]
    reader = OrderedHashReader(storage.open_file("compact"), len(written["compact"]))
    assert reader[keys[0]] == b"v0" and reader[keys[-1]] == b"v" + keys[-1]
