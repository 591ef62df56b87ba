"""A cache's schema version, made in one place from what the cache stores and the code that makes it.

Every cache memtui keeps (the page cache, the claims cache, the row cache, the search index)
is disposable: a file written by another version of what it holds must never be read as
this one. Numbers bumped by hand were forgotten (an entry read with the old meaning is a
quiet lie). ``schema_version`` is a short hash of the fields the cache stores (names and
types of each dataclass or named tuple given) and of the source of the modules that make
its entries: change either and every older file is "not cached".
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
from functools import cache
from pathlib import Path
from typing import Any


def _fields(kind: Any) -> list[tuple[str, str]]:
    if dataclasses.is_dataclass(kind):
        return [(f.name, str(f.type)) for f in dataclasses.fields(kind)]
    names = getattr(kind, "_fields", None)
    if names is not None:  # a named tuple
        hints = getattr(kind, "__annotations__", {})
        return [(name, str(hints.get(name, ""))) for name in names]
    raise TypeError(f"{kind!r} is neither a dataclass nor a named tuple")


@cache
def _source_digest(module: str) -> str:
    """The SHA-256 of a module's source (of every module of a package, in name order)."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(module)
    origin = Path(spec.origin)
    files = sorted(origin.parent.rglob("*.py")) if origin.name == "__init__.py" else [origin]
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def schema_version(*stored: Any, code: tuple[str, ...] = ()) -> str:
    """The version of a cache holding ``stored`` (dataclasses or named tuples), made by ``code``
    (module or package names): 16 hexadecimal digits."""
    digest = hashlib.sha256()
    for kind in stored:
        digest.update(repr((kind.__qualname__, _fields(kind))).encode())
    for module in code:
        digest.update(module.encode() + b"\0" + _source_digest(module).encode())
    return digest.hexdigest()[:16]
