"""What goes into the index and how text becomes terms: the schema and the recipe.

Text becomes terms the same way on a page and in a query (``chunk_pieces``):

1. NFKC normalisation (NFC plus compatibility forms: full-width Latin, half-width
   katakana, ligatures), so NFD text and an NFC query meet.
2. *Chunks*: runs of word characters (with their combining marks) joined by
   ``- . @ /``: ``file-name.md``, ``erbing_brain_api.py``, ``v1.2.3``.
3. A chunk splits into *parts* at those joiners, at ``_`` and at camelCase humps
   (``retryWithJitter``: retry, with, jitter). A run of Chinese, Japanese or
   Korean characters becomes overlapping character bigrams plus its last character
   (``给飞书`` → 给飞 飞书 书), so a word inside the run is found: every character
   starts a term, and a one-character query is a prefix query.
4. A word part is case-folded, dropped if it is a stop word (English, or Russian
   for Cyrillic) or shorter than 2 or longer than 40 characters, stemmed in the
   page's language where Whoosh has a stemmer for it (otherwise by the default of
   its script: Porter for Latin letters, as before; Snowball Russian for Cyrillic),
   then accent-folded (``café`` → ``cafe``; ``й`` stays).
5. A chunk of two or more parts is also indexed whole (folded, not stemmed), so
   ``erbing_brain_api.py`` is found whole and by its parts.

Positions: parts and bigrams take consecutive positions, stop words take none; a
chunk's whole term and a CJK run's last character share a position with a part. At
each position one term is *primary*: a phrase is a sequence of primary terms. The
index stores no positions (only counts, ``Counts``): search checks a phrase on the
text of its best candidates with the same ``pieces_of``.

Indexing uses a fast path (``compiled``: one analysis per distinct chunk and
language, cached; CJK runs cut into bigrams for the whole value at once; then
counts). Queries use the same ``chunk_pieces``, also through a Whoosh tokenizer
(``query_analyzer``); a test checks that the fast path and the tokenizer give the
same terms.

The *recipe* names everything that changes what a build produces. An index whose
recipe differs from ``RECIPE`` is rebuilt, never patched.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from operator import add
from typing import NamedTuple, cast

import whoosh
from whoosh import analysis, fields, formats
from whoosh.analysis import Token
from whoosh.codec.whoosh3 import W3Codec
from whoosh.lang.porter import stem as porter_stem
from whoosh.system import pack_uint

from memtui import __version__
from memtui.store.schema import schema_version

# The index's schema version (``store.schema``): the code that makes its terms and stored
# records (``records.StoredRecord``). An index built by other code is built again.
SCHEMA_VERSION = schema_version(code=("memtui.index.analysis", "memtui.index.records"))
ANALYZER_NAME = "nfkc-cjk2-stem/2"  # NFKC, case and accent folding, CJK bigrams, identifiers, stems by language
# Whoosh's codec: zlib level 1 on posting blocks builds faster than the default 3 for
# a few percent more disk. (Its "inline postings" option is broken in 2.7.4: keep 1.)
CODEC_OPTIONS = {"blocklimit": 128, "compression": 1, "inlinelimit": 1}
RECIPE = {
    "tool": "memtui",
    "memtui": __version__,
    "schema": SCHEMA_VERSION,
    "analyzer": ANALYZER_NAME,
    "codec": "whoosh3 " + " ".join(f"{k}={v}" for k, v in CODEC_OPTIONS.items()),
    "whoosh": whoosh.versionstring(),
}


def codec() -> W3Codec:
    return W3Codec(**CODEC_OPTIONS)


MIN_WORD = 2
MAX_WORD = 40
MAX_WHOLE = 64  # a longer chunk (a URL, a long path) is only indexed by its parts
PART_GAP = 10  # positions between the parts of a field (title, summary, body): no phrase spans two

# Stop words: English (Whoosh's list, as before) for every script, Russian for Cyrillic.
# The Russian list is Snowball's without its numbers and evaluative words.
_RU_KEEP = {
    "два",
    "три",
    "один",
    "лучше",
    "хорошо",
    "никогда",
    "всегда",
    "иногда",
    "больше",
    "более",
    "много",
    "другой",
    "конечно",
    "наконец",
    "сейчас",
    "теперь",
    "после",
    "перед",
}


def _stop_words() -> frozenset[str]:
    from whoosh.lang.stopwords import stoplists

    russian = {word.replace("ё", "е") for word in stoplists["ru"]} - _RU_KEEP
    return frozenset(analysis.STOP_WORDS) | frozenset(russian)


STOP_WORDS = _stop_words()

# Free words are searched in one field, ``text``: the title twice, aliases and ``name``
# twice, the file name and id, the summary and description twice, the frontmatter tags,
# then the body. One field means one posting list per word to score: searching title,
# summary and body as three fields made searches about three times slower. The search
# module re-ranks the best candidates by how many query words their title, aliases,
# name, id or file name hold (the stored ``head``).
TITLE_REPEAT = 2
SUMMARY_REPEAT = 2
DEFAULT_FIELDS = ("text",)
TEXT_FIELDS = ("text", "title")

# ---------------------------------------------------------------------- characters
_CJK = "\u3005\u3007\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ffff"
CJK_RE = re.compile(f"[{_CJK}]+")
_KANA_RE = re.compile("[\u3040-\u30ff]")
_HANGUL_RE = re.compile("[\uac00-\ud7af]")


def _marks() -> str:
    """Combining marks in the blocks where they occur in words (Latin, Cyrillic, Indic, ...)."""
    ranges: list[tuple[int, int]] = []
    for block in ((0x0300, 0x1AFF), (0x1DC0, 0x1DFF), (0x20D0, 0x20FF), (0x3099, 0x309A), (0xFE20, 0xFE2F)):
        for code in range(block[0], block[1] + 1):
            if unicodedata.category(chr(code))[0] == "M":
                if ranges and ranges[-1][1] == code - 1:
                    ranges[-1] = (ranges[-1][0], code)
                else:
                    ranges.append((code, code))
    return "".join(f"\\u{a:04x}-\\u{b:04x}" if a != b else f"\\u{a:04x}" for a, b in ranges)


_WORD_CHAR = f"[\\w{_marks()}]"
# A chunk: word characters, optionally joined by single - . @ / characters.
CHUNK_RE = re.compile(f"{_WORD_CHAR}+(?:[-.@/]{_WORD_CHAR}+)*")
WORD_CHAR_RE = re.compile(_WORD_CHAR)
_JOINERS_RE = re.compile(r"[-.@/_]+")
_RUNS_RE = re.compile(f"([{_CJK}]+)|([^{_CJK}]+)")
_CAMEL_RE = re.compile(r"[A-Z]+[0-9]*(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z0-9]+")


def _fold_tables() -> tuple[dict[int, str], dict[int, str]]:
    """Accent folding: a letter with combining marks (U+0300-U+036F) becomes its base letter.

    ``FOLD`` is used on terms (``œ`` → ``oe``); ``FIND`` maps one character to one
    (upper- and lower-case) so a folded copy of a page keeps its offsets.
    """
    fold: dict[int, str] = {}
    find: dict[int, str] = {}
    extra = {"ł": "l", "ø": "o", "đ": "d", "ħ": "h", "ı": "i", "ŀ": "l", "æ": "ae", "œ": "oe", "ς": "σ"}
    for start, end in ((0x00C0, 0x024F), (0x0370, 0x03FF), (0x0400, 0x04FF), (0x1E00, 0x1EFF)):
        for code in range(start, end + 1):
            char = chr(code)
            if char in "йЙ":
                continue
            lower = char.lower()
            base = "".join(c for c in unicodedata.normalize("NFD", lower) if not 0x0300 <= ord(c) <= 0x036F)
            base = unicodedata.normalize("NFC", extra.get(base, base))
            if base != char and base:
                if char == lower:
                    fold[code] = base
                if len(base) == 1:
                    find[code] = base
    for code in range(0x0300, 0x0370):  # a mark with no precomposed letter (NFKC left it apart)
        fold[code] = ""
    for code in range(ord("A"), ord("Z") + 1):
        find[code] = chr(code).lower()
    return fold, find


FOLD, FIND = _fold_tables()


def fold_accents(text: str) -> str:
    return text if text.isascii() else text.translate(FOLD)


def find_fold(text: str) -> str:
    """Lower-case and accent-fold ``text`` character for character (offsets are kept)."""
    return text.translate(FIND)


def normalize(text: str) -> str:
    """NFKC: the form every text is analysed in."""
    if text.isascii() or unicodedata.is_normalized("NFKC", text):
        return text
    return unicodedata.normalize("NFKC", text)


# ---------------------------------------------------------------------- languages
LATIN, CYRILLIC, ARABIC, OTHER = "latin", "cyrillic", "arabic", "other"
# Languages with a Whoosh stemmer, by script. "uk" has none: its Cyrillic words are not stemmed.
LANG_SCRIPT = {
    "en": LATIN,
    "da": LATIN,
    "de": LATIN,
    "es": LATIN,
    "fi": LATIN,
    "fr": LATIN,
    "hu": LATIN,
    "it": LATIN,
    "nl": LATIN,
    "no": LATIN,
    "pt": LATIN,
    "ro": LATIN,
    "sv": LATIN,
    "ru": CYRILLIC,
    "uk": CYRILLIC,
    "ar": ARABIC,
}
# Languages recognised (from frontmatter, a folder, or the text) that change nothing but are recorded.
OTHER_LANGS = {"zh", "ja", "ko", "tr", "pl", "cs", "el", "he", "hi", "th", "vi", "id", "bg", "sr"}
DEFAULT_LANG = {LATIN: "en", CYRILLIC: "ru"}
_LANG_NAMES = {
    "english": "en",
    "german": "de",
    "deutsch": "de",
    "french": "fr",
    "français": "fr",
    "francais": "fr",
    "spanish": "es",
    "español": "es",
    "italian": "it",
    "italiano": "it",
    "portuguese": "pt",
    "português": "pt",
    "dutch": "nl",
    "nederlands": "nl",
    "swedish": "sv",
    "svenska": "sv",
    "norwegian": "no",
    "norsk": "no",
    "danish": "da",
    "dansk": "da",
    "finnish": "fi",
    "suomi": "fi",
    "hungarian": "hu",
    "magyar": "hu",
    "romanian": "ro",
    "russian": "ru",
    "русский": "ru",
    "ukrainian": "uk",
    "українська": "uk",
    "arabic": "ar",
    "chinese": "zh",
    "中文": "zh",
    "简体中文": "zh",
    "繁體中文": "zh",
    "japanese": "ja",
    "日本語": "ja",
    "korean": "ko",
    "한국어": "ko",
    "turkish": "tr",
    "türkçe": "tr",
    "nb": "no",
    "nn": "no",
}


def language_code(value: object) -> str:
    """``ru``, ``ru-RU``, ``Russian``, ``русский`` → ``ru``; ``""`` for anything else."""
    if not isinstance(value, str):
        return ""
    text = value.strip().casefold().replace("_", "-")
    if not text or len(text) > 20:
        return ""
    code = _LANG_NAMES.get(text) or _LANG_NAMES.get(text.split("-")[0], text.split("-")[0])
    return code if code in LANG_SCRIPT or code in OTHER_LANGS else ""


def _latin_votes() -> dict[str, tuple[str, ...]]:
    from whoosh.lang.stopwords import stoplists

    votes: dict[str, list[str]] = {}
    for lang, words in stoplists.items():
        if LANG_SCRIPT.get(lang) == LATIN:
            for word in words:
                if len(word) > 1:
                    votes.setdefault(word, []).append(lang)
    return {word: tuple(langs) for word, langs in votes.items()}


_VOTES: dict[str, tuple[str, ...]] | None = None
_LATIN_WORD_RE = re.compile(r"[a-zà-öø-ÿœ]+")
_CYRILLIC_RE = re.compile("[\u0400-\u04ff]")
_LATIN_RE = re.compile("[A-Za-z\u00c0-\u024f]")
_ARABIC_RE = re.compile("[\u0600-\u06ff]")
_UKRAINIAN_RE = re.compile("[іїєґ]")
_RUSSIAN_ONLY_RE = re.compile("[ыэъё]")
DETECT_CHARS = 4000
LATIN_VOTE_CHARS = 1000  # some 150 words are enough to tell the common words apart


def detect_language(text: str, declared: object = None, path: str = "") -> str:
    """The language a page is analysed in: a ``lang:``/``language:`` value, else the text's
    script and common words, else a folder named after a language (``ru/``), else ``""``
    (every word then gets the default of its script)."""
    code = language_code(declared)
    if code:
        return code
    folder = ""
    for name in path.split("/")[:-1]:
        folder = language_code(name) if len(name) <= 3 or name.casefold() in _LANG_NAMES else ""
        if folder:
            break
    sample = text[:DETECT_CHARS]
    if not sample.isascii():
        counts = {
            "cjk": sum(len(run) for run in CJK_RE.findall(sample)),
            CYRILLIC: len(_CYRILLIC_RE.findall(sample)),
            ARABIC: len(_ARABIC_RE.findall(sample)),
            LATIN: len(_LATIN_RE.findall(sample)),
        }
        script = max(counts, key=counts.__getitem__)
        if counts[script] >= 20:
            if script == "cjk":
                if len(_HANGUL_RE.findall(sample)) * 2 > counts["cjk"]:
                    return "ko"
                return "ja" if len(_KANA_RE.findall(sample)) * 10 > counts["cjk"] else "zh"
            if script == CYRILLIC:
                low = sample.casefold()
                return "uk" if len(_UKRAINIAN_RE.findall(low)) > len(_RUSSIAN_ONLY_RE.findall(low)) else "ru"
            if script == ARABIC:
                return "ar"
    found = _latin_language(sample[:LATIN_VOTE_CHARS])
    if found:
        return found
    return folder or ("en" if _LATIN_RE.search(sample) else "")


def _latin_language(sample: str) -> str:
    """The Latin-script language whose common words the sample uses most (English on a tie)."""
    global _VOTES
    if _VOTES is None:
        _VOTES = _latin_votes()
    tally: dict[str, int] = {}
    votes = _VOTES
    for word, count in Counter(_LATIN_WORD_RE.findall(sample.lower())).items():
        langs = votes.get(word)
        if langs:
            for lang in langs:
                tally[lang] = tally.get(lang, 0) + count
    if not tally:
        return ""
    best = max(tally, key=tally.__getitem__)
    score = tally[best]
    english = tally.get("en", 0)
    if best != "en" and score >= 5 and score > 1.5 * english:
        return best
    return "en" if english >= 3 else ""


_STEMMERS: dict[str, Callable[[str], str]] = {}


def stem(word: str) -> str:
    """Porter stem of a lower-case English word, cached."""
    return _stem_with("en", word)


_STEM_CACHE: dict[tuple[str, str], str] = {}
_STEM_CACHE_LIMIT = 200_000


def _stem_with(lang: str, word: str) -> str:
    key = (lang, word)
    found = _STEM_CACHE.get(key)
    if found is None:
        if len(_STEM_CACHE) > _STEM_CACHE_LIMIT:
            _STEM_CACHE.clear()
        stemmer = _STEMMERS.get(lang)
        if stemmer is None:
            if lang == "en":
                stemmer = porter_stem
            else:
                from whoosh.lang import stemmer_for_language

                stemmer = stemmer_for_language(lang)
            _STEMMERS[lang] = stemmer
        try:
            found = stemmer(word)
        except Exception:  # noqa: BLE001 - a stemmer failing on odd input: keep the word
            found = word
        _STEM_CACHE[key] = found
    return found


def script_of(word: str) -> str:
    code = ord(word[0])
    if code < 0x0250:
        return LATIN
    if 0x0400 <= code < 0x0530:
        return CYRILLIC
    if 0x0600 <= code < 0x0700:
        return ARABIC
    return OTHER


def stem_language(lang: str, script: str) -> str:
    """The stemmer a word of ``script`` on a page in ``lang`` gets ("" = none)."""
    if LANG_SCRIPT.get(lang) == script:
        return "" if lang == "uk" else lang
    return DEFAULT_LANG.get(script, "")


def word_term(word: str, lang: str = "") -> str | None:
    """The term a (normalised) word part becomes on a page in ``lang``, or None when dropped."""
    low = word.casefold()
    if len(low) < MIN_WORD or len(low) > MAX_WORD:
        return None
    script = script_of(low)
    if script == CYRILLIC:
        low = low.replace("ё", "е")
    if low in STOP_WORDS:
        return None
    stemmer = stem_language(lang, script)
    return fold_accents(_stem_with(stemmer, low) if stemmer else low)


# ---------------------------------------------------------------------- chunks
class Piece(NamedTuple):
    term: str
    pos: int  # relative to the chunk
    start: int  # characters in the (normalised) chunk
    end: int
    primary: bool  # one primary term per position; a phrase is made of primary terms
    kind: str  # "word", "whole", "bigram", "char"


_PIECES: dict[str, dict[str, tuple[tuple[Piece, ...], int]]] = {}
_PIECES_LIMIT = 100_000


def chunk_pieces(chunk: str, lang: str = "") -> tuple[tuple[Piece, ...], int]:
    """The terms of one normalised chunk and how many positions it takes."""
    cache = _PIECES.setdefault(lang, {})
    found = cache.get(chunk)
    if found is None:
        if len(cache) > _PIECES_LIMIT:
            cache.clear()
        found = _analyse_chunk(chunk, lang)
        if len(chunk) <= 64:
            cache[chunk] = found
    return found


def _humps(text: str) -> list[tuple[int, int]] | None:
    """The camelCase words of an ASCII word (``retryWithJitter``), or None to keep it whole
    (one case only, or a one-letter hump: ``tRPC``, ``iPhone``, ``getX`` stay one word)."""
    if not text.isascii() or text.islower() or text.isupper():
        return None
    humps = [(m.start(), m.end()) for m in _CAMEL_RE.finditer(text)]
    if len(humps) < 2 or any(end - start < 2 for start, end in humps):
        return None
    return humps


def chunk_parts(chunk: str):
    """(start, end, is_cjk) of each part of a chunk."""
    position = 0
    for joiner in [*_JOINERS_RE.finditer(chunk), None]:
        end = joiner.start() if joiner is not None else len(chunk)
        if end > position:
            for run in _RUNS_RE.finditer(chunk, position, end):
                if run.group(1):
                    yield run.start(), run.end(), True
                else:
                    text = run.group(2)
                    humps = _humps(text)
                    if humps:
                        for hump_start, hump_end in humps:
                            yield run.start() + hump_start, run.start() + hump_end, False
                    else:
                        yield run.start(), run.end(), False
        if joiner is not None:
            position = joiner.end()


def _analyse_chunk(chunk: str, lang: str) -> tuple[tuple[Piece, ...], int]:
    pieces: list[Piece] = []
    pos = 0
    parts = list(chunk_parts(chunk))
    for start, end, cjk in parts:
        if cjk:
            run = chunk[start:end]
            n = len(run)
            if n == 1:
                pieces.append(Piece(run, pos, start, end, True, "char"))
                pos += 1
                continue
            for i in range(n - 1):
                pieces.append(Piece(run[i : i + 2], pos + i, start + i, start + i + 2, True, "bigram"))
            # The last character on its own: every character of the run now starts a term
            # (a bigram, or this one), so a one-character query is a prefix query.
            pieces.append(Piece(run[-1], pos + n - 2, end - 1, end, False, "char"))
            pos += n - 1
        else:
            term = word_term(chunk[start:end], lang)
            if term is not None:
                pieces.append(Piece(term, pos, start, end, True, "word"))
                pos += 1
    if len(parts) > 1 and len(chunk) <= MAX_WHOLE:
        whole = fold_accents(chunk.casefold())
        if len(whole) >= MIN_WORD and not any(p.term == whole for p in pieces):
            pieces.insert(0, Piece(whole, 0, 0, len(chunk), False, "whole"))
    return tuple(pieces), pos


# ---------------------------------------------------------------------- the fast indexing path
class Compiled(NamedTuple):
    """A chunk of several terms (an identifier and its parts, a short CJK run)."""

    terms: tuple[str, ...]


# chunk -> its one term when it is a plain word, else a ``Compiled``; one dict per language.
_COMPILED: dict[str, dict[str, str | Compiled]] = {}
_COMPILED_LIMIT = 500_000
_CJK_RUN = re.compile(f"[{_CJK}]+").fullmatch
_DROPPED = Compiled(())  # a stop word: no term


def compiled(chunk: str, lang: str) -> str | Compiled:
    """The indexing form of a chunk's analysis (cached)."""
    cache = _COMPILED.get(lang)
    if cache is None:
        cache = _COMPILED[lang] = {}
    found = cache.get(chunk)
    if found is None:
        if len(cache) > _COMPILED_LIMIT:
            cache.clear()
        if chunk.isascii() and chunk.isalnum() and _humps(chunk) is None:
            # A plain word (most chunks): one part, no whole, no CJK.
            term = word_term(chunk, lang)
            found = term if term is not None else _DROPPED
        else:
            pieces, _ = _analyse_chunk(chunk, lang)
            found = pieces[0].term if len(pieces) == 1 else Compiled(tuple(p.term for p in pieces))
        if len(chunk) <= 64:
            cache[chunk] = found
    return found


