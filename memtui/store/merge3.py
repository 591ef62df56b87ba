"""Three-way merge of a page: the version an editor loaded (base), the editor's (mine), the disk's (theirs).

Line based, like ``diff3``/``git merge-file``: lines are compared with their
endings, so CRLF pages and lines nobody touched keep their exact bytes. Where
only one side changed a region, that side wins; where both made the same change,
it is taken once; where both changed the same lines differently, the region is a
*conflict* and both sides are kept with the base (``Conflict``). Only a line
neither side changed anchors the merge: changes of the two sides with no such
line between them (adjacent, not only overlapping) are one region, so repeated
lines can never pair a change with the wrong place (a line the reviewer deleted
put back, a heading added twice). Where both sides only rewrote lines one for
one, the region is merged line by line, so two people fixing two different
lines never conflict.

A version the human might still want (their edits, when a conflict is resolved
for the other side) is kept under ``.memtui/conflicts/`` by ``memtui.tui.unsaved``
(``keep_copy``: through the state writer, recorded and signed), never as a page in
the field, where it would be a second current version with the same ``id``.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

MINE = "mine"
THEIRS = "theirs"
MARK_MINE = "<<<<<<< mine (your edits)"
MARK_BASE = "||||||| base (the version you opened)"
MARK_SPLIT = "======="
MARK_THEIRS = ">>>>>>> theirs (on disk now)"
CONFLICTS_DIR = "conflicts"  # your version, kept when a conflict was resolved
UNSAVED_DIR = "unsaved"  # edits not saved when the terminal closed


@dataclass(frozen=True, slots=True)
class Conflict:
    """Both sides changed the same lines. Line numbers are 1-based, in each version."""

    base_start: int
    base: tuple[str, ...]
    mine_start: int
    mine: tuple[str, ...]
    theirs_start: int
    theirs: tuple[str, ...]


@dataclass(slots=True)
class MergeResult:
    """The merge as a sequence of chunks: a tuple of lines, or a ``Conflict``."""

    chunks: list[tuple[str, ...] | Conflict] = field(default_factory=list)
    bom: bool = False

    @property
    def conflicts(self) -> list[Conflict]:
        return [chunk for chunk in self.chunks if isinstance(chunk, Conflict)]

    @property
    def clean(self) -> bool:
        return not self.conflicts

    def resolve(self, side: str | None = None) -> bytes:
        """The merged bytes; conflicts take ``side`` (``mine``/``theirs``), or with ``None``
        carry markers around both sides and the base (for the human to resolve)."""
        out: list[str] = []
        for chunk in self.chunks:
            if not isinstance(chunk, Conflict):
                out.extend(chunk)
            elif side == MINE:
                out.extend(chunk.mine)
            elif side == THEIRS:
                out.extend(chunk.theirs)
            else:
                newline = _newline_of(chunk)
                out.append(MARK_MINE + newline)
                out.extend(_terminated(chunk.mine, newline))
                out.append(MARK_BASE + newline)
                out.extend(_terminated(chunk.base, newline))
                out.append(MARK_SPLIT + newline)
                out.extend(_terminated(chunk.theirs, newline))
                out.append(MARK_THEIRS + newline)
        text = "".join(out)
        return (("\ufeff" if self.bom else "") + text).encode("utf-8", "surrogateescape")

    @property
    def merged(self) -> bytes | None:
        """The merged bytes when there is no conflict, else None."""
        return self.resolve() if self.clean else None


def _newline_of(conflict: Conflict) -> str:
    for line in conflict.mine + conflict.theirs + conflict.base:
        if line.endswith("\r\n"):
            return "\r\n"
    return "\n"


def _terminated(lines: tuple[str, ...], newline: str) -> list[str]:
    """Lines with a final line ending added if the last lacks one (markers go on their own line)."""
    out = list(lines)
    if out and not out[-1].endswith("\n"):
        out[-1] += newline
    return out


def _lines(data: bytes) -> tuple[list[str], bool]:
    text = data.decode("utf-8", "surrogateescape")
    bom = text.startswith("\ufeff")
    return (text[1:] if bom else text).splitlines(keepends=True), bom


@dataclass(frozen=True, slots=True)
class _Hunk:
    """One side's change: base lines ``[start, end)`` replaced by ``lines`` (an insertion when empty)."""

    start: int
    end: int
    lines: tuple[str, ...]

    @property
    def line_for_line(self) -> bool:
        """A rewrite of existing lines, one new line for each old one (no line added or removed)."""
        return self.end > self.start and len(self.lines) == self.end - self.start


