"""Source tags a proposal changes: which claim lines go from one tag to another, and which rise.

A maintenance job that rewrites ``- Use Redis for the queue [suggested]`` as
``- We use Redis for the queue [stated]`` has laundered its own idea into the
user's decision. ``tag_changes(path, before, after)`` compares the claims
(``memtui.field.claims``) of two versions of a page:

1. claims with the same text after ``claims.normalise`` are matched first; equal
   tags cancel out, what is left of each text pairs in order;
2. the claims left over on removed lines pair, in order, with those left over on
   added lines of the same diff hunk (a line rewritten along with its tag) when
   their words are alike (``REWRITE_SIMILARITY`` of the words in common; CJK
   characters count as words): a hunk that replaces one claim by an unrelated one
   is a new claim, not a tag change;
3. what is left over on every page of a proposal is matched across its hunks and
   pages (``proposal_tag_changes``), by the same text, then by alike words: a
   claim a consolidation moves to another page (or further down the same one),
   reworded, with a stronger tag is a promotion too (``from_path`` names where it was);
4. what is still left is matched against claims outside the proposal (what other
   pending proposals remove, what approved ones retired or rewrote): laundering
   split over two proposals is a promotion of the one that adds the stronger tag
   (``via`` names the other proposal).

Only current lines count (a struck line keeps the tag it had). A pair whose tags
differ is a ``TagChange``; it is a *promotion* when the new tag is stronger
(suggested < inferred < observed < stated). ``line`` is 1-based in the version
after.
"""

from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from memtui.field.claims import (
    REWRITE_SIMILARITY,
    STRENGTH,
    AlikeIndex,
    LineClaim,
    claim_words,
    claims_of_bytes,
)
from memtui.review.diffs import CONTEXT_LINES


@dataclass(frozen=True, slots=True)
class TagChange:
    path: str
    line: int  # in the version after (1-based)
    old_line: int  # in the version before
    before: str
    after: str
    text: str  # the claim's text after
    from_path: str = ""  # the page it had the old tag on, when the proposal moved it ("": this one)
    via: str = ""  # the old tag is outside this proposal: "proposal <id>" (pending) or "approved <id>"

    @property
    def promotion(self) -> bool:
        return STRENGTH[self.after] > STRENGTH[self.before]

    def to_json(self) -> dict[str, Any]:
        out = {"path": self.path, "line": self.line, "from": self.before, "to": self.after, "promotion": self.promotion}
        if self.from_path and self.from_path != self.path:
            out.update(from_path=self.from_path, from_line=self.old_line)  # moved here from another page
        if self.via:
            out["via"] = self.via
        return out


def _lines(data: bytes) -> list[str]:
    """The page's lines as the claims number them (BOM kept off, CR of CRLF dropped)."""
    text = data.decode("utf-8", "surrogateescape")
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def _hunks(old: list[str], new: list[str]) -> tuple[dict[int, int], dict[int, int]]:
    """For each removed (old) and added (new) 1-based line: the number of its diff hunk."""
    removed: dict[int, int] = {}
    added: dict[int, int] = {}
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for number, group in enumerate(matcher.get_grouped_opcodes(CONTEXT_LINES)):
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                continue
            for index in range(a1, a2):
                removed[index + 1] = number
            for index in range(b1, b2):
                added[index + 1] = number
    return removed, added


def _words(claim: LineClaim) -> list[str]:
    return claim_words(claim.key)


def _rewrites(olds: list[LineClaim], news: list[LineClaim]) -> list[tuple[LineClaim, LineClaim]]:
    """Old and new claims of one hunk paired in order, each with the most alike new one still ahead."""
    pairs = []
    start = 0
    new_words = [_words(claim) for claim in news]
    for old in olds:
        if start >= len(news):
            break
        matcher = difflib.SequenceMatcher(None, autojunk=False)
        matcher.set_seq2(_words(old))
        best, best_ratio = -1, REWRITE_SIMILARITY
        for index in range(start, len(news)):
            matcher.set_seq1(new_words[index])
            ratio = matcher.ratio()
            if ratio >= best_ratio and (best < 0 or ratio > best_ratio):
                best, best_ratio = index, ratio
        if best >= 0:
            pairs.append((old, news[best]))
            start = best + 1
    return pairs


