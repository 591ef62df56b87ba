"""Text for a human editor, and back to bytes changing only what the human changed.

An editor widget sees a normalised form of the page:
- lines joined with ``\\n`` (each line's original ending is remembered: CRLF, LF,
  or none on the last line; lines the human did not touch keep their ending);
- a leading BOM removed (and put back on save);
- every character that could drive the terminal, reorder or hide text, split a
  line inside the editor, or that was an undecodable byte, replaced by one
  placeholder character (control pictures such as ``␛`` for C0 controls, circled
  numbers for bidi and zero-width characters, private-use characters for C1
  controls, other invisible characters, line separators and undecodable bytes),
  mapped back exactly on save. Which occurrences count is ``textsafety``'s
  judgement: a joiner inside a Persian word or an emoji's variation selector
  stays as it is.

``to_bytes(buffer, edited)`` merges the edited lines with the original ones, so a
page with CRLF endings, a BOM, invalid UTF-8 or unknown frontmatter keys
round-trips byte for byte except the lines that were edited.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from memtui.errors import MemtuiError
from memtui.textsafety import (
    BIDI_NAMES,
    HAZARD_CHARS,
    ZERO_WIDTH_NAMES,
    hazard_positions,
)

_PUA_BASE = 0xE000
_SPECIAL = (
    [chr(c) for c in range(0x80, 0xA0)]  # C1 controls
    + list(BIDI_NAMES)
    + list(ZERO_WIDTH_NAMES)
    + ["\u2028", "\u2029"]  # line/paragraph separators (split lines in editors)
    + [chr(0xDC80 + b) for b in range(0x80)]  # undecodable bytes (surrogateescape)
    + list(HAZARD_CHARS)  # every other invisible character (added last: earlier placeholders keep their code)
)


def _build_tables() -> tuple[dict[str, str], dict[str, str]]:
    to_placeholder: dict[str, str] = {}
    for code in range(0x20):
        if chr(code) not in ("\t", "\n"):
            to_placeholder[chr(code)] = chr(0x2400 + code)  # ␀ ... ␟ (␛ for ESC)
    to_placeholder["\x7f"] = "\u2421"  # ␡
    # Bidi and zero-width characters: circled numbers, visible in common fonts;
    # the editor's notice line says which is which.
    for index, char in enumerate(list(BIDI_NAMES) + list(ZERO_WIDTH_NAMES)):
        to_placeholder[char] = chr(0x2460 + index)  # ① ② ③ ...
    for index, char in enumerate(_SPECIAL):
        to_placeholder.setdefault(char, chr(_PUA_BASE + index))
    back = {v: k for k, v in to_placeholder.items()}
    return to_placeholder, back


TO_PLACEHOLDER, FROM_PLACEHOLDER = _build_tables()


@dataclass
class EditBuffer:
    original: bytes
    text: str  # what the editor shows
    lines: list[str]  # the editor's lines as loaded
    endings: list[str]  # each loaded line's original ending
    bom: bool
    newline: str  # ending for lines the human adds
    hidden_count: int  # characters shown as placeholders
    placeholders: dict[str, str]  # placeholder -> original, for the characters this page has


def open_buffer(data: bytes) -> EditBuffer:
    """Prepare page bytes for editing. Refuses pages that already contain placeholder characters."""
    text = data.decode("utf-8", "surrogateescape")
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
    raw_lines = text.split("\n")
    lines: list[str] = []
    endings: list[str] = []
    crlf = lf = 0
    for index, line in enumerate(raw_lines):
        last = index == len(raw_lines) - 1
        if last:
            lines.append(line)
            endings.append("")
        elif line.endswith("\r"):
            lines.append(line[:-1])
            endings.append("\r\n")
            crlf += 1
        else:
            lines.append(line)
            endings.append("\n")
            lf += 1
    # Only the hidden characters this page has get placeholders; a page that
    # contains one of those placeholders literally cannot be edited unambiguously.
    mapped: list[str] = []
    used: dict[str, str] = {}
    hidden_count = 0
    for line in lines:
        chars = list(line)
        for index in hazard_positions(line):
            shown = TO_PLACEHOLDER.get(chars[index])
            if shown is not None:
                used[shown] = chars[index]
                chars[index] = shown
                hidden_count += 1
        mapped.append("".join(chars))
    clash = next((ch for ch in text if ch in used), None)
    if clash is not None:
        raise MemtuiError(
            f"the page already contains the character U+{ord(clash):04X}, which the editor uses as a placeholder",
            "edit this page in another editor",
        )
    return EditBuffer(
        original=data,
        text="\n".join(mapped),
        lines=mapped,
        endings=endings,
        bom=bom,
        newline="\r\n" if crlf > lf else "\n",
        hidden_count=hidden_count,
        placeholders=used,
    )


def to_bytes(buffer: EditBuffer, edited: str) -> bytes:
    """The bytes to write for ``edited`` (the editor's text, lines joined with ``\\n``)."""
    edited = edited.replace("\r\n", "\n")
    new_lines = edited.split("\n")
    if new_lines == buffer.lines:
        return buffer.original
    endings: list[str] = [buffer.newline] * len(new_lines)
    matcher = difflib.SequenceMatcher(None, buffer.lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("equal", "replace"):
            # Kept lines, and lines edited in place, keep their own ending.
            for offset in range(min(i2 - i1, j2 - j1)):
                endings[j1 + offset] = buffer.endings[i1 + offset] or buffer.newline
    endings[-1] = ""
    decode = str.maketrans(buffer.placeholders)
    out = "".join(line.translate(decode) + ending for line, ending in zip(new_lines, endings))
    if buffer.bom:
        out = "\ufeff" + out
    return out.encode("utf-8", "surrogateescape")


def hidden_positions(buffer: EditBuffer, text: str) -> list[tuple[int, int, str]]:
    """(line, column, what) for every placeholder in the editor ``text``, 1-based."""
    from memtui.textsafety import placeholder

    found = []
    for number, line in enumerate(text.split("\n"), start=1):
        for column, ch in enumerate(line, start=1):
            original = buffer.placeholders.get(ch)
            if original is not None:
                found.append((number, column, f"{ch}={placeholder(original)}" if ch != placeholder(original) else ch))
    return found
