"""``memtui claims FIELD [QUERY] [--tag T]... [--status S] [--uncited] [--promoted] [--path GLOB] [--json]``.

Every line of the field that carries a source tag, as a table or as JSON, with
its line and page status, its citations and the weaker tag it had before when it
was promoted (``memtui.field.claims``). Filters combine; the summary counts the
listed claims per tag. Field text is hostile: every value goes through
``one_line`` before it reaches the terminal.
"""

from __future__ import annotations

import argparse
import gc
from collections import Counter

from rich.cells import cell_len
from rich.text import Text

from memtui.cli.options import add_field_options, examples, open_field
from memtui.cli.output import console, print_json_list
from memtui.cli.review_common import TAG_STYLE
from memtui.field.claims import CURRENT_LINE, TAGS, Claim, field_claims, select
from memtui.textsafety import one_line, plural

STATUSES = ("current", "superseded", "unrecorded")


def register(sub: argparse._SubParsersAction) -> list[str]:
    parser = sub.add_parser(
        "claims",
        help="list the field's claims (lines with a source tag), filtered",
        **examples(
            "memtui claims sample-field --promoted",
            "memtui claims sample-field --tag stated --uncited",
            "memtui claims sample-field postgres --json",
        ),
    )
    parser.add_argument("field", help="memory folder or .memoryfield.zip")
    parser.add_argument("query", nargs="?", default="", help="words the claim's text must all contain")
    parser.add_argument(
        "--tag",
        action="append",
        choices=TAGS,
        default=[],
        metavar="TAG",
        help="only claims with this source tag (" + ", ".join(TAGS) + "); repeat for several",
    )
    parser.add_argument(
        "--status",
        choices=STATUSES,
        metavar="STATUS",
        help="current, superseded (a struck line, or a page no longer current), or unrecorded (its format keeps no status)",
    )
    parser.add_argument("--uncited", action="store_true", help="only claims that cite nothing")
    parser.add_argument("--promoted", action="store_true", help="only claims whose tag rose since an earlier version")
    parser.add_argument("--path", metavar="GLOB", help="only pages whose path matches GLOB (e.g. 'notes/*')")
    parser.add_argument("--json", action="store_true", help="print the claims as a JSON list")
    add_field_options(parser)
    parser.set_defaults(handler=run)
    return ["claims"]


def status_of(claim: Claim) -> str:
    """What the table says: ``struck`` (a history line), the page's status, or ``current``."""
    if claim.line_status != CURRENT_LINE:
        return claim.line_status
    return claim.page_status


def summary_line(claims: list[Claim]) -> str:
    counts = Counter(claim.tag for claim in claims)
    parts = [f"{counts[tag]:,} {tag}" for tag in TAGS if counts[tag]]
    promoted = sum(1 for claim in claims if claim.promoted_from)
    uncited = sum(1 for claim in claims if not claim.cited)
    line = plural(len(claims), "claim")
    if parts:
        line += ": " + ", ".join(parts)
    return line + f"; {promoted:,} promoted, {uncited:,} uncited"


HEADERS = ("tag", "line", "status", "cited", "promoted from", "text")
PATH_WIDTH = 60  # a longer path:line pushes its own row, not every row
CHUNK = 5000  # lines a write


def _rows(claims: list[Claim]) -> list[tuple[str, str, str, str, str, str]]:
    """Each claim's values, made inert (``one_line``): no markup, no control sequences. Values that
    repeat (tags, statuses, a page's path) are made inert once."""
    inert: dict[str, str] = {}

    def once(value: str) -> str:
        found = inert.get(value)
        if found is None:
            found = inert[value] = one_line(value)
        return found

    return [
        (
            once(f"[{claim.tag}]"),
            once(claim.path) + f":{claim.line}",
            once(status_of(claim)),
            "yes" if claim.cited else "no",
            once(f"[{claim.promoted_from}]") if claim.promoted_from else "",
            one_line(claim.text),
        )
        for claim in claims
    ]


def _pad(value: str, width: int) -> str:
    return value + " " * (width - cell_len(value))


def _styles(out, names: set[str]) -> dict[str, tuple[str, str]]:
    """What each style writes before and after a value on this console (nothing when it has no colours)."""
    found: dict[str, tuple[str, str]] = {}
    for name in names:
        if not name or not out.is_terminal or out.no_color or out.color_system is None:
            found[name] = ("", "")
            continue
        with out.capture() as captured:
            out.print(Text("\x00", style=name), end="")
        before, _, after = captured.get().partition("\x00")
        found[name] = (before, after)
    return found


def print_table(claims: list[Claim]) -> None:
    """Aligned columns, one claim a line, written straight to the console's file with each style's
    codes worked out once: a Rich table costs about 0.5 ms a row (87 s for the 160,000 uncited claims
    of a 10,000-page field). Every value is inert (``_rows``)."""
    out = console()
    rows = _rows(claims)
    # Tags, statuses and promotions have a few distinct values: pad each once.
    padded: list[dict[str, str]] = [{}, {}, {}, {}, {}]
    widths = [len(h) for h in HEADERS[:-1]]
    for index in (0, 2, 3, 4):
        values = {row[index] for row in rows}
        widths[index] = max([widths[index], *(cell_len(v) for v in values)])
        padded[index] = {v: _pad(v, widths[index]) for v in values}
    widths[1] = min(max([widths[1], *(cell_len(row[1]) for row in rows)]), PATH_WIDTH)
    style = _styles(out, {"", "bold", "dim", "green", "yellow", "bold red", *TAG_STYLE.values()})
    room = max(out.width - sum(widths) - 2 * len(widths), 30) if out.is_terminal else None

    def paint(value: str, name: str) -> str:
        before, after = style[name]
        return before + value + after if before else value

    bold = style["bold"]
    lines = [bold[0] + "  ".join(_pad(h, w) for h, w in zip(HEADERS, [*widths, 0])).rstrip() + bold[1]]
    for claim, (tag, where, status, cited, promoted, text) in zip(claims, rows):
        if room is not None and len(text) > room:
            text = text[: room - 1] + "\u2026"
        lines.append(
            "  ".join(
                (
                    paint(padded[0][tag], TAG_STYLE.get(claim.tag, "bold")),
                    where + " " * (widths[1] - len(where)) if where.isascii() else _pad(where, widths[1]),
                    paint(padded[2][status], "" if status == "current" else "dim"),
                    paint(padded[3][cited], "green" if claim.cited else "yellow"),
                    paint(padded[4][promoted], "bold red" if promoted else ""),
                    text if claim.status == "current" else paint(text, "dim"),
                )
            ).rstrip()
        )
    for start in range(0, len(lines), CHUNK):
        out.file.write("\n".join(lines[start : start + CHUNK]) + "\n")
    out.file.flush()


def run(args: argparse.Namespace) -> int:
    # The command makes 200,000 claims at 10,000 pages and keeps them till it has printed: the cycle
    # collector has nothing to find in them. Paused meanwhile, and what it made frozen at the end, the
    # collector walks them neither while the output is made nor once more at exit (1.2 s of 3.5).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _run(args)
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


def _run(args: argparse.Namespace) -> int:
    field = open_field(args)
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
        print_json_list([claim.to_json() for claim in claims])
        return 0
    if claims:
        print_table(claims)
    console().print(Text(summary_line(claims)))
    return 0