def _pair(before: bytes, after: bytes, old: list[LineClaim], new: list[LineClaim]):
    """Claims of two versions of one page paired; also the claims of each side left unpaired."""
    pairs: list[tuple[LineClaim, LineClaim]] = []
    old_by_key: dict[str, list[LineClaim]] = defaultdict(list)
    for claim in old:
        if claim.key:
            old_by_key[claim.key].append(claim)
    used_old: set[int] = set()
    used_new: set[int] = set()
    new_by_key: dict[str, list[LineClaim]] = defaultdict(list)
    for claim in new:
        if claim.key in old_by_key:
            new_by_key[claim.key].append(claim)
    for key, news in new_by_key.items():
        olds = old_by_key[key]
        left_old = list(olds)
        left_new = []
        for claim in news:  # the same tag on both sides: nothing changed for this one
            twin = next((o for o in left_old if o.tag == claim.tag), None)
            if twin is None:
                left_new.append(claim)
            else:
                left_old.remove(twin)
                used_old.add(twin.line)
                used_new.add(claim.line)
        for o, n in zip(left_old, left_new):
            pairs.append((o, n))
            used_old.add(o.line)
            used_new.add(n.line)
    rest_old = [c for c in old if c.line not in used_old]
    rest_new = [c for c in new if c.line not in used_new]
    if rest_old and rest_new:
        removed, added = _hunks(_lines(before), _lines(after))
        by_hunk_old: dict[int, list[LineClaim]] = defaultdict(list)
        for claim in rest_old:
            if claim.line in removed:
                by_hunk_old[removed[claim.line]].append(claim)
        by_hunk_new: dict[int, list[LineClaim]] = defaultdict(list)
        for claim in rest_new:
            if claim.line in added:
                by_hunk_new[added[claim.line]].append(claim)
        for hunk, olds in by_hunk_old.items():
            pairs.extend(_rewrites(olds, by_hunk_new.get(hunk, [])))
        paired_old = {o.line for o, _ in pairs}
        paired_new = {n.line for _, n in pairs}
        rest_old = [c for c in rest_old if c.line not in paired_old]
        rest_new = [c for c in rest_new if c.line not in paired_new]
    return pairs, rest_old, rest_new


def _current_claims(data: bytes | None) -> list[LineClaim]:
    return [c for c in claims_of_bytes(data) if not c.struck] if data else []


def tag_changes(path: str, before: bytes | None, after: bytes | None) -> list[TagChange]:
    """Every claim of ``path`` whose tag differs between ``before`` and ``after``, by line after."""
    return proposal_tag_changes([(path, before, after)])


