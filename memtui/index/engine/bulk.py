"""The best partial matches of a query, scored a posting block at a time.

The partial pass of a search (pages holding *some* of the query's words) is an ``Or``
of every word. Whoosh walks such a union one posting at a time through a tree of
matchers, in Python, about 5 µs per posting; its block-quality skipping cannot skip
much there (the bound of a union is the sum of its parts' block maxima), so a query of
a few common words visits every page holding any of them: 25-45 ms of a 10,000-page
CJK field, where CJK words are bigrams found in hundreds of pages each.

``top_docs`` computes the same scores from the decoded posting blocks instead: each
term's document numbers and weights a block at a time, scored with the same scorer
object Whoosh would use (BM25F with the cached field lengths), summed per page in a
dict, Whoosh's coordination bonus (``Or(scale=...)``: ``CoordMatcher``) applied per
page, deleted documents left out, the best ``limit`` kept (ties: lower document
number first, as Whoosh's collector). About five times faster.

Only the query shapes searches build from words are evaluated here: ``Term``, ``And``,
``Or`` (with or without ``scale``), ``DisjunctionMax``, boosts, and a prefix of a text
field (one CJK character: the bigrams starting with it, scored as Whoosh scores the
expansion). Anything else (phrases, ``Not``, wildcards, filters on other
fields ...) raises ``Unsupported`` and the caller searches with Whoosh. ``DisjunctionMax`` is scored as its documentation says, the
best of its parts *for this page*; Whoosh's matcher takes the best of its parts' current
postings, which may be another page's (a bug that only ever raised a score).
"""

from __future__ import annotations

import gc
import heapq
import time
import weakref
from collections.abc import Iterable, Iterator, Sequence

from whoosh import query as wq
from whoosh.scoring import BM25FScorer

from memtui.index.analysis import TEXT_FIELDS
from memtui.index.engine.scoring import field_lengths


class Unsupported(Exception):
    """A query shape this module does not score; search it with Whoosh."""


class OutOfTime(Exception):
    """The deadline passed while scoring."""


Scores = dict[int, list]  # docnum -> [score, matching term count]
PROBE_COST = 8  # looking one page up in a posting list costs about as much as decoding this many


def top_docs(searcher, query: wq.Query, limit: int, deadline: float) -> list[tuple[float, int]]:
    """The ``limit`` best (score, docnum) of ``query``, best first, as Whoosh ranks them."""
    # Thousands of small lists, none of them garbage: a cycle collection meanwhile walks every
    # object of the process (the index's page records) and took longer than the search.
    collecting = gc.isenabled()
    gc.disable()
    try:
        if type(query) is wq.Or and len(query.subqueries) > 1 and not query.minmatch and limit > 0:
            scores = _max_score_union(searcher, query, limit, deadline)
        else:
            scores = _evaluate(searcher, query, deadline)
        best = heapq.nsmallest(limit, scores.items(), key=lambda item: (-item[1][0], item[0]))
    finally:
        if collecting:
            gc.enable()
    return [(value[0], docnum) for docnum, value in best]


def _max_score_union(searcher, q: wq.Or, limit: int, deadline: float) -> Scores:
    """An ``Or``'s scores, its rarest parts first; once no page outside those already found
    can reach the ``limit``-th best score any more (even holding every part still to come,
    each at its highest score), the other parts are only looked up for the pages found
    (MaxScore). The best ``limit`` pages and their scores are those of the whole union."""
    parts = sorted(q.subqueries, key=lambda sub: _estimate(searcher, sub))
    bounds = [_bound(searcher, sub) for sub in parts]
    counts = [_term_count(searcher, sub) for sub in parts]
    termcount = sum(counts)
    coordinate = bool(q.scale) and termcount > 0

    def final(score: float, matching: int) -> float:
        score *= q.boost
        if coordinate:
            return (score + ((matching - 1) / (termcount - q.scale) ** 2)) * ((termcount - 1) / termcount)
        return score

    if coordinate:
        factor = (termcount - 1) / termcount
        per_score, per_term = q.boost * factor, factor / (termcount - q.scale) ** 2
    else:
        per_score, per_term = q.boost, 0.0
    found: Scores = {}
    only = None
    for index, part in enumerate(parts):
        # Once no new page can make the list, none can later: the floor only rises and the
        # bound of the parts still to come only falls.
        if only is None and len(found) >= limit:
            # final() is per_score * score + per_term * count + a constant: ranked on that
            # (the margin covers the rounding of the two forms)
            floor = heapq.nlargest(limit, [per_score * score + per_term * count for score, count in found.values()])[-1]
            if per_score * sum(bounds[index:]) + per_term * sum(counts[index:]) < floor - 1e-9 * abs(floor):
                only = found.keys()  # a page not found yet cannot make the list
        _add_into(found, _evaluate(searcher, part, deadline, only))
    for value in found.values():
        value[0] = final(value[0], value[1])
    return found


