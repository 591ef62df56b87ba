"""Search on real text (issue 14): CJK runs, languages and stemming, Unicode forms, snippets."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from tests.helpers import write_page
from tests.helpers_index import open_service, page, search_paths


def open_field(root: Path, pages: dict[str, str]):
    for rel, text in pages.items():
        write_page(root, rel, text)
    return open_service(root)


@pytest.fixture
def cjk(tmp_path: Path):
    svc = open_field(
        tmp_path / "field",
        {
            "notes/feishu.md": page(
                "Bot", "- 给飞书机器人发消息之前先配置签名。[observed]\n- deployment to staging is automatic. [stated]"
            ),
            "notes/check-1.md": page("One", "- 每天早上做安全检查。[stated]"),
            "notes/check-2.md": page("Two", "- 港口的安全检查经常延误。[observed]"),
            "notes/check-3.md": page("Three", "- 安全检查通过以后才能提箱。[stated]"),
            "notes/check-4.md": page("Four", "- 上线前的安全检查清单。[stated]"),
            "notes/apart.md": page("Apart", "- 安全第一。完全检验。检查完毕。[stated]"),
            "notes/half.md": page("Half", "- 安全很重要。[stated]"),
            "notes/cat.md": page("Cat", "- 我家的猫很可爱。[stated]"),
            "notes/volume.md": page("Docker", "- ボリュームの保存場所は /var/lib/docker です。[observed]"),
            "notes/korean.md": page("Korean", "- 검색엔진을 사용합니다. [stated]"),
            "notes/english.md": page("English", "- Deploy the API to staging every Tuesday. [stated]"),
        },
    )
    yield svc
    svc.close()


def test_a_chinese_word_inside_a_run_is_found(cjk) -> None:
    assert search_paths(cjk, "飞书") == ["notes/feishu.md"]
    assert search_paths(cjk, "机器人") == ["notes/feishu.md"]
    assert search_paths(cjk, "发消息") == ["notes/feishu.md"]


def test_every_page_holding_a_chinese_phrase_comes_first(cjk) -> None:
    hits = cjk.search("安全检查", limit=20)
    first = [h.path for h in hits[:4]]
    assert set(first) == {"notes/check-1.md", "notes/check-2.md", "notes/check-3.md", "notes/check-4.md"}
    assert not any(h.partial for h in hits[:4])
    rest = {h.path: h for h in hits[4:]}
    # Every bigram, but not next to each other: a full match, below the exact runs.
    assert "notes/apart.md" in rest and not rest["notes/apart.md"].partial
    # Only part of the run: found below, marked.
    assert rest["notes/half.md"].partial
    assert "notes/english.md" not in rest


def test_a_quoted_chinese_phrase_must_be_exact(cjk) -> None:
    assert set(search_paths(cjk, '"安全检查"')) == {
        "notes/check-1.md",
        "notes/check-2.md",
        "notes/check-3.md",
        "notes/check-4.md",
    }


def test_japanese_korean_and_single_characters(cjk) -> None:
    assert search_paths(cjk, "保存場所") == ["notes/volume.md"]
    assert search_paths(cjk, "ボリューム") == ["notes/volume.md"]
    assert search_paths(cjk, "ボリュームの保存場所") == ["notes/volume.md"]  # the particle is not required
    assert search_paths(cjk, "엔진") == ["notes/korean.md"]
    assert search_paths(cjk, "猫") == ["notes/cat.md"]  # one character inside a run
    assert search_paths(cjk, "给") == ["notes/feishu.md"]  # ... at its start
    assert search_paths(cjk, "息") == ["notes/feishu.md"]  # ... at its end
    assert search_paths(cjk, "福") == []


def test_latin_words_beside_cjk_text_are_unaffected(cjk) -> None:
    assert search_paths(cjk, "deployment") == ["notes/feishu.md"]
    assert set(search_paths(cjk, "deploy*")) == {"notes/feishu.md", "notes/english.md"}
    hits = cjk.search("staging Tuesday")
    assert [(h.path, h.partial) for h in hits] == [("notes/english.md", False), ("notes/feishu.md", True)]


def test_cjk_snippets_highlight_the_characters(cjk) -> None:
    hit = cjk.search("飞书")[0]
    assert "给飞书机器人发消息" in hit.snippet
    assert [hit.snippet[a:b] for a, b in hit.highlights] == ["飞书"]


@pytest.fixture
def languages(tmp_path: Path):
    svc = open_field(
        tmp_path / "field",
        {
            "notes/poisk.md": page(
                "Заметка",
                "- Поисковая система работает быстро, проверка безопасности поисковой системы прошла. [observed]",
            ),
            "notes/haus.md": page("Hafen", "- Die Häuser am Hafen sind alt. [stated]", lang="de"),
            "de/kurz.md": page("Kurz", "- Gärten. [stated]"),
            "notes/english.md": page("Decisions", "- The decisions were deployed on Tuesday. [stated]"),
            "notes/cafe.md": page(
                "Cafe", unicodedata.normalize("NFD", "- Le café crème est prêt à Straße İstanbul. [stated]")
            ),
        },
    )
    yield svc
    svc.close()


@pytest.mark.parametrize("query", ["поисковая система", "поисковую систему", "системы", "Безопасность"])
def test_russian_words_are_found_in_any_form(languages, query: str) -> None:
    assert search_paths(languages, query) == ["notes/poisk.md"]


def test_a_page_is_stemmed_in_its_language(languages) -> None:
    assert search_paths(languages, "Haus") == ["notes/haus.md"]  # lang: de: Häuser -> haus
    assert search_paths(languages, "Garten") == ["de/kurz.md"]  # a folder named de/
    assert set(search_paths(languages, "lang:de")) == {"de/kurz.md", "notes/haus.md"}
    assert search_paths(languages, "lang:ru") == ["notes/poisk.md"]


def test_english_stemming_is_as_before(languages) -> None:
    for query in ("decision", "deploy", "deploying", "decisions deployed"):
        assert search_paths(languages, query) == ["notes/english.md"], query
    assert search_paths(languages, "the of and") == []  # stop words alone find nothing


@pytest.mark.parametrize(
    "query",
    [
        "café",
        "cafe",
        "CAFÉ",
        unicodedata.normalize("NFD", "café"),
        "creme",
        "pret",
        "strasse",
        "STRASSE",
        "istanbul",
        "İSTANBUL",
    ],
)
def test_unicode_forms_case_and_accents_fold(languages, query: str) -> None:
    assert search_paths(languages, query) == ["notes/cafe.md"], query


def test_snippets_show_the_text_as_written(languages) -> None:
    hit = languages.search("cafe")[0]
    written = unicodedata.normalize("NFD", "café")
    assert written in hit.snippet  # not folded, not even recomposed
    assert [hit.snippet[a:b] for a, b in hit.highlights] == [written]
    hit = languages.search("поисковая")[0]
    assert [hit.snippet[a:b] for a, b in hit.highlights] == ["Поисковая", "поисковой"]


def test_a_long_cjk_question_is_read_not_refused(cjk) -> None:
    question = "请问" + "给飞书机器人发消息之前需要做哪些安全检查和签名配置以及其他准备工作" * 3
    assert len(question) > 64
    assert cjk.search(question, plain=True)  # plain words (recall tests, questions): up to the limit


def test_the_characters_nfkc_turns_into_cjk_are_all_known() -> None:
    """A CJK word is looked for in the normalised text only where a part holds one of these
    characters (search._BECOMES_CJK_RE): every code point whose NFKC form holds a CJK
    character, and the kana voicing marks that join the kana before them, are among them."""
    from memtui.index.analysis import CJK_RE
    from memtui.index.search import _BECOMES_CJK_RE

    missing = []
    for point in range(0x110000):
        if 0xD800 <= point < 0xE000:
            continue
        char = chr(point)
        form = unicodedata.normalize("NFKC", char)
        if form != char and CJK_RE.search(form) and not _BECOMES_CJK_RE.match(char):
            missing.append(hex(point))
    assert missing == []
    assert unicodedata.normalize("NFKC", "か\u3099") == "が" and _BECOMES_CJK_RE.search("か\u3099")


def test_a_cjk_word_written_in_compatibility_forms_is_found_as_written(tmp_path: Path) -> None:
    svc = open_field(
        tmp_path / "field",
        {
            "notes/halfwidth.md": page("Half", "- ﾎﾞﾘｭｰﾑの保存場所、か\u3099いこく。[observed]"),
            "notes/other.md": page("Other", "- ボリ ューム [observed]"),
        },
    )
    try:
        hits = svc.search("ボリューム")
        assert hits[0].path == "notes/halfwidth.md" and not hits[0].partial
        assert svc.search("がいこく")[0].path == "notes/halfwidth.md"
    finally:
        svc.close()
