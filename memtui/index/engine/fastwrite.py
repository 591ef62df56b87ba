"""A Whoosh segment writer that spends less Python time per posting.

Whoosh 2.7's ``SegmentWriter`` pushes every posting (one per distinct word per
field per page) through a size-tracking pool, sorts all of them at commit, and
for each one reads the document's field length back from disk. Building an
index of 10,000 pages makes about 1.3 million postings, and that per-posting
work was most of the build time.

``FastSegmentWriter`` keeps the same on-disk format and the same commit,
merge and locking code; it only changes how postings are gathered:

- postings are grouped as they arrive, one list per (field, term), so commit
  sorts the distinct terms instead of every posting;
- field lengths are read once per field into a list, not once per posting;
- a term's postings go into Whoosh's posting-block buffers a block at a time
  (``_fill_blocks``) instead of one ``add_posting`` call each;
- ``PageText`` fields hand over their terms with counts directly (``term_counts``:
  one analysis per distinct chunk, no Token objects), as text: a term is encoded to
  UTF-8 once at commit, not once per page (UTF-8 sorts as the code points do);
- a term found in at most ``INLINE_LIMIT`` pages keeps its postings inside its
  term entry instead of a separate compressed block (most words are rare, and
  a block costs a pickle and a zlib call). Whoosh's reader supports this
  ("inlined" postings); its own writer's switch for it is broken in 2.7.4.

- a merge (``add_reader``: ``commit(optimize=True)``, the small-segment merges) reads
  the merged segments term by term while it writes (``MergedSegment``), where Whoosh
  puts every posting of every segment in its pool first: merging the two segments of
  a 100,000-page build took 2.4 GB that way.

The resulting segment is the one Whoosh's writer would produce (a test builds
the same documents both ways and compares terms, postings and scores).
"""

from __future__ import annotations

import heapq
import struct
import zlib
from array import array
from operator import itemgetter, sub
from pickle import dumps

from whoosh.codec.whoosh3 import WHOOSH3_HEADER_MAGIC, W3TermInfo
from whoosh.filedb.filetables import md5_hash
from whoosh.reading import SegmentReader
from whoosh.system import pack_int, pack_long, pack_ushort
from whoosh.util.numeric import length_to_byte
from whoosh.writing import SegmentWriter

from memtui.index.analysis import PageText, term_counts

INLINE_LIMIT = 4
_TERMINFO = W3TermInfo._struct
_LENGTHS = struct.Struct("!ii")  # whoosh.filedb.filetables: key and value lengths
_INT = struct.Struct("!i")  # StructFile.write_int


