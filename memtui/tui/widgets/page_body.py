"""Render a page's body for auditing: source tags coloured, history dimmed, links followable.

Every span is built on the *visible* form of the line (control, bidi and
zero-width characters already replaced by placeholders), so page text can never
reach the terminal as control sequences, and never as markup: styles are applied
to ``Text`` objects, and clickable spans carry a ``memtui-link`` index in their
style meta (no action strings built from page text).
"""

from __future__ import annotations

import re
from collections.abc import Generator
from dataclasses import dataclass

from rich.cells import cell_len
from rich.style import Style
from rich.table import Table
from rich.text import Text

from memtui.field.body import (
    CITE_RE,
    MD_LINK_RE,
    SUPERSEDED_RE,
    TAG_RE,
    WIKILINK_RE,
    run_steps,
)
from memtui.field.page import ParsedPage
from memtui.textsafety import visible

LINK_META = "memtui-link"
STRIKE_RE = re.compile(r"~~(.+?)~~")


@dataclass(frozen=True)
class LinkTarget:
    """Something a reader can follow from the page."""

    kind: str  # "wiki" | "cite" | "url"
    target: str  # page reference, citation number, or URL as written
    line: int
    label: str


CUT_TEXT = "──── the agent's view ends here: Claude Code loads lines 1-{n} only ────"
UNTAGGED_NOTE = "  ⟵ untagged claim"
SCAN_LINES = 4096  # lines a step of ``BodyRows.in_steps`` reads
_MAYBE_LINK_RE = re.compile(r"\[\[|\[cite:|\]\(", re.IGNORECASE)  # a cheap test before the link patterns


class Rows:
    """What a page view shows, as rows (one per file line, plus markers), styled only when asked.

    ``cells(row)`` is the row's width in cells when that is known cheaply (an ASCII line),
    else minus an estimate; ``plain(row)`` is the text that wraps; ``content(row)`` the
    styled text; ``gutter(row)`` what stands left of it (``gutter_width`` cells).
    """

    gutter_width = 0
    links: list[LinkTarget] = []
    complete = True  # False while only the start of a big page has been read

    def __len__(self) -> int:
        return 0

    def cells(self, row: int) -> int:
        return -1

    def all_cells(self) -> list[int]:
        return [self.cells(row) for row in range(len(self))]

    def plain(self, row: int) -> str:
        return ""

    def content(self, row: int, selected_link: int | None = None) -> Text:
        return Text(self.plain(row))

    def gutter(self, row: int) -> Text | None:
        return None

    def line_of(self, row: int) -> int | None:
        """The file line a row shows (None for a marker row)."""
        return None

    def row_of(self, line: int) -> int:
        """The row of a file line (lines before the body: its first row)."""
        return max(0, min(line - 1, len(self) - 1))


def _cells(text: str) -> int:
    return len(text) if text.isascii() and text.isprintable() else -max(1, len(text))


