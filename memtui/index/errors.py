"""Errors the index reports to a user (each with a hint)."""

from __future__ import annotations

from memtui.errors import MemtuiError


class QueryError(MemtuiError):
    """A search query that cannot be run: a syntax error, an unknown field, or a pathological pattern."""


class IndexUnavailableError(MemtuiError):
    """The index cannot answer right now (damaged and being rebuilt, or not built yet)."""


class GoldenFileError(MemtuiError):
    """A golden recall file is missing or malformed."""