class GroupedPostingPool:
    """Postings grouped per field and term, in the shape ``SegmentWriter`` expects of its pool.

    ``counted`` holds the postings of ``PageText`` fields as added by ``add_document``:
    per text term a flat list, document, count, document, count, ...; they become
    bytes and weights at commit.
    """

    def __init__(self) -> None:
        self.fields: dict[str, dict[bytes, list[tuple[int, float, bytes]]]] = {}
        # Lists, not 4-byte int arrays: arrays saved 44 MB of a 100,000-page build helper's
        # 487 MB but made a CJK build 14% slower (an array is four times as slow to create).
        self.counted: dict[str, dict[str, list[int]]] = {}
        self.boosts: dict[str, float] = {}
        self._unsorted: set[tuple[str, bytes]] = set()
        self.sources: list[MergedSegment] = []  # segments merged in, read when the segment is written

    @property
    def fieldnames(self) -> set[str]:
        names = set(self.fields) | set(self.counted)
        for source in self.sources:
            names.update(source.fieldnames)
        return names

    def add_source(self, source: MergedSegment) -> None:
        self.sources.append(source)

    def counted_of(self, fieldname: str, boost: float) -> dict[str, list[int]]:
        terms = self.counted.get(fieldname)
        if terms is None:
            terms = self.counted[fieldname] = {}
            self.boosts[fieldname] = boost
        return terms

    def terms_of(self, fieldname: str) -> dict[bytes, list[tuple[int, float, bytes]]]:
        terms = self.fields.get(fieldname)
        if terms is None:
            terms = self.fields[fieldname] = {}
        return terms

    def add(self, item: tuple[str, bytes, int, float, bytes | None]) -> None:
        """One posting, from merging another segment in (documents come in any order there)."""
        fieldname, btext, docnum, weight, value = item
        terms = self.terms_of(fieldname)
        postings = terms.get(btext)
        if postings is None:
            terms[btext] = [(docnum, weight, value or b"")]
            return
        if docnum < postings[-1][0]:
            self._unsorted.add((fieldname, btext))
        postings.append((docnum, weight, value or b""))

    def grouped(self):
        """(fieldname, btext), and the documents, weights and values of its postings sorted by
        document (values: one per posting, or None for a field whose postings hold none),
        in index order."""
        for fieldname in sorted(self.fieldnames):
            streams = [
                stream
                for stream in (self._own_terms(fieldname), *(s.terms(fieldname) for s in self.sources))
                if stream is not None
            ]
            if len(streams) == 1:
                for btext, ids, weights, values in streams[0]:
                    yield (fieldname, btext), ids, weights, values
                continue
            # Several sources: their terms in order, a term's parts joined (their documents
            # are disjoint ranges: this writer's own, then each merged segment's).
            parts: list[tuple] = []
            for item in heapq.merge(*streams, key=itemgetter(0)):
                if parts and item[0] != parts[0][0]:
                    yield (fieldname, parts[0][0]), *_joined(parts)
                    parts = []
                parts.append(item)
            if parts:
                yield (fieldname, parts[0][0]), *_joined(parts)

    def _own_terms(self, fieldname: str):
        """The (btext, ids, weights, values) of the postings added here, in term order; None if none."""
        counted = self.counted.pop(fieldname, None) or {}
        terms = self.fields.get(fieldname, {})
        if counted and terms:  # merged in from other segments too: one kind of posting
            self._fold_counted(fieldname, counted)
            counted = {}
        if counted:
            return self._counted_terms(counted, self.boosts[fieldname])
        if terms:
            return self._posting_terms(fieldname, terms)
        return None

    @staticmethod
    def _counted_terms(counted: dict[str, list[int]], boost: float):
        for term in sorted(counted):
            flat = counted[term]
            ids, counts = flat[0::2], flat[1::2]
            weights = counts if boost == 1.0 else [count * boost for count in counts]
            yield term.encode("utf-8"), ids, weights, None

    def _posting_terms(self, fieldname: str, terms: dict[bytes, list[tuple[int, float, bytes]]]):
        for btext in sorted(terms):
            postings = terms[btext]
            if (fieldname, btext) in self._unsorted:
                postings.sort(key=lambda posting: posting[0])
            ids, weights, values = zip(*postings)
            yield btext, ids, weights, values

    def _fold_counted(self, fieldname: str, counted: dict[str, list[int]]) -> None:
        """Counted postings as (document, weight, b"") under UTF-8 terms, beside merged ones."""
        boost = self.boosts[fieldname]
        terms = self.terms_of(fieldname)
        for term, flat in counted.items():
            btext = term.encode("utf-8")
            postings = [(doc, count * boost, b"") for doc, count in zip(flat[0::2], flat[1::2])]
            known = terms.get(btext)
            if known is None:
                terms[btext] = postings
            else:
                known.extend(postings)
                self._unsorted.add((fieldname, btext))

    def iter_postings(self):
        for (fieldname, btext), ids, weights, values in self.grouped():
            for number, docnum in enumerate(ids):
                yield fieldname, btext, docnum, weights[number], values[number] if values else b""

    def cleanup(self) -> None:
        self.fields = {}
        self.counted = {}
        self._unsorted = set()
        for source in self.sources:
            source.close()
        self.sources = []


def _joined(parts: list[tuple]) -> tuple:
    """One term's (ids, weights, values) from parts of it in disjoint document ranges."""
    parts.sort(key=lambda part: part[1][0])
    ids = [doc for part in parts for doc in part[1]]
    weights = [weight for part in parts for weight in part[2]]
    if all(part[3] is None for part in parts):
        return ids, weights, None
    values = [value for part in parts for value in (part[3] if part[3] is not None else (b"",) * len(part[1]))]
    return ids, weights, values