@dataclass(frozen=True, slots=True)
class PageTextValue:
    """The value of a text field: parts analysed one after another (a gap of positions
    between them, so no phrase spans two), in the page's language."""

    parts: tuple[str, ...]
    lang: str = ""


def _parts_of(value, lang: str = "") -> tuple[tuple[str, ...], str]:
    if isinstance(value, PageTextValue):
        return value.parts, value.lang
    return (value,), lang


def term_counts(value, lang: str = "") -> dict[str, int]:
    """The terms of a field value with their counts (the indexing fast path: each distinct
    chunk is looked up once; the CJK runs of the whole value are cut into bigrams and
    counted in one go)."""
    parts, lang = _parts_of(value, lang)
    cache = _COMPILED.get(lang) or {}
    out: dict[str, int] = {}
    get = out.get
    runs: list[str] = []
    for chunk, count in Counter(CHUNK_RE.findall(normalize("\n".join(parts)))).items():
        found = cache.get(chunk)
        if found is None:
            if len(chunk) > 2 and _CJK_RUN(chunk):
                runs.extend([chunk] * count)
                continue
            found = compiled(chunk, lang)
            cache = _COMPILED[lang]
        if found.__class__ is str:
            out[found] = get(found, 0) + count
        else:
            for term in cast(Compiled, found).terms:  # not a str: a Compiled (the checker does not follow __class__)
                out[term] = get(term, 0) + count
    if runs:
        # Every pair of neighbouring characters of the runs joined by NUL, counted in C; the
        # pairs holding a NUL span two runs and are dropped. Then each run's last character.
        joined = "\0".join(runs)
        grams = Counter(map(add, joined, joined[1:]))
        pop = grams.pop
        for run in runs:
            pop(run[-1] + "\0", None)
            pop("\0" + run[0], None)
        grams.update([run[-1] for run in runs])
        if out:
            grams.update(out)
        return grams
    return out


