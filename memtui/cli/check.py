"""``memtui check FIELD [--json]``: run the deterministic checks."""

from __future__ import annotations

import argparse

from rich.table import Table
from rich.text import Text

from memtui.cli.options import add_field_options, examples, open_field
from memtui.cli.output import cell, console, print_json, print_json_with_list
from memtui.dialects.report import field_report
from memtui.field.checks import (
    ERROR,
    RULES,
    SEVERITY_ORDER,
    FindingTally,
    check_field,
)
from memtui.field.finding_order import SortedFindings
from memtui.field.rule_settings import RuleSettings
from memtui.render.glyphs import SEVERITY, cli_style
from memtui.textsafety import one_line, plural

SEVERITY_STYLE = {name: cli_style(glyph) for name, glyph in SEVERITY.items()}
SEVERITY_GLYPH = {name: f"{glyph.glyph} {name}" for name, glyph in SEVERITY.items()}
PER_RULE = 10


def register(sub: argparse._SubParsersAction) -> list[str]:
    parser = sub.add_parser(
        "check",
        help="report problems in a memory folder",
        **examples(
            "memtui check sample-field",
            "memtui check sample-field --rule secret --all",
            "memtui check sample-field --json | jq .summary",
        ),
    )
    parser.add_argument("field", nargs="?", help="memory folder or .memoryfield.zip")
    parser.add_argument("--json", action="store_true", help="print findings (or, with --rules, the rules) as JSON")
    parser.add_argument("--rules", action="store_true", help="list every rule and exit (no FIELD needed)")
    add_field_options(parser)
    parser.add_argument(
        "--all", action="store_true", help="print every finding, one per line (default: the first few of each rule)"
    )
    parser.add_argument(
        "--rule",
        action="append",
        metavar="RULE",
        help="only this rule: its findings, the totals and the exit status (repeatable; a CI gate)",
    )
    parser.add_argument(
        "--per-rule",
        type=int,
        default=PER_RULE,
        metavar="N",
        help=f"findings printed per rule without --all (default {PER_RULE})",
    )
    parser.set_defaults(handler=run, check_parser=parser)
    return ["check"]


def run(args: argparse.Namespace) -> int:
    if args.rules:
        if args.json:
            print_json(
                {"rules": [{"id": r.id, "severity": r.severity, "explanation": r.explanation} for r in RULES.values()]}
            )
            return 0
        table = Table("rule", "severity", "what it means")
        for rule in RULES.values():
            # Text, never markup: explanations quote tags such as [stated] literally.
            table.add_row(
                Text(rule.id), Text(rule.severity, style=SEVERITY_STYLE[rule.severity]), Text(rule.explanation)
            )
        console().print(table)
        return 0
    if args.field is None:
        args.check_parser.error("the following arguments are required: field")  # exits 2
    unknown = sorted(set(args.rule or ()) - set(RULES))
    if unknown:  # a typo must not turn a CI gate into "0 findings"
        args.check_parser.error(
            f"no rule {', '.join(map(repr, unknown))}; `memtui check --rules` lists them"
        )  # exits 2
    field = open_field(args)
    report = field_report(field)
    # Counted as they come (``FindingTally``: the first few of each rule); those listed, every
    # one with --json or --all, are sorted in runs, the rest on disk (``SortedFindings``). A
    # million findings at 100,000 pages held as a list, with a dictionary each and one
    # indented JSON string of them all, peaked at 2.0 GB.
    tally = FindingTally(0 if args.json else max(args.per_rule, 0))
    with SortedFindings() as listed:

        def emit(finding) -> None:
            if args.rule and finding.rule not in args.rule:
                return  # --rule: totals, the listing and the exit status are that rule's only
            tally.add(finding)
            if args.json or args.all:
                listed.add(finding)

        check_field(field, emit, hidden=tally.hide)
        summary = tally.summary(len(field))
        summary.update(report.to_json())
        summary["trust"] = trust_counts(field)
        if args.json:
            print_json_with_list("findings", (f.to_json() for f in listed), {"summary": summary})
            return 1 if summary["errors"] else 0
        out = console()
        for line in report.lines():
            out.print(cell(line, style="dim"))
        if not len(field):
            out.print(Text("no pages here: memtui reads *.md files (see above for what it left out); try memtui demo"))
        if args.all:
            print_every_finding(listed)
        else:
            print_by_rule(tally, len(field), rules=args.rule)
    out.print(
        Text(
            f"{plural(summary['pages'], 'page')}, {plural(summary['errors'], 'error')}, "
            f"{plural(summary['warnings'], 'warning')}, {plural(summary['info'], 'note')}"
            + (f" ({RuleSettings.hidden_note(tally.hidden)})" if tally.hidden else "")
        )
    )
    trust = summary["trust"]
    out.print(
        Text(
            f"review: {trust['reviewed']} reviewed, {trust['unreviewed']} unreviewed, "
            f"{trust['quarantined']} quarantined, {trust['unknown']} with no review record"
        )
    )
    return 1 if summary["errors"] else 0


def _finding_line(finding) -> str:
    where = one_line(finding.path) + (f":{finding.line}" if finding.line else "")
    return f"{where}  {one_line(finding.message)}"


def print_by_rule(tally: FindingTally, pages: int, *, rules: list[str] | None = None) -> None:
    """Findings grouped by rule, worst and most frequent first; the first ``tally.keep`` of each.

    Printing 40,000 findings as one table took 11x as long as the checks themselves;
    a reader wants each rule's count and a few examples, then ``--all`` or ``--rule``.
    """
    out = console()
    counts = {rule: n for rule, n in tally.by_rule.items() if not rules or rule in rules}
    if not counts:
        return
    severity = {rule: tally.severity_of(rule) for rule in counts}
    order = sorted(counts, key=lambda rule: (SEVERITY_ORDER[severity[rule]], -counts[rule], rule))
    total = sum(counts.values())
    out.print(Text(f"memtui check: {plural(pages, 'page')}, {plural(total, 'finding')} by rule", style="bold"))
    hidden = 0
    for rule in order:
        head = Text(SEVERITY_GLYPH[severity[rule]], style=SEVERITY_STYLE[severity[rule]])
        head.append(f"  {rule}", style="bold")
        head.append(f"  {counts[rule]:,}")
        out.print(head)
        for finding in tally.first(rule):
            out.print(Text("    " + _finding_line(finding)))
        more = counts[rule] - len(tally.first(rule))
        if more > 0:
            hidden += more
            out.print(Text(f"    … {more:,} more: memtui check FIELD --rule {rule} --all", style="dim"))
    if hidden:
        out.print(Text(f"{hidden:,} findings not printed; --all prints every one, --json lists them all", style="dim"))


def print_every_finding(findings) -> None:
    """One plain line per finding: severity, rule, path:line, message (for grep and pagers)."""
    out = console()
    if out.is_terminal and out.color_system:
        for finding in findings:
            line = Text(SEVERITY_GLYPH[finding.severity], style=SEVERITY_STYLE[finding.severity])
            line.append(f"  {finding.rule}  {_finding_line(finding)}")
            out.print(line)
        return
    out.file.writelines(  # as they come: never one string of them all
        f"{SEVERITY_GLYPH[f.severity]}  {f.rule}  {_finding_line(f)}\n" for f in findings
    )
    out.file.flush()


def trust_counts(field) -> dict[str, int]:
    counts = dict.fromkeys(("reviewed", "unreviewed", "quarantined", "unknown"), 0)
    for path in field.pages:
        counts[field.trust(path)] += 1
    return counts


__all__ = ["register", "run", "ERROR"]