class MergedSegment:
    """A segment being merged into the writer's new one, read a term at a time as it is written.

    Its documents are renumbered as Whoosh's writer renumbers them (``startdoc`` onwards, or
    ``docmap`` when it has deletions, whose documents are left out). The merge policy closes
    ``reader`` when ``add_reader`` returns, before the segment is written: its ``close`` is
    kept here for ``close`` and the reader's own made to wait (``_closed_later``)."""

    def __init__(self, reader: SegmentReader, startdoc: int, docmap: dict[int, int] | None) -> None:
        self.reader = reader
        self._close = reader.close
        reader.close = _closed_later
        self.startdoc = startdoc
        self.docmap = docmap
        schema = reader.schema
        self.fieldnames = {name for name in reader.indexed_field_names() if name in schema}

    def terms(self, fieldname: str):
        if fieldname not in self.fieldnames:
            return None
        return self._terms(fieldname)

    def _terms(self, fieldname: str):
        reader, startdoc, docmap = self.reader, self.startdoc, self.docmap
        for btext in reader.lexicon(fieldname):
            matcher = reader.postings(fieldname, btext)  # without the deleted documents
            ids: list[int] = []
            weights: list[float] = []
            values: list[bytes] = []
            while matcher.is_active():
                doc = matcher.id()
                ids.append(docmap[doc] if docmap is not None else startdoc + doc)
                weights.append(matcher.weight())
                values.append(matcher.value() or b"")
                matcher.next()
            if ids:
                yield btext, ids, weights, values

    def close(self) -> None:
        self._close()


def _closed_later() -> None:
    """The ``close`` of a reader a ``MergedSegment`` still reads (it closes it itself)."""


def _known_columns(perdoc):
    """``perdoc`` (a segment's per-document reader) answering ``has_column`` from a table: Whoosh
    asks for each document's field length, and for a field without a length column it looked
    for the file again each time (on disk: a stat per document and field, 28,000 in a 10 s write
    storm). A written segment's files never change, so the answer is kept."""
    asked = perdoc.has_column
    known: dict[str, bool] = {}

    def has_column(fieldname: str) -> bool:
        answer = known.get(fieldname)
        if answer is None:
            answer = known[fieldname] = asked(fieldname)
        return answer

    perdoc.has_column = has_column
    return perdoc