def index_terms(value, lang: str = "") -> Counter[str]:
    """The terms of a value with their counts, exactly as ``query_analyzer`` produces them."""
    return Counter(term_counts(value, lang))


def pieces_of(text: str, lang: str = "", start_pos: int = 0) -> tuple[list[tuple[int, int, int, Piece]], int]:
    """(absolute position, start char, end char, piece) for every term of normalised
    ``text``, and the position after its last term."""
    out = []
    pos = start_pos
    for match in CHUNK_RE.finditer(text):
        pieces, width = chunk_pieces(match.group(0), lang)
        for piece in pieces:
            out.append((pos + piece.pos, match.start() + piece.start, match.start() + piece.end, piece))
        pos += width
    return out, pos


def head_terms(parts, lang: str = "") -> str:
    """The distinct terms of the names of a page (stored; search re-ranks by them)."""
    return " ".join(term_counts(PageTextValue(tuple(part for part in parts if part), lang)))


# ---------------------------------------------------------------------- tags
_INLINE_TAG_RE = re.compile(r"(?<![\w#&/\]])#([^\W\d][\w/-]*|\d+[^\W\d][\w/-]*)")
_FENCE_RE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
_HASH_WORD_RE = re.compile(r"#\w")


def normalize_tag(value: object) -> str:
    """A frontmatter or inline tag as indexed: ``#Project/Alpha`` → ``project/alpha``."""
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        return ""
    text = normalize(str(value)).strip().lstrip("#").strip().casefold()
    return fold_accents("-".join(text.split()))[:100]


