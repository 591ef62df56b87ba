"""Render a ``memtui.review.diffs.PageDiff`` as unified or side-by-side Rich renderables (CLI and TUI).

The diff lines are already made visible (placeholders for control characters) by
the model; here they only get colours: added/removed lines, the changed words of
each paired line, and source tags in their tag colours. The page's path (a file
name can hold an escape sequence) and the notes go through ``one_line`` here.
``promoted``: lines of the new version whose source tag the change raises
(``Review.promoted_lines``); they end with "⚑ promoted".
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Group
from rich.table import Table
from rich.text import Text

from memtui.review import diffs
from memtui.textsafety import one_line


def _tagged(text: str, colours: Mapping[str, str], base: str = "") -> Text:
    out = Text(text, style=base)
    for start, end, tag in diffs.source_tag_spans(text):
        out.stylize(f"bold {colours.get(tag, '')}", start, end)
    return out


def _spans(text: Text, spans, style: str) -> Text:
    for start, end in spans:
        text.stylize(style, start, end)
    return text


PROMOTED = "  \u2691 promoted"


def _mark(text: Text, colours: Mapping[str, str]) -> Text:
    text.append(PROMOTED, style=f"bold reverse {colours.get('warning', '')}")
    return text


def unified(
    diff: diffs.PageDiff, colours: Mapping[str, str], promoted: frozenset[int] | set[int] = frozenset()
) -> Group:
    add = colours.get("success", "")
    remove = colours.get("error", "")
    lines = []
    header = Text(f"{one_line(diff.path)}  ({diff.action}, +{diff.added} −{diff.removed})", style="bold")
    lines.append(header)
    for note in diff.notes:
        lines.append(Text(f"  ▲ {one_line(note)}", style=colours.get("warning", "")))
    for line in diff.unified:
        if line.kind == diffs.HUNK:
            lines.append(Text(line.text, style=f"bold {colours.get('primary', '')}"))
            continue
        old = f"{line.old:>4}" if line.old else "    "
        new = f"{line.new:>4}" if line.new else "    "
        if line.kind == diffs.ADD:
            row = Text(f"{old} {new} + ", style=f"bold {add}")
            row.append_text(_tagged(line.text, colours, add))
            if line.new in promoted:
                _mark(row, colours)
        elif line.kind == diffs.REMOVE:
            row = Text(f"{old} {new} − ", style=f"bold {remove}")
            row.append_text(_tagged(line.text, colours, f"{remove} strike"))
        else:
            row = Text(f"{old} {new}   ", style="dim")
            row.append_text(_tagged(line.text, colours))
        lines.append(row)
    return Group(*lines)


def side_by_side(
    diff: diffs.PageDiff,
    colours: Mapping[str, str],
    promoted: frozenset[int] | set[int] = frozenset(),
    *,
    expand: bool = True,
) -> Table:
    add = colours.get("success", "")
    remove = colours.get("error", "")
    table = Table(
        title=Text(f"{one_line(diff.path)}  ({diff.action})", style="bold"),
        title_justify="left",
        expand=expand,
        show_lines=False,
    )
    table.add_column("", justify="right", style="dim", no_wrap=True, width=4)
    table.add_column("before", ratio=1, overflow="fold")
    table.add_column("", justify="right", style="dim", no_wrap=True, width=4)
    table.add_column("after", ratio=1, overflow="fold")
    for row in diff.side_by_side:
        if row.kind == diffs.GAP:
            table.add_row("", Text("⋯", style="dim"), "", Text("⋯", style="dim"))
            continue
        old = _tagged(row.old_text or "", colours, remove if row.kind in (diffs.REPLACE, diffs.DELETE) else "")
        new = _tagged(row.new_text or "", colours, add if row.kind in (diffs.REPLACE, diffs.INSERT) else "")
        _spans(old, row.old_spans, f"bold reverse {remove}")
        _spans(new, row.new_spans, f"bold reverse {add}")
        if row.new in promoted and row.kind in (diffs.REPLACE, diffs.INSERT):
            _mark(new, colours)
        table.add_row(str(row.old or ""), old, str(row.new or ""), new)
    return table
