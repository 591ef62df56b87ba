"""``memtui proposals list|show|approve|reject|revert|stats FIELD [ID]``: review dream-job proposals.

Both carriers are listed together: staging trees under ``.dream/proposals/``
and, in a git field, branches ``dream/<id>``. ``approve`` applies every page or
none; a stale proposal needs ``--accept-stale`` (the three-way difference is
printed first); ``revert`` refuses pages edited since the approval unless
``--force`` (the edits that would be lost are printed first).
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
    print_diff,
)
from memtui.errors import MemtuiError
from memtui.render.glyphs import PROPOSAL_STATES, cli_style
from memtui.render.review import CLI_COLOURS, age_text, review_parts, three_way_parts
from memtui.review import proposals as pmod
from memtui.review import undo as undo_mod
from memtui.textsafety import plural


def register(sub: argparse._SubParsersAction) -> list[str]:
    parser = sub.add_parser(
        "proposals",
        help="review proposals from maintenance (dream) jobs",
        **examples(
            "memtui proposals list sample-field",
            "memtui proposals show sample-field ID",
            "memtui proposals approve sample-field ID --yes",
        ),
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)

    listing = actions.add_parser("list", help="pending proposals with state and validation")
    add_common(listing)
    listing.add_argument("--all", action="store_true", help="include approved, rejected and reverted proposals")
    listing.add_argument("--no-checks", action="store_true", help="skip running the checks on each result")
    listing.set_defaults(handler=run_list)

    show = actions.add_parser("show", help="diffs, rationale, evidence and checks of one proposal")
    add_common(show)
    show.add_argument("id", help="proposal id")
    show.add_argument("--side-by-side", action="store_true", help="side-by-side diffs with word highlights")
    show.add_argument("--full", action="store_true", help="every line, not only the changed hunks")
    show.set_defaults(handler=run_show)

    approve = actions.add_parser("approve", help="apply a proposal (all pages or none)")
    add_common(approve, reviewer=True)
    approve.add_argument("id", help="proposal id")
    approve.add_argument("--accept-stale", action="store_true", help="apply over pages changed since the proposal")
    approve.add_argument("--fingerprint", help="refuse unless the proposal is exactly what show printed")
    approve.add_argument("--reason", help="a note for the ledger")
    approve.set_defaults(handler=run_approve)

    reject = actions.add_parser("reject", help="reject a proposal and record why")
    add_common(reject, reviewer=True)
    reject.add_argument("id", help="proposal id")
    reject.add_argument("--reason", required=True, help="why (recorded in the ledger)")
    reject.set_defaults(handler=run_reject)

    revert = actions.add_parser("revert", help="undo an approved proposal")
    add_common(revert, reviewer=True)
    revert.add_argument("id", help="proposal id")
    revert.add_argument("--force", action="store_true", help="revert pages edited since the approval too")
    revert.add_argument("--dry-run", action="store_true", help="show what the revert would do, change nothing")
    revert.add_argument("--reason", help="why (recorded in the ledger)")
    revert.set_defaults(handler=run_revert)

    stats = actions.add_parser("stats", help="decisions and regret rate per job kind")
    add_common(stats)
    stats.set_defaults(handler=run_stats)
    register_undo(actions, undo_mod.PROPOSALS)
    return ["proposals"]


# --------------------------------------------------------------------------- list


def state_text(entry: pmod.QueueEntry) -> Text:
    names = entry.flags or [entry.state]
    out = Text()
    for index, name in enumerate(names):
        if index:
            out.append(" + ")
        glyph = PROPOSAL_STATES.get(name)
        out.append(glyph.label() if glyph else name, style=cli_style(glyph) if glyph else "")
    if entry.conflicts_with:
        out.append("\n(with ")
        out.append_text(cell(", ".join(entry.conflicts_with)))
        out.append(")")
    return out


def validation_text(entry: pmod.QueueEntry) -> Text:
    v = entry.validation
    if v.errors:
        return Text("\u2716 ", style="bold red") + cell(v.errors[0], limit=80)
    if v.new_findings is None:
        return Text("not checked", style="dim") if entry.pending else Text("")
    errors = sum(1 for f in v.new_findings if f.severity == "error")
    warnings = sum(1 for f in v.new_findings if f.severity == "warning")
    resolved = len(v.resolved_findings or [])
    if errors or warnings:
        out = Text(f"\u25b2 {errors} new errors, {warnings} new warnings", style="bold red" if errors else "yellow")
    else:
        out = Text("\u2714 no new findings", style="green")
    if resolved:
        out.append(f"; resolves {resolved}", style="green")
    return out


@friendly_errors
def run_list(args: argparse.Namespace) -> int:
    root, _ = open_for_review(args.field, write=False)
    field = None if args.no_checks else open_field(args, root)
    queue = pmod.proposal_queue(root, field=field, include_decided=args.all, with_checks=field is not None)
    if args.json:
        print_json(queue.to_json())
        return 0
    out = console()
    for problem in queue.problems:
        out.print(Text("\u25b2 ", style="yellow") + cell(problem))
    if not queue.entries:
        out.print(Text("no pending proposals" if not args.all else "no proposals"))
        return 0
    table = Table(title=Text(plural(len(queue.entries), "proposal")), title_justify="left", expand=expand_tables())
    table.add_column("id / carrier", overflow="fold", ratio=2)
    table.add_column("job / age", no_wrap=True)
    table.add_column("pages", overflow="fold", ratio=3)
    table.add_column("state", overflow="fold", ratio=2)
    table.add_column("validation", overflow="fold", ratio=2)
    for entry in queue.entries:
        p = entry.proposal
        pages = Text()
        for index, change in enumerate(p.changes):
            if index:
                pages.append("\n")
            pages.append_text(cell(f"{change.action[0].upper()} {change.path}", style="red" if change.stale else ""))
        ident = cell(p.id, style="bold") + Text(f"\n{p.carrier}", style="dim")
        job = cell(p.job) + Text(f"\n{age_text(entry.age_days)}", style="dim")
        table.add_row(ident, job, pages, state_text(entry), validation_text(entry))
    out.print(table)
    return 0


# --------------------------------------------------------------------------- show


def print_review(review: pmod.Review, *, side_by_side: bool) -> None:
    out = console()
    for part in review_parts(review, CLI_COLOURS, side=side_by_side, three_way=True, expand=expand_tables()):
        out.print(part)
    out.print(Text(f"fingerprint {review.fingerprint}", style="dim"))


@friendly_errors
def run_show(args: argparse.Namespace) -> int:
    root, _ = open_for_review(args.field, write=False)
    review = pmod.review_proposal(root, args.id, field=open_field(args, root), context=None if args.full else 3)
    if args.json:
        print_json(review.to_json())
    else:
        print_review(review, side_by_side=args.side_by_side)
    return 0


# --------------------------------------------------------------------------- decisions


def _done(entry, verb: str, args: argparse.Namespace) -> int:
    if args.json:
        print_json({"decision": entry.to_json()})
        return 0
    line = Text(f"{verb} ", style="green") + cell(entry.target) + Text(f": {plural(len(entry.pages), 'page')}")
    if entry.commit:
        line.append(f", commit {entry.commit[:12]}")
    console().print(line)
    return 0


@friendly_errors
def run_approve(args: argparse.Namespace) -> int:
    root, _ = open_for_review(args.field, write=True)
    ensure_can_ask(args)
    proposal = pmod.get_proposal(root, args.id)
    field = open_field(args, root)
    if args.accept_stale and proposal.stale and not args.json:
        for part in three_way_parts(pmod.review_proposal(root, args.id, field=field), CLI_COLOURS):
            console().print(part)
    if not confirm(f"Apply {plural(len(proposal.changes), 'page')} of proposal {args.id}?", args):
        return declined()
    # Bound to what was just shown (or to what the caller saw earlier, with --fingerprint).
    entry = pmod.approve(
        root,
        args.id,
        field=field,
        reviewer=args.reviewer,
        accept_stale=args.accept_stale,
        fingerprint=args.fingerprint or proposal.fingerprint(),
        reason=args.reason,
    )
    return _done(entry, "approved", args)


@friendly_errors
def run_reject(args: argparse.Namespace) -> int:
    root, _ = open_for_review(args.field, write=True)
    if not confirm(f"Reject proposal {args.id}?", args):
        return declined()
    entry = pmod.reject(root, args.id, reason=args.reason, reviewer=args.reviewer)
    return _done(entry, "rejected", args)


def _print_plan(plan: pmod.RevertPlan) -> None:
    out = console()
    out.print(cell(f"reverting {plan.proposal_id} (approved {plan.approval.ts} by {plan.approval.who})"))
    for page in plan.pages:
        if page.done:
            out.print(Text("  already back: ", style="dim") + cell(page.path))
            continue
        if page.conflict:
            out.print(Text("  \u25b2 edited since the approval: ", style="bold red") + cell(page.path))
            if page.lost is not None:
                out.print(Text("    edits the revert would throw away (approved \u2192 disk now):", style="bold"))
                print_diff(page.lost, side_by_side=False)
        print_diff(page.diff, side_by_side=False)


@friendly_errors
def run_revert(args: argparse.Namespace) -> int:
    root, _ = open_for_review(args.field, write=not args.dry_run)
    plan = pmod.plan_revert(root, args.id)
    if args.dry_run:
        if args.json:
            print_json(plan.to_json())
        else:
            _print_plan(plan)
        return 0
    ensure_can_ask(args)
    if plan.conflicts and not args.json:
        _print_plan(plan)
    if plan.conflicts and not args.force:
        raise MemtuiError(
            f"{', '.join(p.path for p in plan.conflicts)} changed since {args.id} was approved",
            "the differences are shown above; use --force to revert anyway",
        )
    if not confirm(f"Revert proposal {args.id}?", args):
        return declined()
    entry = pmod.revert(root, args.id, reviewer=args.reviewer, reason=args.reason, force=args.force)
    return _done(entry, "reverted", args)


# --------------------------------------------------------------------------- stats


@friendly_errors
def run_stats(args: argparse.Namespace) -> int:
    root, _ = open_for_review(args.field, write=False)
    result = pmod.stats(root)
    if args.json:
        print_json(result.to_json())
        return 0
    table = Table(title=Text(f"proposal decisions ({result.pending} pending)"), title_justify="left")
    for name in ("job", "approved", "rejected", "reverted", "regret rate"):
        table.add_column(name, justify="left" if name == "job" else "right")
    for stats in [*result.jobs.values(), result.total]:
        rate = stats.regret_rate
        table.add_row(
            cell(stats.job, style="bold" if stats is result.total else ""),
            str(stats.approved),
            str(stats.rejected),
            str(stats.reverted),
            "-" if rate is None else f"{rate:.0%}",
        )
    console().print(table)
    return 0