def tag_terms(tags) -> list[str]:
    """The ftag terms of some tags: each tag, and each parent of a nested tag."""
    out: dict[str, None] = {}
    for tag in tags:
        tag = normalize_tag(tag)
        if not tag:
            continue
        out[tag] = None
        parts = tag.split("/")
        for end in range(1, len(parts)):
            out["/".join(parts[:end])] = None
    return list(out)


def inline_tags(body: str) -> list[str]:
    """``#tags`` written in a page body (not in fenced code)."""
    if _HASH_WORD_RE.search(body) is None:  # most "#" are headings ("# Title")
        return []
    if "```" in body:
        body = _FENCE_RE.sub("", body)
    return [m.group(1).rstrip("/-") for m in _INLINE_TAG_RE.finditer(body)]


# ---------------------------------------------------------------------- Whoosh pieces
def prefix_of(word: str, langs=("en",)) -> str:
    """What a ``word*`` query should look for among stemmed terms.

    "deploy" stems to "deploi" but "deployment" to "deploy": the longest common
    prefix of the word and its stems ("deplo") finds both.
    """
    low = normalize(word).casefold()
    forms = [low]
    if low:
        script = script_of(low)
        for lang in langs:
            stemmer = stem_language(lang, script)
            if stemmer:
                forms.append(_stem_with(stemmer, low.replace("ё", "е") if script == CYRILLIC else low))
    return fold_accents(os.path.commonprefix(forms))


