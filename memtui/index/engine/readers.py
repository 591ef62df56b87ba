"""A searcher of the newest commit that keeps the readers of the segments that did not change.

Whoosh's ``Searcher.refresh()`` means to do this, but it files the readers it could
reuse under the index generation and looks them up by segment id, so it reuses none:
after each commit it opened every segment again (at 10,000 pages, the big one too),
closed one old reader per generation and left the others open, and a search while an
agent wrote pages could fail with "Reader already closed". Here a segment's reader is
reused when the segment is the same and has the same deletions (deletions only grow,
so the same count is the same set); every reader no longer used is closed, once.
"""

from __future__ import annotations

import contextlib

from whoosh.reading import EmptyReader, MultiReader, SegmentReader
from whoosh.searching import Searcher


def segment_readers(searcher: Searcher) -> dict[str, SegmentReader]:
    """segment id -> the open reader ``searcher`` reads it with."""
    found: dict[str, SegmentReader] = {}
    for leaf, _ in searcher.reader().leaf_readers():
        if isinstance(leaf, SegmentReader) and not leaf.is_closed:
            found[leaf.segment().segment_id()] = leaf
    return found


def refreshed_searcher(ix, old: Searcher, weighting) -> Searcher:  # noqa: ANN001 - Whoosh's index and weighting
    """A searcher of ``ix``'s newest commit; ``old`` must not be used afterwards."""
    info = ix._read_toc()
    reusable = segment_readers(old)
    opened: list[SegmentReader] = []
    readers: list[SegmentReader] = []
    try:
        for segment in info.segments:
            leaf = reusable.get(segment.segment_id())
            if leaf is not None and leaf.segment().deleted_count() == segment.deleted_count():
                del reusable[segment.segment_id()]
            else:
                leaf = SegmentReader(ix.storage, info.schema, segment, generation=info.generation)
                opened.append(leaf)
            readers.append(leaf)
    except BaseException:
        for leaf in opened:
            with contextlib.suppress(Exception):
                leaf.close()
        raise
    for leaf in reusable.values():  # segments merged away or with new deletions
        with contextlib.suppress(Exception):
            leaf.close()
    if not readers:
        reader = EmptyReader(info.schema)
    else:
        reader = MultiReader(readers, generation=info.generation)
    return Searcher(reader, fromindex=ix, weighting=weighting)
