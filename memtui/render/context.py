"""What an agent is told next session, as Rich text: one renderer for ``memtui context`` and the TUI.

Each agent is a heading (what it loads every session, in bytes after its caps cut) and
its files in load order, one line each: how it is loaded (a glyph and a word, never a
colour alone), the path, its size, why it is loaded, its review state. Under a file:
where a cap cuts it (the lines that never reach the agent), and the findings of rules
that matter in loaded text. Then what the agent loads from outside the field (named,
never read) and what memtui cannot tell. ``colours`` maps theme colour names to colours:
the TUI passes its theme's, the CLI ``CLI_COLOURS``.
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.text import Text

from memtui.dialects.loading import ALWAYS, AUTOMATIC, ON_MATCH, AgentContext, ContextReport, LoadedFile
from memtui.render.glyphs import LOADED, SEVERITY, TRUST
from memtui.store.files import size_text
from memtui.textsafety import one_line, plural, visible

Colours = Mapping[str, str]
PATH_WIDTH = 34


def agent_heading(agent: AgentContext, colours: Colours) -> Text:
    """``Claude Code · every session: 3 files, 1.2 KB · 2 more on match · 5 on demand``."""
    counts = {mode: sum(1 for f in agent.files if f.loaded == mode) for mode in LOADED}
    text = Text(agent.title, style="bold")
    text.append(f"  ·  every session: {plural(counts[ALWAYS], 'file')}, {size_text(agent.total_bytes)}")
    cut = [f for f in agent.files if f.cut_at_line is not None]
    if cut:
        text.append(f", {plural(len(cut), 'file')} cut short", style=colours.get("warning", ""))
    if counts[ON_MATCH]:
        text.append(f"  ·  {counts[ON_MATCH]} more on match", style="dim")
    if counts["on-demand"]:
        text.append(f"  ·  {counts['on-demand']} on demand", style="dim")
    return text


def file_row(loaded: LoadedFile, colours: Colours, *, path_width: int = PATH_WIDTH, width: int | None = None) -> Text:
    """One file: how it loads, its path, size and lines, its review state, then why it loads
    (cut to fit ``width`` cells, so the row stays one line; the CLI gives it 60)."""
    glyph = LOADED.get(loaded.loaded, LOADED["unknown"])
    text = Text(f"{glyph.glyph} {glyph.word:<13} ", style=colours.get(glyph.colour, ""))
    path = visible(loaded.path)
    text.append(path.ljust(path_width) + " ", style="bold" if loaded.loaded == ALWAYS else "")
    if not loaded.exists:
        text.append(f"{'missing':>21}  ", style=colours.get("warning", ""))
    else:
        text.append(f"{size_text(loaded.bytes):>9} {plural(loaded.lines, 'line'):>11}  ", style="dim")
    trust = TRUST.get(loaded.trust) if loaded.trust is not None else None
    if trust is not None:
        text.append(f"{trust.label()}  ", style=colours.get(trust.colour, ""))
    reason = loaded.how + (f" ({loaded.pattern})" if loaded.pattern else "")
    room = 60 if width is None else max(width - text.cell_len, 12)
    text.append(one_line(reason, room), style="dim")
    return text


def file_details(loaded: LoadedFile, colours: Colours) -> list[Text]:
    """Under a file: where its cap cuts it, and the findings that reach the agent with it."""
    out: list[Text] = []
    if loaded.cut_at_line is not None and loaded.cap is not None:
        unseen = max(loaded.lines - loaded.cut_at_line + 1, 0)
        out.append(
            Text(
                f"    ✂ cut at line {loaded.cut_at_line:,} ({loaded.cap.words}): "
                f"{plural(unseen, 'line')} past it never reach the agent; {size_text(loaded.loaded_bytes)} do",
                style=colours.get("warning", ""),
            )
        )
    for finding in loaded.findings:
        glyph = SEVERITY.get(finding.severity, SEVERITY["warning"])
        where = f"line {finding.line}" if finding.line else "the file"
        out.append(
            Text(
                f"    {glyph.glyph} {where} {finding.rule}: {one_line(finding.message, 110)}",
                style=colours.get(glyph.colour, ""),
            )
        )
    return out


def shown_files(agent: AgentContext, *, all_files: bool) -> list[LoadedFile]:
    """The files listed for an agent: what it loads by itself, or with ``all_files`` every one."""
    return [f for f in agent.files if all_files or f.loaded in AUTOMATIC]


def _not_listed(files: list[LoadedFile]) -> str:
    """``50 files it reads on demand, 21 it never loads``."""
    words = {"on-demand": "it reads when it decides to", "never": "it never loads", "unknown": "memtui cannot tell"}
    parts = []
    for mode, said in words.items():
        count = sum(1 for f in files if f.loaded == mode)
        if count:
            parts.append(f"{plural(count, 'file')} {said}")
    return ", ".join(parts)


def agent_notes(agent: AgentContext, shown: list[LoadedFile], colours: Colours, *, more_hint: str) -> list[Text]:
    """After an agent's files: those not listed (``more_hint`` says how to list them), and what
    it loads from outside the field (named, never read)."""
    out: list[Text] = []
    listed = {id(f) for f in shown}
    hidden = [f for f in agent.files if id(f) not in listed]
    if hidden:
        out.append(Text(f"  and {_not_listed(hidden)} ({more_hint})", style="dim"))
    if agent.outside:
        out.append(Text("  outside the field (memtui does not read these):", style="dim"))
        out.extend(Text(f"    · {one_line(line, 160)}", style="dim") for line in agent.outside)
    return out


def unknown_lines(report: ContextReport, colours: Colours) -> list[Text]:
    """What memtui cannot tell about what loads, and why."""
    return [Text(f"? {one_line(line, 300)}", style=colours.get("secondary", "dim")) for line in report.unknown]


def context_lines(report: ContextReport, colours: Colours, *, all_files: bool = False) -> list[Text]:
    """The whole report, a line each (``memtui context``)."""
    out: list[Text] = []
    for agent in report.agents:
        if out:
            out.append(Text(""))
        out.append(agent_heading(agent, colours))
        files = shown_files(agent, all_files=all_files)
        width = min(max((len(f.path) for f in files), default=10), 60)
        for loaded in files:
            out.append(Text("  ") + file_row(loaded, colours, path_width=width))
            out.extend(file_details(loaded, colours))
        out.extend(agent_notes(agent, files, colours, more_hint="--all lists them"))
    out.extend(unknown_lines(report, colours))
    return out
