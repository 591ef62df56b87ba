"""The body of a page, line by line: source tags, history lines, links, citations.

Recognised in each line:
- source tags ``[stated]`` ``[observed]`` ``[inferred]`` ``[suggested]``;
- inline supersede history: ``- ~~Key: old value [tag] (source DATE)~~ superseded DATE``;
- ``[[wikilinks]]`` (``[[target]]``, ``[[target|label]]``, ``[[target#section]]``,
  ``[[target#^block]]``) and embeds ``![[file.png]]`` (any file, not only pages);
- ``[cite:N]`` evidence citations (also ``[cite:1,3]``);
- Markdown links ``[text](target)``, whose real target must be shown before opening;
- headings, and a numbered list under a ``Sources``/``References`` heading.
Fenced code blocks and inline code spans are data: nothing inside them is a
claim's tag or a link (``[[Link]]`` shown as an example in backticks links nowhere).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import TypeVar

T = TypeVar("T")

SOURCE_TAGS = ("stated", "observed", "inferred", "suggested")
# ASCII only: with Unicode case folding "[ſtated]" (long s) or "[İnferred]" would match and name no tag.
TAG_RE = re.compile(r"\[(stated|observed|inferred|suggested)\]", re.IGNORECASE | re.ASCII)
_TAGLIKE_RE = re.compile(r"\[([^\[\]\s]{6,12})\]")
# Letters that look like the ASCII letters of the tags (Latin long s and dotless i, Cyrillic,
# Greek); NFKC folds the fullwidth and styled forms first.
_LOOKALIKES = str.maketrans(
    "ſıİɪіΙιѕЅаАαΑеЕεΕоОοΟσрРρΡсСϲтТτΤԁɗցɡɾгνѵᴠոηսυʋⅰⅼ",
    "siiiiiissaaaaeeeeoooooppppcccttttddggrrvvvnnuuuil",
)

WIKILINK_RE = re.compile(r"\[\[([^\[\]\|#\n]+)(?:#([^\[\]\|\n]*))?(?:\|([^\[\]\n]+))?\]\]")
# At most three digits: "[CITE: 2024]" in a draft is an author-year placeholder, not the 2024th source.
CITE_RE = re.compile(r"\[cite:\s*(\d{1,3}(?:\s*,\s*\d{1,3})*)\]", re.IGNORECASE)
MD_LINK_RE = re.compile(r'(?<!!)\[([^\[\]\n]+)\]\(([^()\s]+)(?:\s+"[^"\n]*")?\)')
HEADING_RE = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
FENCE_RE = re.compile(r"^[ \t]{0,3}(```+|~~~+)")
STRUCK_RE = re.compile(
    r"^(?P<indent>[ \t]*)(?:[-*+][ \t]+|\d+[.)][ \t]+)?~~(?P<inner>.+?)~~"
    r"(?P<after>.*)$"
)
SUPERSEDED_RE = re.compile(r"superseded\s*(?:on\s*)?:?\s*(\d{4}-\d{2}-\d{2})", re.IGNORECASE)
DATE_RE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
LIST_MARKER_RE = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])[ \t]+")
NUMBERED_SOURCE_RE = re.compile(r"^[ \t]*(?:(\d+)[.)]|\[(\d+)\]:?)[ \t]+(.+?)[ \t]*$")
KEY_VALUE_RE = re.compile(r"^(?P<key>[^:\[\]()`*_~]{1,60}?):[ \t]+(?P<value>.+)$")
PAREN_SOURCE_RE = re.compile(r"\(([^()]*)\)\s*$")
HR_RE = re.compile(r"^[ \t]*([-*_])([ \t]*\1){2,}[ \t]*$")
TABLE_SEP_RE = re.compile(r"^[ \t]*\|?[ \t]*:?-{2,}")

SOURCE_HEADINGS = {"sources", "references", "evidence", "citations", "refs"}
NON_CLAIM_HEADINGS = SOURCE_HEADINGS | {"see also", "related", "links", "backlinks", "index"}


@dataclass(slots=True)
class WikiLink:
    target: str
    label: str | None
    section: str | None
    line: int
    column: int  # 1-based
    embed: bool = False  # ``![[...]]``: shows the target (a page, an image, any file) inline


@dataclass(slots=True)
class Citation:
    number: int
    line: int
    column: int


@dataclass(slots=True)
class MarkdownLink:
    text: str
    target: str
    line: int
    column: int


@dataclass(slots=True)
class Claim:
    """A ``Key: value [tag] (source DATE)`` line, struck through or live."""

    line: int
    key: str | None
    value: str
    tag: str | None
    source: str | None  # the parenthesised provenance, e.g. "kickoff 2026-01-14"
    source_date: str | None
    struck: bool
    superseded_on: str | None  # the date after "superseded"


@dataclass(slots=True)
class BodyLine:
    number: int  # 1-based line number in the file
    text: str  # without the line ending
    kind: str  # blank | heading | claim | struck | code | fence | quote | table | rule | note
    tags: list[str] = field(default_factory=list)
    heading_level: int = 0
    section: str = ""  # the nearest heading above, lower-cased


@dataclass(slots=True)
class Body:
    lines: list[BodyLine] = field(default_factory=list)
    links: list[WikiLink] = field(default_factory=list)  # embeds included (``embed=True``)
    citations: list[Citation] = field(default_factory=list)
    markdown_links: list[MarkdownLink] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)
    headings: list[tuple[int, int, str]] = field(default_factory=list)  # (line, level, text)
    numbered_sources: list[str] = field(default_factory=list)
    tag_counts: dict[str, int] = field(default_factory=dict)
    untagged_claim_lines: list[int] = field(default_factory=list)
    claim_lines: int = 0  # lines of kind "claim" or "struck"

    @property
    def claim_line_count(self) -> int:
        return self.claim_lines


def _strip_marker(text: str) -> str:
    return LIST_MARKER_RE.sub("", text, count=1).strip()


def parse_claim(text: str, *, line: int, struck: bool, superseded_on: str | None) -> Claim:
    """Split ``Key: value [tag] (source DATE)`` into its parts (all optional)."""
    rest = text.strip()
    source = None
    paren = PAREN_SOURCE_RE.search(rest)
    if paren:
        source = paren.group(1).strip() or None
        rest = rest[: paren.start()].rstrip()
    matches = list(TAG_RE.finditer(rest))
    tag_match = matches[-1] if matches else None  # the last tag is the line's source
    tag = tag_match.group(1).lower() if tag_match else None
    if tag_match:
        rest = (rest[: tag_match.start()] + rest[tag_match.end() :]).strip()
    key = None
    kv = KEY_VALUE_RE.match(rest)
    if kv and len(kv.group("key").split()) <= 6:
        key = kv.group("key").strip()
        rest = kv.group("value").strip()
    source_date = None
    if source:
        dates = DATE_RE.findall(source)
        source_date = dates[-1] if dates else None
    return Claim(line, key, rest, tag, source, source_date, struck, superseded_on)


_SECTION_CLEAN_RE = re.compile(r"[^\w ]+")


# From the start of a word, without backtracking: a 20,000-character word took seconds (quadratic).
_THREE_WORDS_RE = re.compile(r"\b\w++\W++\w++\W++\w")


def _is_claim_text(text: str, section: str) -> bool:
    """Does this (non-heading, non-code) line assert something?"""
    if section in NON_CLAIM_HEADINGS:
        return False
    marker = LIST_MARKER_RE.match(text)
    content = (text[marker.end() :] if marker else text).strip()
    if not content or content.endswith(":"):
        return False
    if content.startswith(("<!--", "![", "|")):
        return False
    if "[[" in content or "](" in content:
        # A line that is only links ("[[a]], [[b]]") is navigation, not a claim.
        content = WIKILINK_RE.sub("", MD_LINK_RE.sub("", content))
    return _THREE_WORDS_RE.search(content) is not None  # at least three words


STEP_LINES = 256  # ``parse_body_steps`` pauses after this many lines


def run_steps(steps: Generator[None, None, T]) -> T:
    """Run a generator of steps to its end; its return value."""
    while True:
        try:
            next(steps)
        except StopIteration as done:
            value: T = done.value  # what the generator returned
            return value


_CONFLICT_START_RE = re.compile(r"<{7}(?:[ \t]|$)")
_CONFLICT_END_RE = re.compile(r">{7}(?:[ \t]|$)")


def lines_outside_fences(text: str, first_line: int = 1) -> Generator[tuple[int, str], None, None]:
    """(line number, line) for every line of ``text`` not inside fenced code (nor a fence).

    Lines are split at ``\n`` only, as an editor numbers them (``splitlines`` would also
    split at U+2028 and form feeds, and every line number after one would be off); a
    ``\r`` before the ``\n`` is dropped."""
    in_fence = ""
    for number, raw in enumerate(text.split("\n"), start=first_line):
        line = raw[:-1] if raw.endswith("\r") else raw
        fence = FENCE_RE.match(line) if line.lstrip()[:1] in ("`", "~") else None
        if in_fence:
            if fence and fence.group(1)[0] == in_fence[0] and len(fence.group(1)) >= len(in_fence):
                in_fence = ""
        elif fence:
            in_fence = fence.group(1)
        else:
            yield number, line


def conflict_markers(text: str, first_line: int = 1) -> list[tuple[int, int]]:
    """Unresolved git merge conflicts: (line of ``<<<<<<<``, line of ``>>>>>>>``) with a
    ``=======`` between them, outside fenced code (a page explaining git may show one)."""
    if "<<<<<<<" not in text:
        return []
    found: list[tuple[int, int]] = []
    start: int | None = None
    middle = False
    for number, line in lines_outside_fences(text, first_line):
        if _CONFLICT_START_RE.match(line):
            start, middle = number, False
        elif start is not None and line.rstrip() == "=======":
            middle = True
        elif start is not None and middle and _CONFLICT_END_RE.match(line):
            found.append((start, number))
            start = None
    return found


# What a model's tool call or chat template looks like when it leaks into the text it wrote:
# ``</content>`` closing every memory, ``<parameter name="...">``, ``<|im_end|>``.
_TOOL_TAG_NAMES = (
    "invoke|parameter|function_calls|function_results|tool_use|tool_result|tool_call|tool_calls|"
    "content|search_quality_reflection|thinking|antml:[a-z_]+"
)
TOOL_MARKUP_RE = re.compile(
    rf"</?(?:{_TOOL_TAG_NAMES})(?:\s+name=\"[^\"\n]{{0,80}}\")?\s*/?>|<\|(?:im_start|im_end|im_sep|eot_id|"
    r"start_header_id|end_header_id|endoftext|end|assistant|user|system)\|>"
)


def tool_markup(text: str, first_line: int = 1) -> list[tuple[int, str]]:
    """Leftover tool-call or chat-template markup: (line, the markup), outside fenced code and
    inline code spans (a page documenting a tool may quote it there)."""
    if TOOL_MARKUP_RE.search(text) is None:
        return []
    found: list[tuple[int, str]] = []
    for number, line in lines_outside_fences(text, first_line):
        if "<" not in line:
            continue
        match = TOOL_MARKUP_RE.search(mask_code_spans(line) if "`" in line else line)
        if match:
            found.append((number, match.group(0)))
    return found


def lookalike_tag(token: str) -> str | None:
    """The source tag ``token`` imitates with look-alike letters (``ſtated``), or None (a real tag
    in ASCII, or no tag at all)."""
    if token.isascii():
        return None
    folded = unicodedata.normalize("NFKC", token).translate(_LOOKALIKES).lower()
    return folded if folded in SOURCE_TAGS else None


def lookalike_tags(text: str, first_line: int = 1) -> list[tuple[int, str, str]]:
    """Look-alike source tags outside fenced code and code spans: (line, as written, the tag)."""
    if text.isascii() or "[" not in text:
        return []
    found: list[tuple[int, str, str]] = []
    for number, line in lines_outside_fences(text, first_line):
        if "[" not in line or line.isascii():
            continue
        for match in _TAGLIKE_RE.finditer(mask_code_spans(line) if "`" in line else line):
            tag = lookalike_tag(match.group(1))
            if tag is not None:
                found.append((number, match.group(0), tag))
    return found


def parse_body(text: str, first_line: int = 1, *, keep_lines: bool = True) -> Body:
    """Parse body text; ``first_line`` is the file line number of its first line.

    ``Body.claims`` holds every struck-through history line and, when the page has
    any, the live ``Key: value`` lines they may pair with (parsing every claim of
    every page would cost more than the rest of the parse together).
    ``keep_lines=False`` leaves ``Body.lines`` empty (a page summary does not need
    them); ``Body.claim_lines`` counts claim lines either way.
    """
    return run_steps(parse_body_steps(text, first_line, keep_lines=keep_lines))


def parse_body_steps(text: str, first_line: int = 1, *, keep_lines: bool = True) -> Generator[None, None, Body]:
    """``parse_body`` a few hundred lines at a time: it yields between them (so a screen can
    read a long page between keystrokes) and returns the ``Body``."""
    body = Body()
    claim_lines = 0
    counts = dict.fromkeys(SOURCE_TAGS, 0)
    in_fence = ""
    section = ""
    live_claims: list[tuple[int, str]] = []
    raw_lines = text.split("\n")
    if raw_lines and raw_lines[-1] == "":
        raw_lines.pop()
    lines = body.lines
    for offset, raw in enumerate(raw_lines):
        if not offset % STEP_LINES and offset:
            yield
        number = first_line + offset
        line_text = raw[:-1] if raw.endswith("\r") else raw
        head = line_text[:4]
        fence = FENCE_RE.match(line_text) if ("`" in head or "~" in head) else None
        if in_fence:
            if fence and fence.group(1)[0] == in_fence[0] and len(fence.group(1)) >= len(in_fence):
                in_fence = ""
                if keep_lines:
                    lines.append(BodyLine(number, line_text, "fence", section=section))
            else:
                if keep_lines:
                    lines.append(BodyLine(number, line_text, "code", section=section))
            continue
        if fence:
            in_fence = fence.group(1)
            if keep_lines:
                lines.append(BodyLine(number, line_text, "fence", section=section))
            continue
        stripped = line_text.strip()
        if not stripped:
            if keep_lines:
                lines.append(BodyLine(number, line_text, "blank", section=section))
            continue
        has_bracket = "[" in line_text
        heading = HEADING_RE.match(line_text) if line_text.startswith("#") else None
        if heading:
            level = len(heading.group(1))
            title = heading.group(2).strip()
            section = _SECTION_CLEAN_RE.sub("", title).strip().lower()
            body.headings.append((number, level, title))
            if keep_lines:
                lines.append(BodyLine(number, line_text, "heading", heading_level=level, section=section))
            if has_bracket:
                _collect_refs(body, line_text, number)
            continue
        if has_bracket:
            scan_text = mask_code_spans(line_text) if "`" in line_text else line_text
            tags = [t.lower() for t in TAG_RE.findall(scan_text)]
            _collect_refs(body, scan_text, number)
        else:
            tags = []
        for tag in tags:
            counts[tag] += 1
        if section in SOURCE_HEADINGS:
            numbered = NUMBERED_SOURCE_RE.match(line_text)
            if numbered:
                body.numbered_sources.append(numbered.group(3))
        first = stripped[0]
        if first in "-*_" and stripped[-1] == first and HR_RE.match(line_text):
            kind = "rule"
        elif first == ">":
            kind = "quote"
        elif first == "|" or ("|" in line_text and TABLE_SEP_RE.match(line_text)):
            kind = "table"
        else:
            struck = STRUCK_RE.match(line_text) if "~~" in line_text else None
            if struck:
                kind = "struck"
                claim_lines += 1
                after = struck.group("after")
                date = SUPERSEDED_RE.search(after)
                body.claims.append(
                    parse_claim(
                        struck.group("inner"),
                        line=number,
                        struck=True,
                        superseded_on=date.group(1) if date else None,
                    )
                )
            elif _is_claim_text(line_text, section):
                kind = "claim"
                claim_lines += 1
                live_claims.append((number, line_text))
                if not tags:
                    body.untagged_claim_lines.append(number)
            else:
                kind = "note"
        if keep_lines:
            lines.append(BodyLine(number, line_text, kind, tags=tags, section=section))
    body.tag_counts = counts
    body.claim_lines = claim_lines
    if body.claims and live_claims:
        for count, (number, line_text) in enumerate(live_claims, 1):
            if not count % STEP_LINES:
                yield
            body.claims.append(parse_claim(_strip_marker(line_text), line=number, struck=False, superseded_on=None))
        body.claims.sort(key=lambda claim: claim.line)
    return body


CODE_SPAN_RE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")


def mask_code_spans(line_text: str) -> str:
    """The line with the inside of every inline code span blanked (same length: columns hold)."""
    return CODE_SPAN_RE.sub(lambda m: m.group(1) + " " * len(m.group(2)) + m.group(1), line_text)


def _collect_refs(body: Body, line_text: str, number: int) -> None:
    if "`" in line_text:
        line_text = mask_code_spans(line_text)
    if "[[" in line_text:
        for match in WIKILINK_RE.finditer(line_text):
            start = match.start()
            body.links.append(
                WikiLink(
                    match.group(1).strip().rstrip("\\").strip(),  # ``[[a.png\|800]]``: a pipe escaped in a table
                    (match.group(3) or "").strip() or None,
                    (match.group(2) or "").strip() or None,
                    number,
                    start + 1,
                    embed=start > 0 and line_text[start - 1] == "!",
                )
            )
    if "[c" in line_text or "[C" in line_text:
        for match in CITE_RE.finditer(line_text):
            for part in match.group(1).split(","):
                body.citations.append(Citation(int(part), number, match.start() + 1))
    if "](" in line_text:
        for match in MD_LINK_RE.finditer(line_text):
            body.markdown_links.append(MarkdownLink(match.group(1), match.group(2), number, match.start() + 1))


def inline_chains(claims: list[Claim]) -> list[list[Claim]]:
    """Group struck-through history lines with the live line that replaced them.

    Lines are grouped by their key (``Public API: ...``, compared case-insensitively).
    A struck line without a key joins the live line right below it only when it says
    it was superseded (``~~...~~ superseded 2026-05-04``) and nothing else stands
    between them: a struck item followed by an unrelated live line ("~~Daily
    standup~~ removed", then "Retro moved to Friday") is history with no successor,
    never a version of the next line. Only groups with a struck line are history.
    """
    by_key: dict[str, list[Claim]] = {}
    order: list[str] = []
    pending: list[Claim] = []

    def joins(claim: Claim) -> bool:
        return bool(pending) and claim.line == pending[-1].line + 1 and all(c.superseded_on for c in pending)

    def alone() -> None:
        for struck in pending:
            key = f"#line{struck.line}"
            by_key[key] = [struck]
            order.append(key)
        pending.clear()

    for claim in claims:
        if claim.struck and not claim.key:
            if pending and claim.line != pending[-1].line + 1:
                alone()
            pending.append(claim)
            continue
        if claim.key:
            key = claim.key.casefold()
            if key not in by_key:
                by_key[key] = []
                order.append(key)
            if pending and not claim.struck and joins(claim):
                by_key[key].extend(pending)
                pending.clear()
            elif pending:
                alone()
            by_key[key].append(claim)
        elif pending:
            if joins(claim):
                key = f"#line{claim.line}"
                by_key[key] = pending + [claim]
                order.append(key)
                pending.clear()
            else:
                alone()
    alone()
    return [by_key[key] for key in order if any(c.struck for c in by_key[key])]