# Above this many cells (lines of base by lines of the other version, between their common
# start and end) the exact alignment is not computed and difflib's is used.
_EXACT_CELLS = 1_000_000  # about 0.1 s and 8 MB


def _hunks(base: list[str], other: list[str]) -> list[_Hunk]:
    """What ``other`` changed in ``base``, in base order: the fewest lines changed (a longest
    common subsequence). difflib's longest-block-first matching could explain an inserted line
    among repeated ones as "inserted two, deleted one further down": a deletion the other side
    also made was then taken as the same change, and the other side's edit was lost."""
    head = 0
    while head < len(base) and head < len(other) and base[head] == other[head]:
        head += 1
    tail = 0
    while tail < len(base) - head and tail < len(other) - head and base[-1 - tail] == other[-1 - tail]:
        tail += 1
    a, b = base[head : len(base) - tail], other[head : len(other) - tail]
    if not a and not b:
        return []
    if len(a) * len(b) > _EXACT_CELLS:
        matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
        pairs = [(block.a + n, block.b + n) for block in matcher.get_matching_blocks() for n in range(block.size)]
    else:
        pairs = _lcs(a, b)
    hunks: list[_Hunk] = []
    i = j = 0
    for x, y in [*pairs, (len(a), len(b))]:
        if x > i or y > j:
            hunks.append(_Hunk(head + i, head + x, tuple(b[j:y])))
        i, j = x + 1, y + 1
    return hunks