class BodyRows(Rows):
    """The parsed body: line number, marker (``!`` untagged claim, ``~`` struck), the styled line.

    Built once per reading of the page (the links are found here, on the visible text);
    each row's ``Text`` only when the row is shown. ``agent_view_ends``: the last line an
    agent loads; a cut row follows it.
    """

    def __init__(
        self,
        parsed: ParsedPage,
        colours: dict[str, str],
        *,
        fact_page: bool,
        agent_view_ends: int | None = None,
        link_style: str = "underline",
        complete: bool = True,
        scan: bool = True,
    ) -> None:
        self.source = parsed
        self.lines = parsed.body.lines
        self.colours = colours
        self.link_style = link_style
        self.complete = complete
        self.fact_page = fact_page
        self.agent_view_ends = agent_view_ends
        self.untagged = set(parsed.body.untagged_claim_lines) if fact_page else set()
        self.first = self.lines[0].number if self.lines else 1
        last = self.lines[-1].number if self.lines else 0
        self.cut_row = None
        if agent_view_ends is not None and self.first <= agent_view_ends <= last:
            self.cut_row = agent_view_ends - self.first + 1
        self.gutter_width = len(str(last or 1)) + 3  # number, space, marker, space
        self.shown: list[str] = []  # each line's visible form (the same object when nothing is replaced)
        self.widths: list[int] = []
        self.links: list[LinkTarget] = []
        self.line_links: dict[int, tuple[int, list[tuple[int, int, LinkTarget]]]] = {}
        if scan:
            run_steps(self._scan())

    @classmethod
    def in_steps(cls, parsed: ParsedPage, colours: dict[str, str], **options) -> Generator[None, None, BodyRows]:
        """The rows of a long page built a few thousand lines at a time (yielding between)."""
        rows = cls(parsed, colours, scan=False, **options)
        yield from rows._scan()
        return rows

    def _scan(self) -> Generator[None, None, None]:
        """Visible text, cell widths and links, line by line."""
        note = cell_len(UNTAGGED_NOTE)
        untagged = self.untagged
        for start in range(0, len(self.lines), SCAN_LINES):
            if start:
                yield
            lines = self.lines[start : start + SCAN_LINES]
            shown = [visible(line.text) for line in lines]
            self.shown.extend(shown)
            self.widths.extend(
                _cells(text)
                if line.number not in untagged
                else (cells + note if (cells := _cells(text)) >= 0 else cells - note)
                for line, text in zip(lines, shown)
            )
            for index, (line, text) in enumerate(zip(lines, shown), start):
                if line.kind in ("code", "fence") or not _MAYBE_LINK_RE.search(text):
                    continue
                spans = line_links(text, line.number)
                if spans:
                    self.line_links[index] = (len(self.links), spans)
                    self.links.extend(target for _, _, target in spans)

    def __len__(self) -> int:
        return len(self.lines) + (self.cut_row is not None)

    def _index(self, row: int) -> int | None:
        """The body line a row shows; None for the cut row."""
        if self.cut_row is None or row < self.cut_row:
            return row
        return None if row == self.cut_row else row - 1

    def _cut(self) -> str:
        return CUT_TEXT.format(n=self.agent_view_ends)

    def cells(self, row: int) -> int:
        index = self._index(row)
        return -len(self._cut()) if index is None else self.widths[index]

    def all_cells(self) -> list[int]:
        if self.cut_row is None:
            return self.widths
        return self.widths[: self.cut_row] + [-len(self._cut())] + self.widths[self.cut_row :]

    def plain(self, row: int) -> str:
        index = self._index(row)
        if index is None:
            return self._cut()
        shown = self.shown[index]
        return shown + UNTAGGED_NOTE if self.lines[index].number in self.untagged else shown

    def line_of(self, row: int) -> int | None:
        index = self._index(row)
        return None if index is None else self.lines[index].number

    def row_of(self, line: int) -> int:
        row = max(0, min(line - self.first, len(self.lines) - 1))
        return row + 1 if self.cut_row is not None and row >= self.cut_row else row

    def gutter(self, row: int) -> Text:
        colours = self.colours
        index = self._index(row)
        width = self.gutter_width - 3
        if index is None:
            return Text.assemble(" " * (width + 1), ("✂", f"bold {colours.get('warning', '')}"), " ")
        line = self.lines[index]
        if line.number in self.untagged:
            marker = ("!", f"bold {colours.get('warning', '')}")
        elif line.kind == "struck":
            marker = ("~", "dim")
        else:
            marker = (" ", "")
        return Text.assemble((f"{line.number:>{width}}", "dim"), " ", marker, " ")

    def content(self, row: int, selected_link: int | None = None) -> Text:
        colours = self.colours
        index = self._index(row)
        if index is None:
            return Text(self._cut(), style=f"bold reverse {colours.get('warning', '')}")
        line = self.lines[index]
        shown = self.shown[index]
        style = ""
        if line.kind == "heading":
            style = f"bold {colours.get('primary', '')}"
        elif line.kind in ("code", "fence"):
            style = "dim"
        elif line.kind == "quote":
            style = "italic"
        text = Text(shown, style=style)
        if line.kind not in ("code", "fence"):
            first, spans = self.line_links.get(index, (0, []))
            _style_line(text, shown, line, colours, spans, first, selected_link, self.link_style)
        if line.number in self.untagged:
            text.append(UNTAGGED_NOTE, style=f"italic {colours.get('warning', '')}")
        return text


def line_links(shown: str, number: int) -> list[tuple[int, int, LinkTarget]]:
    """The followable spans of one (visible) line, in the order they appear."""
    spans: list[tuple[int, int, LinkTarget]] = []
    for match in WIKILINK_RE.finditer(shown):
        target = match.group(1).strip()
        spans.append((match.start(), match.end(), LinkTarget("wiki", target, number, match.group(0))))
    for match in CITE_RE.finditer(shown):
        for part in match.group(1).split(","):
            spans.append((match.start(), match.end(), LinkTarget("cite", part.strip(), number, match.group(0))))
    for match in MD_LINK_RE.finditer(shown):
        spans.append((match.start(), match.end(), LinkTarget("url", match.group(2), number, match.group(1))))
    spans.sort(key=lambda item: item[0])
    return spans


