"""Page diffs as plain data, for the TUI and the CLI to render the same way.

``page_diff(path, old, new)`` compares two versions of a page (bytes, or None
for "absent") and returns:

- ``unified``: ``DiffLine`` items, hunk headers included, like ``diff -u``;
- ``side_by_side``: ``SideRow`` items pairing old and new lines, with the
  changed words of each paired line as ``(start, end)`` character spans;
- ``notes``: things a line diff cannot show (line endings changed, a BOM
  added, bytes that are not UTF-8).

Every text in the result has already been through ``textsafety.visible``:
control, bidi and zero-width characters are placeholders, so spans index the
text exactly as it is displayed and the data can be shown as is (as plain text,
never markup). ``source_tag_spans`` finds ``[stated]``/``[observed]``/... for
colouring.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memtui.field.body import TAG_RE
from memtui.textsafety import visible

CONTEXT_LINES = 3
_WORD_RE = re.compile(r"\w+|\s+|[^\w\s]", re.UNICODE)

# Line kinds (unified) and row kinds (side by side).
CONTEXT = "context"
ADD = "add"
REMOVE = "remove"
HUNK = "hunk"
EQUAL = "equal"
REPLACE = "replace"
INSERT = "insert"
DELETE = "delete"
GAP = "gap"


@dataclass(frozen=True, slots=True)
class DiffLine:
    """One line of a unified diff. ``old``/``new`` are 1-based line numbers or None."""

    kind: str  # context | add | remove | hunk
    old: int | None
    new: int | None
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "old": self.old, "new": self.new, "text": self.text}


@dataclass(frozen=True, slots=True)
class SideRow:
    """One row of a side-by-side diff; spans mark the changed words of each side."""

    kind: str  # equal | replace | insert | delete | gap
    old: int | None
    old_text: str | None
    new: int | None
    new_text: str | None
    old_spans: tuple[tuple[int, int], ...] = ()
    new_spans: tuple[tuple[int, int], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "old": self.old,
            "old_text": self.old_text,
            "new": self.new,
            "new_text": self.new_text,
            "old_spans": [list(s) for s in self.old_spans],
            "new_spans": [list(s) for s in self.new_spans],
        }


@dataclass(slots=True)
class PageDiff:
    path: str
    action: str  # modify | create | delete | same
    added: int = 0
    removed: int = 0
    unified: list[DiffLine] = field(default_factory=list)
    side_by_side: list[SideRow] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.action != "same"

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "action": self.action,
            "added": self.added,
            "removed": self.removed,
            "notes": list(self.notes),
            "unified": [line.to_json() for line in self.unified],
            "side_by_side": [row.to_json() for row in self.side_by_side],
        }


def split_lines(data: bytes | None) -> list[str]:
    """Decode page bytes and split them into display-safe lines (line endings removed)."""
    if data is None:
        return []
    text = data.decode("utf-8", "surrogateescape")
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text:
        return []
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [visible(line[:-1] if line.endswith("\r") else line) for line in lines]


def _notes(old: bytes | None, new: bytes | None) -> list[str]:
    notes: list[str] = []
    if old is None or new is None:
        return notes

    def crlf(data: bytes) -> bool:
        return b"\r\n" in data

    if crlf(old) != crlf(new):
        notes.append("line endings change from " + ("CRLF to LF" if crlf(old) else "LF to CRLF"))
    if old.startswith(b"\xef\xbb\xbf") != new.startswith(b"\xef\xbb\xbf"):
        notes.append("a byte order mark is " + ("removed" if old.startswith(b"\xef\xbb\xbf") else "added"))
    if old.endswith(b"\n") != new.endswith(b"\n") and old and new:
        notes.append("the final newline is " + ("removed" if old.endswith(b"\n") else "added"))
    if old != new and split_lines(old) == split_lines(new) and not notes:
        notes.append("only invisible bytes differ")
    return notes


def word_spans(old: str, new: str) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    """Character spans of the words that differ between two lines."""
    a = _WORD_RE.findall(old)
    b = _WORD_RE.findall(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    a_offsets = _offsets(a)
    b_offsets = _offsets(b)
    old_spans: list[tuple[int, int]] = []
    new_spans: list[tuple[int, int]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            old_spans.append((a_offsets[i1], a_offsets[i2]))
        if j2 > j1:
            new_spans.append((b_offsets[j1], b_offsets[j2]))
    return tuple(_merge(old_spans)), tuple(_merge(new_spans))


def _offsets(tokens: list[str]) -> list[int]:
    out = [0]
    for token in tokens:
        out.append(out[-1] + len(token))
    return out


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def page_diff(path: str, old: bytes | None, new: bytes | None, *, context: int | None = CONTEXT_LINES) -> PageDiff:
    """Compare two versions of a page. ``context=None`` keeps every line (full side-by-side)."""
    if old is None and new is None:
        action = "same"
    elif old is None:
        action = "create"
    elif new is None:
        action = "delete"
    elif old == new:
        action = "same"
    else:
        action = "modify"
    result = PageDiff(path, action, notes=_notes(old, new))
    a = split_lines(old)
    b = split_lines(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    groups: list[Sequence[tuple[str, int, int, int, int]]]
    if context is None:
        groups = [matcher.get_opcodes()] if a or b else []
        if groups and all(op[0] == "equal" for op in groups[0]) and action == "same":
            groups = []
    else:
        groups = list(matcher.get_grouped_opcodes(context))
        if groups and all(op[0] == "equal" for group in groups for op in group):
            groups = []  # identical lines (only invisible bytes differ)
    for number, group in enumerate(groups):
        first, last = group[0], group[-1]
        i1, i2, j1, j2 = first[1], last[2], first[3], last[4]
        header = f"@@ -{_range(i1, i2)} +{_range(j1, j2)} @@"
        result.unified.append(DiffLine(HUNK, None, None, header))
        if number:
            result.side_by_side.append(SideRow(GAP, None, None, None, None))
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                for offset in range(a2 - a1):
                    text = a[a1 + offset]
                    result.unified.append(DiffLine(CONTEXT, a1 + offset + 1, b1 + offset + 1, text))
                    result.side_by_side.append(SideRow(EQUAL, a1 + offset + 1, text, b1 + offset + 1, text))
                continue
            for offset in range(a2 - a1):
                result.unified.append(DiffLine(REMOVE, a1 + offset + 1, None, a[a1 + offset]))
            for offset in range(b2 - b1):
                result.unified.append(DiffLine(ADD, None, b1 + offset + 1, b[b1 + offset]))
            result.removed += a2 - a1
            result.added += b2 - b1
            pairs = max(a2 - a1, b2 - b1)
            for offset in range(pairs):
                left = a1 + offset if a1 + offset < a2 else None
                right = b1 + offset if b1 + offset < b2 else None
                if left is not None and right is not None:
                    old_spans, new_spans = word_spans(a[left], b[right])
                    result.side_by_side.append(
                        SideRow(REPLACE, left + 1, a[left], right + 1, b[right], old_spans, new_spans)
                    )
                elif left is not None:
                    result.side_by_side.append(SideRow(DELETE, left + 1, a[left], None, None, ((0, len(a[left])),), ()))
                elif right is not None:
                    result.side_by_side.append(
                        SideRow(INSERT, None, None, right + 1, b[right], (), ((0, len(b[right])),))
                    )
    return result


def _range(start: int, stop: int) -> str:
    length = stop - start
    if length == 0:
        return f"{start},0"
    return f"{start + 1}" if length == 1 else f"{start + 1},{length}"


def source_tag_spans(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, tag)`` of each source tag in a (display-safe) line, tag lower-cased."""
    return [(m.start(), m.end(), m.group(1).lower()) for m in TAG_RE.finditer(text)]