class PageTokenizer(analysis.Tokenizer):
    """A Whoosh tokenizer producing exactly the terms (and positions) of the indexing path."""

    def __init__(self, lang: str = "") -> None:
        self.lang = lang

    def __eq__(self, other) -> bool:
        return isinstance(other, PageTokenizer) and other.lang == self.lang

    def __call__(
        self,
        value,
        positions=False,
        chars=False,
        keeporiginal=False,
        removestops=True,
        start_pos=0,
        start_char=0,
        tokenize=True,
        mode="",
        **kwargs,
    ):
        parts, lang = _parts_of(value)
        lang = lang or self.lang
        token = Token(positions, chars, removestops=removestops, mode=mode, **kwargs)
        pos = start_pos
        for number, part in enumerate(parts):
            if number:
                pos += PART_GAP
            text = normalize(part)
            found, end_pos = pieces_of(text, lang, pos)
            for at, start, end, piece in found:
                token.text = piece.term
                token.boost = 1.0
                token.stopped = False
                token.primary = piece.primary  # the fast path keeps positions of primary terms only
                if keeporiginal:
                    token.original = text[start:end]
                if positions:
                    token.pos = at
                if chars:
                    token.startchar, token.endchar = start_char + start, start_char + end
                yield token
            pos = end_pos


