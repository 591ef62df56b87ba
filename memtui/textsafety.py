"""Characters in page text that must never reach a terminal as themselves.

Page text is untrusted data. ESC and the other C0/C1 controls can drive the
terminal (set its title, clear the screen, write to the clipboard); bidi
overrides and isolates reorder what the reader sees; invisible characters hide
text. This module finds them and replaces them with visible placeholders.
Bytes that were not valid UTF-8 are decoded with ``surrogateescape`` by the page
reader and appear here as lone surrogates; they are shown as ``<xNN>``.

Invisible means: every Unicode format character (category Cf: zero-width space,
word joiner, the invisible math operators U+2061-2064, deprecated format
controls, tags ...), the known fillers that render as nothing (Hangul fillers
U+115F, U+1160, U+3164, U+FFA0; the combining grapheme joiner U+034F; the Khmer
inherent vowels U+17B4-17B5), the line and paragraph separators U+2028/2029,
and variation selectors. Some of these are also needed by real text, so they
count only where they can hide something (``_benign``): a zero-width (non-)joiner
between two letters of a script that uses it (Persian, Bengali, Devanagari ...)
or inside an emoji sequence, one variation selector after a character it can
vary (an emoji, a symbol, a CJK ideograph), a Mongolian variation selector after
a Mongolian letter. A run of them, or one after a Latin letter, is a finding.
"""

from __future__ import annotations

import re
import unicodedata
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
# Other invisible characters with a short name; the rest show as <U+XXXX>.
INVISIBLE_NAMES = {
    "\u2061": "FA",  # function application
    "\u2062": "IT",  # invisible times
    "\u2063": "IS",  # invisible separator
    "\u2064": "IP",  # invisible plus
    "\u2028": "LSEP",
    "\u2029": "PSEP",
    "\u034f": "CGJ",
    "\u115f": "HCF",
    "\u1160": "HJF",
    "\u3164": "HF",
    "\uffa0": "HWHF",
    "\u17b4": "KIVAQ",
    "\u17b5": "KIVAA",
}

# Unicode "tag" characters are invisible; they can carry a hidden ASCII text (each
# U+E0020..U+E007E stands for one ASCII character), a known prompt-injection trick.
TAG_FIRST, TAG_LAST = 0xE0000, 0xE007F
_TAGS = "\U000e0000-\U000e007f"

# Every format character (Cf) of Unicode 15.1 (a superset of older versions; a test
# checks it against the running Python's unicodedata).
_FORMAT = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a" + _TAGS
)
_FILLERS = "\u034f\u115f\u1160\u17b4\u17b5\u2028\u2029\u3164\uffa0"
# Needed by real text in some places, hidden text in others: judged by their neighbours.
_JOINERS = "\u200c\u200d"
_VARIATION = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
_MONGOLIAN_FVS = "\u180b-\u180d\u180f"
_CONTEXTUAL = _JOINERS + _VARIATION + _MONGOLIAN_FVS
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f\x80-\x9f"
_SURROGATES = "\ud800-\udfff"

# Candidates: C0 controls except tab and newline, DEL, C1 controls; format characters
# (bidi, zero-width, tags ...); fillers; contextual characters; surrogates.
_HAZARD_RE = re.compile(f"[{_CONTROLS}{_FORMAT}{_FILLERS}{_CONTEXTUAL}{_SURROGATES}]")
# The same set but keeping carriage return (handled as a line ending elsewhere).
_HAZARD_NO_CR_RE = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x80-\x9f{_FORMAT}{_FILLERS}{_CONTEXTUAL}{_SURROGATES}]")
_CONTEXTUAL_RE = re.compile(f"[{_CONTEXTUAL}]")
_VARIATION_RE = re.compile(f"[{_VARIATION}]")
_MONGOLIAN_FVS_RE = re.compile(f"[{_MONGOLIAN_FVS}]")


def _ranges(char_class: str) -> list[str]:
    """Every character a regex character class (as written above) matches."""
    out: list[str] = []
    index = 0
    while index < len(char_class):
        first = char_class[index]
        if index + 2 < len(char_class) and char_class[index + 1] == "-":
            out.extend(chr(code) for code in range(ord(first), ord(char_class[index + 2]) + 1))
            index += 3
        else:
            out.append(first)
            index += 1
    return out


# Every character ``visible`` may replace, for tables built elsewhere (the editor's placeholders).
HAZARD_CHARS: tuple[str, ...] = tuple(
    dict.fromkeys(_ranges(_CONTROLS) + _ranges(_FORMAT) + _ranges(_FILLERS) + _ranges(_CONTEXTUAL))
)


def _is_letter(char: str) -> bool:
    return not char.isascii() and unicodedata.category(char)[0] in "LM"


