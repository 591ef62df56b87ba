"""BM25F as Whoosh computes it, with each field's document lengths read once.

Whoosh's BM25F scorer asks the reader for a document's field length for every
document it scores, through several layers of column readers. Here the lengths
of a segment are read once into a list and scoring looks them up directly. The
list is made from the lengths column's bytes in one read (asking Whoosh for each
document took 0.2 s at 100,000 pages, on every first search of a process and
after every commit). Scores are identical: the list holds the same
(byte-quantised) lengths Whoosh returns, ``None`` where it returns ``None``.
"""

from __future__ import annotations

import threading
import weakref

from whoosh.codec.whoosh3 import LENGTHS_COLUMN
from whoosh.columns import NumericColumn
from whoosh.scoring import BM25F, BM25FScorer
from whoosh.util.numeric import byte_to_length

_lengths: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # reader -> {field: [length, ...]}
_lock = threading.Lock()


def field_lengths(searcher, fieldname: str) -> list[int]:
    reader = searcher.reader()
    with _lock:
        per_field = _lengths.setdefault(reader, {})
        lengths = per_field.get(fieldname)
        if lengths is None:
            lengths = _column_lengths(reader, fieldname)
            if lengths is None:  # not a segment of the codec we write: ask for each document
                lengths = [searcher.doc_field_length(docnum, fieldname, 1) for docnum in range(reader.doc_count_all())]
            per_field[fieldname] = lengths
    return lengths


# What Whoosh 2.7.4's W3PerDocReader.doc_field_length returns for each stored length byte.
_BYTE_LENGTHS = [None, *(byte_to_length(value) for value in range(1, 256))]


def _column_lengths(reader, fieldname: str) -> list | None:
    """Every document's length of ``fieldname`` from a segment's lengths column, read at once."""
    try:
        perdoc = reader._perdoc
        doccount = reader.doc_count_all()
        column = perdoc._cached_reader(f"_{fieldname}_len", LENGTHS_COLUMN)
        if column is None:
            return [1] * doccount  # no lengths stored: Whoosh answers the default
        if type(column) is not NumericColumn.Reader or column._typecode != "B":
            return None
        stored = min(column._count, doccount)
        raw = column._dbfile.get(column._basepos, stored)
    except AttributeError:
        return None
    lengths = [_BYTE_LENGTHS[value] for value in raw]
    lengths.extend([None] * (doccount - len(lengths)))  # past the column's end: length byte 0
    return lengths


class CachedLengthsBM25F(BM25F):
    def scorer(self, searcher, fieldname, text, qf=1):
        scorer = super().scorer(searcher, fieldname, text, qf=qf)
        if isinstance(scorer, BM25FScorer):
            scorer.dfl = field_lengths(searcher, fieldname).__getitem__
        return scorer


WEIGHTING = CachedLengthsBM25F()
