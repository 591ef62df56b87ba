"""The browse list's contents: which rows a state tab and a text filter list, in which order,
the count on each tab, and the widths of the fitted columns.

A refill after a change starts from the last one (``ListState``): only the rows that are not
the same objects as last time (the analysis keeps a page's row while nothing about it
changed) are taken out and put back in place, and the counts and widths follow them. At
100,000 pages a whole refill (every row filtered, sorted and measured) took about 0.7 s of a
worker, again and again while an agent wrote pages, taking the interpreter from the search
index and the keys; a refill of a few changed rows is a few list and dict copies.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import compress
from operator import is_not

from rich.cells import cell_len

from memtui.session.rows import FILTERS, PageRow
from memtui.tui.widgets.lists import matches
from memtui.tui.widgets.page_table import PreparedRows

SORTS = ("title", "updated", "kind", "subject", "path", "state")
# Sorted by state: what needs a reviewer first. Every state a row can be in has a rank (a row
# with no review record, a stale one or a tainted transcript had none, and the sort failed).
STATE_RANK = {
    "quarantined": 0,
    "tainted": 1,
    "unreviewed": 2,
    "unknown": 3,
    "findings": 4,
    "proposal": 5,
    "stale": 6,
    "superseded": 7,
    "loading": 8,
}
INCREMENTAL_MAX = 0.05  # above this share of rows changed, the list is made again from all rows
# Rows per step of a walk over every row done in C (a map, a dict made from pairs): one such
# call over 100,000 rows holds the interpreter 10-20 ms, and a key pressed meanwhile waits for
# it (the UI thread cannot take the interpreter back in the middle of a C call); between two
# steps it can.
STEP = 4096


def sort_key(name: str) -> Callable[[PageRow], tuple]:
    """Each key ends with the path, so no two rows are equal and a descending list is exactly
    the ascending one reversed."""
    if name == "title":
        return lambda row: (row.title.casefold(), row.path)
    if name == "updated":
        return lambda row: (row.updated, row.path)
    if name == "kind":
        return lambda row: (row.kind, row.title.casefold(), row.path)
    if name == "subject":
        return lambda row: (row.subject.casefold() or "\uffff", row.title.casefold(), row.path)
    if name == "state":
        return lambda row: (min((STATE_RANK.get(s, 9) for s in row.states()), default=10), row.path)
    return lambda row: (row.path,)


def filter_counts(rows: dict[str, PageRow]) -> dict[str, int]:
    """How many rows each filter tab lists."""
    counts = dict.fromkeys(FILTERS, 0)
    _count(counts, rows.values(), 1)
    return counts


def _count(counts: dict[str, int], rows, step: int) -> None:
    for row in rows:
        counts["all"] += step
        for state in row.states():
            if state in counts:
                counts[state] += step


def _listed(row: PageRow, filter_name: str, query: str) -> bool:
    return row.matches(filter_name) and (not query or matches(query, row.title, row.path, row.subject))


@dataclass
class ListState:
    """One fill of the list, kept to make the next one from."""

    settings: tuple  # (filter, query, sort, fitted columns)
    rows: dict[str, PageRow]  # every row it was made from
    counts: dict[str, int]
    ascending: list[PageRow]  # the listed rows, in ascending order of their sort key
    keys: list[tuple]  # the sort key of each, in the same order
    paths: list[str]  # the path of each, in the same order
    widths: list[Counter]  # per fitted column: how many listed rows show each value
    prepared: PreparedRows
    reverse: bool

    @property
    def visible(self) -> list[PageRow]:
        return self.ascending[::-1] if self.reverse else self.ascending


def fill_list(
    rows: dict[str, PageRow],
    filter_name: str,
    query: str,
    sort: str,
    reverse: bool,
    fitted: tuple[tuple[str, int, int], ...],
    last: ListState | None = None,
) -> ListState:
    """The list for ``rows`` (``fitted``: each fitted column's key, cell number and narrowest
    width, ``PageTable.fitted_columns``), made from ``last`` when its settings are the same."""
    settings = (filter_name, query, sort, fitted)
    if last is not None and last.settings == settings:
        changed = _changed(last.rows, rows)
        if changed is not None:
            try:
                return _refill(last, rows, changed, reverse)
            except _OutOfStep:
                pass  # the kept list does not hold what it should: made again below
    return _fill(rows, settings, reverse)


class _OutOfStep(Exception):
    pass


def _changed(before: dict[str, PageRow], after: dict[str, PageRow]) -> list[str] | None:
    """The paths whose row is not the same object (or is new, or gone); None if too many."""
    limit = max(50, int(INCREMENTAL_MAX * len(after)))
    paths, now, then = list(after), after.__getitem__, before.get
    changed: list[str] = []
    for start in range(0, len(paths), STEP):  # 0.01 s at 100,000 rows, in steps
        part = paths[start : start + STEP]
        changed.extend(compress(part, map(is_not, map(now, part), map(then, part))))
        if len(changed) > limit:
            return None
    if len(before) + sum(1 for path in changed if path not in before) != len(after):
        changed.extend(before.keys() - after.keys())
        if len(changed) > limit:
            return None
    return changed


def _fill(rows: dict[str, PageRow], settings: tuple, reverse: bool) -> ListState:
    filter_name, query, sort, fitted = settings
    key = sort_key(sort)
    listed = sorted(
        ((key(row), row) for row in rows.values() if _listed(row, filter_name, query)), key=lambda pair: pair[0]
    )
    ascending = [row for _, row in listed]
    widths = [Counter(row.cells[number][0] for row in ascending if len(row.cells) > number) for _, number, _ in fitted]
    state = ListState(
        settings,
        rows,
        filter_counts(rows),
        ascending,
        [k for k, _ in listed],
        [row.path for row in ascending],
        widths,
        PreparedRows([], {}, {}, {}),
        reverse,
    )
    state.prepared = _prepared(state, {row.path: row.cells for row in ascending})
    return state


def _refill(last: ListState, rows: dict[str, PageRow], changed: list[str], reverse: bool) -> ListState:
    filter_name, query, sort, fitted = last.settings
    key = sort_key(sort)
    counts = dict(last.counts)
    ascending, keys, paths = list(last.ascending), list(last.keys), list(last.paths)
    widths = [Counter(counter) for counter in last.widths]
    cells = dict(last.prepared.cells)
    for path in changed:
        old, new = last.rows.get(path), rows.get(path)
        if old is not None:
            _count(counts, (old,), -1)
            if _listed(old, filter_name, query):
                old_key = key(old)
                at = bisect_left(keys, old_key)
                if at == len(keys) or keys[at] != old_key or ascending[at] is not old:
                    raise _OutOfStep(path)
                del ascending[at], keys[at], paths[at]
                del cells[path]
                _measure(widths, fitted, old, -1)
        if new is not None:
            _count(counts, (new,), 1)
            if _listed(new, filter_name, query):
                new_key = key(new)
                at = bisect_left(keys, new_key)
                ascending.insert(at, new)
                keys.insert(at, new_key)
                paths.insert(at, path)
                cells[path] = new.cells
                _measure(widths, fitted, new, 1)
    state = ListState(last.settings, rows, counts, ascending, keys, paths, widths, last.prepared, reverse)
    state.prepared = _prepared(state, cells)
    return state


def _measure(widths: list[Counter], fitted, row: PageRow, step: int) -> None:
    for counter, (_, number, _) in zip(widths, fitted):
        if len(row.cells) > number:
            value = row.cells[number][0]
            counter[value] += step
            if counter[value] <= 0:
                del counter[value]


def _prepared(state: ListState, cells: dict) -> PreparedRows:
    paths = state.paths[::-1] if state.reverse else list(state.paths)
    fit = {
        name: max([narrowest, *map(cell_len, counter)])
        for (name, _, narrowest), counter in zip(state.settings[3], state.widths)
    }
    index: dict[str, int] = {}
    for start in range(0, len(paths), STEP):  # 17 ms at 100,000 rows, in steps
        index.update(zip(paths[start : start + STEP], range(start, start + STEP)))
    return PreparedRows(paths, cells, index, fit)
