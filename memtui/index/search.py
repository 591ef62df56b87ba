"""Search: parse a query safely, rank pages with every word first, cut a snippet from the page.

Query language (Whoosh's, narrowed down):

- free words match a page's title, aliases, ``name``, file name, id, summary,
  description, frontmatter tags and body (``text``). Several words mean "all of
  these": pages holding every word come first, then the best partial matches,
  marked ``partial``. A word is analysed as pages are (``analysis``): any
  language's case, accents and Unicode form; a word inside a Chinese, Japanese or
  Korean run; a Russian or German word in another form (stemmed in each language
  the index holds); an identifier (``erbing_brain_api.py``, ``retryWithJitter``,
  ``file-name.md``) whole or by its parts in order;
- ``"two words"`` is a phrase (the words next to each other, in order);
- ``#name`` (or ``ftag:name``) keeps pages tagged ``name`` in their frontmatter
  ``tags:`` or with an inline ``#name`` (``#project`` also finds ``#project/alpha``);
- filters restrict the results: ``kind:`` ``subject:`` (``subject:decision/*``)
  ``tag:`` (a source tag) ``status:`` (current, superseded, stale, and the
  trust states) ``trust:`` (reviewed, unreviewed, quarantined, unknown)
  ``origin:`` ``path:`` (``path:notes/*``) ``id:`` ``lang:`` ``title:`` ``text:``
  ``valid_from:`` ``valid_to:`` ``updated:``; filters on different fields must
  all hold, several on the same field are alternatives;
- ``AND`` ``OR`` ``NOT`` and parentheses, ``word*`` prefixes.

Refused with a ``QueryError`` (message + hint): unbalanced quotes or
parentheses, unknown filters, unknown status or tag values, a pattern starting
with ``*`` or ``?``, a text pattern with fewer than two letters before the
wildcard, a pattern matching more than ``MAX_EXPANSION`` words, very long
queries. A search that still runs past ``TIME_LIMIT`` returns what it found so
far with ``timed_out`` set.

Ranking: pages matching every word before partial matches; within each, Whoosh's
BM25F score over ``text``, raised up to twice for a page whose title, aliases,
name, id or file name hold the query's words, halved for superseded pages. Then
versions are kept together: no page comes before a page in the results that
(transitively) supersedes it, and the versions a page replaced follow it
directly, newest first. The current decision comes first, its history below it.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import islice
from pathlib import Path

from whoosh import query as wq
from whoosh.collectors import TimeLimitCollector
from whoosh.qparser import AndGroup, PhrasePlugin, QueryParser
from whoosh.qparser.common import attach
from whoosh.searching import TimeLimit

from memtui.field import frontmatter as fm_mod
from memtui.field.body import TAG_RE
from memtui.field.page import MAX_PARSE_BYTES, decode
from memtui.index.analysis import (
    CHUNK_RE,
    CJK_RE,
    QUERY_FIELDS,
    STATUS_VALUES,
    TAG_VALUES,
    TEXT_FIELDS,
    TRUST_VALUES,
    WORD_CHAR_RE,
    chunk_parts,
    chunk_pieces,
    find_fold,
    fold_accents,
    language_code,
    normalize,
    normalize_tag,
    pieces_of,
    prefix_of,
    word_term,
)
from memtui.index.engine.bulk import OutOfTime as BulkOutOfTime
from memtui.index.engine.bulk import Unsupported as BulkUnsupported
from memtui.index.engine.bulk import top_docs
from memtui.index.errors import QueryError
from memtui.index.model import SearchHit, SearchResults
from memtui.index.records import PageRecord, large_page_text, read_bytes_safely
from memtui.textsafety import one_line, plural

MAX_QUERY_CHARS = 500
MAX_TERMS = 64  # words, CJK bigrams and filters of one query
MAX_EXPANSION = 500
MIN_TEXT_PREFIX = 2
TIME_LIMIT = 2.0
SUPERSEDED_FACTOR = 0.5
QUARANTINED_FACTOR = 0.8  # text from outside no one reviewed: below reviewed or plain pages saying the same
HEAD_WEIGHT = 0.5  # a page whose title, aliases, name, id or file name hold every query word scores 1.5x
WHOLE_BOOST = 2.0  # an identifier found whole outranks the same parts found apart
OR_FACTOR = 0.9  # partial matches: a page holding more of the words scores higher (Whoosh's coordination)
RUN_BONUS = 0.5  # a page holding a query's CJK run exactly (its bigrams in order) scores up to 1.5x
EXTRA_CANDIDATES = 20  # candidates beyond the limit that are re-ranked
PHRASE_CANDIDATES = 300  # pages holding all the words of a phrase whose text is checked ...
PHRASE_CHECK_TIME = 0.15  # ... within this time (seconds); the rest are listed as partial matches
SNIPPET_CHARS = 180
SNIPPET_READ_BYTES = 256 * 1024  # snippets come from the first 256 KB of a page

_FIELD_RE = re.compile(r"^[(+\-]*([A-Za-z_][\w-]*):(.*)$")
_TOKEN_RE = re.compile(r'"[^"]*"|[^\s"]+')
_LIST_MARK_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)]|#{1,6}|>)\s+")
_PLAIN_TOKEN_RE = re.compile(r"\S+")
FILTER_HINT = "filters: " + " ".join(f"{name}:" for name in QUERY_FIELDS if name not in TEXT_FIELDS)
# Japanese particles between two words of other kinds ("保存の場所"), and Chinese question
# words, are not required when a query's CJK run is split into the words it must hold.
_PARTICLE_RE = re.compile("(?<=[\u30a0-\u30ff\u3400-\u9fff])[のをはがにでとへもや](?=[\u30a0-\u30ff\u3400-\u9fff])")
_QUESTION_RE = re.compile("什么|怎么|怎样|哪些|哪个|哪里|如何|为什么|是否|吗|呢|么")


@dataclass(frozen=True, slots=True)
class Phrase:
    """Words a page must hold next to each other and in order, in one of their forms
    (``alternatives``: the words stemmed in each language of the index; an identifier
    whole, a one-term alternative, or by its parts). The index keeps no word positions:
    search checks a phrase on the text of the pages holding all of its words."""

    fieldname: str
    alternatives: tuple[tuple[str, ...], ...]
    keys: tuple[tuple[str, ...], ...] = ()  # per alternative, where each word may start in folded text


@dataclass(slots=True)
class Unit:
    """One thing a page must hold for a full match: a word (in any of its forms), an
    identifier, a phrase, a CJK bigram; ``terms`` are the index terms that show it."""

    query: wq.Query
    terms: frozenset[str]
    phrase: Phrase | None = None


@dataclass(slots=True)
class ParsedQuery:
    text: str
    query: wq.Query  # pages matching every unit (and the filters)
    partial: wq.Query | None = None  # pages matching some of the units (two or more units only)
    units: list[Unit] = field(default_factory=list)
    terms: set[str] = field(default_factory=set)  # index terms to highlight
    prefixes: list[str] = field(default_factory=list)  # word* patterns to highlight
    finder: re.Pattern | None = None  # finds candidate snippet lines (in find_fold text)
    runs: list[str] = field(default_factory=list)  # CJK runs a page gains by holding as written
    phrases: list[Phrase] = field(default_factory=list)  # checked on the candidates' text
    source_tags: set[str] = field(default_factory=set)  # tag: filters (not negated): snippets are those lines


# ---------------------------------------------------------------------- languages of an index
_LANGS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_langs_lock = threading.Lock()


def index_languages(searcher) -> tuple[str, ...]:
    """The page languages an index holds (queries are stemmed in each of them)."""
    reader = searcher.reader()
    with _langs_lock:
        try:
            found = _LANGS.get(reader)
        except TypeError:
            found = None
        if found is None:
            found = ()
            if "lang" in reader.schema:
                try:
                    found = tuple(sorted(term.decode("utf-8", "replace") for term in reader.lexicon("lang")))
                except Exception:  # noqa: BLE001 - an old or odd index: default stemming only
                    found = ()
            try:
                _LANGS[reader] = found
            except TypeError:
                pass
    return found


# ---------------------------------------------------------------------- building queries
def _dedupe(queries: list[wq.Query]) -> list[wq.Query]:
    out: list[wq.Query] = []
    for q in queries:
        if q not in out:
            out.append(q)
    return out


def _any(queries: list[wq.Query], boost: float = 1.0) -> wq.Query | None:
    """Forms of one word (its stems in several languages; an identifier whole or by its
    parts): a page holding any of them matches, scored by the best one (a ``DisjunctionMax``,
    which also keeps Whoosh from merging the forms into the query's other words)."""
    queries = _dedupe(queries)
    if not queries:
        return None
    if len(queries) == 1:
        q = queries[0]
        if boost != 1.0:
            q = q.with_boost(q.boost * boost)
        return q
    return wq.DisjunctionMax(queries, boost=boost)


def _sequence(fieldname: str, terms: list[str]) -> wq.Query:
    """The pages holding every word of a sequence (its order is checked on their text)."""
    if len(terms) == 1:
        return wq.Term(fieldname, terms[0])
    return wq.And([wq.Term(fieldname, t) for t in terms])


def _phrase(fieldname: str, alternatives: list[tuple[tuple[str, ...], tuple[str, ...]]]) -> Phrase | None:
    """A phrase to check from (terms, keys) alternatives, unless every alternative is a
    single term (the index shows that)."""
    found = dict(reversed(alternatives))  # the first keys of each sequence of terms
    found = {words: found[words] for words, _ in alternatives}
    if not any(len(words) > 1 for words in found):
        return None
    return Phrase(fieldname, tuple(found), tuple(found.values()))


def _key(surface: str, term: str) -> str:
    """Where a word of a phrase may start in folded text: the common beginning of the
    word as the query wrote it and its term ("deploying", "deploy" -> "deploy"; the
    page may say "deployed")."""
    written = find_fold(surface)
    key = os.path.commonprefix([written, term])
    return key if len(key) >= MIN_TEXT_PREFIX or len(written) < MIN_TEXT_PREFIX else written[:MIN_TEXT_PREFIX]


def _split_cjk(run: str) -> list[str]:
    """The words a query's CJK run must hold (particles and question words left out)."""
    pieces: list[str] = []
    for part in _QUESTION_RE.split(_PARTICLE_RE.sub(" ", run)):
        pieces.extend(p for p in part.split() if p)
    return pieces or [run]


class QueryBuilder:
    """Turns query words into units, analysing them as pages are analysed, in every language
    of the index (``langs``; ``""`` is the default stemming of each script)."""

    def __init__(self, fieldname: str, langs: Sequence[str]) -> None:
        self.fieldname = fieldname
        self.langs = tuple(dict.fromkeys(("", *langs)))
        self.runs: list[str] = []  # CJK words of two or more characters: found as written, a page ranks higher

    def word(self, raw: str, boost: float = 1.0) -> list[Unit]:
        """Units for one whitespace-free query word."""
        units: list[Unit] = []
        for match in CHUNK_RE.finditer(normalize(raw)):
            units.extend(self._chunk(match.group(0), boost))
        return units

    def _chunk(self, chunk: str, boost: float) -> list[Unit]:
        if CJK_RE.search(chunk):
            # Each CJK run's bigrams and each other word are units of their own.
            units: list[Unit] = []
            for start, end, cjk in chunk_parts(chunk):
                units.extend(self._cjk(chunk[start:end], boost) if cjk else self._word(chunk[start:end], boost))
            return units
        by_lang = {lang: chunk_pieces(chunk, lang)[0] for lang in self.langs}
        first = by_lang[""]
        if not first:
            return []
        whole = next((p.term for p in first if p.kind == "whole"), None)
        if whole is not None:
            variants: list[wq.Query] = [wq.Term(self.fieldname, whole, boost=WHOLE_BOOST)]
            terms = {whole}
            sequences: list[tuple[tuple[str, ...], tuple[str, ...]]] = [((whole,), (find_fold(chunk),))]
            for pieces in by_lang.values():
                primary = [p for p in pieces if p.primary]
                terms.update(p.term for p in primary)
                if primary:
                    variants.append(_sequence(self.fieldname, [p.term for p in primary]))
                    sequences.append(
                        (tuple(p.term for p in primary), tuple(_key(chunk[p.start : p.end], p.term) for p in primary))
                    )
            return [Unit(_any(variants, boost), frozenset(terms), _phrase(self.fieldname, sequences))]
        terms = {p.term for pieces in by_lang.values() for p in pieces if p.primary}
        return [Unit(_any([wq.Term(self.fieldname, t) for t in sorted(terms)], boost), frozenset(terms))]

    def _word(self, word: str, boost: float) -> list[Unit]:
        """A single word in each of its forms (one per language it may be stemmed in)."""
        terms = {term for lang in self.langs if (term := word_term(word, lang)) is not None}
        if not terms:
            return []
        return [Unit(_any([wq.Term(self.fieldname, t) for t in sorted(terms)], boost), frozenset(terms))]

    def _cjk(self, run: str, boost: float) -> list[Unit]:
        units: list[Unit] = []
        for word in _split_cjk(run):
            if len(word) == 1:
                # One character: the terms starting with it (each character of a page's run
                # starts a bigram, or ends the run and is indexed on its own).
                units.append(Unit(CharPrefix(self.fieldname, word, boost=boost), frozenset([word])))
                continue
            pieces = chunk_pieces(word, "")[0]
            primary = [p.term for p in pieces if p.primary]
            for term in dict.fromkeys(primary):
                units.append(Unit(wq.Term(self.fieldname, term, boost=boost), frozenset([term])))
            if len(primary) > 1:
                self.runs.append(word)
        return units

    def phrase(self, text: str, boost: float = 1.0) -> list[Unit]:
        """A quoted phrase: its words next to each other, in order."""
        norm = normalize(text)
        variants: list[wq.Query] = []
        terms: set[str] = set()
        sequences: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
        for lang in self.langs:
            found, _ = pieces_of(norm, lang)
            primary: dict[int, tuple[str, str]] = {}
            for at, start, end, piece in found:
                if piece.primary:
                    primary.setdefault(at, (piece.term, _key(norm[start:end], piece.term)))
            words = [primary[at][0] for at in sorted(primary)]
            if words:
                terms.update(words)
                variants.append(_sequence(self.fieldname, words))
                sequences.append((tuple(words), tuple(primary[at][1] for at in sorted(primary))))
        query = _any(variants, boost)
        return [Unit(query, frozenset(terms), _phrase(self.fieldname, sequences))] if query is not None else []

    def pattern(self, text: str, termclass, boost: float = 1.0) -> wq.Query:
        """``word*`` or ``wo?d``: letters kept, folded as terms are."""
        if termclass is wq.Prefix:
            literal = normalize(text).casefold()
            if len(literal) < MIN_TEXT_PREFIX:
                raise QueryError(
                    f"the pattern {text}* is too short", f"put at least {MIN_TEXT_PREFIX} letters before the wildcard"
                )
            return wq.Prefix(self.fieldname, prefix_of(text, self.langs), boost=boost)
        folded = fold_accents(normalize(text).casefold())
        literal = re.split(r"[*?]", folded, maxsplit=1)[0]
        if len(literal) < MIN_TEXT_PREFIX:
            raise QueryError(
                f"the pattern {text} is too short", f"put at least {MIN_TEXT_PREFIX} letters before the wildcard"
            )
        return wq.Wildcard(self.fieldname, folded, boost=boost)


class CharPrefix(wq.Prefix):
    """The terms starting with one CJK character: not limited by ``MAX_EXPANSION`` (a
    character may start many bigrams), scored as one (a merged document list)."""

    def __init__(self, fieldname: str, text: str, boost: float = 1.0) -> None:
        super().__init__(fieldname, text, boost=boost, constantscore=True)


class Units(wq.And):
    """The units of one query word (a CJK run gives several), kept apart until ranking."""

    def __init__(self, units: list[Unit], boost: float = 1.0) -> None:
        super().__init__([u.query for u in units], boost=boost)
        self.units = units


class UnitQuery(wq.WrappingQuery):
    """One unit in the parse tree (so its terms travel with it)."""

    def __init__(self, unit: Unit) -> None:
        super().__init__(unit.query)
        self.unit = unit

    def matcher(self, searcher, context=None):
        return self.child.matcher(searcher, context)


class _PhraseNode(PhrasePlugin.PhraseNode):
    def query(self, parser):
        fieldname = self.fieldname or parser.fieldname
        q = parser.phrase_query(fieldname, self.text, self.boost)
        return attach(q, self) if q is not None else None


class _PhraseTagger(PhrasePlugin.PhraseTagger):
    def create(self, parser, match):
        return _PhraseNode(match.group("text"), match.start("text"), 1)


class _Phrases(PhrasePlugin):
    def taggers(self, parser):
        return [(_PhraseTagger(self.expr), 0)]


class _Parser(QueryParser):
    """Whoosh's parser; words in text fields become units built by ``QueryBuilder``."""

    def __init__(self, schema, langs: Sequence[str]) -> None:
        super().__init__("text", schema, group=AndGroup)
        self.remove_plugin_class(PhrasePlugin)
        self.add_plugin(_Phrases())
        self.langs = langs
        self.builders: dict[str, QueryBuilder] = {}

    def builder(self, fieldname: str) -> QueryBuilder:
        found = self.builders.get(fieldname)
        if found is None:
            found = self.builders[fieldname] = QueryBuilder(fieldname, self.langs)
        return found

    def term_query(self, fieldname, text, termclass, boost=1.0, tokenize=True, removestops=True):
        if fieldname in TEXT_FIELDS and fieldname in self.schema:
            if text.startswith("#") and fieldname == "text":
                return _tag_query(text, termclass, boost)
            builder = self.builder(fieldname)
            if termclass in (wq.Prefix, wq.Wildcard):
                return builder.pattern(text, termclass, boost)
            return _wrap(builder.word(text, boost))
        if fieldname == "ftag":
            return _tag_query(text, termclass, boost)
        if fieldname == "lang" and termclass not in (wq.Prefix, wq.Wildcard):
            return wq.Term("lang", language_code(text) or text.casefold(), boost=boost)
        return super().term_query(fieldname, text, termclass, boost, tokenize, removestops)

    def phrase_query(self, fieldname, text, boost=1.0):
        if fieldname in TEXT_FIELDS and fieldname in self.schema:
            return _wrap(self.builder(fieldname).phrase(text, boost))
        return self.term_query(fieldname, text, self.termclass, boost)


def _wrap(units: list[Unit]) -> wq.Query | None:
    if not units:
        return None
    if len(units) == 1:
        return UnitQuery(units[0])
    return Units(units)


def _tag_query(text: str, termclass, boost: float) -> wq.Query | None:
    tag = normalize_tag(text.rstrip("*") if termclass is wq.Prefix else text)
    if termclass in (wq.Prefix, wq.Wildcard):
        literal = re.split(r"[*?]", tag, maxsplit=1)[0]
        if not literal:
            raise QueryError(f"the tag pattern {text!r} has no letters", "for example #project*")
        return wq.Prefix("ftag", tag, boost=boost) if termclass is wq.Prefix else wq.Wildcard("ftag", tag)
    return wq.Term("ftag", tag, boost=boost) if tag else None


# ---------------------------------------------------------------------- parsing
def _check_lexically(text: str) -> None:
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"the query is {len(text)} characters long", f"keep it under {MAX_QUERY_CHARS}")
    if text.count('"') % 2:
        raise QueryError("a quote is not closed", 'put a " at the end of the phrase')
    depth = 0
    outside = re.sub(r'"[^"]*"', " ", text)
    for char in outside:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                raise QueryError("a ')' has no matching '('", "remove it or add the '('")
    if depth:
        raise QueryError("a '(' is not closed", "add the ')'")
    for token in _TOKEN_RE.findall(text):
        if token.startswith('"'):
            continue
        value = token
        match = _FIELD_RE.match(token)
        if match:
            name, value = match.group(1), match.group(2)
            if name not in QUERY_FIELDS:
                raise QueryError(f"unknown filter {name}:", FILTER_HINT)
            bare = value.strip("()\"'").lower()
            if name == "status" and bare and not _pattern(bare) and bare not in STATUS_VALUES:
                raise QueryError(f"unknown status {bare!r}", "status is one of: " + ", ".join(STATUS_VALUES))
            if name == "trust" and bare and not _pattern(bare) and bare not in TRUST_VALUES:
                raise QueryError(f"unknown trust state {bare!r}", "trust is one of: " + ", ".join(TRUST_VALUES))
            if name == "tag" and bare and not _pattern(bare) and bare not in TAG_VALUES:
                raise QueryError(
                    f"unknown source tag {bare!r}",
                    "tag: is a source tag (" + ", ".join(TAG_VALUES) + f"); for a frontmatter tag use "
                    f"ftag:{bare.lstrip('#')} or #{bare.lstrip('#')}",
                )
        value = value.lstrip("(+-[{#")
        if value[:1] in ("*", "?"):
            raise QueryError(
                f"{token!r} starts with a wildcard",
                "a pattern needs letters before the * or ? (for example deploy*)",
            )


