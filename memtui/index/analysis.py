"""What goes into the index and how text becomes terms: the schema and the recipe.

Text is split into ``\\w+`` words, lower-cased, stop words and one-letter words
dropped, and each word reduced by the Porter stemmer ("decisions" and "decided"
both become "decid"). Indexing does this with a plain regex and a ``Counter``
per field value (``index_terms``); queries go through a Whoosh analyzer chain
built from the same pieces (``query_analyzer``), and a test checks the two agree.
Whoosh's own token pipeline creates one ``Token`` object per word, which made a
full build several times slower than this path.

The *recipe* names everything that changes what a build produces. An index
whose recipe differs from ``RECIPE`` is rebuilt, never patched.
"""

from __future__ import annotations

import os
import re
from collections import Counter

import whoosh
from whoosh import analysis, fields
from whoosh.codec.whoosh3 import W3Codec
from whoosh.lang.porter import stem as porter_stem
from whoosh.system import pack_uint

from memtui import __version__

SCHEMA_VERSION = 4
ANALYZER_NAME = "words-lower-stop-porter/1"
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

WORD_RE = re.compile(r"\w+")
STOP_WORDS = frozenset(analysis.STOP_WORDS)
MIN_WORD = 2
MAX_WORD = 40

# Free words are searched in one field, ``text``: the title twice, the file name's
# words, the summary twice, then the body. One field means one posting list per
# word to score: searching title, summary and body as three fields made searches
# about three times slower. The search module then re-ranks the best candidates
# by how many query words their title holds (see search.TITLE_WEIGHT).
TITLE_REPEAT = 2
SUMMARY_REPEAT = 2
DEFAULT_FIELDS = ("text",)
TEXT_FIELDS = ("text", "title")

_STEMS: dict[str, str] = {}
_STEM_CACHE_LIMIT = 200_000


def stem(word: str) -> str:
    """Porter stem of a lower-case word, cached (a field has far fewer distinct words than tokens)."""
    found = _STEMS.get(word)
    if found is None:
        if len(_STEMS) > _STEM_CACHE_LIMIT:
            _STEMS.clear()
        found = _STEMS[word] = porter_stem(word)
    return found


def _term(raw: str) -> str | None:
    """The term one raw word becomes, or None when it is dropped."""
    word = raw.lower()
    if len(word) < MIN_WORD or len(word) > MAX_WORD or word in STOP_WORDS:
        return None
    return stem(word)


_MISSING = object()
_TERM_BYTES: dict[str, bytes | None] = {}
_TERM_CACHE_LIMIT = 500_000


def term_counts(text: str) -> dict[bytes, int]:
    """The UTF-8 terms of ``text`` with their counts (the indexing fast path).

    Each distinct raw word is mapped once per process (a dict lookup after that).
    """
    cache = _TERM_BYTES
    if len(cache) > _TERM_CACHE_LIMIT:
        cache.clear()
    out: dict[bytes, int] = {}
    for raw, count in Counter(WORD_RE.findall(text)).items():
        term = cache.get(raw, _MISSING)
        if term is _MISSING:
            word = _term(raw)
            term = cache[raw] = word.encode("utf-8") if word is not None else None
        if term is not None:
            out[term] = out.get(term, 0) + count
    return out


def index_terms(text: str) -> Counter[str]:
    """The terms of ``text`` with their counts, exactly as ``query_analyzer`` would produce them."""
    return Counter({term.decode("utf-8"): count for term, count in term_counts(text).items()})


def prefix_of(word: str) -> str:
    """What a ``word*`` query should look for among stemmed terms.

    "deploy" stems to "deploi" but "deployment" to "deploy": the longest common
    prefix of the word and its stem ("deplo") finds both.
    """
    return os.path.commonprefix([word, stem(word)])


class QueryStemFilter(analysis.Filter):
    """Porter stemming for query words; patterns (``deploy*``, ranges) keep their letters.

    Whoosh hands pattern and range text to the analyzer untokenized and with
    ``removestops=False``; that is how they are told apart from plain words.
    """

    is_morph = True

    def __call__(self, tokens):
        for token in tokens:
            if not token.stopped:
                if getattr(token, "mode", "") == "query" and not getattr(token, "removestops", True):
                    if "*" not in token.text and "?" not in token.text:
                        token.text = prefix_of(token.text)
                else:
                    token.text = stem(token.text)
            yield token


def query_analyzer() -> analysis.Analyzer:
    """The Whoosh analyzer used to parse queries (and by Whoosh's own highlighting, if ever used)."""
    return (
        analysis.RegexTokenizer(WORD_RE.pattern)
        | analysis.LowercaseFilter()
        | analysis.StopFilter(stoplist=STOP_WORDS, minsize=MIN_WORD, maxsize=MAX_WORD)
        | QueryStemFilter()
    )


_PACKED = [pack_uint(n) for n in range(256)]


def packed_count(count: int) -> bytes:
    return _PACKED[count] if count < 256 else pack_uint(count)


class PageText(fields.TEXT):
    """A text field without positions whose indexing skips Whoosh's per-token objects.

    No positions means no phrase queries: the search module turns a quoted phrase
    into "all of these words" instead.
    """

    def __init__(self, *, stored: bool = False, field_boost: float = 1.0) -> None:
        super().__init__(analyzer=query_analyzer(), phrase=False, stored=stored, field_boost=field_boost)

    def index(self, value, **kwargs):
        boost = self.format.field_boost
        for term, count in term_counts(value).items():
            yield term, count, count * boost, packed_count(count)


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
        status=WordSet(),  # the history status and the trust state (status:quarantined works)
        trust=WordSet(),  # the trust state alone (trust: filters AND with status:)
        valid_from=ExactField(),
        valid_to=ExactField(),
        updated=ExactField(),
        summary=fields.STORED(),
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
    "status": "status",
    "trust": "trust",
    "valid_from": "valid_from",
    "valid_to": "valid_to",
    "updated": "updated",
}
STATUS_VALUES = ("current", "superseded", "stale", "quarantined", "unreviewed", "reviewed", "unknown")
TRUST_VALUES = ("reviewed", "unreviewed", "quarantined", "unknown")
TAG_VALUES = ("stated", "observed", "inferred", "suggested")
