"""``memtui quarantine list|show|approve|reject FIELD [PAGE...]``: review quarantined pages.

A PAGE may be written ``PATH@SHA256`` (or a prefix of 12+ hex digits, as
``list`` prints it) to bind the decision to the version the reviewer saw: if
the page changed since, nothing is done. ``--session SOURCE`` decides on every
page of one group of the queue (one confirmation).
"""

from __future__ import annotations

import argparse

from rich.table import Table
from rich.text import Text

from memtui.cli.decisions import register_undo
from memtui.cli.options import examples, open_field
from memtui.cli.output import cell, console, expand_tables, print_json
from memtui.cli.review_common import (
    add_common,
    confirm,
    declined,
    ensure_can_ask,
    friendly_errors,
    open_for_review,
    prompt_console,
    tagged,
)
from memtui.dialects.detect import instruction_path
from memtui.errors import MemtuiError
from memtui.field.trust import nothing_waiting
from memtui.review import injection
from memtui.review import quarantine as qmod
from memtui.review import undo as undo_mod
from memtui.textsafety import one_line, plural

HASH_SHOWN = 12


def register(sub: argparse._SubParsersAction) -> list[str]:
    parser = sub.add_parser(
        "quarantine",
        help="review quarantined and unreviewed pages",
        **examples(
            "memtui quarantine list sample-field",
            "memtui quarantine show sample-field PAGE",
            "memtui quarantine reject sample-field PAGE --reason 'vendor page' --yes",
        ),
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    listing = actions.add_parser("list", help="pages waiting for review, grouped by what tainted them")
    add_common(listing)
    listing.set_defaults(handler=run_list)

    show = actions.add_parser("show", help="one page in full: raw text, frontmatter, flagged lines")
    add_common(show)
    show.add_argument("page", help="page path inside the field")
    show.add_argument("--to", metavar="FOLDER", help="preview approving into FOLDER")
    show.set_defaults(handler=run_show)

    approve = actions.add_parser("approve", help="mark pages reviewed and move them out of quarantine/")
    add_common(approve, reviewer=True)
    approve.add_argument("pages", nargs="*", metavar="PAGE", help="page path, or PATH@SHA256 to bind to a version")
    approve.add_argument("--session", metavar="SOURCE", help="every page of this queue group (see list)")
    approve.add_argument("--to", metavar="FOLDER", help="move approved pages into FOLDER (else their move_to:)")
    approve.add_argument("--add-to-memory", action="store_true", help="also add a pointer line to MEMORY.md")
    approve.add_argument(
        "--allow-instruction-path",
        action="store_true",
        help="confirm that --to makes the pages files an agent loads as instructions (CLAUDE.md, .claude/ ...)",
    )
    approve.add_argument("--reason", help="a note for the ledger")
    approve.set_defaults(handler=run_approve)

    reject = actions.add_parser("reject", help="move pages to .memtui/archive/rejected/ and record why")
    add_common(reject, reviewer=True)
    reject.add_argument("pages", nargs="*", metavar="PAGE", help="page path, or PATH@SHA256 to bind to a version")
    reject.add_argument("--session", metavar="SOURCE", help="every page of this queue group (see list)")
    reject.add_argument("--reason", required=True, help="why the pages are rejected (recorded in the ledger)")
    reject.set_defaults(handler=run_reject)
    register_undo(actions, undo_mod.QUARANTINE)
    return ["quarantine"]


# --------------------------------------------------------------------------- list / show


def _tainted_transcripts(field) -> int:
    """Session transcripts that read outside content: tainted, but evidence, never in the queue."""
    from memtui.field import trust

    return sum(
        1
        for info in field
        if info.path.startswith(qmod.SESSIONS_PREFIX) and field.trust(info.path) == trust.QUARANTINED
    )


def _flag_text(flags: dict[str, int]) -> Text:
    out = Text()
    if flags.get(injection.DANGER):
        out.append(f"\u25b2 {flags[injection.DANGER]} danger", style="bold red")
    if flags.get(injection.NOTICE):
        if out.plain:
            out.append("  ")
        out.append(f"{flags[injection.NOTICE]} notice", style="yellow")
    return out


def _item_table(title: str, items: list[qmod.QueueItem]) -> Table:
    table = Table(title=Text(title), title_justify="left", expand=expand_tables())
    table.add_column("page / title", overflow="fold", ratio=3)
    table.add_column("created / sha256", no_wrap=True)
    table.add_column("approve to", overflow="fold", ratio=2)
    table.add_column("flags", overflow="fold", ratio=1)
    for item in items:
        destination = (
            Text(f"\u2716 {one_line(item.destination_problem)}", style="red")
            if item.destination_problem
            else cell(item.destination or "(stays)")
        )
        page = cell(item.path, style="bold") + Text("\n") + cell(item.title, limit=80, style="dim")
        version = cell((item.created or "?")[:16]) + Text(f"\n{item.sha256[:HASH_SHOWN]}", style="dim")
        table.add_row(page, version, destination, _flag_text(item.flags))
    return table


@friendly_errors
def run_list(args: argparse.Namespace) -> int:
    root, _ = open_for_review(args.field, write=False)
    field = open_field(args, root)
    queue = qmod.quarantine_queue(field)
    if args.json:
        print_json(queue.to_json())
        return 0
    out = console()
    if not queue.groups and not queue.unreviewed:
        counts: dict[str, int] = {}
        for path in field.pages:
            state = field.trust(path)
            counts[state] = counts.get(state, 0) + 1
        out.print(Text(nothing_waiting(counts)))
        return 0
    out.print(Text(f"Quarantined: {plural(len(queue.quarantined), 'page')}, by source, oldest first", style="bold"))
    for group in queue.groups:
        out.print(_item_table(f"from {one_line(group.source)}", group.items))
    out.print(Text(f"Unreviewed (not tainted): {plural(len(queue.unreviewed), 'page')}", style="bold"))
    if queue.unreviewed:
        out.print(_item_table("unreviewed", queue.unreviewed))
    transcripts = _tainted_transcripts(field)
    if transcripts:
        out.print(
            Text(
                f"not counted: {plural(transcripts, 'tainted session transcript')} under sessions/ (evidence, kept as is, never reviewed)",
                style="dim",
            )
        )
    return 0


def _print_review(review: qmod.PageReview) -> None:
    out = console()
    out.print(Text(f"{one_line(review.path)}  ({review.state})", style="bold"))
    out.print(Text(f"sha256 {review.sha256}"))
    if review.source:
        out.print(Text("tainted by: ") + cell(review.source))
    for source in review.sources:
        out.print(Text("source: ") + cell(source))
    if review.frontmatter_error:
        out.print(Text("frontmatter error: ", style="bold red") + cell(review.frontmatter_error))
    if review.destination_problem:
        out.print(Text("cannot approve here: ", style="bold red") + cell(review.destination_problem))
    else:
        out.print(Text("approving moves it to: ") + cell(review.destination or "(stays where it is)"))
    flagged = review.flagged_lines()
    width = len(str(len(review.lines)))
    out.print(Text("\u2500" * 60, style="dim"))
    for number, line in enumerate(review.lines, start=1):
        flags = flagged.get(number, [])
        danger = any(f.severity == injection.DANGER for f in flags)
        marker = Text("\u25b2" if danger else ("\u00b7" if flags else " "), style="bold red" if danger else "yellow")
        out.print(marker + Text(f" {number:>{width}} \u2502 ", style="dim") + tagged(line))
        for flag in flags:
            out.print(
                Text(" " * (width + 4) + "\u2514 ", style="dim")
                + Text(f"{flag.rule}: ", style="bold red" if flag.severity == injection.DANGER else "yellow")
                + cell(flag.reason)
            )
    out.print(Text("\u2500" * 60, style="dim"))
    counts = injection.counts(review.flags)
    out.print(Text(f"{counts[injection.DANGER]} danger flags, {counts[injection.NOTICE]} notices"))


@friendly_errors
def run_show(args: argparse.Namespace) -> int:
    root, _ = open_for_review(args.field, write=False)
    path, _digest = qmod.parse_bound(args.page)
    review = qmod.inspect_page(root, _normalise(path), to=args.to)
    if args.json:
        print_json(review.to_json())
    else:
        _print_review(review)
    return 0


# --------------------------------------------------------------------------- decisions


def _normalise(path: str) -> str:
    text = path.replace("\\", "/")
    while text.startswith("./"):
        text = text[2:]
    return text


def _selected(root, args: argparse.Namespace) -> list[tuple[str, str | None]]:
    items: list[tuple[str, str | None]] = []
    for arg in args.pages:
        path, digest = qmod.parse_bound(arg)
        items.append((_normalise(path), digest))
    if args.session:
        group = qmod.quarantine_queue(open_field(args, root)).group(args.session)
        if group is None:
            raise MemtuiError(
                f"no quarantined pages from {args.session!r}", "see the sources with: memtui quarantine list FIELD"
            )
        named = {path for path, _ in items}
        items.extend((path, digest) for path, digest in group.bound() if path not in named)
    if not items:
        raise MemtuiError("name the pages to decide on", "give PAGE paths or --session SOURCE")
    return items


def _bind_for_prompt(
    root, items: list[tuple[str, str | None]], to: str | None, out, *, allow_instruction_path: bool = False
) -> list[tuple[str, str | None]]:
    """Show each page's hash, destination and danger flags; bind the decision to those hashes."""
    bound: list[tuple[str, str | None]] = []
    for path, digest in items:
        review = qmod.inspect_page(root, path, to=to, allow_instruction_path=allow_instruction_path)
        if digest is not None and not review.sha256.startswith(digest):
            raise MemtuiError(f"{path} changed since it was shown", "look at it again with: memtui quarantine show")
        bound.append((path, review.sha256))
        counts = injection.counts(review.flags)
        line = cell(path, style="bold") + Text(f"  {review.sha256[:HASH_SHOWN]}  ")
        line.append_text(_flag_text(counts))
        out.print(line)
        if review.destination:
            out.print(Text("    moves to ") + cell(review.destination))
        if review.becomes:
            out.print(Text("    DANGER: it becomes ", style="bold red") + cell(review.becomes))
        for flag in review.flags:
            if flag.severity == injection.DANGER:
                out.print(Text(f"    line {flag.line} {flag.rule}: ", style="red") + cell(flag.excerpt))
    return bound


PAST = {"Approve": "approved", "Reject": "rejected"}


def _decide(args: argparse.Namespace, verb: str, run) -> int:
    root, _ = open_for_review(args.field, write=True)
    ensure_can_ask(args)
    items = _selected(root, args)
    if not args.yes:
        items = _bind_for_prompt(
            root,
            items,
            getattr(args, "to", None),
            prompt_console(args),
            allow_instruction_path=getattr(args, "allow_instruction_path", False),
        )
        if not confirm(f"{verb} {plural(len(items), 'page')}?", args):
            return declined()
    decisions = run(root, items)
    if args.json:
        print_json({"decisions": [d.to_json() for d in decisions]})
        return 0
    for decision in decisions:
        line = Text(f"{PAST[verb]} ", style="green") + cell(decision.path)
        if decision.moved_to:
            line.append(" \u2192 ")
            line.append_text(cell(decision.moved_to))
            becomes = instruction_path(decision.moved_to)
            if becomes:
                line.append_text(Text("  now ", style="bold red") + cell(becomes))
        console().print(line)
    return 0


@friendly_errors
def run_approve(args: argparse.Namespace) -> int:
    def run(root, items):
        field = open_field(args, root) if args.add_to_memory else None
        return qmod.approve_pages(
            root,
            items,
            reviewer=args.reviewer,
            to=args.to,
            add_to_memory=args.add_to_memory,
            reason=args.reason,
            field=field,
            allow_instruction_path=args.allow_instruction_path,
        )

    return _decide(args, "Approve", run)


@friendly_errors
def run_reject(args: argparse.Namespace) -> int:
    def run(root, items):
        return qmod.reject_pages(root, items, reason=args.reason, reviewer=args.reviewer)

    return _decide(args, "Reject", run)
