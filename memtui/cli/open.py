"""``memtui [FIELD]`` opens the TUI; ``memtui demo`` opens a temporary copy of the sample field."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from rich.text import Text

from memtui.cli.options import add_field_options, examples, field_options
from memtui.cli.output import console, error_console
from memtui.errors import FieldNotFoundError
from memtui.field.field import Field
from memtui.resources import sample_field_dir


def register(sub: argparse._SubParsersAction) -> list[str]:
    parser = sub.add_parser(
        "open",
        help="open FIELD in the TUI (the default command)",
        **examples("memtui sample-field", "memtui ~/.claude/projects/PROJECT/memory --theme memtui-paper"),
    )
    parser.add_argument("field", nargs="?", default=".", help="memory folder or .memoryfield.zip (default: .)")
    _tui_options(parser)
    parser.set_defaults(handler=run_open)
    demo = sub.add_parser(
        "demo",
        help="open a temporary copy of the bundled sample field",
        **examples("memtui demo", "memtui demo --keep"),
    )
    demo.add_argument("--keep", action="store_true", help="keep the copy and print where it is")
    _tui_options(demo)
    demo.set_defaults(handler=run_demo)
    return ["open", "demo"]


def _tui_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--theme", help="use this theme for this run (a theme chosen in the app is remembered)")
    add_field_options(parser, index=True)


EXIT_NO_TERMINAL = 2  # bad usage, like a missing folder (``memtui.cli.EXIT_USAGE``)
SCRIPTING_HINT = (
    "to use memtui from a script or a pipe, run one of its commands instead: "
    "memtui check FIELD, memtui context FIELD, memtui search FIELD WORDS, memtui claims FIELD, "
    "memtui history FIELD PAGE, memtui quarantine list FIELD, memtui proposals list FIELD (each takes --json; "
    "see memtui --help)"
)


def _stdin_is_a_terminal() -> bool:
    """Is standard input a terminal? (Closed or not there at all counts as no.)"""
    try:
        return os.isatty(sys.stdin.fileno()) if sys.stdin is not None else False
    except (OSError, ValueError):  # closed, or replaced by something without a descriptor
        return False


def refuse_without_terminal() -> int | None:
    """``EXIT_NO_TERMINAL`` (said on stderr, with the scripting commands) when the TUI cannot read keys.

    With standard input not a terminal (``memtui FIELD < /dev/null``, a pipe, cron),
    Textual's input thread reads end-of-file, takes that for "no keys yet" and reads
    again at once: the TUI drew nothing anyone could see and spun a core forever,
    holding the index's writer lock. None when the TUI can run.
    """
    if _stdin_is_a_terminal():
        return None
    out = error_console()
    out.print(Text("error: ", style="bold red") + Text("the TUI needs a terminal, and standard input is not one"))
    out.print(Text("hint: ", style="bold") + Text(SCRIPTING_HINT))
    return EXIT_NO_TERMINAL


def _launch(path: Path, args: argparse.Namespace) -> int:
    from memtui.tui.app import run_app  # Textual is imported only for the TUI

    refused = refuse_without_terminal()
    if refused is not None:
        return refused

    options = field_options(args)
    return run_app(path, index_dir=options.index_dir, theme=args.theme, dialect=options.dialect)


def run_open(args: argparse.Namespace) -> int:
    path = Path(args.field)
    if not path.name.endswith(".memoryfield.zip"):
        Field.check_folder(path)  # a page, a missing path: a usage error with a hint, before the TUI starts
    elif not path.exists():
        raise FieldNotFoundError(f"no such file: {path}", "give a memory folder or a .memoryfield.zip file")
    return _launch(path, args)


def copy_sample_field(dest_parent: Path | None = None) -> Path:
    """A fresh copy of the bundled sample field; the original is never touched."""
    parent = Path(tempfile.mkdtemp(prefix="memtui-demo-", dir=dest_parent))
    target = parent / "sample-field"
    shutil.copytree(sample_field_dir(), target, symlinks=True, ignore=shutil.ignore_patterns(".memtui", "__pycache__"))
    return target


def run_demo(args: argparse.Namespace) -> int:
    target = copy_sample_field()
    try:
        code = _launch(target, args)
    finally:
        if args.keep:
            console().print(Text(f"the sample field is kept at {target}\ntry: memtui check {target}"))
        else:
            shutil.rmtree(target.parent, ignore_errors=True)
    return code
