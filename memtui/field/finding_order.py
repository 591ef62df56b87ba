"""Findings handed back in ``run_checks``'s order without holding them all: ``SortedFindings``.

``memtui check --json`` lists every finding, sorted (by page, line, severity, rule, message).
At 100,000 pages that is about a million findings; held as one list, with a dictionary each
and one indented JSON string of them all, the command peaked at 2.0 GB. The checks give
findings in no order (claims come from their cache in its own order), so they are sorted in
runs: the first ``run_size`` are kept in memory, and once that many have come each run is
sorted and written to a temporary file of our own (never in the field's folder); reading
merges the runs. A small field never touches the disk.
"""

from __future__ import annotations

import heapq
import pickle
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from memtui.field.checks import Finding, finding_sort_key

RUN_SIZE = 25_000  # findings held at once, about 300 bytes each (runs of 100,000: 22 MB more at the peak)
_BATCH = 2_000  # findings a pickle: one load per batch, not per finding


class SortedFindings:
    """Add findings in any order (``add``), then iterate them sorted, once; ``close`` removes
    the runs written (it is a context manager)."""

    def __init__(self, run_size: int | None = None) -> None:
        self.run_size = max(run_size or RUN_SIZE, 1)
        self._held: list[Finding] = []
        self._runs: list[Path] = []
        self._folder: Path | None = None
        self._count = 0  # findings in the runs written

    def __len__(self) -> int:
        return self._count + len(self._held)

    def add(self, finding: Finding) -> None:
        held = self._held
        held.append(finding)
        if len(held) >= self.run_size:
            self._spill()

    def __iter__(self) -> Iterator[Finding]:
        if not self._runs:
            self._held.sort(key=finding_sort_key)
            return iter(self._held)
        if self._held:
            self._spill()
        return heapq.merge(*(_read_run(path) for path in self._runs), key=finding_sort_key)

    def _spill(self) -> None:
        held = self._held
        held.sort(key=finding_sort_key)
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="memtui-findings-"))
        path = self._folder / f"run-{len(self._runs)}"
        with path.open("wb") as out:
            for start in range(0, len(held), _BATCH):
                batch = [(f.rule, f.severity, f.path, f.line, f.message) for f in held[start : start + _BATCH]]
                pickle.dump(batch, out, protocol=pickle.HIGHEST_PROTOCOL)
        self._runs.append(path)
        self._count += len(held)
        self._held = []

    def close(self) -> None:
        self._held = []
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
        self._runs = []

    def __enter__(self) -> SortedFindings:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _read_run(path: Path) -> Iterator[Finding]:
    """A run's findings, in its order. (Its file is ours, written by ``_spill`` moments ago.)"""
    with path.open("rb") as run:
        while True:
            try:
                batch = pickle.load(run)
            except EOFError:
                return
            for fields in batch:
                yield Finding(*fields)


__all__ = ["SortedFindings", "RUN_SIZE"]