def _bound(searcher, q: wq.Query) -> float:
    """The highest score ``q`` can give a page (Whoosh's ``max_quality`` of its terms)."""
    kind = type(q)
    if kind is wq.Term:
        text = _present(searcher, q)
        if text is None:
            return 0.0
        best = 0.0
        for subsearcher, _ in _segments(searcher):
            if (q.fieldname, text) in subsearcher.reader():
                best = max(best, searcher.weighting.scorer(subsearcher, q.fieldname, text).max_quality())
        return best * q.boost
    if kind in (wq.And, wq.Or) and not (kind is wq.Or and (q.scale or q.minmatch)):
        return sum(_bound(searcher, sub) for sub in q.subqueries) * q.boost
    if kind is wq.DisjunctionMax and not q.tiebreak:
        return max((_bound(searcher, sub) for sub in q.subqueries), default=0.0) * q.boost
    if kind is wq.NullQuery.__class__:
        return 0.0
    if isinstance(q, wq.Prefix):
        if q.constantscore and _several_terms(searcher, q):
            return q.boost
        return sum(_bound(searcher, term) for term in _expansion(searcher, q)) * q.boost
    raise Unsupported(f"no bound for {kind.__name__}")


_EXPANSIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # reader -> {(field, prefix): terms}


def _expansion(searcher, q: wq.Prefix) -> list[wq.Term]:
    """The terms a prefix of a text field expands to (kept per reader: a reader is a
    snapshot, and one search asks for a prefix's terms three times)."""
    if q.fieldname not in TEXT_FIELDS:
        raise Unsupported("a pattern on a filter field")
    reader = searcher.reader()
    per_reader = _EXPANSIONS.setdefault(reader, {})
    key = (q.fieldname, q.text)
    found = per_reader.get(key)
    if found is None:
        if len(per_reader) > 256:
            per_reader.clear()
        field = searcher.schema[q.fieldname]
        found = per_reader[key] = [
            wq.Term(q.fieldname, field.from_bytes(btext)) for btext in q._btexts(reader) if btext
        ]
    return found


def _estimate(searcher, q: wq.Query) -> int:
    """How many pages ``q`` may match, to order an ``And``'s parts (rarest first). A
    constant-score prefix (one CJK character: hundreds of bigrams) counts as every page:
    Whoosh's estimate sums the frequency of each term it expands to, which cost more than
    the search, and such a prefix is best looked up last, for the pages the rest found."""
    if isinstance(q, wq.Prefix) and q.constantscore:
        return searcher.reader().doc_count_all()
    return q.estimate_size(searcher.reader())


def _prefix(searcher, q: wq.Prefix, deadline: float, only) -> Scores:
    """As Whoosh matches a prefix: one term is that term; several are their union, each page
    scored ``boost`` when the prefix is ``constantscore`` (it counts no term for the
    coordination bonus then), else the sum of the terms' scores."""
    if q.constantscore and _several_terms(searcher, q):
        return {docnum: [q.boost, 0] for docnum in _pages_holding(searcher, q, deadline, only)}
    terms = _expansion(searcher, q)
    if len(terms) == 1:
        return _evaluate(searcher, wq.Term(q.fieldname, terms[0].text, boost=q.boost), deadline, only)
    return _evaluate(searcher, wq.Or(terms, boost=q.boost), deadline, only)


