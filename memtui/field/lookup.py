"""The field's lookup tables (by path, file stem, title and alias, id), kept page by page.

``Field.resolve`` finds the page a reference means through six tables whose keys are
compared with ``lookup_key``. ``LookupTables`` keeps them for a set of pages and brings
them up to date for the pages that changed: each page's entries, and for each entry the
pages holding it (sorted), from which the entry's value is made (``table_value``). A
field with no analysis builds its tables by updating empty ones with every page (the one
way tables are made); the app's ``CheckMemo`` keeps one ``LookupTables`` between analyses
and updates it with the pages that changed.
"""

from __future__ import annotations

import unicodedata
from bisect import insort
from collections.abc import Iterable, Mapping
from typing import Any

from memtui.field.page import PageInfo
from memtui.store.gc_pause import no_cycle_collection

# An alias is a name a page gives itself in its frontmatter: its own table, looked up after
# every name a file holds by itself (its path, its file name), so that an agent's
# ``aliases: [Budget]`` never takes ``[[Budget]]`` from ``Budget.md``.
PAGE_TABLES = ("id", "id_folded", "title", "stem", "path", "alias")

Entry = tuple[str, str]  # (table, key)
Tables = dict[str, dict[str, Any]]


def lookup_key(text: str) -> str:
    """How names are compared in links: Unicode NFC, case-folded (NFD file names match NFC text).

    A name that is already its own key is returned as it is, not as an equal copy: the lookup
    tables key 100,000 paths, stems and ids, mostly lower-case already (24 MB of copies)."""
    normal = unicodedata.normalize("NFC", text)
    folded = normal.casefold()
    return normal if folded == normal else folded


def table_entries(path: str, info: PageInfo) -> tuple[Entry, ...]:
    """The (table, key) entries of the field's lookup tables a page holds, each once."""
    key = lookup_key(path)
    entries: list[Entry] = [("path", key), ("path", key[:-3]), ("stem", lookup_key(info.stem))]
    for ident in info.ids:
        entries.append(("id", ident))
        entries.append(("id_folded", lookup_key(ident)))
    title = info.text_of("title")
    if title and title.strip():
        entries.append(("title", lookup_key(title.strip())))
    for name in info.aliases:
        if name.strip():
            entries.append(("alias", lookup_key(name.strip())))
    return tuple(dict.fromkeys(entries))


def table_value(table: str, paths: list[str]) -> Any:
    """What a lookup table holds for a key, from the pages holding it (sorted): an id names the
    first page, a path the last one written in sorted order, a title, alias or stem every page."""
    if table == "path":
        return paths[-1]
    if table in ("id", "id_folded"):
        return paths[0]
    return tuple(paths)


def file_tables(files: Iterable[str]) -> Tables:
    """The lookups of the field's other files (embeds): by folded path and by name."""
    by_file: dict[str, str] = {}
    by_file_name: dict[str, list[str]] = {}
    for rel in sorted(files):
        key = lookup_key(rel)
        by_file[key] = rel
        by_file_name.setdefault(key.rsplit("/", 1)[-1], []).append(rel)
    return {"file": by_file, "file_name": {name: tuple(paths) for name, paths in by_file_name.items()}}


class LookupTables:
    """The page tables of a set of pages, kept up to date page by page (see the module)."""

    def __init__(self) -> None:
        self._entries: dict[str, tuple[Entry, ...]] = {}  # path -> the entries it holds
        self._holders: dict[Entry, list[str]] = {}  # entry -> the pages holding it, sorted
        self.tables: Tables = {name: {} for name in PAGE_TABLES}

    def update(self, pages: Mapping[str, PageInfo], changed: Iterable[str], removed: Iterable[str]) -> set[Entry]:
        """Take the pages ``changed`` (added or with a new version in ``pages``) and those
        ``removed``; return the entries whose value changed. A table with such an entry is a
        new dict (the ones handed out before never change); the others are the same objects."""
        with no_cycle_collection():  # 500,000 entries at 100,000 pages, none of them garbage
            return self._update(pages, changed, removed)

    def _update(self, pages: Mapping[str, PageInfo], changed: Iterable[str], removed: Iterable[str]) -> set[Entry]:
        holders = self._entries, self._holders
        entries, holding = holders
        touched: set[Entry] = set()
        for path in removed:
            for entry in entries.pop(path, ()):
                bucket = holding[entry]
                bucket.remove(path)
                touched.add(entry)
        for path in changed:
            old = entries.get(path, ())
            new = table_entries(path, pages[path])
            if old == new:
                continue
            entries[path] = new
            for entry in old:
                if entry not in new:
                    holding[entry].remove(path)
                    touched.add(entry)
            for entry in new:
                if entry in old:
                    continue
                held = holding.get(entry)
                if held is None:
                    holding[entry] = [path]
                elif not held or held[-1] < path:
                    held.append(path)  # pages taken in sorted order (a whole build): at the end
                else:
                    insort(held, path)
                touched.add(entry)
        if touched:
            tables = dict(self.tables)
            for name in {table for table, _ in touched}:
                tables[name] = dict(tables[name])
            for entry in touched:
                table, key = entry
                bucket = holding[entry]
                if bucket:
                    tables[table][key] = table_value(table, bucket)
                else:
                    del holding[entry]
                    tables[table].pop(key, None)
            self.tables = tables
        return touched

    @classmethod
    def of(cls, pages: Mapping[str, PageInfo]) -> LookupTables:
        """The tables of ``pages``, made by updating empty ones with every page."""
        lookup = cls()
        lookup.update(pages, sorted(pages), ())
        return lookup
