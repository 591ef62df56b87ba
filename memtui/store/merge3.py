"""Three-way merge of a page: the version an editor loaded (base), the editor's (mine), the disk's (theirs).

Line based, like ``diff3``/``git merge-file``: lines are compared with their
endings, so CRLF pages and lines nobody touched keep their exact bytes. Where
only one side changed a region, that side wins; where both made the same change,
it is taken once; where both changed the same lines differently, the region is a
*conflict* and both sides are kept with the base (``Conflict``). Edits to
neighbouring lines of a region that both sides rewrote line for line are merged
line by line, so two people fixing two different lines never conflict.

``keep_copy`` stores a version the human might still want (their edits, when a
conflict is resolved for the other side) under ``.memtui/conflicts/``: never as
a page in the field, where it would be a second current version with the same
``id``.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from memtui.store import locations
from memtui.store.safe_write import check_relpath, write_internal_file

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


def _matches(base: list[str], other: list[str]) -> dict[int, int]:
    """base line index -> other line index, for lines the two share (monotonic)."""
    matcher = difflib.SequenceMatcher(None, base, other, autojunk=False)
    pairs: dict[int, int] = {}
    for block in matcher.get_matching_blocks():
        for offset in range(block.size):
            pairs[block.a + offset] = block.b + offset
    return pairs


def _chunk(
    result: MergeResult, base: list[str], mine: list[str], theirs: list[str], starts: tuple[int, int, int]
) -> None:
    if mine == base:
        if theirs:
            result.chunks.append(tuple(theirs))
        return
    if theirs == base or theirs == mine:
        if mine:
            result.chunks.append(tuple(mine))
        return
    if len(base) == len(mine) == len(theirs):
        # Both rewrote this region line for line: merge each line on its own.
        lines: list[str] = []
        for offset, (b, m, t) in enumerate(zip(base, mine, theirs)):
            if m == b or m == t:
                lines.append(t)
            elif t == b:
                lines.append(m)
            else:
                if lines:
                    result.chunks.append(tuple(lines))
                    lines = []
                result.chunks.append(
                    Conflict(starts[0] + offset + 1, (b,), starts[1] + offset + 1, (m,), starts[2] + offset + 1, (t,))
                )
        if lines:
            result.chunks.append(tuple(lines))
        return
    result.chunks.append(Conflict(starts[0] + 1, tuple(base), starts[1] + 1, tuple(mine), starts[2] + 1, tuple(theirs)))


def merge3(base: bytes, mine: bytes, theirs: bytes) -> MergeResult:
    """Merge ``mine`` and ``theirs``, both edited from ``base``."""
    base_lines, base_bom = _lines(base)
    mine_lines, mine_bom = _lines(mine)
    theirs_lines, theirs_bom = _lines(theirs)
    result = MergeResult(bom=theirs_bom if mine_bom == base_bom else mine_bom)
    to_mine = _matches(base_lines, mine_lines)
    to_theirs = _matches(base_lines, theirs_lines)
    i = j = k = 0
    for anchor in range(len(base_lines)):
        if anchor not in to_mine or anchor not in to_theirs:
            continue
        m, t = to_mine[anchor], to_theirs[anchor]
        if anchor < i or m < j or t < k:
            continue
        _chunk(result, base_lines[i:anchor], mine_lines[j:m], theirs_lines[k:t], (i, j, k))
        result.chunks.append((base_lines[anchor],))
        i, j, k = anchor + 1, m + 1, t + 1
    _chunk(result, base_lines[i:], mine_lines[j:], theirs_lines[k:], (i, j, k))
    return result


def has_markers(text: str) -> bool:
    """True when merge markers written by ``resolve()`` are still in ``text``."""
    lines = set(text.replace("\r\n", "\n").split("\n"))
    return MARK_MINE in lines or MARK_THEIRS in lines


def keep_copy(
    root: Path, relpath: str, data: bytes, *, now: _dt.datetime | None = None, folder: str = CONFLICTS_DIR
) -> str:
    """Store ``data`` as ``.memtui/<folder>/<relpath>.<time>.md``; return that path (relative to the field).

    Not a page: memtui never scans ``.memtui/``, so the copy cannot become a
    second version of the page. Nothing there is overwritten.
    """
    clean = check_relpath(relpath)
    stamp = (now or _dt.datetime.now()).strftime("%Y%m%d-%H%M%S")
    stem = PurePosixPath(clean)
    base = PurePosixPath(locations.STATE_DIR_NAME, folder, *stem.parent.parts)
    number = 1
    while True:
        suffix = f".{number}" if number > 1 else ""
        candidate = base / f"{stem.stem}.{stamp}{suffix}{stem.suffix}"
        target = Path(root).joinpath(*candidate.parts)
        if not target.exists():
            break
        number += 1
    write_internal_file(target, data)
    return candidate.as_posix()


def kept_copies(root: Path, relpath: str, *, folder: str = UNSAVED_DIR) -> list[str]:
    """Copies of ``relpath`` kept under ``.memtui/<folder>/``, newest name last."""
    stem = PurePosixPath(relpath)
    where = Path(root).joinpath(locations.STATE_DIR_NAME, folder, *stem.parent.parts)
    if not where.is_dir():
        return []
    pattern = re.compile(rf"{re.escape(stem.stem)}\.\d{{8}}-\d{{6}}(\.\d+)?{re.escape(stem.suffix)}")
    found = sorted(p.name for p in where.iterdir() if pattern.fullmatch(p.name))
    return [PurePosixPath(locations.STATE_DIR_NAME, folder, *stem.parent.parts, name).as_posix() for name in found]


__all__ = [
    "Conflict",
    "MergeResult",
    "merge3",
    "keep_copy",
    "kept_copies",
    "has_markers",
    "MINE",
    "THEIRS",
    "CONFLICTS_DIR",
    "UNSAVED_DIR",
]
