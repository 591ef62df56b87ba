"""``memtui check FIELD [--json]``: run the deterministic checks."""

from __future__ import annotations

import argparse

from rich.table import Table
from rich.text import Text

from memtui.cli.options import add_dialect_option
from memtui.cli.output import cell, console, print_json
from memtui.dialects.open import open_field
from memtui.dialects.report import field_report
from memtui.field.checks import ERROR, RULES, run_checks, summarise
from memtui.review import ledger
from memtui.textsafety import plural

SEVERITY_STYLE = {"error": "bold red", "warning": "yellow", "info": "dim"}
SEVERITY_GLYPH = {"error": "✖ error", "warning": "▲ warning", "info": "· info"}


def register(sub: argparse._SubParsersAction) -> list[str]:
    parser = sub.add_parser("check", help="report problems in a memory folder")
    parser.add_argument("field", nargs="?", help="memory folder or .memoryfield.zip")
    parser.add_argument("--json", action="store_true", help="print findings (or, with --rules, the rules) as JSON")
    parser.add_argument("--rules", action="store_true", help="list every rule and exit (no FIELD needed)")
    add_dialect_option(parser)
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
        if findings:
            table = Table(title=Text(f"memtui check: {plural(len(field), 'page')}"), title_justify="left")
            table.add_column("severity", no_wrap=True)
            table.add_column("rule", no_wrap=True)
            table.add_column("path", overflow="fold")
            table.add_column("line", justify="right")
            table.add_column("message", overflow="fold")
            for finding in findings:
                table.add_row(
                    Text(SEVERITY_GLYPH[finding.severity], style=SEVERITY_STYLE[finding.severity]),
                    finding.rule,
                    cell(finding.path),
                    str(finding.line or ""),
                    cell(finding.message),
                )
            out.print(table)
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


def trust_counts(field) -> dict[str, int]:
    counts = dict.fromkeys(("reviewed", "unreviewed", "quarantined", "unknown"), 0)
    for path in field.pages:
        counts[field.trust(path)] += 1
    return counts


__all__ = ["register", "run", "ERROR"]
