"""A helper process for ``parallel.build_parallel``: reads, parses and indexes a share of the pages.

Run as ``python -m memtui.index.buildworker``; it speaks length-prefixed pickles of the
named messages below on stdin/stdout with the process that started it (and only with it):

    <- Optimize(gen_dir)                   or: merge every segment of gen_dir into one
    -> Optimized()

    <- Read(root, [path, ...], page_cache_dir or None, reader spec or None)
                                           read these pages as the field's dialects do (the ones
                                           the field has read, from its page cache)
    -> Progressed(done)                    now and then
    -> Records([PageRecord, ...])          what the parent needs for statuses
    <- Index(gen_dir, {path: (status, successors)}, segment_bytes)
    -> Segments([segment, ...])            finished Whoosh segments in gen_dir, one per
                                           segment_bytes of text (parallel.SEGMENT_TEXT_BYTES)
    -> Failed(text)                        instead of any answer, if something failed
"""

from __future__ import annotations

import gc
import marshal
import os
import pickle
import struct
import sys
import tempfile
import traceback
from pathlib import Path
from typing import IO, Any, BinaryIO, NamedTuple

_HEADER = struct.Struct("!Q")


class Optimize(NamedTuple):
    gen_dir: str


class Optimized(NamedTuple):
    pass


class Read(NamedTuple):
    root: str
    paths: list[str]
    cache_dir: str | None
    spec: dict[str, Any] | None


class Progressed(NamedTuple):
    done: int  # pages read, or indexed, so far


class Records(NamedTuple):
    records: list[Any]  # PageRecord


class Index(NamedTuple):
    gen_dir: str
    statuses: dict[str, tuple[str, tuple[str, ...]]]
    segment_bytes: int


class Segments(NamedTuple):
    segments: list[Any]  # Whoosh segments written in gen_dir


class Failed(NamedTuple):
    text: str


def send(stream: IO[bytes], message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def receive(stream: IO[bytes]) -> Any:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError("the other side closed the pipe")
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the other side closed the pipe")
    return pickle.loads(data)


def serve(inbox: BinaryIO, outbox: BinaryIO) -> None:
    # A helper lives for one build and makes millions of small objects that are never
    # garbage: the cycle collector would scan them again and again (a quarter of the time).
    gc.disable()
    from memtui.dialects.reader import DialectReader
    from memtui.field import page_cache
    from memtui.field.field import PLAIN_READER
    from memtui.index.analysis import codec
    from memtui.index.engine.fastwrite import FastSegmentWriter
    from memtui.index.engine.segments import finish_segment, open_index
    from memtui.index.records import PageDoc, read_page_doc, share_parts

    message = receive(inbox)
    if isinstance(message, Optimize):
        ix = open_index(message.gen_dir)
        merger = FastSegmentWriter(ix, codec=codec(), limitmb=256, timeout=5.0)
        merger.commit(optimize=True)
        send(outbox, Optimized())
        return
    assert isinstance(message, Read), message
    root, paths, cache_dir, spec = message
    reader = DialectReader.from_spec(spec) if spec is not None else PLAIN_READER
    cached = page_cache.read_infos(Path(cache_dir), wanted=set(paths), signature=reader.signature) if cache_dir else {}
    # The pages' texts wait for the statuses in an anonymous temporary file (unlinked at once:
    # nobody can swap it), not in memory: at 100,000 pages a helper held 770 MB.
    records = []
    spool = tempfile.TemporaryFile()
    for number, path in enumerate(paths, start=1):
        known = cached.pop(path, None)  # used only if its hash matches the bytes read
        doc = read_page_doc(Path(root), path, known, reader=reader)
        if doc is not None:
            records.append(doc.record)
            blob = marshal.dumps(doc.text_parts())
            spool.write(_HEADER.pack(len(blob)) + blob)
        if number % 250 == 0:
            send(outbox, Progressed(number))
    del cached
    send(outbox, Records(share_parts(records)))
    asked = receive(inbox)
    assert isinstance(asked, Index), asked
    gen_dir, statuses, segment_bytes = asked
    ix = open_index(gen_dir)
    segments = []
    writer: FastSegmentWriter | None = None
    held = 0  # bytes of text in the segment being made
    spool.seek(0)
    for number, record in enumerate(records, start=1):
        record.status, record.successors = statuses[record.path]
        (size,) = _HEADER.unpack(spool.read(_HEADER.size))
        doc = PageDoc.from_text_parts(record, marshal.loads(spool.read(size)))
        writer = writer or FastSegmentWriter(ix, _lk=False, codec=codec())
        writer.add_document(**doc.document())
        record.forget_page_info()  # the light summary document() made: not needed again here
        held += size
        if held >= segment_bytes:
            segments.append(finish_segment(writer))
            writer, held = None, 0
        if number % 250 == 0:
            send(outbox, Progressed(number))
    spool.close()
    if writer is not None or not segments:  # the rest, or an empty segment for an empty share
        segments.append(finish_segment(writer or FastSegmentWriter(ix, _lk=False, codec=codec())))
    send(outbox, Segments(segments))


def main(serving=None) -> int:  # noqa: ANN001 - a helper's serve(inbox, outbox); this module's by default
    """A helper process's main: ``serving`` talks over stdin/stdout; a failure is sent as ``Failed``."""
    inbox, outbox = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - nothing may write into the message pipe by accident
    try:
        (serving or serve)(inbox, outbox)
    except Exception as exc:  # noqa: BLE001 - report; the parent builds alone, or writes the index itself
        try:
            send(outbox, Failed(f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=5)}"))
        except OSError:
            pass
        return 1
    return 0


def run() -> int:
    """The build helper's entry point (``parallel._BOOT`` imports this module and calls it: its
    messages are pickled as this module's classes, which the parent imports too)."""
    return main()


if __name__ == "__main__":
    sys.exit(run())
