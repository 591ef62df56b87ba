"""``memtui claims FIELD [QUERY] [--tag T]... [--status S] [--uncited] [--promoted] [--path GLOB] [--json]``.

Every line of the field that carries a source tag, as a table or as JSON, with
its line and page status, its citations and the weaker tag it had before when it
was promoted (``memtui.field.claims``). Filters combine; the summary counts the
listed claims per tag. Field text is hostile: every value goes through
``one_line`` before it reaches the terminal.
"""

from __future__ import annotations

import argparse
from collections import Counter

from rich.table import Table
from rich.text import Text

from memtui.cli.options import add_dialect_option
from memtui.cli.output import cell, console, expand_tables, print_json
from memtui.cli.review_common import TAG_STYLE
from memtui.dialects.open import open_field
from memtui.field.claims import CURRENT_LINE, TAGS, Claim, field_claims, select
from memtui.review import ledger
from memtui.textsafety import plural

STATUSES = ("current", "superseded")
TEXT_LIMIT = 200  # characters of a claim's text in the table (the JSON has all of it)


def register(sub: argparse._SubParsersAction) -> list[str]:
    parser = sub.add_parser("claims", help="list the field's claims (lines with a source tag), filtered")
    parser.add_argument("field", help="memory folder or .memoryfield.zip")
    parser.add_argument("query", nargs="?", default="", help="words the claim's text must all contain")
    parser.add_argument("--tag", action="append", choices=TAGS, default=[], metavar="TAG",
                        help="only claims with this source tag (" + ", ".join(TAGS) + "); repeat for several")
    parser.add_argument("--status", choices=STATUSES, metavar="STATUS",
                        help="current, or superseded (a struck line, or a page no longer current)")
    parser.add_argument("--uncited", action="store_true", help="only claims that cite nothing")
    parser.add_argument("--promoted", action="store_true", help="only claims whose tag rose since an earlier version")
    parser.add_argument("--path", metavar="GLOB", help="only pages whose path matches GLOB (e.g. 'notes/*')")
    parser.add_argument("--json", action="store_true", help="print the claims as a JSON list")
    add_dialect_option(parser)
    parser.set_defaults(handler=run)
    return ["claims"]


def status_of(claim: Claim) -> str:
    """What the table says: ``struck`` (a history line), the page's status, or ``current``."""
    if claim.line_status != CURRENT_LINE:
        return claim.line_status
    return claim.page_status


def summary_line(claims: list[Claim]) -> str:
    counts = Counter(claim.tag for claim in claims)
    parts = [f"{counts[tag]} {tag}" for tag in TAGS if counts[tag]]
    promoted = sum(1 for claim in claims if claim.promoted_from)
    uncited = sum(1 for claim in claims if not claim.cited)
    line = plural(len(claims), "claim")
    if parts:
        line += ": " + ", ".join(parts)
    return line + f"; {promoted} promoted, {uncited} uncited"


def run(args: argparse.Namespace) -> int:
    field = ledger.with_approvals(open_field(args.field, dialect=args.dialect))
    claims = select(
        field_claims(field),
        query=args.query,
        tags=args.tag,
        status=args.status,
        uncited=args.uncited,
        promoted=args.promoted,
        path_glob=args.path,
    )
    if args.json:
        print_json([claim.to_json() for claim in claims])
        return 0
    out = console()
    if claims:
        table = Table(expand=expand_tables())
        table.add_column("tag", no_wrap=True)
        table.add_column("line", overflow="fold", ratio=2)
        table.add_column("status", no_wrap=True)
        table.add_column("cited", no_wrap=True)
        table.add_column("promoted from", no_wrap=True)
        table.add_column("text", overflow="fold", ratio=5)
        for claim in claims:
            status = status_of(claim)
            table.add_row(
                cell(f"[{claim.tag}]", style=TAG_STYLE.get(claim.tag, "")),
                cell(f"{claim.path}:{claim.line}"),
                cell(status, style="" if status == "current" else "dim"),
                Text("yes", style="green") if claim.cited else Text("no", style="yellow"),
                cell(f"[{claim.promoted_from}]", style="bold red") if claim.promoted_from else Text(""),
                cell(claim.text, limit=TEXT_LIMIT, style="" if claim.status == "current" else "dim"),
            )
        out.print(table)
    out.print(Text(summary_line(claims)))
    return 0