def _is_pictographic(char: str) -> bool:
    """An emoji or symbol that joins into emoji sequences (approximate: Python has no emoji data)."""
    code = ord(char)
    return (
        unicodedata.category(char) in ("So", "Sk")
        or 0x1F000 <= code <= 0x1FAFF
        or 0x2600 <= code <= 0x27BF
        or char == "\ufe0f"
        or char == "\u20e3"
    )


def _is_cjk_ideograph(char: str) -> bool:
    code = ord(char)
    return 0x3400 <= code <= 0x9FFF or 0xF900 <= code <= 0xFAFF or 0x20000 <= code <= 0x3FFFF


def _benign(text: str, index: int) -> bool:
    """Is the contextual character at ``index`` doing its legitimate job there (hiding nothing)?"""
    char = text[index]
    before = text[index - 1] if index > 0 else ""
    after = text[index + 1] if index + 1 < len(text) else ""
    if not before or _CONTEXTUAL_RE.match(before) and not (char == "\u200d" and before == "\ufe0f"):
        return False  # at the start, or one of a run: can hide text
    if char in _JOINERS:
        if not after or _CONTEXTUAL_RE.match(after):
            return False
        if _is_letter(before) and _is_letter(after):
            return True  # Persian, Bengali, Devanagari ... words
        return char == "\u200d" and _is_pictographic(before) and _is_pictographic(after)  # emoji sequences
    if after and (_VARIATION_RE.match(after) or _MONGOLIAN_FVS_RE.match(after)):
        return False  # a run of selectors: the emoji-smuggling trick
    if _MONGOLIAN_FVS_RE.match(char):
        return 0x1820 <= ord(before) <= 0x18AA
    if ord(char) >= 0xE0100:
        return _is_cjk_ideograph(before)  # ideographic variation sequences
    return not before.isascii() or before in "0123456789#*"  # emoji, symbols, keycaps


def _is_hazard(text: str, index: int) -> bool:
    char = text[index]
    return not (_CONTEXTUAL_RE.match(char) and _benign(text, index))


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
    """``bidi``, ``zero-width`` (every invisible character), ``invalid-utf8`` or ``control``."""
    if char in BIDI_NAMES:
        return "bidi"
    if "\ud800" <= char <= "\udfff":
        return "invalid-utf8"
    if ord(char) < 0xA0:
        return "control"
    return "zero-width"


def placeholder(char: str) -> str:
    """A visible stand-in for one hazardous character."""
    code = ord(char)
    if char in BIDI_NAMES:
        return f"\u27e8{BIDI_NAMES[char]}\u27e9"
    if char in ZERO_WIDTH_NAMES:
        return f"\u27e8{ZERO_WIDTH_NAMES[char]}\u27e9"
    if char in INVISIBLE_NAMES:
        return f"\u27e8{INVISIBLE_NAMES[char]}\u27e9"
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
    if code < 0xA0:
        return f"\u27e8x{code:02X}\u27e9"  # C1 controls
    if 0xFE00 <= code <= 0xFE0F:
        return f"\u27e8VS{code - 0xFE00 + 1}\u27e9"
    if 0xE0100 <= code <= 0xE01EF:
        return f"\u27e8VS{code - 0xE0100 + 17}\u27e9"
    return f"\u27e8U+{code:04X}\u27e9"


def hazard_positions(text: str) -> list[int]:
    """Indexes of every hazardous character in ``text`` (contextual ones judged by their neighbours)."""
    return [m.start() for m in _HAZARD_RE.finditer(text) if _is_hazard(text, m.start())]


def has_hazards(text: str) -> bool:
    return any(_is_hazard(text, m.start()) for m in _HAZARD_RE.finditer(text))


def _shown(match: re.Match) -> str:
    char = match.group(0)
    return placeholder(char) if _is_hazard(match.string, match.start()) else char


def visible(text: str, *, keep_newlines: bool = True, keep_tabs: bool = True) -> str:
    """Return ``text`` with every hazardous character made visible.

    Newlines and tabs are kept (unless asked otherwise); a carriage return is
    shown as ``␍`` so CRLF files show their line endings in raw views.
    """
    if _HAZARD_RE.search(text) is None and (keep_tabs or "\t" not in text) and (keep_newlines or "\n" not in text):
        return text
    out = _HAZARD_RE.sub(_shown, text)
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
            if _is_hazard(line, match.start()):
                found.append(Hazard(number, match.start() + 1, classify(match.group(0)), match.group(0)))
    return found


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 page``, ``2 pages``, ``1,204 pages``: a count with its noun agreeing (for messages)."""
    return f"{count:,} {noun if count == 1 else (nouns or noun + 's')}"
