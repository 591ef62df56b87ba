"""Equal parts of many page summaries held once.

At 100,000 pages most of a ``PageInfo`` repeats from page to page: the same frontmatter
keys, the same key-line table (pages one tool wrote list their keys in the same order),
the same tag counts, six empty lists and two empty dicts, the same ``(number, line)``
citation pairs. Held once per page they were 3.6 KB a page, 356 MB in all. ``PartPool``
makes equal parts the same object:

- strings up to ``SHORT`` characters (keys, dates, kinds, origins);
- a dict whose values are all ints (``key_lines``, ``tag_counts``, ``hazard_counts``),
  and any empty dict (``norm`` of most pages);
- every ``(value, line)`` pair of links and citations, and every empty list, which becomes
  ``()``: an empty summary list that someone tried to append to would fail loudly, where a
  list shared by many pages would have been changed for all of them;
- the first heading's title, where it is the frontmatter's title.

The shared dicts are never changed: a ``PageInfo`` is read-only once it is built (its
parser and its dialect fill it in before anyone else sees it).

The page cache shares within each chunk it writes (``marshal`` stores a shared object
once and reading it back shares it again); a build helper shares the records it sends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memtui.field.page import PageInfo

SHORT = 64  # strings up to this long are shared

# The list fields of a PageInfo, and those that hold (value, line) pairs.
LIST_FIELDS = (
    "untagged_claim_lines",
    "links",
    "embeds",
    "citations",
    "numbered_sources",
    "inline_chains",
    "hazards",
    "problems",
)
PAIR_FIELDS = ("links", "embeds", "citations")
INT_DICT_FIELDS = ("key_lines", "tag_counts", "hazard_counts")
DICT_FIELDS = ("meta",) + INT_DICT_FIELDS


class PartPool:
    """Equal parts made one object, for as long as the pool lives (a chunk, a build)."""

    __slots__ = ("_strings", "_pairs", "_dicts")

    def __init__(self) -> None:
        self._strings: dict[str, str] = {}
        self._pairs: dict[tuple[type, Any, type, Any], tuple[Any, Any]] = {}  # (kind, value, kind, line) -> pair
        self._dicts: dict[tuple[tuple[str, Any], ...], dict[str, Any]] = {}  # the items -> the dict

    def string(self, value: str) -> str:
        if len(value) > SHORT:
            return value
        return self._strings.setdefault(value, value)

    def mapping(self, value: dict[str, Any], *, whole: bool = False) -> dict[str, Any]:
        """``value`` with its string keys and short string values shared; with ``whole``, an
        equal dict of int values seen before is returned instead (the same object)."""
        if not value:
            return self._dicts.setdefault((), value)
        strings = self._strings
        out: dict[str, Any] = {}
        ints = whole
        for key, item in value.items():
            if type(key) is str and len(key) <= SHORT:
                key = strings.setdefault(key, key)
            kind = type(item)
            if kind is str:
                if len(item) <= SHORT:
                    item = strings.setdefault(item, item)
                ints = False
            elif kind is not int:
                ints = False
            out[key] = item
        if ints:
            return self._dicts.setdefault(tuple(out.items()), out)
        return out

    def pairs(self, value: list[Any]) -> list[Any] | tuple[()]:
        """A list of ``(value, line)`` pairs with each pair shared; ``()`` when empty."""
        if not value:
            return ()
        shared = self._pairs
        out: list[Any] = []
        for pair in value:
            if type(pair) is tuple and len(pair) == 2:
                first, line = pair
                kind = type(first)
                if (kind is str and len(first) <= SHORT) or kind is int:
                    if kind is str:
                        first = self.string(first)
                    # The key carries the type: (1, 2) and (True, 2) are equal tuples.
                    pair = shared.setdefault((kind, first, type(line), line), (first, line))
            out.append(pair)
        return out

    def share(self, info: PageInfo) -> PageInfo:
        """``info`` (a PageInfo being stored) with its repeated parts shared, in place."""
        for name in DICT_FIELDS:
            setattr(info, name, self.mapping(getattr(info, name), whole=name in INT_DICT_FIELDS))
        for name in LIST_FIELDS:
            value = getattr(info, name)
            if not value:
                setattr(info, name, ())
            elif name in PAIR_FIELDS:
                setattr(info, name, self.pairs(value))
        info.dialect = self.string(info.dialect)
        info.newline = self.string(info.newline)
        title = info.meta.get("title")
        if info.heading_title is not None and info.heading_title == title:
            info.heading_title = title  # "# Door Down" under "title: Door Down": held once (6 MB at 100,000 pages)
        return info
