"""Helpers for the index, watcher, search and recall tests."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path

from memtui.field.field import scan
from memtui.field.page import MAX_PARSE_BYTES
from memtui.index import ChangeBatch, IndexService
from memtui.index.watcher import is_scratch_name


def fresh_inputs(root: Path) -> dict[str, str]:
    """path -> sha256 of every page a fresh scan of the folder finds (editor scratch files aside).

    A page over the parse limit is never read, so it has no hash ("").
    """
    entries, _ = scan(root)
    out = {}
    for entry in entries:
        if is_scratch_name(entry.path.rsplit("/", 1)[-1]):
            continue
        if entry.size > MAX_PARSE_BYTES:
            out[entry.path] = ""
            continue
        try:
            out[entry.path] = hashlib.sha256((root / entry.path).read_bytes()).hexdigest()
        except OSError:
            continue
    return out


def assert_matches_folder(svc: IndexService) -> None:
    """The index holds exactly the pages on disk, each at its current bytes."""
    assert svc.indexed_inputs() == fresh_inputs(svc.root)


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0, step: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def page(title: str, body: str, **meta: str) -> str:
    lines = ["---", f"title: {title}"] + [f"{k}: {v}" for k, v in meta.items()] + ["---", body, ""]
    return "\n".join(lines)


class Recorder:
    """Collects the change notifications a service sends."""

    def __init__(self) -> None:
        self.batches: list[ChangeBatch] = []

    def __call__(self, batch: ChangeBatch) -> None:
        self.batches.append(batch)

    def paths(self, kind: str) -> set[str]:
        return {p for b in self.batches for p in getattr(b, kind)}

    def moved(self) -> set[tuple[str, str]]:
        return {m for b in self.batches for m in b.moved}

    def clear(self) -> None:
        self.batches.clear()


def open_service(root: Path, index_dir: Path | None = None, **kwargs) -> IndexService:
    svc = IndexService(root, index_dir=index_dir, **kwargs)
    svc.open()
    return svc


def watching(root: Path, index_dir: Path | None = None) -> tuple[IndexService, Recorder]:
    svc = open_service(root, index_dir)
    recorder = Recorder()
    svc.start_watching(recorder)
    return svc, recorder


def search_paths(svc: IndexService, query: str, limit: int = 20) -> list[str]:
    return [hit.path for hit in svc.search(query, limit=limit)]
