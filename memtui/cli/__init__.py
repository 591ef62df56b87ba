"""The ``memtui`` command: a thin shell over the model, the review workflows and the index.

Each subcommand lives in its own module here and registers itself with
``register(subparsers)``. ``memtui [FIELD]`` with no subcommand opens the TUI.

What this package may import is the import contract in ``pyproject.toml``
(``[tool.importlinter]``), checked in CI.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys

from memtui import __version__
from memtui.errors import FieldNotFoundError, MemtuiError

# Every subcommand: the module that registers it and its one-line help. The top-level parser
# lists them all from here without importing a module; only the subcommand being run is
# imported (start-up time: importing every subcommand cost 0.25 s before any work began).
# ``test_the_command_table_matches_what_each_module_registers`` keeps it true.
COMMANDS: dict[str, tuple[str, str]] = {
    "open": ("memtui.cli.open", "open FIELD in the TUI (the default command)"),
    "demo": ("memtui.cli.open", "open a temporary copy of the bundled sample field"),
    "check": ("memtui.cli.check", "report problems in a memory folder"),
    "history": ("memtui.cli.history", "show the supersede history of a page or subject"),
    "claims": ("memtui.cli.claims", "list the field's claims (lines with a source tag), filtered"),
    "context": ("memtui.cli.context", "show what each agent loads from the field at the start of a session"),
    "export": ("memtui.cli.export", "write a field to a .memoryfield.zip"),
    "index": ("memtui.cli.index", "build or update the search index of a field"),
    "search": ("memtui.cli.index", "search a field's pages"),
    "recall-test": ("memtui.cli.index", "check search against golden questions (golden.yaml)"),
    "quarantine": ("memtui.cli.quarantine", "review quarantined and unreviewed pages"),
    "proposals": ("memtui.cli.proposals", "review proposals from maintenance (dream) jobs"),
}
COMMAND_MODULES = tuple(dict.fromkeys(module for module, _help in COMMANDS.values()))
TOP_LEVEL_FLAGS = {"-h", "--help", "--version", "-V"}

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2


def build_parser(only: str | None = None) -> tuple[argparse.ArgumentParser, set[str]]:
    """The ``memtui`` parser. With ``only`` (a subcommand's name), only that subcommand's module
    is imported and registered; the others are listed by name and help. Without it, every one."""
    parser = argparse.ArgumentParser(
        prog="memtui",
        description="Audit what an AI agent remembers. With no subcommand, open FIELD in the TUI.",
        epilog="Run `memtui COMMAND --help` for a command's options and examples.",
    )
    parser.add_argument("-V", "--version", action="version", version=f"memtui {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = set(COMMAND_MODULES) if only is None else ({COMMANDS[only][0]} if only in COMMANDS else set())
    registered: set[str] = set()
    for name, (module_name, help_text) in COMMANDS.items():  # the table's order (a module's names are adjacent)
        if name in registered:
            continue
        if module_name in wanted:
            registered.update(importlib.import_module(module_name).register(sub))
        else:
            sub.add_parser(name, help=help_text, add_help=False)  # listed; its module is not loaded
    return parser, set(COMMANDS)


def _unknown_command(word: str) -> str | None:
    """``did you mean 'check'?`` for a first word that is no command and no path, else None."""
    if word.startswith("-") or os.path.lexists(word) or "/" in word or os.sep in word or "." in word:
        return None
    close = difflib.get_close_matches(word, list(COMMANDS), n=1, cutoff=0.75)
    return close[0] if close else None


def main(argv: list[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] not in COMMANDS and args_list[0] not in TOP_LEVEL_FLAGS:
        guess = _unknown_command(args_list[0])
        if guess is not None:
            build_parser("")[0].error(f"unknown command {args_list[0]!r}: did you mean {guess!r}?")  # exits 2
    if not args_list or (args_list[0] not in COMMANDS and args_list[0] not in TOP_LEVEL_FLAGS):
        args_list = ["open", *args_list]
    parser, _names = build_parser(args_list[0] if args_list[0] in COMMANDS else "")
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
