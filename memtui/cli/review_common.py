"""Shared pieces of ``memtui quarantine`` and ``memtui proposals``.

Opening a field for review (crash recovery first), asking for confirmation,
and rendering diffs and raw page text as inert ``rich.text.Text`` (page text is
never markup; every text here has been through ``textsafety.visible``).
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from pathlib import Path

from rich.text import Text

from memtui.cli.options import add_field_options
from memtui.cli.output import console, error_console, expand_tables
from memtui.errors import FieldNotFoundError, MemtuiError, ReadOnlyFieldError
from memtui.field.field import zip_root
from memtui.render.review import CLI_COLOURS, diff_view
from memtui.render.review import tagged as render_tagged
from memtui.review import apply_journal
from memtui.review.diffs import PageDiff
from memtui.textsafety import one_line

TAG_STYLE = {tag: f"bold {CLI_COLOURS[tag]}" for tag in ("stated", "observed", "inferred", "suggested")}
EXIT_DECLINED = 1


def friendly_errors(handler: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Turn an operating-system error (disk full, permission denied) into a message, not a traceback."""

    @functools.wraps(handler)
    def wrapper(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except OSError as exc:
            where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
            hint = "check the folder's permissions and free space"
            raise MemtuiError(f"{exc.strerror or exc}{where}", hint) from None

    return wrapper


def add_common(parser: argparse.ArgumentParser, *, reviewer: bool = False) -> None:
    parser.add_argument("field", help="memory folder (a .memoryfield.zip can be listed, not changed)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    add_field_options(parser)
    if reviewer:
        parser.add_argument("--reviewer", help="who decides (default: $MEMTUI_REVIEWER, git user.name, OS user)")
        parser.add_argument(
            "--yes",
            "-y",
            action="store_true",
            help="decide without asking (required when not run from a terminal)",
        )


def open_for_review(path: str, *, write: bool) -> tuple[Path, bool]:
    """The field's root folder and whether it is read-only; finishes interrupted changes first."""
    p = Path(path)
    if p.is_file() and p.name.endswith(".zip"):
        if write:
            raise ReadOnlyFieldError(
                f"{p.name} is an archive and is opened read-only", "extract it to a folder to review and decide"
            )
        root = zip_root(p)
        assert root is not None
        return root, True
    if not p.exists():
        raise FieldNotFoundError(f"no such folder: {p}", "give the path of a memory folder")
    if not p.is_dir():
        raise FieldNotFoundError(f"not a folder: {p}", "give a memory folder")
    for recovery in apply_journal.recover_interrupted(p):
        message = {
            "rolled-back": "an interrupted change was rolled back",
            "completed": "an interrupted change was completed",
        }.get(recovery.outcome, "an interrupted change needs attention")
        error_console().print(Text(f"memtui: {message}: {one_line(recovery.label)}", style="yellow"))
        for problem in recovery.problems:
            error_console().print(Text(f"  {one_line(problem)}", style="yellow"))
    return p, False


def ensure_can_ask(args: argparse.Namespace) -> None:
    """A decision asks ``[y/N]`` on a terminal; without one (a script, a pipe, cron) it needs ``--yes``."""
    if not getattr(args, "yes", False) and not sys.stdin.isatty():
        raise MemtuiError(
            "not run from a terminal, so memtui cannot ask before deciding; nothing was changed",
            "add --yes to decide without being asked",
        )


def prompt_console(args: argparse.Namespace):
    """Where questions and what they are about go: stderr with ``--json`` (stdout stays JSON)."""
    return error_console() if getattr(args, "json", False) else console()


def confirm(question: str, args: argparse.Namespace) -> bool:
    """Ask ``[y/N]`` on a terminal (No by default); ``--yes`` proceeds without asking.

    Without a terminal and without ``--yes`` this raises (see ``ensure_can_ask``).
    """
    if getattr(args, "yes", False):
        return True
    ensure_can_ask(args)
    try:
        answer = prompt_console(args).input(Text(f"{one_line(question)} [y/N] "))
    except EOFError:
        return False
    return answer.strip().lower() in {"y", "yes"}


def declined() -> int:
    error_console().print(Text("nothing changed", style="yellow"))
    return EXIT_DECLINED


# --------------------------------------------------------------------------- rendering


def tagged(text: str, style: str = "") -> Text:
    """A display-safe line with its source tags coloured."""
    return render_tagged(text, CLI_COLOURS, style)


def print_diff(diff: PageDiff, *, side_by_side: bool) -> None:
    """One page's diff (``memtui.render.diff``, as the TUI shows it), in the CLI's colours."""
    console().print(diff_view(diff, CLI_COLOURS, side=side_by_side, expand=expand_tables()))
