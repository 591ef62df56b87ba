"""Command-line options that several subcommands share."""

from __future__ import annotations

import argparse

from memtui.dialects.detect import dialect_names


def add_dialect_option(parser: argparse.ArgumentParser) -> None:
    """``--dialect NAME``: read every page as one memory format instead of detecting."""
    parser.add_argument(
        "--dialect",
        choices=dialect_names(),
        metavar="NAME",
        help="read every page as this format (" + ", ".join(dialect_names()) + "); default: detect",
    )
