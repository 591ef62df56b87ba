"""Opening a field, the one way every surface does it: its dialects, its caches, the ledger's approvals.

``FieldOptions`` are what a user may choose about the reading (``--dialect``, ``--index-dir``,
no caches); ``open_field`` reads every page with them and attaches the review decisions
memtui's ledger holds, so ``memtui check``, ``history``, ``claims``, the review commands
and the TUI see the same field.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from memtui.dialects.open import open_field as open_with_dialects
from memtui.field.field import Field
from memtui.review import ledger


@dataclass(frozen=True, slots=True)
class FieldOptions:
    """How to read a field: ``dialect`` forces one format (None: detect); ``index_dir`` is
    where the search index lives (None: the user cache folder); ``use_cache`` False reads
    every page again instead of taking unchanged ones from the page cache."""

    dialect: str | None = None
    index_dir: Path | None = None
    use_cache: bool = True


DEFAULT = FieldOptions()


def open_field(
    path: str | os.PathLike[str],
    options: FieldOptions = DEFAULT,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> Field:
    """Read the folder (or ``*.memoryfield.zip``, read-only) at ``path`` with ``options``."""
    field = open_with_dialects(path, dialect=options.dialect, use_cache=options.use_cache, progress=progress)
    return ledger.with_approvals(field)