def _pattern(text: str) -> bool:
    return "*" in text or "?" in text


def _leaf_fields(q: wq.Query) -> set[str]:
    return {name for leaf in _leaves(q) if (name := getattr(leaf, "fieldname", None))}


def _is_filter(q: wq.Query) -> bool:
    names = _leaf_fields(q)
    return bool(names) and not (names & set(TEXT_FIELDS))


def _units_of(q: wq.Query) -> list[Unit] | None:
    """The units a free-text part of the parse tree stands for (None: not a plain unit)."""
    if isinstance(q, Units):
        return list(q.units)
    if isinstance(q, UnitQuery):
        return [q.unit]
    return None


def _strip(q: wq.Query) -> wq.Query:
    """The parse tree without memtui's wrappers (plain Whoosh queries)."""
    if isinstance(q, UnitQuery):
        return _strip(q.child)
    if isinstance(q, Units):
        return wq.And([_strip(s) for s in q.subqueries], boost=q.boost)
    if type(q) is wq.Or:  # ``apply`` makes a new Or without its coordination scale and minmatch
        return wq.Or([_strip(s) for s in q.subqueries], boost=q.boost, minmatch=q.minmatch, scale=q.scale)
    return q.apply(_strip)


def _all_units(q: wq.Query) -> list[Unit]:
    found = _units_of(q)
    if found is not None:
        return found
    out: list[Unit] = []
    for sub in q.children():
        out.extend(_all_units(sub))
    return out


