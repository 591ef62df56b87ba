"""Claims: every line of a page that carries a source tag, as data, and the tags that rose.

A *claim* is one body line with a source tag (``[stated]`` ``[observed]``
``[inferred]`` ``[suggested]``), or a struck-through history line that had one.
Tags inside code are examples, not claims (``memtui.field.body`` masks them).

The question an auditor asks first is which facts are the agent's own ideas
presented as the user's decisions. A claim is *promoted* when the same claim
(same text after folding case, whitespace, the tag, citations and a trailing
provenance) had a weaker tag in an earlier version: an earlier page of its
supersede chain, a struck line of the same page, the page's previous git
revision, or in a git field any version of any page in the last ``EVER_COMMITS``
commits (the weakest tag it ever had: one more commit, an uncommitted edit or a
move to another page does not hide it). There, a claim is also matched reworded
(``AlikeIndex``, shared with the review of proposals) with the history's claims gone
from their pages. Strength: suggested < inferred < observed < stated.

``page_claims`` reads one page version (cached by content hash: a page is read
for its claims once); ``field_claims`` puts every page's claims in the field's
context (history status, trust, promotions); ``keep_claims`` does it page by page
for the app's analyses, again only where a change can have reached (``CheckMemo``).
They never raise for a bad page.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast

from memtui.field import body as body_mod
from memtui.field.page import PageInfo, decode
from memtui.store import gitrepo, signed_chunks
from memtui.store.files import sha256_bytes
from memtui.store.gc_pause import no_cycle_collection
from memtui.store.schema import schema_version

if TYPE_CHECKING:
    from memtui.field.field import Field
    from memtui.field.history import History

STRENGTH = {"suggested": 0, "inferred": 1, "observed": 2, "stated": 3}
TAGS = tuple(STRENGTH)
CURRENT_LINE = "current"
STRUCK_LINE = "struck"
CACHE_FILE = "claims.bin"  # signed marshal chunks (store.signed_chunks): 323 MB of JSON lines at 100,000 pages before
OLD_CACHE_FILE = "claims.json"
SAVE_CHUNK = 500  # page versions per chunk (one is decoded at a time: 2,000 were 22 MB at 100,000 pages)
MAX_CLAIM_PAGE_BYTES = 2 * 1024 * 1024  # as the page parser's limit
MEMORY_CACHE_LIMIT = 200_000  # page versions kept in memory (content hash -> claims)

_MARKER_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
_STRIKE_RE = re.compile(r"~~(.+?)~~")
_SUPERSEDED_TAIL_RE = re.compile(r"\s*superseded\b.*$", re.IGNORECASE)
_PROVENANCE_RE = re.compile(r"\(([^()]*\d{4}-\d{2}-\d{2}[^()]*)\)[\s.;:,!]*$")
_URL_RE = re.compile(r"https?://[^\s)>\]]+", re.IGNORECASE)
_MD_PATH_RE = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)+[\w.-]+\.md(?:#[\w-]+)?")
_SPACE_RE = re.compile(r"\s+")
_PUNCT_TAIL_RE = re.compile(r"[\s.;:,!]+$")


def cache_schema() -> str:
    """The claims cache's schema version (``store.schema``): what a page's claims are, and the
    code that finds them."""
    return schema_version(LineClaim, code=(__name__, "memtui.field.body"))


class LineClaim(NamedTuple):
    """One claim as a page version states it (no field context). A tuple: cheap to make by the 100,000."""

    line: int
    text: str  # the line without its tag, list marker and strike marks
    tag: str
    struck: bool
    key: str  # how it is compared with other versions
    cites: tuple[int, ...]  # [cite:N] numbers on the line
    sources: tuple[str, ...]  # sources written on the line itself (links, paths, dated provenance)


def _from_lists(items: list[Any]) -> list[LineClaim]:
    """A page's claims from the cache file (200,000 at 10,000 pages: made without a call each);
    ``ValueError`` for anything this module did not write."""
    new = tuple.__new__
    out = []
    for line, text, tag, struck, key, cites, sources in items:
        if tag not in STRENGTH or type(line) is not int or type(text) is not str or type(key) is not str:
            raise ValueError("not a claim")
        if cites or sources:
            if not all(type(c) is int for c in cites) or not all(type(x) is str for x in sources):
                raise ValueError("not a claim")
            out.append(new(LineClaim, (line, text, tag, struck is True, key, tuple(cites), tuple(sources))))
        else:
            out.append(new(LineClaim, (line, text, tag, struck is True, key, (), ())))
    return out


class Claim(NamedTuple):
    """A claim in its field: where, what, how sure, on what evidence, and whether it rose.

    A tuple, like ``LineClaim``: a field of 10,000 pages has 200,000 of them."""

    path: str
    line: int
    text: str
    tag: str
    cited: bool
    citations: list[str]
    line_status: str  # current | struck
    page_status: str  # current | superseded | stale
    trust: str
    promoted_from: str | None = None
    new_citation: bool = False  # when promoted: cites something the weaker version did not
    key: str = ""
    cites: tuple[int, ...] = ()  # [cite:N] numbers written, resolved or not

    @property
    def status(self) -> str:
        """``superseded`` when its line is struck or its page is no longer current; ``unrecorded``
        when its page's format records no status (never shown as current); else ``current``."""
        if self.line_status != CURRENT_LINE or self.page_status in ("superseded", "stale"):
            return "superseded"
        return "unrecorded" if self.page_status == "unrecorded" else "current"

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "text": self.text,
            "tag": self.tag,
            "cited": self.cited,
            "citations": list(self.citations),
            "line_status": self.line_status,
            "page_status": self.page_status,
            "trust": self.trust,
            "promoted_from": self.promoted_from,
        }


# ---------------------------------------------------------------------- one page version