class QueryStemFilter(analysis.Filter):
    """Kept so that an index built by the previous recipe (schema 3) still opens: the golden
    gate may keep serving it while a rebuilt one fails golden.yaml. Nothing new uses it."""

    is_morph = True

    def __call__(self, tokens):
        for token in tokens:
            if not token.stopped:
                token.text = stem(token.text)
            yield token


def query_analyzer(lang: str = "") -> analysis.Analyzer:
    """The Whoosh analyzer of the text fields (what Whoosh's own code paths would use)."""
    return analysis.CompositeAnalyzer(PageTokenizer(lang))


# ---------------------------------------------------------------------- counts format
_PACKED = [pack_uint(n) for n in range(256)]


class Counts(formats.Format):
    """A posting holds no value: its weight is the term's count in the page (times the
    field's boost), which is all the ranking reads. No positions: a phrase is checked on
    the best candidates' text (``memtui.index.search``), which costs far less than
    storing the position of every word of every page."""

    posting_size = 0

    def __init__(self, field_boost: float = 1.0, **options) -> None:
        self.field_boost = field_boost
        self.options = options

    def word_values(self, value, analyzer, **kwargs):
        boost = self.field_boost
        for term, count in term_counts(value).items():
            yield term, count, count * boost, b""

    def encode(self, value) -> bytes:
        return b""

    def decode_weight(self, valuestring) -> float:
        return self.field_boost

    def combine(self, vs) -> bytes:
        return b""


