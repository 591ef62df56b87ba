"""What every subcommand that reads a field accepts, and the one way it opens the field.

``add_field_options`` gives a subcommand ``--dialect`` (and, where an index is kept,
``--index-dir``); ``open_field`` reads the field with them through the application core
(``memtui.session.opening``): the dialects, the caches and the ledger's approvals, as the
TUI reads it.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from memtui.dialects.detect import dialect_names
from memtui.field.field import Field
from memtui.session.opening import FieldOptions
from memtui.session.opening import open_field as open_with_options


def examples(*lines: str) -> dict[str, Any]:
    """``add_parser`` keywords that end a command's ``--help`` with examples (on the bundled
    sample field, which ``memtui demo --keep`` copies anywhere)."""
    return {
        "epilog": "examples:\n" + "\n".join(f"  {line}" for line in lines),
        "formatter_class": argparse.RawDescriptionHelpFormatter,
    }


def add_field_options(parser: argparse.ArgumentParser, *, index: bool = False) -> None:
    """``--dialect NAME`` (read every page as one memory format instead of detecting); with
    ``index``, ``--index-dir DIR``."""
    parser.add_argument(
        "--dialect",
        choices=dialect_names(),
        metavar="NAME",
        help="read every page as this format (" + ", ".join(dialect_names()) + "); default: detect",
    )
    if index:
        parser.add_argument(
            "--index-dir",
            metavar="DIR",
            help="keep the search index in DIR (default: the user cache folder, ~/.cache/memtui/fields/)",
        )


def field_options(args: argparse.Namespace) -> FieldOptions:
    index_dir = getattr(args, "index_dir", None)
    return FieldOptions(dialect=getattr(args, "dialect", None), index_dir=Path(index_dir) if index_dir else None)


def open_field(args: argparse.Namespace, path: str | Path | None = None) -> Field:
    """The field at ``path`` (default: the FIELD argument), read with the options given."""
    return open_with_options(path if path is not None else args.field, field_options(args))