def normalise(text: str) -> str:
    """The claim as compared across versions: no tag, citations, trailing provenance; folded."""
    text = body_mod.TAG_RE.sub(" ", text)
    text = body_mod.CITE_RE.sub(" ", text)
    text = _PROVENANCE_RE.sub(" ", text.rstrip())
    return _PUNCT_TAIL_RE.sub("", _SPACE_RE.sub(" ", text).strip()).casefold()


def _line_sources(text: str) -> tuple[str, ...]:
    """Sources written on the line itself: links, URLs, page paths, a dated provenance "(planning 2026-08-20)"."""
    text = body_mod.TAG_RE.sub("", text).rstrip()
    found = [m.group(2) for m in body_mod.MD_LINK_RE.finditer(text)]
    found += [u for u in _URL_RE.findall(text) if u not in found]
    found += [p for p in _MD_PATH_RE.findall(body_mod.MD_LINK_RE.sub(" ", text)) if p not in found]
    provenance = _PROVENANCE_RE.search(text)
    if provenance:
        found.append(provenance.group(1).strip())
    return tuple(found)


def claims_of_text(text: str, first_line: int = 1) -> list[LineClaim]:
    """The claims of a page body (``first_line``: the file line of its first line)."""
    out: list[LineClaim] = []
    parsed = body_mod.parse_body(text, first_line)
    for line in parsed.lines:
        if not line.tags or line.kind in ("heading", "code", "fence"):
            continue
        raw = line.text
        scan = body_mod.mask_code_spans(raw) if "`" in raw else raw
        struck = line.kind == "struck"
        shown = raw
        if struck:
            inner = _STRIKE_RE.search(raw)
            shown = inner.group(1) if inner else raw
            tags = [t.lower() for t in body_mod.TAG_RE.findall(inner.group(1) if inner else scan)]
            tag = tags[-1] if tags else line.tags[-1]
        else:
            tag = line.tags[-1]
        shown = _MARKER_RE.sub("", shown, count=1)
        shown = _SUPERSEDED_TAIL_RE.sub("", shown) if struck else shown
        clean = _SPACE_RE.sub(" ", body_mod.TAG_RE.sub("", shown)).strip()
        cites = tuple(int(n) for m in body_mod.CITE_RE.finditer(scan) for n in m.group(1).split(","))
        out.append(LineClaim(line.number, clean, tag, struck, normalise(shown), cites, _line_sources(shown)))
    return out


def claims_of_bytes(data: bytes, info: PageInfo | None = None) -> list[LineClaim]:
    """The claims of a page's bytes (its body, after any frontmatter)."""
    if not data or len(data) > MAX_CLAIM_PAGE_BYTES or b"\x00" in data[:8192]:
        return []
    text, _ = decode(data)
    if info is not None and info.sha256 == sha256_bytes(data):
        return claims_of_text(text[info.body_offset :], info.body_line)
    from memtui.field.frontmatter import locate

    fm = locate(text)
    return claims_of_text(text[fm.body_offset :], fm.body_line)


class ClaimCache:
    """Claims by content hash, in memory and in the field's cache folder (``claims.bin``)."""

    def __init__(self) -> None:
        self._by_sha: dict[str, list[LineClaim]] = {}
        self._lock = threading.Lock()
        self._loaded: set[Path] = set()
        self._on_disk: dict[Path, frozenset[str]] = {}  # cache folder -> the page versions its file holds

    def get(self, sha: str) -> list[LineClaim] | None:
        return self._by_sha.get(sha)

    def on_disk(self, cache_dir: Path) -> frozenset[str] | None:
        """The page versions the cache folder's file holds, when known."""
        return self._on_disk.get(cache_dir)

    def put(self, sha: str, claims: list[LineClaim]) -> None:
        with self._lock:
            if len(self._by_sha) > MEMORY_CACHE_LIMIT:
                self._by_sha.clear()
            self._by_sha[sha] = claims

    def load(self, cache_dir: Path | None) -> None:
        """Read the cache file once per process (best effort)."""
        if cache_dir is None or cache_dir in self._loaded:
            return
        self._loaded.add(cache_dir)
        held, entries = self.stream(cache_dir)
        if held is None:
            return
        try:
            with no_cycle_collection():
                for sha, claims in entries:
                    if sha not in self._by_sha:
                        self._by_sha[sha] = claims
        except ValueError:
            return
        self._on_disk[cache_dir] = held

    def stream(self, cache_dir: Path | None) -> tuple[frozenset[str] | None, Iterator[tuple[str, list[LineClaim]]]]:
        """The page versions the cache file holds (None: no usable file) and its entries, read as
        they are iterated and kept nowhere. The iteration raises ``ValueError`` at a damaged chunk."""
        if cache_dir is None:
            return None, iter(())
        try:
            chunks = signed_chunks.read(Path(cache_dir) / CACHE_FILE, {"schema": cache_schema()})
            held = next(chunks, None)
            if type(held) is not list or not all(type(sha) is str for sha in held):
                return None, iter(())
        except signed_chunks.Unusable:
            return None, iter(())
        return frozenset(held), self._entries(chunks)

    @staticmethod
    def _entries(chunks: Iterator[Any]) -> Iterator[tuple[str, list[LineClaim]]]:
        for chunk in chunks:
            try:
                for sha, items in chunk:
                    if type(sha) is str:
                        yield sha, _from_lists(items)
            except TypeError as exc:
                raise ValueError(str(exc)) from None

    def save(self, cache_dir: Path | None, keep: Iterable[str]) -> None:
        """Write the claims of the page versions in ``keep`` unless the file holds exactly those already
        (best effort: the cache is disposable)."""
        if cache_dir is None:
            return
        wanted = frozenset(sha for sha in keep if sha in self._by_sha)
        if self._on_disk.get(cache_dir) == wanted:
            return
        if write_entries(cache_dir, wanted, ((sha, self._by_sha[sha]) for sha in wanted)):
            self._on_disk[cache_dir] = wanted


