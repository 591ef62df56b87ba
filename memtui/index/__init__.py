"""The search index: a disposable Whoosh cache of a field, kept in sync by watchdog.

``IndexService`` is the entry point; see ``service.py``.

May import: ``memtui.field``, ``memtui.store``, ``memtui.errors``,
``memtui.textsafety``. Never Textual, the review workflows or the user interfaces.

Modules: ``analysis`` (schema, recipe, how text becomes terms), ``fastwrite``
(a quicker Whoosh segment writer), ``records`` (a page as the index sees it),
``store`` (folders, generations, signed manifests, the writer lock),
``indexer`` (building and updating one generation), ``search`` (queries,
ranking, snippets), ``watcher`` (watchdog), ``recall`` (golden recall tests).
"""

from memtui.index.errors import GoldenFileError, IndexUnavailableError, QueryError
from memtui.index.model import (
    ChangeBatch,
    OpenReport,
    SearchHit,
    SearchResults,
    SyncState,
)
from memtui.index.service import IndexService

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