def _plain_query(text: str, schema, langs: Sequence[str]) -> tuple[list[Unit], list[str]]:
    builder = QueryBuilder("text", langs)
    units: list[Unit] = []
    for token in _PLAIN_TOKEN_RE.findall(text):
        units.extend(builder.word(token))
    return units, builder.runs


def _structure(parsed: wq.Query) -> tuple[list[Unit], list[wq.Query]]:
    """Free-text units (each a plain unit) or whole free-text clauses, and the conditions.

    Conditions are filters (AND across fields, OR within one field) and NOT clauses.
    A top level that is not an implicit AND (an explicit OR, a group) is one unit.
    """
    children = list(parsed.subqueries) if type(parsed) is wq.And else [parsed]
    units: list[Unit] = []
    by_field: dict[str, list[wq.Query]] = {}
    negated: list[wq.Query] = []
    for child in children:
        if child is wq.NullQuery:
            continue
        if isinstance(child, wq.Not):
            negated.append(child)
            continue
        if _is_filter(child):
            by_field.setdefault(",".join(sorted(_leaf_fields(child))), []).append(child)
            continue
        plain = _units_of(child)
        if plain is not None:
            units.extend(plain)
        else:
            terms = frozenset(t for u in _all_units(child) for t in u.terms)
            units.append(Unit(child, terms))
    conditions = [subs[0] if len(subs) == 1 else wq.Or(subs) for subs in by_field.values()]
    return units, conditions + negated