def write_entries(cache_dir: Path, shas: Iterable[str], entries: Iterable[tuple[str, list[LineClaim]]]) -> bool:
    """Write the cache file: first the page versions it holds (``shas``), then ``entries``, a chunk
    at a time as they come (best effort: False when it could not be written)."""

    def chunks() -> Iterator[list[Any]]:
        yield sorted(shas)
        chunk: list[tuple[str, list[tuple[Any, ...]]]] = []
        for sha, claims in entries:
            chunk.append((sha, [tuple(claim) for claim in claims]))
            if len(chunk) == SAVE_CHUNK:
                yield chunk
                chunk = []
        if chunk:
            yield chunk

    try:
        signed_chunks.write(Path(cache_dir) / CACHE_FILE, {"schema": cache_schema()}, chunks())
    except (OSError, ValueError):
        return False
    try:
        (Path(cache_dir) / OLD_CACHE_FILE).unlink()
    except OSError:
        pass
    return True


CACHE = ClaimCache()


def page_claims(field: Field, path: str) -> list[LineClaim]:
    """The claims of one page of ``field`` as it is now (read once per content hash)."""
    info = field.pages.get(path)
    if info is None or not info.parsed:
        return []
    found = CACHE.get(info.sha256)
    if found is not None:
        return found
    sha, claims = _read_claims(field, path, info)
    if sha is not None:
        CACHE.put(sha, claims)
    return claims


def _read_claims(field: Field, path: str, info: PageInfo) -> tuple[str | None, list[LineClaim]]:
    """The claims of the page's bytes on disk, and those bytes' content hash (None: unreadable)."""
    data = field.page_bytes(path)
    if data is None:
        return None, []
    return sha256_bytes(data), claims_of_bytes(data, info)


# ---------------------------------------------------------------------- alike claims

REWRITE_SIMILARITY = 0.5  # difflib ratio of two claims' words for one to be the other reworded
MAX_POSTINGS = 400  # a word on more claims than this does not make two claims alike (the, a, of ...)
MAX_CANDIDATES = 40  # claims compared word by word with each claim looked up
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_WORDS_RE = re.compile(f"[{_CJK}]|[^\\W{_CJK}]+")


def claim_words(key: str) -> list[str]:
    """The words of a claim's key as the similarity matcher compares them (CJK characters count as words)."""
    return _WORDS_RE.findall(key)


class AlikeIndex:
    """Claims indexed by word, to find the one most like a claim reworded without comparing all pairs.

    Why one implementation: a proposal's removed and added claims (``review.tag_changes``) and a
    git field's claims against those its history held (``_git_ever``) must call the same rewording
    a rewording. Bounded whatever the claims hold: words on more than ``MAX_POSTINGS`` claims are
    not used, and at most ``MAX_CANDIDATES`` candidates per lookup, the most words in common first,
    are compared word by word (``compared`` counts those comparisons).
    """

    def __init__(
        self, words: Sequence[Sequence[str]], skip: Collection[int] = (), max_postings: int = MAX_POSTINGS
    ) -> None:
        self._words = words
        self._max_postings = max_postings
        self._postings: dict[str, list[int]] = defaultdict(list)
        for index, found in enumerate(words):
            if index not in skip:
                for word in set(found):
                    self._postings[word].append(index)
        self._matcher = difflib.SequenceMatcher(None, autojunk=False)
        self.compared = 0

    def __len__(self) -> int:
        return len(self._words)

    def most_alike(
        self,
        mine: Sequence[str],
        taken: Collection[int] = (),
        prefer: Callable[[int], bool] | None = None,
        threshold: float = REWRITE_SIMILARITY,
    ) -> int:
        """The index of the claim most like ``mine`` (-1: none reaches ``threshold``), not one of
        ``taken``; on a tie, one ``prefer`` accepts (a claim moved with its tag, not promoted)."""
        counts: dict[str, int] = {}
        for word in mine:
            counts[word] = counts.get(word, 0) + 1
        shared: dict[int, int] = {}  # candidate -> words in common, at most (a word as often as in mine)
        get = shared.get
        postings, most = self._postings, self._max_postings
        for word, times in counts.items():
            posting = postings.get(word)
            if posting is not None and len(posting) <= most:
                for index in posting:
                    shared[index] = get(index, 0) + times
        # A ratio counts at most the words in common, c: it is at most 2c / (len(mine) + c).
        need = threshold * len(mine) / (2 - threshold)
        found = [(common, index) for index, common in shared.items() if common >= need and index not in taken]
        if not found:
            return -1
        words = self._words
        best, best_ratio = -1, threshold
        matcher = self._matcher
        matcher.set_seq2(mine)
        found.sort(key=lambda pair: (-pair[0], pair[1]))  # the most words in common first, then in order
        for common, index in found[:MAX_CANDIDATES]:
            if 2 * common / (len(mine) + len(words[index])) < best_ratio:
                continue  # cannot reach the best ratio so far
            matcher.set_seq1(words[index])
            self.compared += 1
            ratio = matcher.ratio()
            if ratio > best_ratio or (ratio == best_ratio and best < 0):
                best, best_ratio = index, ratio
            elif ratio == best_ratio and prefer is not None and prefer(index) and not prefer(best):
                best = index
        return best


# ---------------------------------------------------------------------- the field


@dataclass(slots=True)
class Earlier:
    """What a claim said in an earlier version: its weakest tag and its citations then."""

    tag: str
    sources: frozenset[str]


_NOTHING_EARLIER: Mapping[str, Earlier] = {}


def _remember(table: dict[str, Earlier], key: str, tag: str, sources: Iterable[str]) -> None:
    if not key:
        return
    known = table.get(key)
    if known is None or STRENGTH[tag] < STRENGTH[known.tag]:
        table[key] = Earlier(tag, frozenset(sources))


def _sources_of(claim: LineClaim, citation_sources: list[str]) -> list[str]:
    if not claim.cites:
        return list(dict.fromkeys(claim.sources)) if claim.sources else []
    found = [citation_sources[n - 1] for n in claim.cites if 1 <= n <= len(citation_sources)]
    found.extend(s for s in claim.sources if s not in found)
    return found


