"""Search: parse a query safely, rank current versions first, cut a snippet from the page.

Query language (Whoosh's, narrowed down):

- free words match a page's title, summary and body (``text``: the title counts
  three times, the summary twice); a page matching more of them ranks higher
  (any word may match). ``"two words"`` needs both words (the index keeps
  no word positions, so a phrase is "all of these words");
- filters restrict the results: ``kind:`` ``subject:`` (``subject:decision/*``)
  ``tag:`` (a source tag) ``status:`` (current, superseded, quarantined,
  unreviewed, reviewed) ``origin:`` ``path:`` (``path:notes/*``) ``id:``
  ``title:`` ``text:`` ``valid_from:`` ``valid_to:`` ``updated:``; filters on different
  fields must all hold, several on the same field are alternatives;
- ``AND`` ``OR`` ``NOT`` and parentheses, ``word*`` prefixes.

Refused with a ``QueryError`` (message + hint): unbalanced quotes or
parentheses, unknown filters, unknown status or tag values, a pattern starting
with ``*`` or ``?``, a text pattern with fewer than two letters before the
wildcard, a pattern matching more than ``MAX_EXPANSION`` words, very long
queries. A search that still runs past ``TIME_LIMIT`` returns what it found so
far with ``timed_out`` set.

Ranking: Whoosh's BM25F score over ``text``, raised by up to half for a title
(or file name) holding the query's words, halved for superseded pages. Then
versions are kept together: no page comes before a page in the results that
(transitively) supersedes it, and the versions a page replaced follow it
directly, newest first. The current decision comes first, its history below it.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from whoosh import query as wq
from whoosh.collectors import TimeLimitCollector
from whoosh.qparser import MultifieldParser, OrGroup
from whoosh.searching import TimeLimit

from memtui.field import frontmatter as fm_mod
from memtui.field.page import decode
from memtui.index.analysis import (
    DEFAULT_FIELDS,
    QUERY_FIELDS,
    STATUS_VALUES,
    STOP_WORDS,
    TAG_VALUES,
    TEXT_FIELDS,
    WORD_RE,
    stem,
)
from memtui.index.errors import QueryError
from memtui.index.model import SearchHit, SearchResults
from memtui.index.records import PageRecord, read_bytes_safely
from memtui.textsafety import one_line

MAX_QUERY_CHARS = 500
MAX_TERMS = 64
MAX_EXPANSION = 500
MIN_TEXT_PREFIX = 2
TIME_LIMIT = 2.0
SUPERSEDED_FACTOR = 0.5
TITLE_WEIGHT = 0.5  # a title holding every query word scores 1.5x
SNIPPET_CHARS = 180
SNIPPET_READ_BYTES = 256 * 1024  # snippets come from the first 256 KB of a page
OR_FACTOR = 0.9

_FIELD_RE = re.compile(r"^[(+\-]*([A-Za-z_][\w-]*):(.*)$")
_TOKEN_RE = re.compile(r'"[^"]*"|[^\s"]+')
_LIST_MARK_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)]|#{1,6}|>)\s+")
FILTER_HINT = "filters: " + " ".join(f"{name}:" for name in QUERY_FIELDS if name not in TEXT_FIELDS)


@dataclass(slots=True)
class ParsedQuery:
    text: str
    query: wq.Query
    terms: set[str] = field(default_factory=set)  # stemmed words to highlight
    prefixes: list[str] = field(default_factory=list)  # word* patterns to highlight
    finder: re.Pattern | None = None  # finds candidate snippet lines


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
            if name == "tag" and bare and not _pattern(bare) and bare not in TAG_VALUES:
                raise QueryError(f"unknown source tag {bare!r}", "tag is one of: " + ", ".join(TAG_VALUES))
        value = value.lstrip("(+-[{")
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


def _unphrase(q: wq.Query) -> wq.Query:
    """The index has no positions: a phrase becomes "all of these words" in that field."""
    if isinstance(q, wq.Phrase):
        return wq.And([wq.Term(q.fieldname, word, boost=q.boost) for word in q.words])
    return q


def _restructure(q: wq.Query) -> wq.Query:
    """Free words stay alternatives; filters become conditions (AND across fields, OR within one)."""
    if not isinstance(q, wq.Or):
        return q
    text_parts: list[wq.Query] = []
    by_field: dict[str, list[wq.Query]] = {}
    for sub in q.subqueries:
        if _is_filter(sub):
            names = sorted(_leaf_fields(sub))
            by_field.setdefault(",".join(names), []).append(sub)
        else:
            text_parts.append(sub)
    if not by_field:
        return q
    conditions: list[wq.Query] = []
    for subs in by_field.values():
        conditions.append(subs[0] if len(subs) == 1 else wq.Or(subs))
    if text_parts:
        free = text_parts[0] if len(text_parts) == 1 else wq.Or(text_parts, scale=OR_FACTOR)
        return wq.And([free, *conditions])
    return conditions[0] if len(conditions) == 1 else wq.And(conditions)


def parse_query(text: str, schema) -> ParsedQuery:
    """Turn user text into a Whoosh query, or raise ``QueryError`` saying what is wrong."""
    text = (text or "").strip()
    if not text:
        raise QueryError("the query is empty", "type some words, or a filter such as kind:semantic")
    _check_lexically(text)
    parser = MultifieldParser(list(DEFAULT_FIELDS), schema, group=OrGroup.factory(OR_FACTOR))
    try:
        parsed = parser.parse(text)
    except Exception as exc:  # noqa: BLE001 - Whoosh's parser is lenient; anything it raises is the query's
        raise QueryError(f"cannot read the query: {exc}", "check quotes, parentheses and filters") from None
    parsed = _restructure(parsed.accept(_unphrase))
    result = ParsedQuery(text, parsed)
    count = 0
    for leaf in _leaves(parsed):
        count += 1
        name = leaf.field() if hasattr(leaf, "field") else None
        if isinstance(leaf, (wq.Prefix, wq.Wildcard)):
            literal = re.split(r"[*?]", leaf.text, maxsplit=1)[0]
            if name in TEXT_FIELDS and len(literal) < MIN_TEXT_PREFIX:
                raise QueryError(
                    f"the pattern {leaf.text}* is too short",
                    f"put at least {MIN_TEXT_PREFIX} letters before the wildcard",
                )
            if name in TEXT_FIELDS and isinstance(leaf, wq.Prefix):
                result.prefixes.append(leaf.text)
            if name not in TEXT_FIELDS:
                leaf.constantscore = True  # a filter: one merged document list, not one matcher per word
        elif isinstance(leaf, wq.Term) and name in TEXT_FIELDS and isinstance(leaf.text, str):
            result.terms.add(leaf.text)
    if count > MAX_TERMS:
        raise QueryError(f"the query has {count} parts", f"use fewer than {MAX_TERMS} words and filters")
    result.finder = _prefilter(result)
    return result


def _leaves(q: wq.Query):
    if q.is_leaf():
        yield q
    else:
        for sub in q.children():
            yield from _leaves(sub)


def check_expansion(parsed: ParsedQuery, reader) -> None:
    """Refuse a pattern that matches so many words the search would crawl."""
    for leaf in _leaves(parsed.query):
        if isinstance(leaf, (wq.Prefix, wq.Wildcard, wq.TermRange)) and leaf.field() in TEXT_FIELDS:
            try:
                found = sum(1 for _ in islice(leaf._btexts(reader), MAX_EXPANSION + 1))
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


def order_candidates(candidates: list[Candidate]) -> list[Candidate]:
    """Best score first, except that versions stay together, newest first.

    No page comes before a page in the results that (transitively) supersedes it,
    and the older versions of a page follow it directly: the current decision,
    then the ones it replaced, then the next best page.
    """
    remaining = sorted(candidates, key=lambda c: (-c.score, c.path))
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


def run_search(searcher, parsed: ParsedQuery, *, limit: int, root: Path) -> SearchResults:
    """Search, rank and cut snippets. Whoosh errors propagate (the caller treats them as damage)."""
    check_expansion(parsed, searcher.reader())
    wanted = limit + 10
    collector = TimeLimitCollector(searcher.collector(limit=wanted), timelimit=TIME_LIMIT, use_alarm=False)
    timed_out = False
    try:
        searcher.search_with_collector(parsed.query, collector)
    except TimeLimit:
        timed_out = True
    results = collector.results()
    candidates: list[Candidate] = []
    for hit in results:
        stored = hit.fields()
        path = stored.get("path")
        record = PageRecord.from_stored(path, stored.get("rec")) if isinstance(path, str) else None
        if record is None:
            continue
        score = float(hit.score or 0.0)
        if parsed.terms:
            title_words = {stem(w.lower()) for w in WORD_RE.findall(f"{record.title} {path}")}
            score *= 1.0 + TITLE_WEIGHT * len(parsed.terms & title_words) / len(parsed.terms)
        if record.status != "current":
            score *= SUPERSEDED_FACTOR
        candidates.append(Candidate(path, score, stored, record))
    out = SearchResults()
    out.timed_out = timed_out
    for cand in order_candidates(candidates)[:limit]:
        snippet, spans = make_snippet(root, cand.path, parsed, cand.stored.get("summary") or "")
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
            )
        )
    return out


# ---------------------------------------------------------------------- snippets
def _matches(word: str, parsed: ParsedQuery) -> bool:
    lower = word.lower()
    if lower in STOP_WORDS:
        return False
    if stem(lower) in parsed.terms:
        return True
    return any(lower.startswith(p) or stem(lower).startswith(p) for p in parsed.prefixes)


def _spans(text: str, parsed: ParsedQuery) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in WORD_RE.finditer(text) if _matches(m.group(0), parsed)]


def _prefilter(parsed: ParsedQuery) -> re.Pattern | None:
    """A regex that finds every place a query word could be (a word starts with most of its stem)."""
    stems = {t[: max(MIN_TEXT_PREFIX, len(t) - 2)] for t in parsed.terms}
    stems |= {p[: max(1, len(p) - 2)] or p for p in parsed.prefixes}
    stems.discard("")
    if not stems:
        return None
    return re.compile("|".join(re.escape(s) for s in sorted(stems, key=len, reverse=True)), re.IGNORECASE)


def _best_line(body: str, parsed: ParsedQuery) -> str:
    """The body line with the most distinct query words (a heading only if nothing better).

    Only words where the prefilter fires are looked at, not every word of the page.
    """
    finder = parsed.finder
    if finder is None:
        return ""
    words_by_line: dict[int, set[str]] = {}
    for found, match in enumerate(finder.finditer(body)):
        if found > 400:
            break
        at = match.start()
        if at and (body[at - 1].isalnum() or body[at - 1] == "_"):
            continue  # inside a word, not at its start
        word = WORD_RE.match(body, at)
        if word is None or not _matches(word.group(0), parsed):
            continue
        line_start = body.rfind("\n", 0, at) + 1
        words_by_line.setdefault(line_start, set()).add(word.group(0).lower())
    best, best_score = "", 0.0
    for line_start, words in words_by_line.items():
        end = body.find("\n", line_start)
        raw = body[line_start : end if end >= 0 else len(body)]
        score = len(words) - (0.5 if raw.lstrip().startswith("#") else 0.0)
        if score > best_score or (score == best_score and best == ""):
            best, best_score = _LIST_MARK_RE.sub("", raw).strip(), score
    return best


def _first_line(body: str) -> str:
    for raw in body.splitlines():
        line = _LIST_MARK_RE.sub("", raw).strip()
        if line and not raw.lstrip().startswith("#"):
            return line
    return ""


_BODIES: OrderedDict[tuple[str, int, int], str] = OrderedDict()
_BODIES_KEPT = 256
_bodies_lock = threading.Lock()


def page_body(root: Path, path: str) -> str | None:
    """A page's body text (after the frontmatter), cached by path, size and mtime."""
    abspath = str(root / path)
    try:
        st = os.stat(abspath, follow_symlinks=False)
    except OSError:
        return None
    key = (abspath, st.st_size, st.st_mtime_ns)
    with _bodies_lock:
        body = _BODIES.get(key)
        if body is not None:
            _BODIES.move_to_end(key)
            return body
    result = read_bytes_safely(abspath, head=SNIPPET_READ_BYTES)  # never a whole huge page
    if result is None:
        return None
    text, _ = decode(result[0][:SNIPPET_READ_BYTES])
    fm = fm_mod.locate(text)
    body = text[fm.body_offset :] if fm.present and fm.closed else text
    with _bodies_lock:
        _BODIES[key] = body
        while len(_BODIES) > _BODIES_KEPT:
            _BODIES.popitem(last=False)
    return body


def make_snippet(
    root: Path, path: str, parsed: ParsedQuery, summary: str = ""
) -> tuple[str, list[tuple[int, int]]]:
    """The body line that matches the most query words (else the summary), made safe, cut to size."""
    body = page_body(root, path)
    if body is None:
        return "", []
    best = _best_line(body, parsed) or summary.strip() or _first_line(body)
    snippet = one_line(best)
    if len(snippet) > SNIPPET_CHARS:
        spans = _spans(snippet, parsed)
        start = max(0, spans[0][0] - SNIPPET_CHARS // 3) if spans else 0
        cut = snippet[start : start + SNIPPET_CHARS]
        snippet = ("…" if start else "") + cut + ("…" if start + SNIPPET_CHARS < len(snippet) else "")
    return snippet, _spans(snippet, parsed)