def parse_query(text: str, schema, *, plain: bool = False, langs: Sequence[str] = ()) -> ParsedQuery | None:
    """Turn user text into Whoosh queries, or raise ``QueryError`` saying what is wrong.

    ``plain`` reads the text as words only (no filters, operators, phrases or patterns);
    it returns ``None`` when no word is left (only stop words or punctuation).
    ``langs`` are the page languages of the index (``index_languages``).
    """
    text = (text or "").strip()
    if plain:
        units, runs = _plain_query(text[: MAX_QUERY_CHARS * 2], schema, langs)
        conditions: list[wq.Query] = []
        if not units:
            return None
        units = units[:MAX_TERMS]  # a long question is read as far as the limit, not refused
    else:
        if not text:
            raise QueryError("the query is empty", "type some words, or a filter such as kind:semantic")
        _check_lexically(text)
        parser = _Parser(schema, langs)
        try:
            tree = parser.parse(text, normalize=False)
        except QueryError:
            raise
        except Exception as exc:  # noqa: BLE001 - Whoosh's parser is lenient; anything it raises is the query's
            raise QueryError(f"cannot read the query: {exc}", "check quotes, parentheses and filters") from None
        units, conditions = _structure(tree)
        runs = parser.builders["text"].runs if "text" in parser.builders else []
    if len(units) + len(conditions) > MAX_TERMS:
        raise QueryError(
            f"the query has {len(units) + len(conditions)} parts", f"use fewer than {MAX_TERMS} words and filters"
        )
    return _assemble(text, units, conditions, runs, schema)