def field_claims(field: Field, *, git: bool = True) -> list[Claim]:
    """Every claim of the field, with its page's status and trust, and its promotion (if any).

    Computed when asked: a caller that needs them again keeps the list (the app's analysis
    keeps each page's claims in context, ``keep_claims``, and its ``Analysis`` answers the
    screens from them). Callers must not change the claims returned.
    """
    with no_cycle_collection():
        return _field_claims(field, git=git)


def claims_in_page_order(pages: Iterable[str], per_page: Mapping[str, KeptEntry]) -> list[Claim]:
    """The claims ``keep_claims`` put in context, in the order of ``pages``."""
    return [claim for path in pages for claim in (per_page.get(path, _NO_ENTRY)[1] or ())]


_NO_ENTRY = ((), None)


def page_claims_in_context(field: Field, path: str, *, git: bool = True) -> list[Claim]:
    """One page's claims in the field's context."""
    return [claim for claim in field_claims(field, git=git) if claim.path == path]


# What a page's claims were put in context with: its version, the versions of the pages of its
# supersede component when it replaced any (``_ComponentVersions``: one tuple its pages share), its
# status, its trust, the claims of its previous git revision.
ClaimInputs = tuple[PageInfo, tuple["PageInfo | None", ...], str, str, "list[LineClaim] | None"]
# A page's entry in ``KeptClaims``: (inputs, claims in context), or (page version,) and None
# for a page without claims.
KeptEntry = tuple[ClaimInputs, list[Claim]] | tuple[tuple[PageInfo], None]


class MovedPages(Protocol):
    """What ``keep_claims`` reads of ``CheckMemo.moved`` (``check_memo.Moved``; ``check_memo``
    imports this module): the pages that moved since the update ``since``."""

    @property
    def versions(self) -> set[str]: ...

    @property
    def replaces(self) -> set[str]: ...

    @property
    def status(self) -> set[str]: ...

    @property
    def trust(self) -> set[str]: ...

    @property
    def since(self) -> int: ...


class KeptClaims(dict[str, KeptEntry]):
    """Each page's claims in context, kept between the analyses of one field (``CheckMemo.claims``):
    path -> (inputs, claims in context), or (page version,) and None for a page without claims;
    ``head``: the git commit the previous revisions were read from."""

    head: str | None = None
    serial: int | None = None  # the CheckMemo update they follow
    removed: frozenset[str] = frozenset()  # the git history's claims gone from their pages (``_Ever``)


def keep_claims(
    field: Field, per_page: KeptClaims, moved: MovedPages | None = None, serial: int | None = None, *, git: bool = True
) -> set[str] | None:
    """Put the field's claims in context in ``per_page``, again only where it can have changed:
    a page is put in context again when its version, a page it replaced, its previous git
    revision, its status or its trust changed. ``moved`` (``CheckMemo.moved``, of update
    ``serial``) says which pages those can be when ``per_page`` followed the update before;
    else every page is compared (``claims_in_page_order`` lists them). Returns the pages whose claims were put in context again or
    went (None: any may have)."""
    cache_dir: Path | None = getattr(field, "cache_dir", None)
    CACHE.load(cache_dir)
    with no_cycle_collection():
        if moved is not None and (per_page.serial is None or moved.since != per_page.serial):
            moved = None  # the pages kept are from an older update than the one moved compares with
        per_page.serial = serial
        redone = _kept_claims(field, git, per_page, moved)
    _save_when_due(cache_dir, field.pages, moved.versions if moved is not None else None)
    return redone


SAVE_AFTER_S = 60.0  # while pages change, the cache file is written again at most this often ...
SAVE_SHARE = 0.05  # ... unless this share of the page versions is not in it


def _field_claims(field: Field, *, git: bool) -> list[Claim]:
    cache_dir: Path | None = getattr(field, "cache_dir", None)
    CACHE.load(cache_dir)
    history = field.history
    pages = field.pages
    lines: dict[str, list[LineClaim]] = {path: page_claims(field, path) for path in pages}
    previous = _previous_revisions(field, [path for path, claims in lines.items() if claims]) if git else {}
    ever = _git_ever(field) if git else _NO_EVER
    out: list[Claim] = []
    chains = _EarlierVersions(history, pages, lines)
    for path, claims in lines.items():
        if claims:
            out.extend(
                _page_in_context(
                    path,
                    claims,
                    pages[path],
                    chains.get(path),
                    previous.get(path) or [],
                    history.status.get(path, "current"),
                    field.trust(path),
                    ever,
                )
            )
    _save_when_due(cache_dir, pages)
    return out


class _Lines:
    """The claims of any page of a field, by path (``page_claims``), those read this pass kept."""

    def __init__(self, field: Field, read: dict[str, list[LineClaim]]) -> None:
        self._field = field
        self._read = read

    def get(self, path: str, default: list[LineClaim]) -> list[LineClaim]:
        found = self._read.get(path)
        if found is None:
            if path not in self._field.pages:
                return default
            found = self._read[path] = page_claims(self._field, path)
        return found


