"""Render a page's body for auditing: source tags coloured, history dimmed, links followable.

Every span is built on the *visible* form of the line (control, bidi and
zero-width characters already replaced by placeholders), so page text can never
reach the terminal as control sequences, and never as markup: styles are applied
to ``Text`` objects, and clickable spans carry a ``memtui-link`` index in their
style meta (no action strings built from page text).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.style import Style
from rich.table import Table
from rich.text import Text

from memtui.field.body import CITE_RE, MD_LINK_RE, SUPERSEDED_RE, TAG_RE, WIKILINK_RE
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


@dataclass
class RenderedBody:
    text: Table  # a grid: line number, marker, the line (wrapped under itself)
    links: list[LinkTarget]
    line_offsets: dict[int, int]  # file line number -> row index in the grid
    rows: list[Text]  # the content cell of each row, to measure wrapped heights
    gutter: int  # cells taken by the line number and marker columns

    def y_of_row(self, row: int, width: int, console) -> int:
        """The rendered line where grid row ``row`` starts, at a body ``width``."""
        content_width = max(1, width - self.gutter)
        y = 0
        for text in self.rows[:row]:
            y += max(1, len(text.wrap(console, content_width)))
        return y

    def row_at_y(self, y: int, width: int, console) -> int:
        """The grid row shown on rendered line ``y`` (the inverse of ``y_of_row``)."""
        content_width = max(1, width - self.gutter)
        top = 0
        for row, text in enumerate(self.rows):
            top += max(1, len(text.wrap(console, content_width)))
            if top > y:
                return row
        return max(0, len(self.rows) - 1)


def render_body(
    parsed: ParsedPage,
    colours: dict[str, str],
    *,
    fact_page: bool,
    selected_link: int | None = None,
    link_style: str = "underline",
    agent_view_ends: int | None = None,
) -> RenderedBody:
    """The body as a grid; ``agent_view_ends``: the last line an agent loads (a marker follows it)."""
    grid = Table.grid(padding=(0, 1), expand=True)
    grid.add_column(justify="right", style="dim", no_wrap=True)
    grid.add_column(no_wrap=True, width=1)
    grid.add_column(ratio=1, overflow="fold")
    links: list[LinkTarget] = []
    offsets: dict[int, int] = {}
    rows: list[Text] = []
    untagged = set(parsed.body.untagged_claim_lines) if fact_page else set()
    for line in parsed.body.lines:
        offsets[line.number] = len(rows)
        shown = visible(line.text)
        if line.number in untagged:
            marker = Text("!", style=f"bold {colours.get('warning', '')}")
        elif line.kind == "struck":
            marker = Text("~", style="dim")
        else:
            marker = Text(" ")
        text = Text()
        start = 0
        style = ""
        if line.kind == "heading":
            style = f"bold {colours.get('primary', '')}"
        elif line.kind in ("code", "fence"):
            style = "dim"
        elif line.kind == "quote":
            style = "italic"
        text.append(shown, style=style)
        if line.kind not in ("code", "fence"):
            _style_line(text, start, shown, line, colours, links, selected_link, link_style)
        if line.number in untagged:
            text.append("  ⟵ untagged claim", style=f"italic {colours.get('warning', '')}")
        grid.add_row(str(line.number), marker, text)
        rows.append(text)
        if agent_view_ends is not None and line.number == agent_view_ends:
            cut = Text(
                f"──── the agent's view ends here: Claude Code loads lines 1-{agent_view_ends} only ────",
                style=f"bold reverse {colours.get('warning', '')}",
            )
            grid.add_row("", Text("✂", style=f"bold {colours.get('warning', '')}"), cut)
            rows.append(cut)
    number_width = len(str(parsed.body.lines[-1].number)) if parsed.body.lines else 1
    return RenderedBody(grid, links, offsets, rows, number_width + 1 + 1 + 2)


def _style_line(text, start, shown, line, colours, links, selected_link, link_style) -> None:
    if line.kind == "struck":
        for match in STRIKE_RE.finditer(shown):
            text.stylize("strike dim", start + match.start(), start + match.end())
        for match in SUPERSEDED_RE.finditer(shown):
            text.stylize(f"italic {colours.get('warning', '')}", start + match.start(), start + match.end())
    for match in TAG_RE.finditer(shown):
        tag = match.group(1).lower()
        colour = colours.get(tag, "")
        tag_style = f"bold {colour}"
        if line.kind == "struck":
            tag_style += " dim"
        text.stylize(tag_style, start + match.start(), start + match.end())
    spans: list[tuple[int, int, LinkTarget]] = []
    for match in WIKILINK_RE.finditer(shown):
        target = match.group(1).strip()
        spans.append((match.start(), match.end(), LinkTarget("wiki", target, line.number, match.group(0))))
    for match in CITE_RE.finditer(shown):
        for part in match.group(1).split(","):
            spans.append(
                (match.start(), match.end(), LinkTarget("cite", part.strip(), line.number, match.group(0)))
            )
    for match in MD_LINK_RE.finditer(shown):
        spans.append((match.start(), match.end(), LinkTarget("url", match.group(2), line.number, match.group(1))))
    spans.sort(key=lambda item: item[0])
    for begin, end, target in spans:
        index = len(links)
        links.append(target)
        style = Style.parse(f"{link_style} {colours.get('accent' if target.kind == 'cite' else 'primary', '')}")
        if selected_link == index:
            style += Style(reverse=True)
        style += Style(meta={LINK_META: index})
        text.stylize(style, start + begin, start + end)


def render_raw(data: bytes, *, limit: int = 512 * 1024) -> Text:
    """The exact file bytes with line numbers; control characters and CR made visible."""
    truncated = len(data) > limit
    raw = data[:limit].decode("utf-8", "surrogateescape")
    lines = raw.split("\n")
    width = len(str(len(lines)))
    text = Text()
    for number, line in enumerate(lines, start=1):
        text.append(f"{number:>{width}} ", style="dim")
        text.append(visible(line, keep_tabs=False))
        text.append("␊\n" if number < len(lines) else "", style="dim")
    if truncated:
        text.append(f"\n… {len(data) - limit:,} more bytes not shown", style="bold")
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
