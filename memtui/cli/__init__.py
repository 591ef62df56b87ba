"""The ``memtui`` command: a thin shell over the model, the review workflows and the index.

Each subcommand lives in its own module here and registers itself with
``register(subparsers)``. ``memtui [FIELD]`` with no subcommand opens the TUI.

What this package may import is the import contract in ``pyproject.toml``
(``[tool.importlinter]``), checked in CI.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from memtui import __version__
from memtui.errors import FieldNotFoundError, MemtuiError

COMMAND_MODULES = (
    "memtui.cli.open",
    "memtui.cli.check",
    "memtui.cli.history",
    "memtui.cli.claims",
    "memtui.cli.context",
    "memtui.cli.export",
    "memtui.cli.index",
    "memtui.cli.quarantine",
    "memtui.cli.proposals",
)

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


def build_parser() -> tuple[argparse.ArgumentParser, set[str]]:
    parser = argparse.ArgumentParser(
        prog="memtui",
        description="Audit what an AI agent remembers. With no subcommand, open FIELD in the TUI.",
    )
    parser.add_argument("--version", action="version", version=f"memtui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    names: set[str] = set()
    for module_name in COMMAND_MODULES:
        module = importlib.import_module(module_name)
        names.update(module.register(sub))
    return parser, names


def main(argv: list[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser, names = build_parser()
    if not args_list or (args_list[0] not in names and args_list[0] not in {"-h", "--help", "--version"}):
        args_list = ["open", *args_list]
    args = parser.parse_args(args_list)
    try:
        return int(args.handler(args) or 0)
    except FieldNotFoundError as exc:
        _print_error(exc)
        return EXIT_USAGE
    except MemtuiError as exc:
        _print_error(exc)
        return EXIT_FINDINGS
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`memtui check F --json | head`): stop quietly, as Rich does.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1


def _print_error(exc: MemtuiError) -> None:
    from rich.text import Text

    from memtui.cli.output import error_console
    from memtui.textsafety import visible

    console = error_console()
    console.print(Text("error: ", style="bold red") + Text(visible(exc.message)))
    if exc.hint:
        console.print(Text("hint: ", style="bold") + Text(visible(exc.hint)))