class PageText(fields.TEXT):
    """A text field indexed through ``term_counts`` (no Whoosh token objects), with
    counts only (``Counts``)."""

    def __init__(self, *, stored: bool = False, field_boost: float = 1.0) -> None:
        super().__init__(analyzer=query_analyzer(), phrase=False, stored=stored, field_boost=field_boost)
        self.format = Counts(field_boost=field_boost)

    def index(self, value, **kwargs):
        boost = self.format.field_boost
        for term, count in term_counts(value).items():
            yield term.encode("utf-8"), count, count * boost, b""


class ExactField(fields.ID):
    """The whole value is one term (optionally lower-cased), indexed without an analyzer run."""

    def __init__(self, *, stored: bool = False, unique: bool = False, lower: bool = False) -> None:
        analyzer = analysis.IDTokenizer() | analysis.LowercaseFilter() if lower else analysis.IDTokenizer()
        super().__init__(stored=stored, unique=unique, analyzer=analyzer)
        self.lower = lower

    def index(self, value, **kwargs):
        text = value.lower() if self.lower else value
        yield self.to_bytes(text), 1, self.format.field_boost, b""

    # A file name that is not valid UTF-8 reaches us with surrogate escapes: keep its bytes.
    def to_bytes(self, value) -> bytes:
        return value.encode("utf-8", "surrogateescape") if isinstance(value, str) else bytes(value)

    def from_bytes(self, bs: bytes) -> str:
        return bs.decode("utf-8", "surrogateescape")


