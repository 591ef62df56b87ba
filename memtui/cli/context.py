"""``memtui context FIELD [--agent NAME] [--all] [--json]``: what each agent is told next session.

For every agent whose files memtui found, the files it loads in order (every session,
or when it works on matching files), how big each is and where a cap cuts it, and the
findings that reach the agent with them (secrets, hidden characters, look-alike tags,
imports leaving the field, unreviewed text). ``--all`` adds what the agent reads only
when it decides to. What lies outside the field is named, never read. Exit 1 when an
error-level finding sits in what an agent loads by itself.
"""

from __future__ import annotations

import argparse

from memtui.cli.options import add_field_options, examples, open_field
from memtui.cli.output import console, print_json
from memtui.field.checks import ERROR
from memtui.render.context import context_lines
from memtui.render.review import CLI_COLOURS
from memtui.session.loaded import loaded_context


def register(sub: argparse._SubParsersAction) -> list[str]:
    parser = sub.add_parser(
        "context",
        help="show what each agent loads from the field at the start of a session",
        **examples(
            "memtui context path/to/repo",
            "memtui context path/to/repo --agent claude-code --all",
            "memtui context sample-field --json",
        ),
    )
    parser.add_argument("field", help="memory folder or .memoryfield.zip")
    parser.add_argument("--agent", metavar="NAME", help="only this agent (claude-code, openclaw, serena, memtui ...)")
    parser.add_argument("--all", action="store_true", help="also the files an agent reads only when it decides to")
    parser.add_argument("--json", action="store_true", help="print the context as JSON (every file)")
    add_field_options(parser)
    parser.set_defaults(handler=run, context_parser=parser)
    return ["context"]


def run(args: argparse.Namespace) -> int:
    field = open_field(args)
    report = loaded_context(field)
    if args.agent:
        names = [agent.agent for agent in report.agents]
        chosen = [agent for agent in report.agents if agent.agent == args.agent]
        if not chosen:
            known = ", ".join(names) if names else "none found in this field"
            args.context_parser.error(f"no agent {args.agent!r} here (agents: {known})")  # exits 2
        report.agents = chosen
        paths = {f.path for f in chosen[0].files}
        report.findings = [f for f in report.findings if f.path in paths]
    if args.json:
        print_json(report.to_json())
    else:
        out = console()
        for line in context_lines(report, CLI_COLOURS, all_files=args.all):
            out.print(line, soft_wrap=True)
    return 1 if any(f.severity == ERROR for f in report.findings) else 0
