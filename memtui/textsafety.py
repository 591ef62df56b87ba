"""Characters in page text that must never reach a terminal as themselves.

Page text is untrusted data. ESC and the other C0/C1 controls can drive the
terminal (set its title, clear the screen, write to the clipboard); bidi
overrides and isolates reorder what the reader sees; zero-width characters hide
text. This module finds them and replaces them with visible placeholders.
Bytes that were not valid UTF-8 are decoded with ``surrogateescape`` by the page
reader and appear here as lone surrogates; they are shown as ``<xNN>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

BIDI_NAMES = {
    "\u202a": "LRE",
    "\u202b": "RLE",
    "\u202c": "PDF",
    "\u202d": "LRO",
    "\u202e": "RLO",
    "\u2066": "LRI",
    "\u2067": "RLI",
    "\u2068": "FSI",
    "\u2069": "PDI",
    "\u200e": "LRM",
    "\u200f": "RLM",
    "\u061c": "ALM",
}
ZERO_WIDTH_NAMES = {
    "\u200b": "ZWSP",
    "\u200c": "ZWNJ",
    "\u200d": "ZWJ",
    "\u2060": "WJ",
    "\ufeff": "BOM",
    "\u00ad": "SHY",
    "\u180e": "MVS",
}

# Unicode "tag" characters are invisible; they can carry a hidden ASCII text (each
# U+E0020..U+E007E stands for one ASCII character), a known prompt-injection trick.
TAG_FIRST, TAG_LAST = 0xE0000, 0xE007F
_TAGS = "\U000e0000-\U000e007f"

# C0 controls except tab and newline, DEL, C1 controls; bidi; zero-width; tags; surrogates.
_HAZARD_RE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f\x80-\x9f"
    + "".join(BIDI_NAMES)
    + "".join(ZERO_WIDTH_NAMES)
    + _TAGS
    + "\ud800-\udfff]"
)
# The same set but keeping carriage return (handled as a line ending elsewhere).
_HAZARD_NO_CR_RE = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x80-\x9f"
    + "".join(BIDI_NAMES)
    + "".join(ZERO_WIDTH_NAMES)
    + _TAGS
    + "\ud800-\udfff]"
)


@dataclass(frozen=True, slots=True)
class Hazard:
    """One dangerous character: where it is and what kind it is."""

    line: int  # 1-based
    column: int  # 1-based
    kind: str  # "control" | "bidi" | "zero-width" | "invalid-utf8"
    char: str

    @property
    def label(self) -> str:
        return placeholder(self.char)


def classify(char: str) -> str:
    if char in BIDI_NAMES:
        return "bidi"
    if char in ZERO_WIDTH_NAMES or TAG_FIRST <= ord(char) <= TAG_LAST:
        return "zero-width"
    if "\ud800" <= char <= "\udfff":
        return "invalid-utf8"
    return "control"


def placeholder(char: str) -> str:
    """A visible stand-in for one hazardous character."""
    code = ord(char)
    if char in BIDI_NAMES:
        return f"\u27e8{BIDI_NAMES[char]}\u27e9"
    if char in ZERO_WIDTH_NAMES:
        return f"\u27e8{ZERO_WIDTH_NAMES[char]}\u27e9"
    if 0xE0020 < code < 0xE007F:  # a hidden ASCII character: show which one
        return f"\u27e8TAG {chr(code - 0xE0000)}\u27e9"
    if TAG_FIRST <= code <= TAG_LAST:
        return f"\u27e8TAG x{code - TAG_FIRST:02X}\u27e9"
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape'd byte
        return f"\u27e8x{code - 0xDC00:02X}\u27e9"
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    if code < 0x20:
        return chr(0x2400 + code)  # Unicode control pictures: ␛ for ESC
    if code == 0x7F:
        return "\u2421"
    return f"\u27e8x{code:02X}\u27e9"  # C1 controls


def has_hazards(text: str) -> bool:
    return _HAZARD_RE.search(text) is not None


def visible(text: str, *, keep_newlines: bool = True, keep_tabs: bool = True) -> str:
    """Return ``text`` with every hazardous character made visible.

    Newlines and tabs are kept (unless asked otherwise); a carriage return is
    shown as ``␍`` so CRLF files show their line endings in raw views.
    """
    if _HAZARD_RE.search(text) is None and (keep_tabs or "\t" not in text) and (
        keep_newlines or "\n" not in text
    ):
        return text
    out = _HAZARD_RE.sub(lambda m: placeholder(m.group(0)), text)
    if not keep_tabs:
        out = out.replace("\t", "\u2409")
    if not keep_newlines:
        out = out.replace("\n", "\u2424")
    return out


def one_line(text: str, limit: int | None = None) -> str:
    """Make ``text`` safe to show on a single line (titles, table cells)."""
    out = visible(text, keep_newlines=False, keep_tabs=False)
    if limit is not None and len(out) > limit:
        out = out[: max(limit - 1, 0)] + "\u2026"
    return out


def find_hazards(text: str) -> list[Hazard]:
    """Every hazardous character with its 1-based line and column.

    Carriage returns that end a line (CRLF files) are not hazards.
    """
    found: list[Hazard] = []
    if _HAZARD_NO_CR_RE.search(text) is None and "\r" not in text:
        return found
    for number, line in enumerate(text.split("\n"), start=1):
        if line.endswith("\r"):
            line = line[:-1]
        for match in _HAZARD_RE.finditer(line):
            found.append(Hazard(number, match.start() + 1, classify(match.group(0)), match.group(0)))
    return found


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 page``, ``2 pages``, ``1,204 pages``: a count with its noun agreeing (for messages)."""
    return f"{count:,} {noun if count == 1 else (nouns or noun + 's')}"