def _assemble(text, units: list[Unit], conditions: list[wq.Query], runs: list[str], schema) -> ParsedQuery:
    def clean(q: wq.Query) -> wq.Query:
        return _strip(q).normalize()

    required = [u.query for u in units] + conditions
    full: wq.Query = clean(wq.And(required)) if required else wq.NullQuery
    partial = None
    if len(units) > 1:
        partial = clean(wq.And([wq.Or([u.query for u in units], scale=OR_FACTOR), *conditions]))
        for node in _nodes(partial):
            if isinstance(node, wq.Or):
                # A tree of union matchers, which skips blocks that cannot reach the top
                # results; Whoosh would preload every matching page of a small segment.
                node.matcher_type = wq.Or.DEFAULT_MATCHER
    result = ParsedQuery(text, full, partial, units, runs=list(dict.fromkeys(runs)))
    for unit in units:
        result.terms.update(unit.terms)
        if unit.phrase is not None:
            result.phrases.append(unit.phrase)
    for condition in conditions:
        if isinstance(condition, wq.Not):
            continue
        for leaf in _leaves(condition):
            if getattr(leaf, "fieldname", None) == "tag" and isinstance(getattr(leaf, "text", None), str):
                pattern: str | None
                if isinstance(leaf, wq.Prefix):
                    pattern = leaf.text.lower() + "*"
                elif isinstance(leaf, wq.Wildcard):
                    pattern = leaf.text.lower()
                else:
                    pattern = None
                result.source_tags.update(
                    tag
                    for tag in TAG_VALUES
                    if (fnmatch.fnmatchcase(tag, pattern) if pattern else tag == leaf.text.lower())
                )
    for leaf in _leaves(full):
        name = getattr(leaf, "fieldname", None)
        if isinstance(leaf, CharPrefix):
            continue
        if isinstance(leaf, (wq.Prefix, wq.Wildcard)):
            if name in TEXT_FIELDS and isinstance(leaf, wq.Prefix):
                result.prefixes.append(leaf.text)
            if name not in TEXT_FIELDS:
                leaf.constantscore = True  # a filter: one merged document list, not one matcher per word
    if partial is not None:
        for leaf in _leaves(partial):
            if isinstance(leaf, (wq.Prefix, wq.Wildcard)) and getattr(leaf, "fieldname", None) not in TEXT_FIELDS:
                leaf.constantscore = True
    result.finder = _prefilter(result)
    return result


def _nodes(q: wq.Query):
    yield q
    for sub in q.children():
        yield from _nodes(sub)


def _leaves(q: wq.Query):
    if q.is_leaf():
        yield q
    else:
        for sub in q.children():
            yield from _leaves(sub)


def check_expansion(parsed: ParsedQuery, reader) -> None:
    """Refuse a pattern that matches so many words the search would crawl."""
    for leaf in _leaves(parsed.query):
        if isinstance(leaf, CharPrefix):
            continue
        if isinstance(leaf, (wq.Prefix, wq.Wildcard, wq.TermRange)) and leaf.field() in TEXT_FIELDS:
            try:
                found = sum(1 for _ in islice(leaf.expanded_terms(reader), MAX_EXPANSION + 1))
            except Exception:  # noqa: BLE001 - a pattern Whoosh cannot expand
                raise QueryError(f"cannot use the pattern {leaf}", "simplify it") from None
            if found > MAX_EXPANSION:
                raise QueryError(
                    f"{leaf} matches more than {MAX_EXPANSION} different words",
                    "add more letters before the wildcard, or add a filter",
                )


# ---------------------------------------------------------------------- ranking
@dataclass(slots=True)
class Candidate:
    path: str
    score: float
    stored: dict
    record: PageRecord
    full: bool = True  # holds every query word
    docnum: int = -1


def order_candidates(candidates: list[Candidate]) -> list[Candidate]:
    """Full matches first, best score first, except that versions stay together, newest first.

    No page comes before a page in the results that (transitively) supersedes it,
    and the older versions of a page follow it directly: the current decision,
    then the ones it replaced, then the next best page.
    """
    remaining = sorted(candidates, key=lambda c: (not c.full, -c.score, c.path))
    present = {c.path for c in remaining}
    placed: set[str] = set()
    ordered: list[Candidate] = []

    def ready(cand: Candidate) -> bool:
        return all(s in placed or s not in present or s == cand.path for s in cand.record.successors)

    def place(cand: Candidate) -> None:
        remaining.remove(cand)
        ordered.append(cand)
        placed.add(cand.path)
        older = [c for c in remaining if cand.path in c.record.successors and ready(c)]
        for version in sorted(older, key=lambda c: (len(c.record.successors), -c.score, c.path)):
            if version in remaining and ready(version):
                place(version)

    while remaining:
        cand = next((c for c in remaining if ready(c)), remaining[0])  # remaining[0]: a cycle
        place(cand)
    return ordered


class DeadlineCollector(TimeLimitCollector):
    """Whoosh's time limit without a timer thread per search (two searches a query made
    two threads): the clock is read before each segment and every 64 documents."""

    def __init__(self, child, deadline: float) -> None:
        super().__init__(child, timelimit=0.0, use_alarm=False)
        self.deadline = deadline

    def prepare(self, top_searcher, q, context) -> None:
        self.child.prepare(top_searcher, q, context)
        self.timedout = False

    def collect_matches(self) -> None:
        child, deadline, clock = self.child, self.deadline, time.monotonic
        if clock() >= deadline:
            self.timedout = True
            raise TimeLimit
        for number, sub_docnum in enumerate(child.matches(), start=1):
            child.collect(sub_docnum)
            if not number & 63 and clock() >= deadline:
                self.timedout = True
                raise TimeLimit

    def finish(self) -> None:
        self.child.finish()


class _Hit:
    """A document ``bulk.top_docs`` found, as run_search reads a Whoosh hit."""

    __slots__ = ("searcher", "docnum", "score")

    def __init__(self, searcher, docnum: int, score: float) -> None:
        self.searcher, self.docnum, self.score = searcher, docnum, score

    def fields(self) -> dict:
        return self.searcher.stored_fields(self.docnum)


def _collect(searcher, query: wq.Query, wanted: int, deadline: float):
    """The best ``wanted`` hits of ``query`` and whether time ran out: scored a posting block at a
    time (``memtui.index.engine.bulk``), or by Whoosh's matchers for the shapes bulk does not score
    (phrases, ``Not``, wildcards, filters on other fields): one way for each shape of query."""
    try:
        return [_Hit(searcher, docnum, score) for score, docnum in top_docs(searcher, query, wanted, deadline)], False
    except BulkUnsupported:
        pass  # Whoosh's matchers below
    except BulkOutOfTime:
        return [], True
    collector = DeadlineCollector(searcher.collector(limit=wanted), deadline)
    timed_out = False
    try:
        searcher.search_with_collector(query, collector)
    except TimeLimit:
        timed_out = True
    return collector.results(), timed_out


def _head_share(parsed: ParsedQuery, stored: dict) -> float:
    if not parsed.units:
        return 0.0
    head = stored.get("head")
    if not isinstance(head, str) or not head:
        return 0.0
    names = set(head.split())
    return sum(1 for unit in parsed.units if unit.terms & names) / len(parsed.units)


