"""``memtui history FIELD PAGE-OR-SUBJECT [--json] [--as-of DATE]``."""

from __future__ import annotations

import argparse
import datetime as _dt

from rich.table import Table
from rich.text import Text

from memtui.cli.options import add_field_options, examples, open_field
from memtui.cli.output import cell, console, print_json
from memtui.errors import MemtuiError
from memtui.field.history import CURRENT, SUPERSEDED, describe_event
from memtui.render.glyphs import STATUS, cli_style
from memtui.textsafety import one_line


def _iso_date(text: str) -> str:
    """argparse type for --as-of: a bad date is a usage error (exit 2)."""
    try:
        return _dt.date.fromisoformat(text).isoformat()
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date: {text!r}; write it as YYYY-MM-DD") from None


def register(sub: argparse._SubParsersAction) -> list[str]:
    parser = sub.add_parser(
        "history",
        help="show the supersede history of a page or subject",
        **examples(
            'memtui history sample-field "public api"',
            "memtui history sample-field decision/public-api --as-of 2026-05-01",
        ),
    )
    parser.add_argument("field", help="memory folder or .memoryfield.zip")
    parser.add_argument("target", help="a page (path, id, title) or a subject (exact, glob or words)")
    parser.add_argument("--json", action="store_true", help="print versions as JSON")
    parser.add_argument("--as-of", metavar="DATE", type=_iso_date, help="show only what was valid on DATE (YYYY-MM-DD)")
    add_field_options(parser)
    parser.set_defaults(handler=run)
    return ["history"]


def run(args: argparse.Namespace) -> int:
    field = open_field(args)
    chains = field.history.lookup(args.target)
    chains = [c for c in chains if c.versions]
    if not chains:
        raise MemtuiError(f"no page or subject matches {args.target!r}", "try a path, an id or a subject")
    if args.as_of:
        held = [(c, c.as_of(args.as_of)) for c in chains]
        if args.json:
            print_json([v.to_json() for _, v in held if v is not None])
            return 0
        for chain, version in held:
            line = Text(f"{one_line(chain.name)} on {args.as_of}: ", style="bold")
            line.append_text(cell(version.title) if version else Text("nothing recorded yet", style="dim"))
            console().print(line)
        return 0
    if args.json:
        print_json([v.to_json() for c in chains for v in c.versions])
        return 0
    out = console()
    for chain in chains:
        title = Text(f"{one_line(chain.name)}  ({chain.form} history, oldest first)")
        table = Table(title=title, title_justify="left")
        table.add_column("status", no_wrap=True)
        table.add_column("version", overflow="fold")
        table.add_column("valid", no_wrap=True)
        table.add_column("sources", overflow="fold")
        table.add_column("replaced", overflow="fold")
        for version in chain.versions:
            current = version.status == CURRENT
            glyph = STATUS.get(version.status, STATUS[SUPERSEDED])
            status = Text(glyph.label(), style=cli_style(glyph))
            where = version.path if version.line is None else f"{version.path}:{version.line}"
            label = cell(version.title, style="" if current else "dim")
            label.append("\n")
            label.append_text(cell(where, style="dim"))
            if version.tag:
                label.append(f"  [{version.tag}]", style="dim")
            for event in version.events:
                label.append("\n")
                label.append_text(cell(describe_event(event), style="dim"))
            table.add_row(
                status,
                label,
                f"{version.valid_from or '?'} → {version.valid_to or 'now'}",
                cell("; ".join(version.sources) or "-"),
                cell(", ".join(version.supersedes) or "-"),
            )
        out.print(table)
        currents = chain.current
        if len(currents) > 1:
            out.print(Text(f"  ▲ {len(currents)} versions are current at once: a contradiction", style="yellow"))
    return 0
