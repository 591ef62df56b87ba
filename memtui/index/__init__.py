"""The search index: a disposable Whoosh cache of a field, kept in sync by watchdog.

``IndexService`` is the entry point; see ``service.py``.

May import: ``memtui.field``, ``memtui.store``, ``memtui.errors``,
``memtui.textsafety``. Never Textual, the review workflows or the user interfaces.

Modules: ``analysis`` (schema, recipe, how text becomes terms), ``fastwrite``
(a quicker Whoosh segment writer), ``records`` (a page as the index sees it),
``record_table`` (a generation's records, stamps first, and their snapshot),
``store`` (folders, generations, signed manifests, the writer lock),
``mapped_files`` (segments read through their memory map, not copied),
``indexer`` (building and updating one generation), ``search`` (queries,
ranking, snippets), ``bulk`` (word queries scored a posting block at a time),
``watcher`` (watchdog), ``recall`` (golden recall tests).
"""

from memtui.index.errors import GoldenFileError, IndexUnavailableError, QueryError
from memtui.index.model import (
    ChangeBatch,
    OpenReport,
    SearchHit,
    SearchResults,
    SyncState,
)


def __getattr__(name: str):
    """``IndexService`` is imported when first used: with it come Whoosh and watchdog, a tenth
    of a second the TUI's start need not wait for (it opens the index in a worker)."""
    if name == "IndexService":
        from memtui.index.service import IndexService

        return IndexService
    raise AttributeError(f"module 'memtui.index' has no attribute {name!r}")


__all__ = [
    "ChangeBatch",
    "GoldenFileError",
    "IndexService",
    "IndexUnavailableError",
    "OpenReport",
    "QueryError",
    "SearchHit",
    "SearchResults",
    "SyncState",
]