def _kept_claims(field: Field, git: bool, per_page: KeptClaims, moved: MovedPages | None) -> set[str] | None:
    """``keep_claims``'s pass: only over the pages ``moved`` can have reached, or every page."""
    pages = field.pages
    history = field.history
    head = _git_head(field) if git else None
    ever = _git_ever(field, head) if head is not None else _NO_EVER
    # A new HEAD: every page's previous revision, and the tags its claims ever had, may be others.
    # Claims of the history gone from their pages since the last pass: a page left as it was may
    # now hold one of them reworded (its page emptied after the claim was written elsewhere).
    new_head = head != per_page.head or ever.removed != per_page.removed
    if new_head:
        moved = None
        per_page.head = head
        per_page.removed = ever.removed
    if moved is None:
        for gone in [path for path in per_page if path not in pages]:
            del per_page[gone]
        visit: Iterable[str] = pages
        redone: set[str] | None = None
    else:
        for gone in moved.versions:
            if gone not in pages:
                per_page.pop(gone, None)
        # A page is put in context with the claims of the pages it (transitively) replaced.
        seeds = moved.versions | moved.replaces
        reach = set(seeds)
        todo = list(seeds)
        replaced_by = history.replaced_by
        while todo:
            for newer in replaced_by.get(todo.pop(), ()):
                if newer not in reach:
                    reach.add(newer)
                    todo.append(newer)
        reach |= moved.status
        reach |= moved.trust
        visit = [path for path in reach if path in pages]
        redone = {path for path in moved.versions if path not in pages}
    status_of = history.status
    replaces = history.replaces
    read: dict[str, list[LineClaim]] = {}
    with_claims: list[str] = []
    for path in visit:
        info = pages[path]
        held = per_page.get(path)
        if held is None or held[0][0] is not info:
            claims = read[path] = page_claims(field, path)
            if not claims:
                if held is not None and held[1] is not None and redone is not None:
                    redone.add(path)
                per_page[path] = ((info,), None)
                continue
            per_page.pop(path, None)
        elif held[1] is None:
            continue
        with_claims.append(path)
    previous = _previous_revisions(field, with_claims, head) if head is not None else {}
    lines = _Lines(field, read)
    chains = _EarlierVersions(history, pages, lines)
    versions = _ComponentVersions(history, pages)
    trust_of = field.trust
    for path in with_claims:
        held = per_page.get(path)
        status = status_of.get(path, "current")
        trust = trust_of(path)
        before = previous.get(path)
        if held is not None:
            # (a page in with_claims was either put in context afresh or kept with its claims' inputs)
            inputs = cast(ClaimInputs, held[0])
            if (
                not new_head
                and inputs[2] == status
                and inputs[3] == trust
                and inputs[4] is before
                and (not replaces.get(path) and not inputs[1] or versions.same(inputs[1], versions.of(path)))
            ):
                continue
        info = pages[path]
        mine = _page_in_context(path, lines.get(path, []), info, chains.get(path), before or [], status, trust, ever)
        per_page[path] = ((info, versions.of(path), status, trust, before), mine)
        if redone is not None:
            redone.add(path)
    return redone


class _ComponentVersions:
    """The versions of every page of a page's supersede component: one tuple per component and
    pass, shared by its pages, and compared with the one kept once per component.

    Why (issue 40, hazard 16): a tuple of each page's transitive predecessors, made and compared
    page by page, was O(n^2) time and memory on an n-version chain (1.5 s and 4.5 million
    references at 3,000 versions, on every analysis). A change anywhere in the component puts
    its pages in context again: more than needed for the pages before the change, never less.
    """

    def __init__(self, history: History, pages: Mapping[str, PageInfo]) -> None:
        self._history = history
        self._pages = pages
        self._of: dict[str, tuple[PageInfo | None, ...]] = {}
        self._same: dict[tuple[int, int], bool] = {}
        self._compared: list[tuple[PageInfo | None, ...]] = []  # keeps the ids in ``_same`` valid

    def of(self, path: str) -> tuple[PageInfo | None, ...]:
        if not self._history.replaces.get(path):
            return ()
        found = self._of.get(path)
        if found is None:
            nodes = sorted(self._history.component(path))
            found = tuple(self._pages.get(node) for node in nodes)
            for node in nodes:
                self._of[node] = found
        return found

    def same(self, held: tuple[PageInfo | None, ...], now: tuple[PageInfo | None, ...]) -> bool:
        """Page versions compared by identity (a field's summaries are shared while unchanged)."""
        if held is now:
            return True
        key = (id(held), id(now))
        known = self._same.get(key)
        if known is None:
            known = self._same[key] = len(held) == len(now) and all(a is b for a, b in zip(held, now))
            self._compared.append(held)
        return known


def each_page_in_context(field: Field, visit: Callable[[list[Claim]], None], *, git: bool = True) -> None:
    """Call ``visit`` with each page's claims in context (pages without claims are skipped), in no
    particular order, keeping none of them: what ``memtui check`` needs, in memory for one page.

    The claims come from the cache file, read as a stream, or from the page's bytes when the file
    lacks its version. When it lacks any (or holds many versions no page has now), it is written
    again as the pass goes. ``field_claims`` instead keeps the whole list for the screens that
    show it; both put a page in context the same way.
    """
    cache_dir: Path | None = getattr(field, "cache_dir", None)
    pages = field.pages
    history = field.history
    # Each version's first page, and the rest only where several pages hold the same bytes: a
    # list per page was 14 MB at 100,000 pages.
    first_path: dict[str, str] = {}
    more_paths: dict[str, list[str]] = {}
    for path, info in pages.items():
        if info.parsed:
            if first_path.setdefault(info.sha256, path) is not path:
                more_paths.setdefault(info.sha256, []).append(path)
    held, on_disk = CACHE.stream(cache_dir)
    # every version when there is no file (its keys, not a copy: 100,000 hashes in a set were 4 MB)
    missing = first_path.keys() if held is None else {sha for sha in first_path if sha not in held}
    extra = len(held - first_path.keys()) if held is not None else 0
    listed = held is not None
    del held  # 100,000 hashes: the pass needs only what is missing
    previous = (
        _previous_revisions(field, [p for p, i in pages.items() if i.parsed and any(i.tag_counts.values())])
        if git
        else {}
    )
    chains = _EarlierVersions(history, pages, _OlderClaims(field))
    ever = _git_ever(field) if git else _NO_EVER

    unsound: list[bool] = []

    def entries() -> Iterator[tuple[str, list[LineClaim]]]:
        left = set(first_path)  # the field's own hash strings, not the file's copies
        try:
            for sha, claims in on_disk:
                if sha in left:
                    left.discard(sha)
                    yield sha, claims
        except ValueError:
            unsound.append(True)  # a damaged chunk: the rest is read from the pages
        if listed and any(sha not in missing for sha in left):
            unsound.append(True)  # listed without an entry
        for sha, path in first_path.items():
            if sha in left:
                found = CACHE.get(sha)
                if found is None:
                    read_sha, found = _read_claims(field, path, pages[path])
                    if read_sha != sha:
                        continue  # changed since it was summarised: not this version's claims
                yield sha, found

    def in_context() -> Iterator[tuple[str, list[LineClaim]]]:
        for sha, claims in entries():
            if claims:
                for path in (first_path[sha], *more_paths.get(sha, ())):
                    visit(
                        _page_in_context(
                            path,
                            claims,
                            pages[path],
                            chains.get(path),
                            previous.get(path) or [],
                            history.status.get(path, "current"),
                            field.trust(path),
                            ever,
                        )
                    )
            yield sha, claims

    with no_cycle_collection():
        stream = in_context()
        if cache_dir is not None and (missing or extra > SAVE_SHARE * len(first_path)):
            # The versions listed are those of the summaries; one changed on disk since is listed but
            # has no entry (read from its page next time, as any version the file lacks).
            write_entries(cache_dir, first_path, stream)
        for _ in stream:  # what is left when the file could not be written (or was not due)
            pass
    if unsound and not missing and cache_dir is not None:  # (unsound only when there is a file)
        with contextlib.suppress(OSError):
            (Path(cache_dir) / CACHE_FILE).unlink()  # the next pass writes it whole


