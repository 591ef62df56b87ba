"""``memtui check FIELD [--json]``: run the deterministic checks."""

from __future__ import annotations

import argparse

from rich.table import Table
from rich.text import Text

from memtui.cli.options import add_dialect_option
from memtui.cli.output import cell, console, print_json
from memtui.dialects.open import open_field
from memtui.dialects.report import field_report
from memtui.field.checks import ERROR, RULES, SEVERITY_ORDER, run_checks, summarise
from memtui.review import ledger
from memtui.textsafety import one_line, plural

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}
SEVERITY_GLYPH = {"error": "✖ error", "warning": "▲ warning", "info": "· info"}
PER_RULE = 10


def register(sub: argparse._SubParsersAction) -> list[str]:
    parser = sub.add_parser("check", help="report problems in a memory folder")
    parser.add_argument("field", nargs="?", help="memory folder or .memoryfield.zip")
    parser.add_argument("--json", action="store_true", help="print findings (or, with --rules, the rules) as JSON")
    parser.add_argument("--rules", action="store_true", help="list every rule and exit (no FIELD needed)")
    add_dialect_option(parser)
    parser.add_argument("--all", action="store_true", help="print every finding, one per line (default: the first few of each rule)")
    parser.add_argument("--rule", action="append", metavar="RULE", help="only this rule's findings (repeatable)")
    parser.add_argument("--per-rule", type=int, default=PER_RULE, metavar="N", help=f"findings printed per rule without --all (default {PER_RULE})")
    parser.set_defaults(handler=run, check_parser=parser)
    return ["check"]


def run(args: argparse.Namespace) -> int:
    if args.rules:
        if args.json:
            print_json({"rules": [{"id": r.id, "severity": r.severity, "explanation": r.explanation} for r in RULES.values()]})
            return 0
        table = Table("rule", "severity", "what it means")
        for rule in RULES.values():
            # Text, never markup: explanations quote tags such as [stated] literally.
            table.add_row(Text(rule.id), Text(rule.severity, style=SEVERITY_STYLE[rule.severity]), Text(rule.explanation))
        console().print(table)
        return 0
    if args.field is None:
        args.check_parser.error("the following arguments are required: field")  # exits 2
    field = ledger.with_approvals(open_field(args.field, dialect=args.dialect))
    findings = run_checks(field)
    summary = summarise(findings, len(field))
    report = field_report(field)
    summary.update(report.to_json())
    summary["trust"] = trust_counts(field)
    if args.json:
        print_json({"findings": [f.to_json() for f in findings], "summary": summary})
    else:
        out = console()
        for line in report.lines():
            out.print(cell(line, style="dim"))
        shown = [f for f in findings if not args.rule or f.rule in args.rule]
        if args.all:
            print_every_finding(shown)
        else:
            print_by_rule(shown, len(field), per_rule=args.per_rule)
        out.print(
            Text(
                f"{plural(summary['pages'], 'page')}, {plural(summary['errors'], 'error')}, "
                f"{plural(summary['warnings'], 'warning')}, {plural(summary['info'], 'note')}"
            )
        )
        trust = summary["trust"]
        out.print(Text(
            f"review: {trust['reviewed']} reviewed, {trust['unreviewed']} unreviewed, "
            f"{trust['quarantined']} quarantined, {trust['unknown']} with no review record"
        ))
    return 1 if summary["errors"] else 0


def _finding_line(finding) -> str:
    where = one_line(finding.path) + (f":{finding.line}" if finding.line else "")
    return f"{where}  {one_line(finding.message)}"


def print_by_rule(findings, pages: int, *, per_rule: int) -> None:
    """Findings grouped by rule, worst and most frequent first; the first ``per_rule`` of each.

    Printing 40,000 findings as one table took 11x as long as the checks themselves;
    a reader wants each rule's count and a few examples, then ``--all`` or ``--rule``.
    """
    out = console()
    if not findings:
        return
    groups: dict[str, list] = {}
    for finding in findings:
        groups.setdefault(finding.rule, []).append(finding)
    order = sorted(groups.items(), key=lambda item: (SEVERITY_ORDER[item[1][0].severity], -len(item[1]), item[0]))
    out.print(Text(f"memtui check: {plural(pages, 'page')}, {plural(len(findings), 'finding')} by rule", style="bold"))
    hidden = 0
    for rule, group in order:
        severity = group[0].severity
        head = Text(SEVERITY_GLYPH[severity], style=SEVERITY_STYLE[severity])
        head.append(f"  {rule}", style="bold")
        head.append(f"  {len(group):,}")
        out.print(head)
        for finding in group[:per_rule]:
            out.print(Text("    " + _finding_line(finding)))
        if len(group) > per_rule:
            hidden += len(group) - per_rule
            out.print(Text(f"    … {len(group) - per_rule:,} more: memtui check FIELD --rule {rule} --all", style="dim"))
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
    out.file.write("".join(
        f"{SEVERITY_GLYPH[f.severity]}  {f.rule}  {_finding_line(f)}\n" for f in findings
    ))
    out.file.flush()


def trust_counts(field) -> dict[str, int]:
    counts = dict.fromkeys(("reviewed", "unreviewed", "quarantined", "unknown"), 0)
    for path in field.pages:
        counts[field.trust(path)] += 1
    return counts


__all__ = ["register", "run", "ERROR"]