def _lcs(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    """The index pairs of a longest common subsequence of ``a`` and ``b`` (dynamic programming)."""
    rows = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for x in range(len(a) - 1, -1, -1):
        row, below = rows[x], rows[x + 1]
        ax = a[x]
        for y in range(len(b) - 1, -1, -1):
            row[y] = below[y + 1] + 1 if ax == b[y] else max(below[y], row[y + 1])
    pairs: list[tuple[int, int]] = []
    x = y = 0
    while x < len(a) and y < len(b):
        if a[x] == b[y]:
            pairs.append((x, y))
            x, y = x + 1, y + 1
        elif rows[x + 1][y] >= rows[x][y + 1]:
            x += 1
        else:
            y += 1
    return pairs


def _apply(base: list[str], start: int, end: int, hunks: list[_Hunk]) -> tuple[str, ...]:
    """Base lines ``[start, end)`` with ``hunks`` (all inside that range) applied."""
    out: list[str] = []
    at = start
    for hunk in hunks:
        out.extend(base[at : hunk.start])
        out.extend(hunk.lines)
        at = hunk.end
    out.extend(base[at:end])
    return tuple(out)


def _groups(mine: list[_Hunk], theirs: list[_Hunk]) -> list[tuple[int, int, list[_Hunk], list[_Hunk]]]:
    """The changes of both sides in groups that touch: ``(start, end, mine's, theirs')``.

    Two changes belong together when they share a base line *or merely touch* (one ends where
    the other starts, an insertion at the edge of a rewrite): only a base line neither side
    changed is a stable anchor. Anchoring between adjacent changes is what let a "clean" merge
    of a page with repeated lines (``---``, blank lines, a heading used twice) put back a line
    the reviewer deleted, or add a heading twice."""
    tagged = sorted([(h.start, h.end, 0, h) for h in mine] + [(h.start, h.end, 1, h) for h in theirs])
    groups: list[tuple[int, int, list[_Hunk], list[_Hunk]]] = []
    for start, end, side, hunk in tagged:
        if groups and start <= groups[-1][1]:
            lo, hi, ours, other = groups[-1]
            groups[-1] = (lo, max(hi, end), ours, other)
        else:
            groups.append((start, end, [], []))
        (groups[-1][2] if side == 0 else groups[-1][3]).append(hunk)
    return groups


def _line_for_line(
    result: MergeResult, base: list[str], group: tuple[int, int, list[_Hunk], list[_Hunk]], starts: tuple[int, int]
) -> bool:
    """Merge a group where both sides only rewrote lines one for one, each line on its own (two
    people fixing two neighbouring lines do not conflict: no line moved, so every line's place is
    certain). False, nothing added, when the group is not such a one."""
    lo, hi, mine, theirs = group
    if not all(hunk.line_for_line for hunk in mine + theirs):
        return False
    mine_at = {hunk.start + n: line for hunk in mine for n, line in enumerate(hunk.lines)}
    theirs_at = {hunk.start + n: line for hunk in theirs for n, line in enumerate(hunk.lines)}
    lines: list[str] = []
    for index in range(lo, hi):
        b = base[index]
        m, t = mine_at.get(index, b), theirs_at.get(index, b)
        if m == b or m == t:
            lines.append(t)
        elif t == b:
            lines.append(m)
        else:
            if lines:
                result.chunks.append(tuple(lines))
                lines = []
            offset = index - lo
            result.chunks.append(Conflict(index + 1, (b,), starts[0] + offset + 1, (m,), starts[1] + offset + 1, (t,)))
    if lines:
        result.chunks.append(tuple(lines))
    return True


def merge3(base: bytes, mine: bytes, theirs: bytes) -> MergeResult:
    """Merge ``mine`` and ``theirs``, both edited from ``base``.

    Each side's changes are found against the base; a base line neither side changed is a
    stable anchor, and changes of the two sides that overlap or touch (no stable line between
    them) are one region: taken once when both made the same change, merged line by line when
    both only rewrote lines one for one, else a ``Conflict``. So a clean result always holds
    every change of each side exactly where it was made."""
    base_lines, base_bom = _lines(base)
    mine_lines, mine_bom = _lines(mine)
    theirs_lines, theirs_bom = _lines(theirs)
    result = MergeResult(bom=theirs_bom if mine_bom == base_bom else mine_bom)
    at = 0  # base lines before ``at`` are in the result
    shift_mine = shift_theirs = 0  # how many lines each side added (or removed) before ``at``
    for group in _groups(_hunks(base_lines, mine_lines), _hunks(base_lines, theirs_lines)):
        lo, hi, ours, other = group
        if at < lo:
            result.chunks.append(tuple(base_lines[at:lo]))
        mine_version = _apply(base_lines, lo, hi, ours)
        theirs_version = _apply(base_lines, lo, hi, other)
        starts = (lo + shift_mine, lo + shift_theirs)
        if not ours or not other or mine_version == theirs_version:
            if mine_version if ours else theirs_version:
                result.chunks.append(mine_version if ours else theirs_version)
        elif not _line_for_line(result, base_lines, group, starts):
            result.chunks.append(
                Conflict(lo + 1, tuple(base_lines[lo:hi]), starts[0] + 1, mine_version, starts[1] + 1, theirs_version)
            )
        shift_mine += len(mine_version) - (hi - lo)
        shift_theirs += len(theirs_version) - (hi - lo)
        at = hi
    if at < len(base_lines):
        result.chunks.append(tuple(base_lines[at:]))
    return result


def has_markers(text: str) -> bool:
    """True when merge markers written by ``resolve()`` are still in ``text``."""
    lines = set(text.replace("\r\n", "\n").split("\n"))
    return MARK_MINE in lines or MARK_THEIRS in lines


__all__ = [
    "Conflict",
    "MergeResult",
    "merge3",
    "has_markers",
    "MINE",
    "THEIRS",
    "CONFLICTS_DIR",
    "UNSAVED_DIR",
]