def proposal_tag_changes(
    versions: list[tuple[str, bytes | None, bytes | None]],
    outside: Sequence[tuple[str, str, LineClaim]] = (),
) -> list[TagChange]:
    """The tag changes of every page a proposal touches (``(path, before, after)``; None: the
    page is created or retired), also of a claim it moves from one page (or hunk) to another: a
    consolidation that retires a page holding ``- Use Redis [suggested]`` and writes ``- We use
    Redis [stated]`` into another has promoted it.

    After every page's own claims are paired, what is left is matched across hunks and pages:
    first by the same text (``claims.normalise``), then by alike words (``REWRITE_SIMILARITY``).
    What is still left is matched against ``outside``: ``(path, via, claim)`` versions of claims
    the field held before, outside this proposal (what another pending proposal removes, a page an
    approved proposal retired or rewrote): a job that splits the laundering over two proposals
    (one retires the draft, the other adds the ``[stated]`` line) is caught there; only a
    promotion is reported from those (``via`` names where the weaker version is).
    """
    changes: list[TagChange] = []
    left_old: list[tuple[str, LineClaim]] = []
    left_new: list[tuple[str, LineClaim]] = []
    for path, before, after in versions:
        if before == after:
            continue
        old, new = _current_claims(before), _current_claims(after)
        if old and new and before and after:  # (claims only come from bytes)
            pairs, rest_old, rest_new = _pair(before, after, old, new)
        else:
            pairs, rest_old, rest_new = [], old, new
        changes.extend(TagChange(path, n.line, o.line, o.tag, n.tag, n.text) for o, n in pairs if o.tag != n.tag)
        left_old.extend((path, claim) for claim in rest_old if claim.key)
        left_new.extend((path, claim) for claim in rest_new if claim.key)
    pairs, left = _match_anywhere(left_old, left_new)
    for (old_path, was), (path, now) in pairs:
        if was.tag != now.tag:
            changes.append(TagChange(path, now.line, was.line, was.tag, now.tag, now.text, from_path=old_path))
    if outside and left:
        before_here = [((path, via), claim) for path, via, claim in outside if claim.key]
        for ((old_path, via), was), (path, now) in _match_anywhere(before_here, left)[0]:
            if STRENGTH[now.tag] > STRENGTH[was.tag]:
                changes.append(
                    TagChange(path, now.line, was.line, was.tag, now.tag, now.text, from_path=old_path, via=via)
                )
    return sorted(changes, key=lambda c: (c.path, c.line))


Item = TypeVar("Item")


def _with_tag(olds: Sequence[tuple[Any, LineClaim]], tag: str) -> Callable[[int], bool]:
    """Whether a removed claim had ``tag`` (on a tie, the one moved as it was: no promotion)."""
    return lambda index: olds[index][1].tag == tag


def _match_anywhere(
    olds: list[tuple[Item, LineClaim]], news: list[tuple[str, LineClaim]]
) -> tuple[list[tuple[tuple[Item, LineClaim], tuple[str, LineClaim]]], list[tuple[str, LineClaim]]]:
    """Removed and added claims paired wherever they are (another hunk, another page): by the same
    text first (one with the same tag preferred: a claim moved as it was), then by the most alike
    words. Returns the pairs and the added claims left unpaired.

    Bounded for a hostile proposal of 10,000 claims: candidates come from an index of the words
    they share (``claims.AlikeIndex``, the matcher a git field's history is searched with too)."""
    pairs: list[tuple[tuple[Item, LineClaim], tuple[str, LineClaim]]] = []
    by_key: dict[str, list[int]] = defaultdict(list)
    for index, (_, claim) in enumerate(olds):
        by_key[claim.key].append(index)
    used: set[int] = set()
    rest: list[tuple[str, LineClaim]] = []
    for item in news:
        same = [i for i in by_key.get(item[1].key, ()) if i not in used]
        if not same:
            rest.append(item)
            continue
        # The same tag somewhere: a claim moved as it was; else the first version it had.
        pick = next((i for i in same if olds[i][1].tag == item[1].tag), same[0])
        used.add(pick)
        pairs.append((olds[pick], item))
    if not rest or len(used) == len(olds):
        return pairs, rest
    alike = AlikeIndex([_words(claim) for _, claim in olds], skip=used)
    left: list[tuple[str, LineClaim]] = []
    for item in rest:
        best = alike.most_alike(_words(item[1]), used, _with_tag(olds, item[1].tag))
        if best < 0:
            left.append(item)
        else:
            used.add(best)
            pairs.append((olds[best], item))
    return pairs, left


def removed_claims(versions: list[tuple[str, bytes | None, bytes | None]]) -> list[tuple[str, LineClaim]]:
    """The claims a proposal takes out of the field: on a page it retires, or gone from a page it
    rewrites with their text nowhere in what it writes (what ``proposal_tag_changes`` matches
    another proposal's added claims against)."""
    kept = {claim.key for _, _, after in versions for claim in _current_claims(after)}
    return [
        (path, claim)
        for path, before, after in versions
        if before != after
        for claim in claims_of_bytes(before or b"")
        if claim.key and claim.key not in kept
    ]
