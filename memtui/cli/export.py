"""``memtui export FIELD OUT.memoryfield.zip``."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from rich.text import Text

from memtui.cli.options import examples
from memtui.cli.output import console
from memtui.cli.review_common import confirm, declined
from memtui.errors import FieldNotFoundError
from memtui.store.archive import export_field


def register(sub: argparse._SubParsersAction) -> list[str]:
    parser = sub.add_parser(
        "export",
        help="write a field to a .memoryfield.zip",
        **examples(
            "memtui export sample-field /tmp/sample.memoryfield.zip",
            "memtui /tmp/sample.memoryfield.zip   # open it read-only",
        ),
    )
    parser.add_argument("field", help="memory folder")
    parser.add_argument("out", help="output file, ending in .memoryfield.zip")
    parser.add_argument("--yes", action="store_true", help="replace OUT if it exists, without asking")
    parser.set_defaults(handler=run)
    return ["export"]


def run(args: argparse.Namespace) -> int:
    root = Path(args.field)
    if not root.is_dir():
        raise FieldNotFoundError(f"not a folder: {root}", "give the memory folder to export")
    out = Path(args.out)
    if os.path.lexists(out) and not confirm(f"{out} exists: replace it?", args):  # never overwrite unasked
        return declined()
    count = export_field(root, Path(args.out))
    console().print(Text(f"wrote {count} files to {args.out}"))
    return 0