def _pages_holding(searcher, q: wq.Prefix, deadline: float, only) -> set[int]:
    """The pages (of ``only``, when given) holding a term that starts with ``q``'s text."""
    pages: set[int] = set()
    for subsearcher, offset in _segments(searcher):
        found = _segment_pages(subsearcher.reader(), q, deadline)
        if only is not None:
            found = found.intersection(d - offset for d in only)
        pages.update(d + offset for d in found) if offset else pages.update(found)
    return pages


_PREFIX_PAGES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # segment reader -> {(field, prefix): pages}


def _prefix_terms(reader, q: wq.Prefix):
    """(term bytes, term info) of a segment's terms starting with ``q``'s text, read in order
    from the prefix in the term index (no lookup per term)."""
    stored = getattr(reader, "_terms", None)
    if stored is None or getattr(reader, "_perdoc", None) is None or not hasattr(stored, "_tindex"):
        raise Unsupported("a reader without stored postings")
    prefix = reader.schema[q.fieldname].to_bytes(q.text)
    for (fieldname, btext), info in stored.items_from(q.fieldname, prefix):
        if fieldname != q.fieldname or not btext.startswith(prefix):
            return
        yield btext, info


def _segment_pages(reader, q: wq.Prefix, deadline: float) -> frozenset[int]:
    """A segment's live pages holding a term that starts with ``q``'s text: the postings'
    document numbers taken without a scorer or a weight (a constant-score prefix scores
    each page alike); kept per reader (a snapshot), as both passes of a search ask."""
    per_reader = _PREFIX_PAGES.setdefault(reader, {})
    key = (q.fieldname, q.text)
    found = per_reader.get(key)
    if found is not None:
        return found
    from whoosh.codec.whoosh3 import W3LeafMatcher

    postfile, form = reader._terms._postfile, reader.schema[q.fieldname].format
    pages: set[int] = set()
    for _, info in _prefix_terms(reader, q):
        if time.monotonic() >= deadline:
            raise OutOfTime
        if info.is_inlined():
            pages.update(info.inlined_postings()[0])
            continue
        at, length = info.extent()
        matcher = W3LeafMatcher(postfile, at, length, form)
        while matcher.is_active():
            matcher._read_ids()
            pages.update(matcher._ids)
            matcher._next_block()
    if len(per_reader) > 64:
        per_reader.clear()
    found = per_reader[key] = frozenset(pages - _deleted(reader))
    return found


def _several_terms(searcher, q: wq.Prefix) -> bool:
    """Whether a prefix expands to more than one term (without listing them all)."""
    seen: set[bytes] = set()
    for subsearcher, _ in _segments(searcher):
        for btext, _ in _prefix_terms(subsearcher.reader(), q):
            seen.add(btext)
            if len(seen) > 1:
                return True
    return False


def _segments(searcher):
    return [(searcher, 0)] if searcher.is_atomic() else searcher.subsearchers


def _evaluate(searcher, q: wq.Query, deadline: float, only=None) -> Scores:
    """Scores of the pages matching ``q`` (of those in ``only``, when given)."""
    if time.monotonic() >= deadline:
        raise OutOfTime
    kind = type(q)
    if kind is wq.Term:
        return _term(searcher, q, only)
    if kind is wq.NullQuery.__class__:
        return {}
    if kind is wq.And:
        parts = []
        for sub in sorted(q.subqueries, key=lambda sub: _estimate(searcher, sub)):
            part = _evaluate(searcher, sub, deadline, only)
            if not part:
                return {}
            parts.append(part)
            only = part.keys()  # the rest only for the pages every part so far holds
        return _boost(_intersection(parts), q.boost)
    if kind is wq.Or:
        if q.minmatch:
            raise Unsupported("Or with minmatch")
        parts = [_evaluate(searcher, sub, deadline, only) for sub in q.subqueries]
        scores = _boost(_union(parts), q.boost)
        if q.scale and len(q.subqueries) > 1:
            termcount = sum(_term_count(searcher, sub) for sub in q.subqueries)
            if termcount:
                _coordinate(scores, termcount, q.scale)
        return scores
    if kind is wq.DisjunctionMax:
        if q.tiebreak:
            raise Unsupported("DisjunctionMax with a tiebreak")
        parts = [_evaluate(searcher, sub, deadline, only) for sub in q.subqueries]
        return _boost(_best(parts), q.boost)
    if isinstance(q, wq.Prefix):
        return _prefix(searcher, q, deadline, only)
    raise Unsupported(kind.__name__)