class CandidateText:
    """What the phrase check and the CJK-run ranking read of a candidate: its title, file
    name, summary and body (the body read on demand)."""

    def __init__(self, root: Path, cand: Candidate) -> None:
        stored = cand.stored
        self.root = root
        self.path = cand.path
        self.lang = stored.get("lang") or ""
        title = stored.get("title") if isinstance(stored.get("title"), str) else cand.record.title
        summary = stored.get("summary") if isinstance(stored.get("summary"), str) else ""
        self.names = (title or "", posixpath.splitext(posixpath.basename(cand.path))[0])
        self.summary = summary or ""
        head = stored.get("head")
        self.head = frozenset(head.split()) if isinstance(head, str) else frozenset()
        self._body: str | None = None

    @property
    def body(self) -> str:
        if self._body is None:
            self._body = phrase_body(self.root, self.path) or ""
        return self._body

    def texts(self, fieldname: str) -> tuple[str, ...]:
        """The parts of a field as written (not yet normalised)."""
        return self.names if fieldname == "title" else (*self.names, self.summary, self.body)

    def holds_run(self, run: str) -> bool:
        """A CJK word as written: NFKC changes no CJK word character, so a part of the text
        is normalised only when the word is not found as it stands and the part holds a
        character that NFKC turns into (or joins into) a CJK one."""
        parts = self.texts("text")
        return any(run in part for part in parts) or any(
            run in normalize(part) for part in parts if _BECOMES_CJK_RE.search(part)
        )

    def holds(self, phrase: Phrase) -> bool:
        if phrase.fieldname == "text":
            run = _cjk_chain(phrase.alternatives)
            if run is not None:  # CJK bigrams next to each other: the run itself, as a substring
                return self.holds_run(run)
            if any(len(words) == 1 and words[0] in self.head for words in phrase.alternatives):
                return True  # an identifier whole among the page's names
        return any(_part_holds(part, phrase, self.lang) for part in self.texts(phrase.fieldname))


# The characters whose NFKC form is or joins into a CJK character (compatibility ideographs,
# radicals, half-width kana and Hangul, enclosed and squared forms, Hangul jamo, kana voicing
# marks); tests/test_search_cjk.py checks every code point against it.
_BECOMES_CJK_RE = re.compile(
    "[\u1100-\u11ff\u2e80-\u2fdf\u3038-\u303a\u3099-\u309f\u30ff\u3130-\u319f\u3200-\u33ff"
    "\ua960-\ua97f\ud7b0-\ud7ff\uf900-\ufaff\ufe30-\ufe4f\uff61-\uffdc"
    "\U0001f200-\U0001f2ff\U0002f800-\U0002fa1f]"
)


PHRASE_GAP = 64  # characters allowed between two words of a phrase (the rest of a word, stop words)
MAX_PHRASE_STARTS = 200  # places looked at per part of a page


@lru_cache(maxsize=256)
def _phrase_finder(keys: tuple[str, ...]) -> re.Pattern:
    """Places in folded text where the words of a phrase may follow one another: each
    word's key, then at most ``PHRASE_GAP`` characters before the next. A place found is
    then analysed as the index analyses text."""
    gap = r"\w*.{0," + str(PHRASE_GAP) + "}?"
    return re.compile(gap.join(re.escape(key) for key in keys), re.DOTALL)


def _part_holds(part: str, phrase: Phrase, lang: str) -> bool:
    """Does one part of a page (as written) hold one of the phrase's word sequences? Only
    the places the finder points at are analysed: stop words take no position there, the
    parts of an identifier follow one another, as in the index."""
    if not part:
        return False
    folded = part.lower() if part.isascii() else find_fold(part)
    for words, keys in zip(phrase.alternatives, phrase.keys):
        for number, match in enumerate(_phrase_finder(keys).finditer(folded)):
            if number >= MAX_PHRASE_STARTS:
                break
            start = _chunk_start(part, match.start())
            window = part[start : match.end() + PHRASE_GAP]
            pieces, _ = pieces_of(normalize(window), lang)
            if len(words) == 1:
                if any(piece.term == words[0] for _, _, _, piece in pieces):
                    return True
                continue
            positions: dict[str, set[int]] = {}
            for position, _, _, piece in pieces:
                if piece.primary:
                    positions.setdefault(piece.term, set()).add(position)
            if any(
                all(begin + step in positions.get(word, ()) for step, word in enumerate(words[1:], start=1))
                for begin in positions.get(words[0], ())
            ):
                return True
    return False


def _cjk_chain(alternatives: tuple[tuple[str, ...], ...]) -> str | None:
    """The CJK run a phrase of overlapping bigrams spells (给飞, 飞书 → 给飞书), or None."""
    if len(alternatives) != 1:
        return None
    words = alternatives[0]
    if not all(len(w) == 2 and CJK_RE.fullmatch(w) for w in words):
        return None
    if any(prev[1] != word[0] for prev, word in zip(words, words[1:])):
        return None
    return words[0] + "".join(word[1] for word in words[1:])


def phrase_body(root: Path, path: str) -> str | None:
    """A page's body for the phrase check: as ``page_body`` (cached), or, for a page longer
    than snippets read, the whole of it up to the parse limit (not cached)."""
    abspath = os.path.join(root, path)  # (not pathlib: this runs for every candidate of a search)
    try:
        st = os.stat(abspath, follow_symlinks=False)
    except OSError:
        return None
    size = st.st_size
    if size <= SNIPPET_READ_BYTES:
        found = body_and_line(root, path, st=st)
        return found[0] if found is not None else None
    if size > MAX_PARSE_BYTES:
        return large_page_text(abspath)  # indexed as text, never parsed
    result = read_bytes_safely(abspath)
    if result is None:
        return None
    text, _ = decode(result[0])
    fm = fm_mod.locate(text)
    return text[fm.body_offset :] if fm.present and fm.closed else text


