"""``memtui [FIELD]`` opens the TUI; ``memtui demo`` opens a temporary copy of the sample field."""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from rich.text import Text

from memtui.cli.options import add_field_options, field_options
from memtui.cli.output import console
from memtui.errors import FieldNotFoundError
from memtui.resources import sample_field_dir


def register(sub: argparse._SubParsersAction) -> list[str]:
    parser = sub.add_parser("open", help="open FIELD in the TUI (the default command)")
    parser.add_argument("field", nargs="?", default=".", help="memory folder or .memoryfield.zip (default: .)")
    _tui_options(parser)
    parser.set_defaults(handler=run_open)
    demo = sub.add_parser("demo", help="open a temporary copy of the bundled sample field")
    demo.add_argument("--keep", action="store_true", help="keep the copy and print where it is")
    _tui_options(demo)
    demo.set_defaults(handler=run_demo)
    return ["open", "demo"]


def _tui_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--theme", help="use this theme for this run (a theme chosen in the app is remembered)")
    add_field_options(parser, index=True)


def _launch(path: Path, args: argparse.Namespace) -> int:
    from memtui.tui.app import run_app  # Textual is imported only for the TUI

    options = field_options(args)
    return run_app(path, index_dir=options.index_dir, theme=args.theme, dialect=options.dialect)


def run_open(args: argparse.Namespace) -> int:
    path = Path(args.field)
    if not path.exists():
        raise FieldNotFoundError(f"no such folder: {path}", "give the path of a memory folder")
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