class FastSegmentWriter(SegmentWriter):
    """``SegmentWriter`` with grouped postings. Construct it like ``index.writer()``."""

    def __init__(self, ix, **kwargs) -> None:
        super().__init__(ix, **kwargs)
        self.pool = GroupedPostingPool()

    def add_postings_to_pool(self, reader, startdoc, docmap) -> None:
        """A segment's postings are read when the new segment is written (``MergedSegment``),
        through the merge policy's reader, kept open until then: the policy closes it when
        ``add_reader`` returns, so its ``close`` waits for the pool's cleanup. (A reader of our
        own mapped each segment a second time: in a merge of four 49 MB segments of a
        100,000-page index each had 80 MB resident.)"""
        if type(reader) is not SegmentReader:
            super().add_postings_to_pool(reader, startdoc, docmap)
            return
        self.pool.add_source(MergedSegment(reader, startdoc, docmap))

    def add_reader(self, reader) -> None:
        """Whoosh's, with the merged segment's column lookups kept (``_known_columns``)."""
        perdoc = getattr(reader, "_perdoc", None)
        if perdoc is not None:
            _known_columns(perdoc)
        super().add_reader(reader)

    def add_document(self, **fields) -> None:
        self._check_state()
        schema = self.schema
        names = sorted(name for name in fields if not name.startswith("_"))
        self._check_fields(schema, names)
        for name in names:
            field = schema[name]
            if field.vector or field.separate_spelling():
                # Not used by memtui's schema; keep Whoosh's general path for it.
                return super().add_document(**fields)
        docnum = self.docnum
        pool = self.pool
        docboost = self._doc_boost(fields)
        perdoc = self.perdocwriter
        perdoc.start_doc(docnum)
        for name in names:
            value = fields[name]
            if value is None:
                continue
            field = schema[name]
            length = 0
            if field.indexed and type(field) is PageText and self._field_boost(fields, name, docboost) == 1.0:
                counts = term_counts(value)
                length = sum(counts.values())
                terms = pool.counted_of(name, field.format.field_boost)
                get = terms.get
                for term, count in counts.items():
                    postings = get(term)
                    if postings is None:
                        terms[term] = [docnum, count]
                    else:
                        postings += (docnum, count)
            elif field.indexed:
                boost = self._field_boost(fields, name, docboost)
                posted = pool.terms_of(name)
                for btext, freq, weight, vbytes in field.index(value):
                    length += freq
                    entries = posted.get(btext)
                    if entries is None:
                        posted[btext] = [(docnum, weight * boost, vbytes or b"")]
                    else:
                        entries.append((docnum, weight * boost, vbytes or b""))
                if not field.scorable:
                    length = 0
            stored = fields.get(f"_stored_{name}", value)
            perdoc.add_field(name, field, stored if field.stored else None, length)
            column = field.column_type
            if column and stored is not None:
                perdoc.add_column_value(name, column, field.to_column_value(stored))
        perdoc.finish_doc()
        self._added = True
        self.docnum += 1

    def _flush_segment(self) -> None:
        self.perdocwriter.close()
        lengths_reader = _known_columns(self.per_document_reader()) if self.codec.length_stats else None
        writer = self.fieldwriter
        doc_count = self.docnum
        current = None
        lengths: list[int] | None = None
        table = TermTable(writer)
        try:
            for (fieldname, btext), ids, weights, values in self.pool.grouped():
                if fieldname != current:
                    if current is not None:
                        writer.finish_field()
                    field = self.schema[fieldname]
                    writer.start_field(fieldname, field)
                    current = fieldname
                    lengths = None
                    if lengths_reader is not None and field.scorable:
                        lengths = [lengths_reader.doc_field_length(d, fieldname, 0) for d in range(doc_count)]
                if len(ids) <= INLINE_LIMIT:
                    table.inlined(btext, ids, weights, values, lengths)
                else:
                    table.blocks(btext, ids, weights, values, lengths, field)
            if current is not None:
                writer.finish_field()
        finally:
            writer.close()
            if lengths_reader is not None:
                lengths_reader.close()


class PositionBucket:
    """One of the 256 buckets of Whoosh's ``HashWriter``: the (hash, position) of each term
    entry, in two arrays. Whoosh keeps a list of tuples, about 130 bytes a term, held until
    the term file is closed: a merge of a 100,000-page index writes millions of terms.
    Iterated and measured as Whoosh's ``_write_hashes`` does, in the same order."""

    __slots__ = ("hashes", "positions")

    def __init__(self) -> None:
        self.hashes = array("I")  # md5_hash: 32 bits
        self.positions = array("q")

    def append(self, pair: tuple[int, int]) -> None:
        self.hashes.append(pair[0])
        self.positions.append(pair[1])

    def __len__(self) -> int:
        return len(self.hashes)

    def __iter__(self):
        return zip(self.hashes, self.positions)


def _compact_buckets(tindex) -> list[PositionBucket]:
    """``tindex``'s buckets as ``PositionBucket``s (any entries already in them kept, in order)."""
    buckets = tindex.buckets
    if buckets and all(type(bucket) is PositionBucket for bucket in buckets):
        return buckets
    compact = []
    for bucket in buckets:
        kept = PositionBucket()
        for pair in bucket:
            kept.append(pair)
        compact.append(kept)
    tindex.buckets = compact
    return compact