class _OlderClaims:
    """The claims of pages a page replaced, read when asked (a few per page, kept for a while)."""

    KEEP = 500  # pages' claims (2,000 held 20 MB at 100,000 pages)

    def __init__(self, field: Field) -> None:
        self._field = field
        self._held: dict[str, list[LineClaim]] = {}

    def get(self, path: str, default: list[LineClaim]) -> list[LineClaim]:
        info = self._field.pages.get(path)
        if info is None or not info.parsed:
            return default
        found = CACHE.get(info.sha256)
        if found is None:
            found = self._held.get(info.sha256)
        if found is None:
            sha, found = _read_claims(self._field, path, info)
            if len(self._held) >= self.KEEP:
                self._held.clear()
            self._held[info.sha256] = found
        return found


class ClaimsByPath(Protocol):
    """The claims of a field's pages by path: a dict, or one that reads them when asked."""

    def get(self, path: str, default: list[LineClaim], /) -> list[LineClaim]: ...


class _EarlierVersions:
    """For each page: what each of its claims said on the pages it (transitively) replaced, the
    weakest tag (the nearest version's on a tie) and its citations then.

    A supersede component is walked once, when its first page is asked (``History.walk_older``),
    reading each page's claims once; each page keeps only the entries of its own claims until it
    is asked. A 1,000-version chain read every predecessor again for every version: 500,000
    page reads, 35 s of ``memtui check``; now a chain costs O(n).
    """

    def __init__(self, history: History, pages: Mapping[str, PageInfo], lines: ClaimsByPath) -> None:
        self._history = history
        self._pages = pages
        self._lines = lines
        self._answers: dict[str, Mapping[str, Earlier]] = {}
        self._walked: set[str] = set()

    def get(self, path: str) -> Mapping[str, Earlier]:
        if not self._history.replaces.get(path):
            return _NOTHING_EARLIER
        found = self._answers.pop(path, None)
        if found is None:
            if path in self._walked:  # asked twice: walk again (never happens in one pass)
                self._walked.difference_update(self._history.component(path))
            self._walk(path)
            found = self._answers.pop(path, None)
        return found if found is not None else _NOTHING_EARLIER

    def _walk(self, path: str) -> None:
        pages = self._pages
        held: dict[str, list[LineClaim]] = {}  # the component's claims, for this walk only

        def claims_of(page: str) -> list[LineClaim]:
            found = held.get(page)
            if found is None:
                found = held[page] = self._lines.get(page, [])
            return found

        def add(older: str, table: dict[str, Any]) -> None:
            info = pages.get(older)
            sources = info.citation_sources if info else []
            for claim in claims_of(older):
                key, tag = claim.key, claim.tag
                if key:
                    known = table.get(key)
                    if known is None or STRENGTH[tag] <= STRENGTH[known.tag]:  # (farther versions come first)
                        table[key] = Earlier(tag, frozenset(_sources_of(claim, sources)))

        def take(page: str, table: dict[str, Any]) -> None:
            if page in self._walked:
                return
            mine = {key: table[key] for key in {claim.key for claim in claims_of(page)} if key in table}
            self._answers[page] = mine if mine else _NOTHING_EARLIER  # (a page asked for twice: walked again)

        self._walked |= self._history.walk_older(path, add, take)


def _page_in_context(
    path: str,
    claims: list[LineClaim],
    info: PageInfo,
    older: Mapping[str, Earlier],
    before: list[LineClaim],
    status: str,
    trust: str,
    ever: _Ever | None = None,
) -> list[Claim]:
    """``older``: what this page's claims said on the pages it replaced (``_EarlierVersions``);
    ``before``: its previous git revision's; ``ever``: the weakest tag each claim had in the git
    history, on any page, by the same text or reworded (``_git_ever``)."""
    citation_sources = info.citation_sources
    earlier: dict[str, Earlier] = {}
    for claim in claims:
        if claim.struck:
            _remember(earlier, claim.key, claim.tag, _sources_of(claim, citation_sources))
    for key, then in older.items():
        known = earlier.get(key)
        if known is None or STRENGTH[then.tag] < STRENGTH[known.tag]:
            earlier[key] = then
    for claim in before:
        _remember(earlier, claim.key, claim.tag, claim.sources)
    if ever:
        for claim in claims:
            had = ever.get(claim.key)
            known = earlier.get(claim.key)
            if had is not None and (known is None or STRENGTH[had.tag] < STRENGTH[known.tag]):
                earlier[claim.key] = known = had
            if not claim.struck and (known is None or STRENGTH[known.tag] >= STRENGTH[claim.tag]):
                reworded = ever.alike(claim.key, claim.tag)  # moved or rewritten in a commit, reworded
                if reworded is not None:
                    earlier[claim.key] = reworded
    out: list[Claim] = []
    append = out.append
    new = tuple.__new__
    for claim in claims:  # the hot loop (200,000 claims at 10,000 pages): no calls when it can
        line, text, tag, struck, key, cites, own = claim
        sources = _sources_of(claim, citation_sources) if cites or own else []
        promoted_from, new_citation = None, False
        if earlier and not struck:
            weaker = earlier.get(key)
            if weaker is not None and STRENGTH[weaker.tag] < STRENGTH[tag]:
                promoted_from, new_citation = weaker.tag, bool(set(sources) - weaker.sources)
        append(
            new(
                Claim,
                (
                    path,
                    line,
                    text,
                    tag,
                    bool(sources),
                    sources,
                    STRUCK_LINE if struck else CURRENT_LINE,
                    status,
                    trust,
                    promoted_from,
                    new_citation,
                    key,
                    cites,
                ),
            )
        )
    return out