def _style_line(text, shown, line, colours, spans, first, selected_link, link_style) -> None:
    if line.kind == "struck":
        for match in STRIKE_RE.finditer(shown):
            text.stylize("strike dim", match.start(), match.end())
        for match in SUPERSEDED_RE.finditer(shown):
            text.stylize(f"italic {colours.get('warning', '')}", match.start(), match.end())
    for match in TAG_RE.finditer(shown):
        tag = match.group(1).lower()
        colour = colours.get(tag, "")
        tag_style = f"bold {colour}"
        if line.kind == "struck":
            tag_style += " dim"
        text.stylize(tag_style, match.start(), match.end())
    for offset, (begin, end, target) in enumerate(spans):
        index = first + offset
        style = Style.parse(f"{link_style} {colours.get('accent' if target.kind == 'cite' else 'primary', '')}")
        if selected_link == index:
            style += Style(reverse=True)
        style += Style(meta={LINK_META: index})
        text.stylize(style, begin, end)


class RawRows(Rows):
    """Text rows: ``header`` (a message), then the file's bytes with line numbers, control
    characters and CR made visible, at most ``limit`` bytes (a last row says what is left out)."""

    def __init__(self, data: bytes | None = None, *, limit: int = 512 * 1024, header: list[Text] | None = None) -> None:
        self.header = list(header or [])
        self.raw: list[str] = []
        self.tail: list[Text] = []
        if data is not None:
            self.raw = data[:limit].decode("utf-8", "surrogateescape").split("\n")
            if len(data) > limit:
                self.tail = [Text(f"… {len(data) - limit:,} more bytes not shown", style="bold")]
        self.number_width = len(str(len(self.raw)))

    def __len__(self) -> int:
        return len(self.header) + len(self.raw) + len(self.tail)

    def _raw(self, row: int) -> tuple[int, str] | Text:
        index = row - len(self.header)
        if index < 0:
            return self.header[row]
        if index >= len(self.raw):
            return self.tail[index - len(self.raw)]
        return index, visible(self.raw[index], keep_tabs=False)

    def cells(self, row: int) -> int:
        item = self._raw(row)
        if isinstance(item, Text):
            return -max(1, len(item.plain))
        index, shown = item
        extra = self.number_width + 1 + (index + 1 < len(self.raw))  # the number, a space, ␊
        cells = _cells(shown)
        return cells + extra if cells >= 0 else cells - extra

    def plain(self, row: int) -> str:
        return self.content(row).plain

    def line_of(self, row: int) -> int | None:
        index = row - len(self.header)
        return index + 1 if 0 <= index < len(self.raw) else None

    def row_of(self, line: int) -> int:
        return max(0, min(len(self.header) + line - 1, len(self) - 1))

    def content(self, row: int, selected_link: int | None = None) -> Text:
        item = self._raw(row)
        if isinstance(item, Text):
            return item
        index, shown = item
        text = Text.assemble((f"{index + 1:>{self.number_width}} ", "dim"), shown)
        if index + 1 < len(self.raw):
            text.append("␊", style="dim")
        return text


def tag_legend(colours: dict[str, str], counts: dict[str, int] | None = None) -> Table:
    """The four source tags, what each means, and how many lines of this page carry it."""
    meanings = {
        "stated": "the user said it",
        "observed": "seen in a tool result, file or log",
        "inferred": "the agent's conclusion",
        "suggested": "the agent's idea, never committed to",
    }
    legend = Table.grid(padding=(0, 1))
    legend.add_column(no_wrap=True)
    legend.add_column(justify="right", no_wrap=True)
    legend.add_column(style="dim")
    for tag, meaning in meanings.items():
        count = "" if counts is None else str(counts.get(tag, 0))
        legend.add_row(Text(f"[{tag}]", style=f"bold {colours.get(tag, '')}"), Text(count, style="bold"), meaning)
    legend.add_row(Text("!", style=colours.get("warning", "")), "", "claim line without a tag")
    legend.add_row(Text("~", style="dim"), "", "superseded history line")
    return legend


def matching_lines(lines, terms: list[str]) -> list[int]:
    """File lines holding every term (case-folded substrings), else those holding any."""
    terms = [term.casefold() for term in terms if term.strip()]
    if not terms:
        return []
    every, some = [], []
    for line in lines:
        folded = line.text.casefold()
        found = [term in folded for term in terms]
        if all(found):
            every.append(line.number)
        elif any(found):
            some.append(line.number)
    return every or some