def _check_phrases(
    root: Path,
    parsed: ParsedQuery,
    found: list[Candidate],
    texts: dict[str, CandidateText],
    deadline: float,
    wanted: int,
) -> tuple[list[Candidate], int]:
    """The candidates of one pass that still match once the query's phrases are checked on
    their text (best score first, until ``deadline``), and how many were left unchecked.

    A full match holding every phrase stays full; one holding the words of a phrase but
    not in order becomes partial if it still holds some unit of the query (another word,
    another phrase), else it is no match. Candidates of the partial pass are checked only
    when every unit of the query is a phrase. Unchecked ones are kept as partial matches.
    Once ``wanted`` full matches are confirmed, the lower-scoring rest is not needed.
    """
    plain = len(parsed.units) > len(parsed.phrases)
    kept: list[Candidate] = []
    unchecked = 0
    confirmed = 0
    for cand in sorted(found, key=lambda c: -c.score):
        if confirmed >= wanted:
            break
        if not cand.full and plain:
            kept.append(cand)
            continue
        if time.monotonic() >= deadline:
            unchecked += cand.full
            cand.full = False
            kept.append(cand)
            continue
        text = texts.get(cand.path)
        if text is None:
            text = texts[cand.path] = CandidateText(root, cand)
        held = [text.holds(phrase) for phrase in parsed.phrases]
        if cand.full and all(held):
            kept.append(cand)
            confirmed += 1
        elif plain or any(held):
            cand.full = False
            kept.append(cand)
    return kept, unchecked


def _rank_runs(
    root: Path, parsed: ParsedQuery, candidates: list[Candidate], texts: dict[str, CandidateText], limit: int
) -> None:
    """Raise the candidates holding a query's CJK words as written (each run's bigrams next
    to each other), read from their text.

    Full matches are listed before partial ones, so each group is ranked on its own; in a
    group that fills ``need`` places, a candidate whose score, raised as far as a run can
    raise it, stays below the ``need``-th best score cannot be listed, and its text is not
    read (the bonus only raises scores: what is listed, and in which order, is the same).
    """
    if not parsed.runs:
        return
    full = [c for c in candidates if c.full]
    partial = [c for c in candidates if not c.full]
    chosen: list[Candidate] = []
    for group, need in ((full, limit), (partial, max(0, limit - len(full)))):
        if not need:
            continue
        ordered = sorted(group, key=lambda c: -c.score)
        floor = ordered[need - 1].score / (1.0 + RUN_BONUS) if len(ordered) >= need else float("-inf")
        chosen.extend(c for c in ordered if c.score >= floor)
    for cand in chosen:
        text = texts.get(cand.path)
        if text is None:
            text = texts[cand.path] = CandidateText(root, cand)
        held = sum(1 for run in parsed.runs if text.holds_run(run))
        if held:
            cand.score *= 1.0 + RUN_BONUS * held / len(parsed.runs)


def rank(record: PageRecord) -> float:
    """What a page's own state does to its score (the text's match is scored apart): the one
    place a ranking signal read from the page's record goes."""
    factor = 1.0
    if record.status in ("superseded", "stale"):  # "unrecorded": nothing known either way
        factor *= SUPERSEDED_FACTOR
    if record.trust == "quarantined":
        factor *= QUARANTINED_FACTOR
    return factor


def run_search(searcher, parsed: ParsedQuery, *, limit: int, root: Path) -> SearchResults:
    """Search, rank and cut snippets. Whoosh errors propagate (the caller treats them as damage)."""
    check_expansion(parsed, searcher.reader())
    wanted = limit + EXTRA_CANDIDATES
    candidates: list[Candidate] = []
    seen: set[str] = set()
    timed_out = False
    deadline = time.monotonic() + TIME_LIMIT
    texts: dict[str, CandidateText] = {}
    unchecked = 0
    for query, full in ((parsed.query, True), (parsed.partial, False)):
        if query is None or (not full and sum(1 for c in candidates if c.full) >= limit):
            continue
        # A phrase is checked on the text of the pages holding all its words: look at more of them.
        want = max(wanted, PHRASE_CANDIDATES) if full and parsed.phrases else wanted + len(candidates)
        results, stopped = _collect(searcher, query, want, deadline)
        timed_out = timed_out or stopped
        found: list[Candidate] = []
        for hit in results:
            stored = hit.fields()
            path = stored.get("path")
            if not isinstance(path, str) or path in seen:
                continue
            record = PageRecord.from_stored(path, stored.get("rec"))
            if record is None:
                continue
            seen.add(path)
            score = float(hit.score or 0.0) * (1.0 + HEAD_WEIGHT * _head_share(parsed, stored)) * rank(record)
            found.append(Candidate(path, score, stored, record, full, hit.docnum))
        if parsed.phrases:
            found, missed = _check_phrases(root, parsed, found, texts, time.monotonic() + PHRASE_CHECK_TIME, wanted)
            unchecked += missed
        candidates.extend(found)
        if stopped:
            break
    _rank_runs(root, parsed, candidates, texts, limit)
    out = SearchResults()
    out.timed_out = timed_out
    if unchecked:
        out.notes.append(
            f"the phrase was checked on the best {plural(len(texts), 'page')} holding all its words; "
            f"{unchecked} more hold all of them and are listed as partial matches"
        )
    for cand in order_candidates(candidates)[:limit]:
        lang = cand.stored.get("lang") or ""
        snippet, spans, line = make_snippet(root, cand.path, parsed, cand.stored.get("summary") or "", lang)
        out.append(
            SearchHit(
                path=cand.path,
                id=cand.stored.get("id"),
                title=cand.stored.get("title") or cand.record.title,
                status=cand.record.status,
                trust=cand.record.trust,
                score=cand.score,
                snippet=snippet,
                highlights=spans,
                partial=not cand.full,
                line=line,
            )
        )
    return out


# ---------------------------------------------------------------------- snippets
def _matching(term: str, parsed: ParsedQuery) -> bool:
    return term in parsed.terms or any(term.startswith(p) for p in parsed.prefixes)


def _folded(text: str, parsed: ParsedQuery) -> str:
    """``text`` as the finder reads it: lower-case, accents folded, same offsets."""
    if parsed.terms and not parsed.prefixes and all(CJK_RE.fullmatch(t) for t in parsed.terms):
        return text  # CJK terms are found as written; folding a long page costs
    return text.lower() if text.isascii() else find_fold(text)


def _chunk_start(text: str, at: int) -> int:
    """Where the chunk holding ``text[at]`` starts (a word, or words joined by - . @ /)."""
    while at > 0:
        before = text[at - 1]
        if WORD_CHAR_RE.match(before):
            at -= 1
        elif before in "-.@/" and at > 1 and WORD_CHAR_RE.match(text, at - 2) and WORD_CHAR_RE.match(text, at):
            at -= 1
        else:
            break
    return at


