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
- ``PageText`` fields hand over their terms with counts (and positions) directly
  (``PageText.postings``: one analysis per distinct chunk, no Token objects);
- a term found in at most ``INLINE_LIMIT`` pages keeps its postings inside its
  term entry instead of a separate compressed block (most words are rare, and
  a block costs a pickle and a zlib call). Whoosh's reader supports this
  ("inlined" postings); its own writer's switch for it is broken in 2.7.4.

The resulting segment is the one Whoosh's writer would produce (a test builds
the same documents both ways and compares terms, postings and scores).
"""

from __future__ import annotations

from array import array
from pickle import dumps

from whoosh.codec.whoosh3 import W3TermInfo
from whoosh.system import pack_ushort
from whoosh.util.numeric import length_to_byte
from whoosh.writing import SegmentWriter

from memtui.index.analysis import PageText

INLINE_LIMIT = 4
_TERMINFO = W3TermInfo._struct


class GroupedPostingPool:
    """Postings grouped per field and term, in the shape ``SegmentWriter`` expects of its pool."""

    def __init__(self) -> None:
        self.fields: dict[str, dict[bytes, list[tuple[int, float, bytes]]]] = {}
        self._unsorted: set[tuple[str, bytes]] = set()

    @property
    def fieldnames(self) -> set[str]:
        return set(self.fields)

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
        """(fieldname, btext) and its postings sorted by document, in index order."""
        for fieldname in sorted(self.fields):
            terms = self.fields[fieldname]
            for btext in sorted(terms):
                postings = terms[btext]
                if (fieldname, btext) in self._unsorted:
                    postings.sort(key=lambda posting: posting[0])
                yield (fieldname, btext), postings

    def iter_postings(self):
        for (fieldname, btext), postings in self.grouped():
            for docnum, weight, value in postings:
                yield fieldname, btext, docnum, weight, value

    def cleanup(self) -> None:
        self.fields = {}
        self._unsorted = set()


class FastSegmentWriter(SegmentWriter):
    """``SegmentWriter`` with grouped postings. Construct it like ``index.writer()``."""

    def __init__(self, ix, **kwargs) -> None:
        super().__init__(ix, **kwargs)
        self.pool = GroupedPostingPool()

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
            if field.indexed and type(field) is PageText:
                weight = field.format.field_boost * self._field_boost(fields, name, docboost)
                terms = pool.terms_of(name)
                for btext, count, vbytes in field.postings(value):
                    length += count
                    posting = (docnum, count * weight, vbytes)
                    postings = terms.get(btext)
                    if postings is None:
                        terms[btext] = [posting]
                    else:
                        postings.append(posting)
            elif field.indexed:
                boost = self._field_boost(fields, name, docboost)
                terms = pool.terms_of(name)
                for btext, freq, weight, vbytes in field.index(value):
                    length += freq
                    postings = terms.get(btext)
                    if postings is None:
                        terms[btext] = [(docnum, weight * boost, vbytes or b"")]
                    else:
                        postings.append((docnum, weight * boost, vbytes or b""))
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
        lengths_reader = self.per_document_reader() if self.codec.length_stats else None
        writer = self.fieldwriter
        doc_count = self.docnum
        current = None
        lengths: list[int] | None = None
        try:
            for (fieldname, btext), postings in self.pool.grouped():
                if fieldname != current:
                    if current is not None:
                        writer.finish_field()
                    field = self.schema[fieldname]
                    writer.start_field(fieldname, field)
                    current = fieldname
                    lengths = None
                    if lengths_reader is not None and field.scorable:
                        lengths = [lengths_reader.doc_field_length(d, fieldname, 0) for d in range(doc_count)]
                if len(postings) <= INLINE_LIMIT:
                    _write_inlined(writer, btext, postings, lengths)
                else:
                    writer.start_term(btext)
                    _fill_blocks(writer._postwriter, postings, lengths)
                    writer.finish_term()
            if current is not None:
                writer.finish_field()
        finally:
            writer.close()
            if lengths_reader is not None:
                lengths_reader.close()


def _fill_blocks(postwriter, postings: list[tuple[int, float, bytes]], lengths: list[int] | None) -> None:
    """``W3PostingsWriter.add_posting`` for a whole posting list, a block at a time.

    Keeps the writer's block statistics exactly as one call per posting would:
    max weight, and min/max length over the non-zero lengths.
    """
    limit = postwriter._blocklimit
    start = 0
    total = len(postings)
    while start < total:
        if len(postwriter._ids) >= limit:
            postwriter._write_block()
        chunk = postings[start : start + limit - len(postwriter._ids)]
        start += len(chunk)
        docs = [p[0] for p in chunk]
        weights = [p[1] for p in chunk]
        postwriter._ids.extend(docs)
        postwriter._weights.extend(weights)
        postwriter._values.extend([p[2] for p in chunk if p[2]])
        top = max(weights)
        postwriter._maxweight = max(postwriter._maxweight, top)
        if lengths is not None:
            sizes = [lengths[d] for d in docs if lengths[d]]
            if sizes:
                low, high = min(sizes), max(sizes)
                if postwriter._minlength is None or low < postwriter._minlength:
                    postwriter._minlength = low
                postwriter._maxlength = max(postwriter._maxlength, high)


def _write_inlined(writer, btext: bytes, postings: list[tuple[int, float, bytes]], lengths: list[int] | None) -> None:
    """One term entry holding its own (short) posting list, as Whoosh's reader expects inlined postings.

    The statistics are the ones a posting block would give: weights as 32-bit
    floats, min/max over the non-zero field lengths.
    """
    ids = tuple([p[0] for p in postings])
    weights = tuple(array("f", [p[1] for p in postings]))
    sizes = [lengths[d] for d in ids if lengths[d]] if lengths is not None else []
    # W3TermInfo(...).to_bytes() for an inlined posting list, without the object: this runs
    # once per rare term, and CJK bigrams make many rare terms. The header is the same
    # struct; then, pickled, one value per posting (b"" for formats without values) so
    # merges see every posting.
    header = _TERMINFO.pack(
        1, sum(weights), len(ids), length_to_byte(min(sizes)) if sizes else 0,
        length_to_byte(max(sizes) if sizes else 0), max(weights), ids[0], ids[-1],
    )
    inlined = (ids, weights, tuple([p[2] for p in postings]))
    writer._tindex.add(pack_ushort(writer._fieldid) + btext, header + dumps(inlined, 2))