class TermTable:
    """Writes term entries the way Whoosh's ``W3FieldWriter`` (``finish_term``) and its
    ``OrderedHashWriter`` (``add``) do, without their per-call overhead."""

    def __init__(self, writer) -> None:
        self.writer = writer
        self.tindex = writer._tindex
        self.buckets = _compact_buckets(self.tindex)
        self.tfile = self.tindex.dbfile.file
        self.postfile = writer._postfile
        self.pfile = self.postfile.file

    def add(self, btext: bytes, value: bytes) -> None:
        tindex = self.tindex
        key = pack_ushort(self.writer._fieldid) + btext
        if key <= tindex.lastkey:
            raise ValueError(f"Keys must increase: {tindex.lastkey!r}..{key!r}")
        pos = self.tfile.tell()
        tindex.index.append(pos)
        self.tfile.write(_LENGTHS.pack(len(key), len(value)) + key + value)
        h = md5_hash(key)
        bucket = self.buckets[h & 255]
        bucket.hashes.append(h)
        bucket.positions.append(pos)
        tindex.lastkey = key

    def blocks(self, btext: bytes, ids, weights, values, lengths: list[int] | None, fieldobj) -> None:
        """A posting list in blocks in the postings file, and its term entry.

        Byte for byte what ``W3PostingsWriter`` writes for one ``add_posting`` per posting:
        blocks of ``blocklimit`` postings (ids delta-encoded, weights as 32-bit floats,
        values joined), each pickled and compressed after its header, and the term's
        statistics over the blocks.
        """
        postwriter = self.writer._postwriter
        limit = postwriter._blocklimit
        compression = postwriter._compression
        fixed = fieldobj.format.fixed_value_size()
        pfile = self.pfile
        start_offset = pfile.tell()
        pfile.write(WHOOSH3_HEADER_MAGIC)
        total = len(ids)
        term_weight = 0.0
        term_min: int | None = None
        term_max = 0
        term_top = 0
        for start in range(0, total, limit):
            end = min(total, start + limit)
            block_ids = ids[start:end]
            block_weights = array("f", weights[start:end])
            top = max(0, max(weights[start:end]))
            if lengths is not None:
                sizes = [lengths[d] for d in block_ids if lengths[d]]
                low, high = (min(sizes), max(sizes)) if sizes else (None, 0)
            else:
                low, high = None, 0
            first = block_weights[0]
            if first == 1.0 and block_weights.count(1.0) == len(block_weights):
                mini_weights = None
            elif block_weights.count(first) == len(block_weights):
                mini_weights = first
            else:
                mini_weights = tuple(block_weights)
            mini_values: tuple[bytes, ...] | bytes | None
            if fixed is None or fixed < 0:
                mini_values = tuple(v for v in values[start:end] if v) if values is not None else ()
            elif fixed == 0:
                mini_values = None
            else:
                mini_values = b"".join(v for v in values[start:end] if v) if values is not None else b""
            deltas = tuple(map(sub, block_ids, (0, *block_ids[:-1])))
            data = dumps((deltas, mini_weights, mini_values), 2)
            if compression:
                data = zlib.compress(data, compression)
            info = dumps(
                (len(block_ids), block_ids[-1], top, compression, length_to_byte(low), length_to_byte(high)), 2
            )
            size = len(info) + len(data)
            pfile.write(_INT.pack(-size if end == total else size) + info + data)
            term_weight += sum(block_weights)
            if term_min is None:
                term_min = low
            elif low is not None:
                term_min = min(term_min, low)
            term_max = max(term_max, high)
            term_top = max(term_top, top)
        header = _TERMINFO.pack(
            0,
            term_weight,
            total,
            0 if term_min is None else length_to_byte(term_min),
            length_to_byte(term_max),
            term_top,
            ids[0],
            ids[-1],
        )
        self.add(btext, header + pack_long(start_offset) + pack_int(pfile.tell() - start_offset))

    def inlined(self, btext: bytes, ids, weights, values, lengths: list[int] | None) -> None:
        """One term entry holding its own (short) posting list, as Whoosh's reader expects
        inlined postings: the statistics a posting block would give (weights as 32-bit
        floats, min/max over the non-zero field lengths), then the postings pickled, one
        value per posting (b"" for formats without values) so merges see every posting."""
        weights = tuple(array("f", weights))
        sizes = [lengths[d] for d in ids if lengths[d]] if lengths is not None else []
        header = _TERMINFO.pack(
            1,
            sum(weights),
            len(ids),
            length_to_byte(min(sizes)) if sizes else 0,
            length_to_byte(max(sizes) if sizes else 0),
            max(weights),
            ids[0],
            ids[-1],
        )
        inlined = (tuple(ids), weights, tuple(values) if values is not None else (b"",) * len(ids))
        self.add(btext, header + dumps(inlined, 2))