def _hits(text: str, parsed: ParsedQuery, lang: str = "", limit: int = 400):
    """(start, end, term) of the query's terms in ``text`` (as written).

    The finder points at candidate places; a CJK term is where the finder found it,
    any other word is the analysis of the chunk the finder landed in.
    """
    finder = parsed.finder
    if finder is None:
        return
    seen: set[int] = set()
    for number, match in enumerate(finder.finditer(_folded(text, parsed))):
        if number >= limit:
            break
        key = match.group(0)
        if CJK_RE.fullmatch(key):
            if key in parsed.terms:
                yield match.start(), match.end(), key
            continue
        start = _chunk_start(text, match.start())
        if start in seen:
            continue
        seen.add(start)
        chunk = CHUNK_RE.match(text, start)
        if chunk is None:
            continue
        raw = chunk.group(0)
        norm = normalize(raw)
        for _, piece_start, piece_end, piece in pieces_of(norm, lang)[0]:
            if _matching(piece.term, parsed):
                if len(norm) != len(raw):
                    yield start, chunk.end(), piece.term
                else:
                    yield start + piece_start, start + piece_end, piece.term


def _spans(text: str, parsed: ParsedQuery, lang: str = "") -> list[tuple[int, int]]:
    """Character spans of ``text`` (as written) holding query words."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted({(start, end) for start, end, _ in _hits(text, parsed, lang)}):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _prefilter(parsed: ParsedQuery) -> re.Pattern | None:
    """A regex over ``find_fold`` text that finds every place a query word could be."""
    keys: set[str] = set()
    for term in parsed.terms:
        if CJK_RE.fullmatch(term):
            keys.add(term)
        elif term and not re.search(r"[-.@/_]", term):
            keys.add(term[: max(MIN_TEXT_PREFIX, len(term) - 2)])
    keys |= {p[: max(1, len(p) - 2)] or p for p in parsed.prefixes}
    keys.discard("")
    if not keys:
        return None
    return re.compile("|".join(re.escape(k) for k in sorted(keys, key=len, reverse=True)))


def _line_at(body: str, line_start: int) -> str:
    end = body.find("\n", line_start)
    return body[line_start : end if end >= 0 else len(body)]


def _struck(raw: str) -> bool:
    """A struck-through history line (``- ~~Deploy on Heroku~~ superseded ...``)."""
    return _LIST_MARK_RE.sub("", raw).lstrip().startswith("~~")


def _best_line(body: str, parsed: ParsedQuery, lang: str = "") -> int | None:
    """Where the body line with the most distinct query words starts (a heading only if
    nothing better; a struck-through line only if no current line holds as many words).
    With a ``tag:`` filter, only lines carrying one of those source tags are snippets.

    Only the places where the prefilter fires are analysed, not every word of the page.
    """
    terms_by_line: dict[int, set[str]] = {}
    for start, _, term in _hits(body, parsed, lang):
        terms_by_line.setdefault(body.rfind("\n", 0, start) + 1, set()).add(term)
    if parsed.source_tags:
        tagged = {
            body.rfind("\n", 0, m.start()) + 1
            for m in TAG_RE.finditer(body)
            if m.group(1).lower() in parsed.source_tags
        }
        lines = {start: terms_by_line.get(start, set()) for start in sorted(tagged)}
        floor = -1.0  # a tagged line is a snippet even without a query word
    else:
        lines, floor = terms_by_line, 0.0
    best, best_score = None, floor
    for line_start, terms in lines.items():
        raw = _line_at(body, line_start)
        score: float = sum(1 for unit in parsed.units if unit.terms & terms)
        score += sum(1 for p in parsed.prefixes if any(t.startswith(p) for t in terms))
        score -= 0.5 if raw.lstrip().startswith("#") else 0.0
        score -= 0.75 if _struck(raw) else 0.0
        if score > best_score:
            best, best_score = line_start, score
    return best


def _first_line(body: str) -> str:
    for raw in body.splitlines():
        line = _LIST_MARK_RE.sub("", raw).strip()
        if line and not raw.lstrip().startswith("#"):
            return line
    return ""


_BODIES: OrderedDict[tuple[str, int, int, int, int, int], tuple[str, int]] = OrderedDict()
_BODIES_KEPT = 256
_bodies_lock = threading.Lock()


def page_body(root: Path, path: str) -> str | None:
    """A page's body text (after the frontmatter), cached by path and stat (``body_and_line``)."""
    found = body_and_line(root, path)
    return found[0] if found is not None else None


def body_and_line(root: Path, path: str, *, st: os.stat_result | None = None) -> tuple[str, int] | None:
    """A page's body text and the line of the file it starts on (1-based), cached by path,
    size, mtime, change time, inode and device (the writer sets size and mtime back at will: a
    same-size rewrite must not show the old text as the snippet); only the first ``SNIPPET_READ_BYTES`` of a page are read (``st``: its
    stat, when the caller has just made it)."""
    abspath = os.path.join(root, path)
    if st is None:
        try:
            st = os.stat(abspath, follow_symlinks=False)
        except OSError:
            return None
    key = (abspath, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)
    with _bodies_lock:
        found = _BODIES.get(key)
        if found is not None:
            _BODIES.move_to_end(key)
            return found
    result = read_bytes_safely(abspath, head=SNIPPET_READ_BYTES)  # never a whole huge page
    if result is None:
        return None
    text, _ = decode(result[0][:SNIPPET_READ_BYTES])
    fm = fm_mod.locate(text)
    offset = fm.body_offset if fm.present and fm.closed else 0
    found = (text[offset:], text.count("\n", 0, offset) + 1)
    with _bodies_lock:
        _BODIES[key] = found
        while len(_BODIES) > _BODIES_KEPT:
            _BODIES.popitem(last=False)
    return found


def make_snippet(
    root: Path, path: str, parsed: ParsedQuery, summary: str = "", lang: str = ""
) -> tuple[str, list[tuple[int, int]], int | None]:
    """The body line that matches the most query words (else the summary), made safe, cut
    to size, and its line in the file (None for the summary).

    The snippet is the page's text as written; highlights are found by analysing it.
    """
    found = body_and_line(root, path)
    if found is None:
        return "", [], None
    body, first_line = found
    start = _best_line(body, parsed, lang)
    line = None
    if start is not None:
        best = _LIST_MARK_RE.sub("", _line_at(body, start)).strip()
        line = first_line + body.count("\n", 0, start)
    else:
        best = summary.strip() or _first_line(body)
    snippet = one_line(best)
    if len(snippet) > SNIPPET_CHARS:
        spans = _spans(snippet, parsed, lang)
        start = max(0, spans[0][0] - SNIPPET_CHARS // 3) if spans else 0
        cut = snippet[start : start + SNIPPET_CHARS]
        snippet = ("…" if start else "") + cut + ("…" if start + SNIPPET_CHARS < len(snippet) else "")
    return snippet, _spans(snippet, parsed, lang), line
