"""Opening a field the way every surface must: detect its dialects, then read it through them."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from memtui.dialects.detect import detect
from memtui.dialects.reader import DialectReader
from memtui.field.field import Field, ScanEntry, ScanResult, zip_root


def reader_for(
    root: str | os.PathLike[str], *, dialect: str | None = None, scanned: ScanResult | None = None
) -> tuple[DialectReader, ScanResult]:
    """The reader for the folder at ``root`` and the scan made with its scope."""
    detection, scanned = detect(Path(root), force=dialect, scanned=scanned)
    return DialectReader(detection), scanned


def open_field(
    path: str | os.PathLike[str],
    *,
    dialect: str | None = None,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    progress: Callable[[int, int], None] | None = None,
) -> Field:
    """Open a folder, or a ``*.memoryfield.zip`` read-only, reading every page through its dialect."""
    p = Path(path)
    root = zip_root(p)
    folder = root if root is not None else p
    Field.check_folder(folder)
    reader, scanned = reader_for(folder, dialect=dialect)
    return Field.load(
        folder,
        cache_dir=cache_dir,
        use_cache=use_cache,
        readonly=root is not None,
        source=p if root is not None else None,
        progress=progress,
        reader=reader,
        scanned=scanned,
    )


def open_field_cached(
    path: str | os.PathLike[str],
    *,
    dialect: str | None = None,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    scanned: ScanResult | None = None,
    reader: DialectReader | None = None,
) -> tuple[Field, list[ScanEntry]]:
    """Like ``open_field``, but stop after the cached pages (see ``Field.open_cached``).

    ``reader`` and ``scanned``: a detection and scan already made for this folder (not for a zip).
    """
    p = Path(path)
    root = zip_root(p)
    folder = root if root is not None else p
    Field.check_folder(folder)
    if reader is None or scanned is None or root is not None:
        reader, scanned = reader_for(folder, dialect=dialect, scanned=scanned if root is None else None)
    return Field.open_cached(
        folder,
        cache_dir=cache_dir,
        use_cache=use_cache,
        readonly=root is not None,
        source=p if root is not None else None,
        scanned=scanned,
        reader=reader,
    )