_LAST_SAVE: dict[str, float] = {}  # cache folder -> when its claims file was last written
# cache folder -> (the versions its file held, how many of the field's were missing from it then)
_MISSING: dict[str, tuple[frozenset[str], int]] = {}


def _save_when_due(cache_dir: Path | None, pages: Mapping[str, PageInfo], changed: Iterable[str] | None = None) -> None:
    """Write the claims cache file when many page versions are missing from it, or a while
    after the last write (200,000 claims are 0.6 s of JSON: not after every change).
    ``changed``: the pages added or changed since the last call, when known: the count of
    missing versions is then brought up to date from them (it may count a version twice:
    the file is then written a little sooner), not from every page."""
    if cache_dir is None:
        return
    key = str(cache_dir)
    held = CACHE.on_disk(cache_dir)
    if held is not None:
        counted = _MISSING.get(key)
        if changed is not None and counted is not None and counted[0] is held:
            missing = counted[1] + sum(1 for path in changed if path in pages and pages[path].sha256 not in held)
        else:
            missing = sum(1 for info in pages.values() if info.sha256 not in held)
        _MISSING[key] = (held, missing)
        if missing <= SAVE_SHARE * len(pages) and time.monotonic() - _LAST_SAVE.get(key, 0.0) < SAVE_AFTER_S:
            return
    CACHE.save(cache_dir, (info.sha256 for info in pages.values()))
    _MISSING.pop(key, None)
    _LAST_SAVE[key] = time.monotonic()


# (field root, HEAD commit) -> path -> (content hash on disk, claims of the previous revision)
_GIT_MEMO: dict[tuple[str, str], dict[str, tuple[str, list[LineClaim]]]] = {}


def _git_head(field: Field) -> str | None:
    """The HEAD commit of a git field (None: not a git field, no commit yet, or git failed)."""
    try:
        if not gitrepo.is_field_repo(field.root):
            return None
        return gitrepo.head(field.root)
    except gitrepo.GitError:
        return None


EVER_COMMITS = 200  # commits on HEAD looked at for the tags a claim ever had ...
EVER_VERSIONS = 2000  # ... and at most this many page versions of them
EVER_ALIKE = 5000  # claims gone from their page (newest first) a claim is compared with, reworded
EVER_SIMILARITY = 0.6  # stricter than a proposal's hunks: the history is wider, its claims unrelated more often
EVER_PLACES = 8  # pages remembered per claim of the history
# A word on more of those claims than this does not make two claims alike: every claim of a
# field is looked up (200,000 at 10,000 pages), and counting the claims of its every word was
# 60 us a claim with 1,500 claims gone.
EVER_POSTINGS = 50


class _Ever:
    """What a git field's history says of its claims, against the pages as they are now.

    ``get``: the weakest tag a claim (the same key) had in any version of any page. ``alike``: the
    weakest tag of the claim most like it, reworded (``AlikeIndex``, ``EVER_SIMILARITY``), among the
    claims of the history that no page they were on holds now: a claim moved to another page (or
    rewritten in place) with a stronger tag. Only claims gone from their pages are candidates, so
    a ``[stated]`` claim is never "promoted" from a ``[suggested]`` one that is still there beside
    it, sharing words. ``removed``: the gone claims with a tag weaker than ``stated`` (the kept
    claims of ``keep_claims`` are put in context again when it changes)."""

    __slots__ = ("_index", "_keys", "_position", "_table", "_weakest", "removed")

    def __init__(self, table: Mapping[str, Earlier], gone: list[str]) -> None:
        self._table = table
        self._keys = gone
        self._position = {key: index for index, key in enumerate(gone)}
        self._index = AlikeIndex([claim_words(key) for key in gone], max_postings=EVER_POSTINGS)
        self._weakest = min((STRENGTH[table[key].tag] for key in gone), default=STRENGTH["stated"])
        self.removed = frozenset(key for key in gone if table[key].tag != "stated")

    def __bool__(self) -> bool:
        return bool(self._table)

    @property
    def indexed(self) -> int:
        """How many claims of the history a claim is compared with (at most ``EVER_ALIKE``)."""
        return len(self._keys)

    @property
    def compared(self) -> int:
        """Word-by-word comparisons made so far (at most ``MAX_CANDIDATES`` per lookup)."""
        return self._index.compared

    def get(self, key: str) -> Earlier | None:
        return self._table.get(key)

    def alike(self, key: str, tag: str) -> Earlier | None:
        """The weaker version of a claim tagged ``tag`` that the history holds reworded, if any."""
        if STRENGTH[tag] <= self._weakest:
            return None  # (also: nothing gone from its page)
        mine = claim_words(key)
        if not mine:
            return None
        own = self._position.get(key)
        keys, table = self._keys, self._table
        best = self._index.most_alike(
            mine,
            () if own is None else (own,),
            lambda index: table[keys[index]].tag == tag,  # on a tie, the version with its tag: no promotion
            EVER_SIMILARITY,
        )
        if best < 0:
            return None
        had = table[keys[best]]
        return had if STRENGTH[had.tag] < STRENGTH[tag] else None