_SPACE_RE = re.compile(r"[^ \t\r\n]+")


class WordSet(fields.KEYWORD):
    """Space-separated lower-case words (tags, statuses), indexed without an analyzer run."""

    def __init__(self) -> None:
        super().__init__(lowercase=True)

    def index(self, value, **kwargs):
        boost = self.format.field_boost
        for word in sorted({w.lower() for w in _SPACE_RE.findall(value)}):
            yield word.encode("utf-8"), 1, boost, _PACKED[1]


def build_schema() -> fields.Schema:
    """One document per page. ``rec`` holds what warm opens and statuses need without re-reading pages."""
    return fields.Schema(
        path=ExactField(stored=True, unique=True),
        id=ExactField(stored=True),
        title=PageText(stored=True),
        text=PageText(),
        kind=ExactField(lower=True),
        subject=ExactField(lower=True),
        origin=ExactField(lower=True),
        tag=WordSet(),
        ftag=WordSet(),
        lang=ExactField(stored=True),
        status=WordSet(),  # the history status and the trust state (status:quarantined works)
        trust=WordSet(),  # the trust state alone (trust: filters AND with status:)
        valid_from=ExactField(),
        valid_to=ExactField(),
        updated=ExactField(),
        summary=fields.STORED(),
        head=fields.STORED(),
        rec=fields.STORED(),
    )


# Names a query may use before a colon, and the schema field each one searches.
QUERY_FIELDS = {
    "title": "title",
    "text": "text",
    "path": "path",
    "id": "id",
    "kind": "kind",
    "subject": "subject",
    "origin": "origin",
    "tag": "tag",
    "ftag": "ftag",
    "lang": "lang",
    "status": "status",
    "trust": "trust",
    "valid_from": "valid_from",
    "valid_to": "valid_to",
    "updated": "updated",
}
STATUS_VALUES = ("current", "superseded", "stale", "unrecorded", "quarantined", "unreviewed", "reviewed", "unknown")
TRUST_VALUES = ("reviewed", "unreviewed", "quarantined", "unknown")
TAG_VALUES = ("stated", "observed", "inferred", "suggested")