def _boost(scores: Scores, boost: float) -> Scores:
    if boost != 1.0:
        for value in scores.values():
            value[0] *= boost
    return scores


def _present(searcher, q: wq.Term) -> bytes | None:
    """The term's bytes, if the field is in the schema and the index holds the term."""
    if q.fieldname not in searcher.schema:
        return None
    try:
        text = searcher.schema[q.fieldname].to_bytes(q.text)
    except ValueError:
        return None
    return text if (q.fieldname, text) in searcher.reader() else None


def _term_count(searcher, q: wq.Query) -> int:
    """How many term matchers Whoosh's tree for ``q`` holds (what ``CoordMatcher`` counts)."""
    if type(q) is wq.Term:
        return 1 if _present(searcher, q) is not None else 0
    if type(q) in (wq.And, wq.Or, wq.DisjunctionMax):
        return sum(_term_count(searcher, sub) for sub in q.subqueries)
    if isinstance(q, wq.Prefix) and q.fieldname in TEXT_FIELDS:
        if q.constantscore and _several_terms(searcher, q):
            return 0
        return len(_expansion(searcher, q))
    return 0


def _blocks(matcher) -> Iterator[tuple[Sequence[int], Sequence[float]]]:
    """(docnums, weights) of each block of one segment's postings of a term (a term in one
    or two pages has its postings inline, in a ``ListMatcher``: stepped through)."""
    if not hasattr(matcher, "_read_weights"):
        ids, weights = [], []
        while matcher.is_active():
            ids.append(matcher.id())
            weights.append(matcher.weight())
            matcher.next()
        yield ids, weights
        return
    while matcher.is_active():
        matcher._read_ids()
        matcher._read_weights()
        yield matcher._ids, matcher._weights
        matcher._next_block()


def _term(searcher, q: wq.Term, only=None) -> Scores:
    text = _present(searcher, q)
    if text is None:
        return {}
    weighting = searcher.weighting
    boost = q.boost
    out: Scores = {}
    wanted = sorted(only) if only is not None else None
    for subsearcher, offset in _segments(searcher):
        reader = subsearcher.reader()
        if (q.fieldname, text) not in reader:
            continue
        scorer = weighting.scorer(subsearcher, q.fieldname, text)
        if not isinstance(scorer, BM25FScorer):
            raise Unsupported(f"scorer {type(scorer).__name__}")
        matcher, deleted = _postings(reader, q.fieldname, text, scorer)
        idf, k1 = scorer.idf, scorer.K1
        k1_plus_1 = k1 + 1
        denominators = _denominators(subsearcher, reader, q.fieldname, scorer)
        mine = None
        if wanted is not None:
            end = offset + reader.doc_count_all()
            mine = [d - offset for d in wanted if offset <= d < end]
        keep = None
        blocks: Iterable[tuple[Sequence[int], Sequence[float]]]
        if mine is not None and len(mine) * PROBE_COST < reader.doc_frequency(q.fieldname, text):
            found = list(_probe(matcher, mine))  # a few pages: looked up
            blocks = [([d for d, _ in found], [w for _, w in found])] if found else []
        else:
            blocks = _blocks(matcher)
            keep = set(mine) if mine is not None else None
        for ids, weights in blocks:
            if keep is not None or deleted:
                pairs = [(d, w) for d, w in zip(ids, weights) if (keep is None or d in keep) and d not in deleted]
                if not pairs:
                    continue
                ids, weights = zip(*pairs)
            # whoosh.scoring.bm25, written out: the same operations in the same order
            scores = [idf * ((w * k1_plus_1) / (w + denominators[d])) for d, w in zip(ids, weights)]
            if boost != 1.0:
                scores = [score * boost for score in scores]
            if offset:
                ids = [d + offset for d in ids]
            out.update(zip(ids, ([score, 1] for score in scores)))
    return out


_DELETED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # segment reader -> its deleted documents