_NO_EVER = _Ever({}, [])


class _EverHistory:
    """The claims of a git field's recent history (one HEAD): the weakest tag of each, and the pages
    it was on; ``now`` sets them against the pages as they are (remembered while those pages stay)."""

    def __init__(self, table: dict[str, Earlier], places: dict[str, list[str]]) -> None:
        self._table = table
        self._places = places
        self._paths = tuple(sorted({path for paths in places.values() for path in paths}))
        self._now: tuple[tuple[str, ...], _Ever] | None = None

    def now(self, field: Field) -> _Ever:
        pages = field.pages
        versions = tuple(pages[path].sha256 if path in pages else "" for path in self._paths)
        if self._now is not None and self._now[0] == versions:
            return self._now[1]
        held = {
            path: {claim.key for claim in page_claims(field, path) if not claim.struck}
            for path, sha in zip(self._paths, versions)
            if sha
        }
        gone: list[str] = []
        for key, paths in self._places.items():  # newest first
            if not any(key in held.get(path, ()) for path in paths):
                gone.append(key)
                if len(gone) >= EVER_ALIKE:
                    break
        ever = _Ever(self._table, gone)
        self._now = (versions, ever)
        return ever


# (field root, HEAD commit) -> the claims of the recent history
_EVER_MEMO: dict[tuple[str, str], _EverHistory] = {}


def _git_ever(field: Field, head: str | None = None) -> _Ever:
    """For a git field: the weakest tag each claim had in any version of any page (not under
    ``sessions/``: transcripts are evidence) in the last ``EVER_COMMITS`` commits on HEAD, by the
    same text or reworded (``_Ever``).

    Why (issue 40, hazard 10): with the previous revision alone, one more commit after a
    promotion, or an uncommitted edit, forgot it, and a claim moved to another page in a commit
    was never seen; matched by the same text only, a claim reworded as it moved was not either.
    Remembered per HEAD commit: three git commands when HEAD moves."""
    if head is None:
        head = _git_head(field)
        if head is None:
            return _NO_EVER
    memo_key = (os.fspath(field.root), head)
    found = _EVER_MEMO.get(memo_key)
    if found is not None:
        return found.now(field)
    try:
        blobs = gitrepo.recent_page_blobs(
            field.root, commits=EVER_COMMITS, max_blobs=EVER_VERSIONS, max_bytes=MAX_CLAIM_PAGE_BYTES
        )
    except gitrepo.GitError:
        return _NO_EVER
    table: dict[str, Earlier] = {}
    places: dict[str, list[str]] = {}
    for path, data in blobs:
        if path.startswith("sessions/"):
            continue
        sha = sha256_bytes(data)
        claims = CACHE.get(sha)
        if claims is None:
            claims = claims_of_bytes(data)
            CACHE.put(sha, claims)
        for claim in claims:
            _remember(table, claim.key, claim.tag, claim.sources)
            if claim.key:
                where = places.setdefault(claim.key, [])
                if path not in where and len(where) < EVER_PLACES:
                    where.append(path)
    if len(_EVER_MEMO) > 8:
        _EVER_MEMO.clear()
    history = _EVER_MEMO[memo_key] = _EverHistory(table, places)
    return history.now(field)


def _previous_revisions(
    field: Field, with_claims: Iterable[str], head: str | None = None
) -> dict[str, list[LineClaim]]:
    """For a git field: the claims of each page of ``with_claims`` in its previous revision (the one
    before the version on disk). ``head``: the field's HEAD commit, when the caller asked already.

    Remembered per HEAD commit and page version, so only pages that changed are asked of git again.
    """
    pages = field.pages
    if head is None:
        head = _git_head(field)
        if head is None:
            return {}
    wanted = {path: pages[path].sha256 for path in with_claims if path in pages}
    if not wanted:
        return {}
    memo = _GIT_MEMO.setdefault((os.fspath(field.root), head), {})
    if len(_GIT_MEMO) > 8:
        _GIT_MEMO.clear()
        memo = _GIT_MEMO.setdefault((os.fspath(field.root), head), {})
    ask = {path: sha for path, sha in wanted.items() if memo.get(path, ("",))[0] != sha}
    try:
        blobs = gitrepo.previous_blobs(field.root, ask) if ask else {}
    except gitrepo.GitError:
        return {}
    for path, sha in ask.items():
        data = blobs.get(path)
        if data is None:
            memo[path] = (sha, [])
            continue
        old_sha = sha256_bytes(data)
        claims = CACHE.get(old_sha)
        if claims is None:
            claims = claims_of_bytes(data)
            CACHE.put(old_sha, claims)
        memo[path] = (sha, claims)
    return {path: memo[path][1] for path in wanted if path in memo and memo[path][1]}


# ---------------------------------------------------------------------- filters


def select(
    claims: Iterable[Claim],
    *,
    query: str = "",
    tags: Iterable[str] = (),
    status: str | None = None,
    uncited: bool = False,
    promoted: bool = False,
    path_glob: str | None = None,
) -> list[Claim]:
    """The claims that pass every given filter (all words of ``query`` in the text, any of ``tags``)."""
    import fnmatch

    words = [w.casefold() for w in query.split()]
    wanted_tags = {t.lower() for t in tags}
    out = []
    for claim in claims:
        if wanted_tags and claim.tag not in wanted_tags:
            continue
        if status is not None and claim.status != status:
            continue
        if uncited and claim.cited:
            continue
        if promoted and claim.promoted_from is None:
            continue
        if path_glob and not fnmatch.fnmatchcase(claim.path, path_glob):
            continue
        if words:
            folded = claim.text.casefold()
            if not all(w in folded for w in words):
                continue
        out.append(claim)
    return out
