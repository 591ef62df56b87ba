"""An index's segments: opening and creating an index, listing its segments, writing a
segment on its own and committing segments written elsewhere (the build helpers)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from whoosh import index as whoosh_index
from whoosh.fields import ensure_schema
from whoosh.filedb.filestore import FileStorage
from whoosh.index import TOC, FileIndex, Index

from memtui.index.analysis import build_schema


def open_index(folder: str | Path, *, with_schema: bool = True) -> Index:
    """The index in ``folder``, read with memtui's schema (``with_schema`` False: its own)."""
    if with_schema:
        return whoosh_index.open_dir(str(folder), schema=build_schema())
    return whoosh_index.open_dir(str(folder))


def create_index(folder: str | Path) -> Index:
    return whoosh_index.create_in(str(folder), build_schema())


def segments(ix: Index) -> list[Any]:
    """The index's segments, as its table of contents lists them."""
    found: list[Any] = ix._segments()  # type: ignore[attr-defined]
    return found


def finish_segment(writer: Any) -> Any:
    """Write what ``writer`` (a segment writer opened without the index's lock) holds as a
    segment of its own, without committing it: a build helper hands it to the parent."""
    return writer._finalize_segment()


def commit_segments(writer: Any, made: list[Any]) -> None:
    """Commit segments written by other processes (``finish_segment``) as the index's whole
    content, through ``writer`` (which adds nothing itself), and release its lock."""
    try:
        writer._close_segment()
        writer._commit_toc([segment for segment in made if segment.doc_count_all()])
    finally:
        writer._finish()


class PinnedIndex(FileIndex):
    """A Whoosh index opened at one table-of-contents generation: the one a manifest vouches for.

    Whoosh would otherwise read the newest ``_MAIN_<n>.toc`` in the folder,
    which may be a commit the writer has not vouched for yet (and so unchecked).
    """

    def __init__(self, gen_dir: Path, generation: int, schema: Any = None) -> None:
        # Not FileIndex.__init__: it would read the newest table of contents to see that it opens.
        self.storage = FileStorage(str(gen_dir), readonly=True)
        self._schema = ensure_schema(schema) if schema else None
        self.indexname = "MAIN"
        self.generation = generation
        # Read once: the writer deletes this file when it commits again.
        self._toc = TOC.read(self.storage, self.indexname, gen=generation, schema=self._schema)

    def latest_generation(self) -> int:
        return self.generation

    def _read_toc(self) -> Any:
        return self._toc
