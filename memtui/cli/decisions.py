"""``memtui quarantine|proposals undo`` and ``... decided``: take a decision back, list who decided what.

``undo`` takes back the latest decision still in force (or the one on a named
page or proposal), after showing what it will change and asking ``[y/N]``
(``--yes`` without a terminal). ``decided`` lists decisions newest first with
who, when and why, and which were undone.
"""

from __future__ import annotations

import argparse

from rich.table import Table
from rich.text import Text

from memtui.cli.output import cell, console, expand_tables, print_json
from memtui.cli.review_common import (
    add_common,
    confirm,
    declined,
    ensure_can_ask,
    friendly_errors,
    open_for_review,
    print_diff,
    prompt_console,
)
from memtui.errors import MemtuiError
from memtui.review import ledger
from memtui.review import undo as undo_mod
from memtui.textsafety import one_line, plural

ACTIONS_OF_KIND = {
    undo_mod.QUARANTINE: ledger.QUARANTINE_ACTIONS,
    undo_mod.PROPOSALS: ledger.PROPOSAL_ACTIONS,
}


def register_undo(actions: argparse._SubParsersAction, kind: str) -> None:
    what = "page" if kind == undo_mod.QUARANTINE else "proposal"
    parser = actions.add_parser("undo", help=f"take back the latest {what} decision (approve or reject)")
    add_common(parser, reviewer=True)
    parser.add_argument(
        "target",
        nargs="?",
        metavar="PAGE" if kind == undo_mod.QUARANTINE else "ID",
        help=f"undo the latest decision on this {what} (default: the latest of all)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="undo even if a page was edited since (the edits are kept in .memtui/blobs/)",
    )
    parser.add_argument("--reason", help="a note for the ledger")
    parser.set_defaults(handler=friendly_errors(lambda args: run_undo(args, kind)))

    decided = actions.add_parser("decided", help=f"{what} decisions, newest first: who, when, why, undone or not")
    add_common(decided, reviewer=True)
    decided.add_argument(
        "--adopt",
        metavar="LINE",
        action="append",
        help="vouch for an unverified ledger line (its number, or 'all'): signed now, it counts again",
    )
    decided.add_argument(
        "--accept-loss", action="store_true", help="accept that the ledger lost decisions (stop reporting it)"
    )
    decided.set_defaults(handler=friendly_errors(lambda args: run_decided(args, kind)))


def run_undo(args: argparse.Namespace, kind: str) -> int:
    root, _ = open_for_review(args.field, write=True)
    ensure_can_ask(args)
    decision = undo_mod.latest(root, kind=kind, target=args.target)
    if decision is None:
        target = f" on {args.target}" if args.target else ""
        raise MemtuiError(f"no decision to undo{target}", f"see the decisions with: memtui {kind} decided FIELD")
    plan = undo_mod.plan_undo(root, decision)
    if not args.yes:
        out = prompt_console(args)
        out.print(Text("undo: ", style="bold") + cell(plan.summary))
        if decision.reason:
            out.print(Text("  reason given: ") + cell(decision.reason))
        for page in plan.pages:
            line = Text(f"  {page.what}: ") + cell(page.path)
            if page.conflict:
                line.append("  (edited since: those edits are replaced, kept in .memtui/blobs/)", style="bold red")
            out.print(line)
            if page.diff is not None and not args.json:
                print_diff(page.diff, side_by_side=False)
        if not plan.pages:
            out.print(Text("  no page changes; it becomes pending again"))
    if plan.problems:
        raise MemtuiError(
            f"cannot undo: {plan.problems[0]}", "put the page back by hand from .memtui/archive/ or .memtui/blobs/"
        )
    if plan.conflicts and not args.force:
        raise MemtuiError(
            f"{', '.join(p.path for p in plan.conflicts)} changed since it was decided",
            "use --force to undo anyway (the later edits are kept in .memtui/blobs/)",
        )
    if not confirm(f"Undo: {plan.summary}?", args):
        return declined()
    undone, entry = undo_mod.undo(root, decision=decision, reviewer=args.reviewer, reason=args.reason, force=args.force)
    if args.json:
        print_json({"undone": undone.to_json(), "undo": entry.to_json()})
        return 0
    console().print(Text("undone: ", style="green") + cell(undo_mod.describe(undone)))
    return 0


def _change_record(args: argparse.Namespace) -> None:
    """``--adopt`` / ``--accept-loss``: the reviewer's explicit word on what memtui cannot verify."""
    if not (args.adopt or args.accept_loss):
        return
    root, _ = open_for_review(args.field, write=True)
    what = " and ".join(
        x for x, on in (("adopt ledger lines", args.adopt), ("accept the loss", args.accept_loss)) if on
    )
    if not confirm(f"Record that you {what}?", args):
        raise MemtuiError("nothing was recorded", "answer y, or add --yes")
    if args.adopt:
        every = any(item.strip().lower() == "all" for item in args.adopt)
        try:
            numbers = None if every else [int(item) for item in args.adopt]
        except ValueError:
            raise MemtuiError(
                "--adopt takes ledger line numbers or 'all'", "see them with: memtui ... decided FIELD"
            ) from None
        adopted = ledger.adopt(root, numbers, reviewer=args.reviewer)
        console().print(Text(f"adopted {plural(len(adopted), 'ledger line')}", style="green"))
    if args.accept_loss:
        lost = ledger.accept_loss(root)
        console().print(Text(f"accepted the loss of {plural(lost, 'decision')}", style="yellow"))


def run_decided(args: argparse.Namespace, kind: str) -> int:
    _change_record(args)
    root, _ = open_for_review(args.field, write=False)
    read = ledger.read(root)
    records = ledger.decision_records(read.entries, ACTIONS_OF_KIND[kind])
    if args.json:
        print_json(
            {
                "decisions": [record.to_json() for record in records],
                "problems": [one_line(problem) for problem in read.problems],
            }
        )
        return 0
    for problem in read.problems:  # what memtui could not verify is shown, never silently dropped
        console().print(Text("\u25b2 ", style="bold red") + cell(problem))
    if not records:
        console().print(Text("no decisions yet"))
        return 0
    table = Table(title=Text(plural(len(records), "decision")), title_justify="left", expand=expand_tables())
    for name in ("when", "who", "decision", "page" if kind == undo_mod.QUARANTINE else "proposal", "why"):
        table.add_column(name, overflow="fold")
    for record in records:
        entry = record.entry
        word = Text(undo_mod.VERB.get(entry.action, entry.action))
        if record.undone_by is not None:
            word.stylize("strike")
            word.append(f" (undone {record.undone_by.ts})", style="dim")
        table.add_row(cell(entry.ts), cell(entry.who), word, cell(entry.target), cell(entry.reason or ""))
    console().print(table)
    return 0