def _postings(reader, fieldname: str, text: bytes, scorer):
    """A segment's postings of a term, as stored, and the segment's deleted documents.

    ``SegmentReader.postings`` wraps the postings in a ``FilterMatcher`` when the segment
    has deleted documents (until a merge removes them), which hides the blocks and builds
    the set of deleted documents again for every term: the set is kept per reader here (a
    reader is a snapshot) and deleted documents are left out while scoring.
    """
    terms = getattr(reader, "_terms", None)
    perdoc = getattr(reader, "_perdoc", None)
    if terms is None or perdoc is None:
        return reader.postings(fieldname, text, scorer=scorer), frozenset()  # filters deleted documents itself
    return terms.matcher(fieldname, text, reader.schema[fieldname].format, scorer=scorer), _deleted(reader)


def _deleted(reader) -> frozenset[int]:
    """A segment reader's deleted documents, kept per reader."""
    deleted = _DELETED.get(reader)
    if deleted is None:
        deleted = _DELETED[reader] = frozenset(reader._perdoc.deleted_docs()) if reader.has_deletions() else frozenset()
    return deleted


_DENOMINATORS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # reader -> {(field, ...): [..]}


def _denominators(subsearcher, reader, fieldname: str, scorer) -> list[float]:
    """BM25's length part, ``K1 * ((1 - B) + B * length / avgfl)``, for every document of a
    segment (computed as ``whoosh.scoring.bm25`` computes it), kept per reader and
    collection statistics (the average length moves with every commit)."""
    key = (fieldname, scorer.avgfl, scorer.B, scorer.K1)
    per_reader = _DENOMINATORS.setdefault(reader, {})
    found = per_reader.get(key)
    if found is None:
        per_reader.clear()  # an older average length: not asked again
        k1, b, avgfl = scorer.K1, scorer.B, scorer.avgfl
        norm_b = 1 - b
        found = per_reader[key] = [
            k1 * (norm_b + b * length / avgfl) for length in field_lengths(subsearcher, fieldname)
        ]
    return found


def _probe(matcher, docnums: list[int]) -> Iterator[tuple[int, float]]:
    """(docnum, weight) of those of ``docnums`` (sorted, of this segment) the postings hold."""
    for docnum in docnums:
        if not matcher.is_active():
            return
        matcher.skip_to(docnum)
        if matcher.is_active() and matcher.id() == docnum:
            yield docnum, matcher.weight()


def _union(parts: list[Scores]) -> Scores:
    parts = [p for p in parts if p]
    if not parts:
        return {}
    # Summed in the order of the parts (floating-point sums are close to Whoosh's tree, not equal).
    out: Scores = {docnum: list(value) for docnum, value in parts[0].items()}
    for part in parts[1:]:
        _add_into(out, part)
    return out


def _add_into(out: Scores, part: Scores) -> None:
    """Add ``part``'s scores and matching-term counts to ``out``, page by page."""
    for docnum, (score, count) in part.items():
        mine = out.get(docnum)
        if mine is None:
            out[docnum] = [score, count]
        else:
            mine[0] += score
            mine[1] += count


def _intersection(parts: list[Scores]) -> Scores:
    if not parts or any(not p for p in parts):
        return {}
    smallest = min(parts, key=len)
    common = set(smallest)
    for part in parts:
        if part is not smallest:
            common.intersection_update(part)
    out: Scores = {}
    for docnum in common:
        score = 0.0
        count = 0
        for part in parts:
            value = part[docnum]
            score += value[0]
            count += value[1]
        out[docnum] = [score, count]
    return out


def _best(parts: list[Scores]) -> Scores:
    out: Scores = {}
    for part in parts:
        for docnum, (score, count) in part.items():
            mine = out.get(docnum)
            if mine is None:
                out[docnum] = [score, count]
            else:
                if score > mine[0]:
                    mine[0] = score
                mine[1] += count
    return out


def _coordinate(scores: Scores, termcount: int, scale: float) -> None:
    """Whoosh's ``CoordMatcher._sqr``: more of the query's terms on a page, a higher score."""
    factor = (termcount - 1) / termcount
    spread = (termcount - scale) ** 2
    for value in scores.values():
        value[0] = (value[0] + ((value[1] - 1) / spread)) * factor
