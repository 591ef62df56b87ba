"""The search index: a disposable Whoosh cache of a field, kept in sync by watchdog.

``IndexService`` is the entry point; see ``service.py``.

Modules: ``analysis`` (schema, recipe, how text becomes terms), ``records`` (a page as
the index sees it), ``record_table`` (a generation's records, stamps first, and their
snapshot), ``store`` (folders, generations, signed manifests, the writer lock),
``indexer`` (building and updating one generation), ``search`` (queries, ranking,
snippets), ``watcher`` (watchdog), ``recall`` (golden recall tests), ``engine`` (Whoosh
and everything of ours that reaches into its internals: the only place that does).

What this package may import is the import contract in ``pyproject.toml``
(``[tool.importlinter]``), checked in CI.
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
