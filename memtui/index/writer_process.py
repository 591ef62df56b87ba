"""The index writer of a large field, as a process of its own (``writer_helper.py`` is the
app's side of it, and says why).

The helper is started like the build helpers (``parallel.py``: isolated, from
the root folder, an explicit ``sys.path``) and speaks length-prefixed pickles of the
named messages below (defined in ``writer_helper.py``) on stdin/stdout with the process that started it:

    <- Open(root, index_dir, reader spec or None, golden path)
    -> Opened(writer, pages, message)      writer False: another memtui holds the lock; it exits
    -> State(SyncState, writing, merging)  whenever one of them changes (polled every 50 ms),
                                           and after each commit
    <- Flush(token, timeout)               -> Flushed(token, ok)
    <- Rescan()
    <- Rebuild(token)                      -> RebuildProgress(token, done, total, phase) ...
                                           -> Rebuilt(token, error text or "")
    <- Stop()  or the pipe closing         it closes its service (saves the snapshot,
                                           releases the lock) and exits
    -> buildworker.Failed(text)            it failed; it exits

The pipe closing is how it learns that the app is gone, however the app ended
(a crash or ``kill -9`` included): it never outlives it.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import BinaryIO, NamedTuple

from memtui.index.buildworker import main, receive, send
from memtui.index.writer_helper import (
    Flush,
    Flushed,
    Open,
    Opened,
    Rebuild,
    RebuildProgress,
    Rebuilt,
    Rescan,
    State,
    Stop,
)

STATE_POLL = 0.05  # seconds between the helper's looks at its service's state


def serve(inbox: BinaryIO, outbox: BinaryIO) -> None:
    from memtui.dialects.reader import DialectReader
    from memtui.field.field import PLAIN_READER
    from memtui.index.service import IndexService

    lock = threading.Lock()

    def say(message: NamedTuple) -> None:
        with lock:
            send(outbox, message)

    opening = receive(inbox)
    assert isinstance(opening, Open), opening
    root, index_dir, spec, golden = opening
    reader = DialectReader.from_spec(spec) if spec is not None else PLAIN_READER
    service = IndexService(
        Path(root), index_dir=Path(index_dir), golden=Path(golden), reader=reader, writer_helper=False
    )
    service.open()
    if service.read_only:  # another memtui took the lock meanwhile: the app follows that one
        say(Opened(False, service.state.indexed_pages, service.state.message))
        service.close()
        return
    stopping = threading.Event()
    last: list = [None]

    def report(force: bool = False) -> None:
        now = (service.state, service.writing(), service.merging())
        seen = (now[0].mode, now[0].pending, now[0].indexed_pages, now[0].message, now[1], now[2])
        if force or seen != last[0]:
            last[0] = seen
            say(State(*now))

    def watch_state() -> None:
        while not stopping.wait(STATE_POLL):
            report()

    service.start_watching(lambda batch: report(force=True))
    # What changed between open()'s look at the folder and the watcher's start (the app wrote a
    # page meanwhile, say) is found by comparing the folder again, now that events are seen.
    service.request_rescan()
    say(Opened(True, service.state.indexed_pages, service.state.message))
    threading.Thread(target=watch_state, daemon=True, name="memtui-helper-state").start()

    def flush(token: int, timeout: float) -> None:
        ok = service.flush(timeout)
        report()
        say(Flushed(token, ok))

    def rebuild(token: int) -> None:
        def progress(done: int, total: int, phase: str) -> None:
            say(RebuildProgress(token, done, total, phase))

        try:
            service.rebuild(progress=progress)
            error = ""
        except Exception as exc:  # noqa: BLE001 - told to the app, which shows it
            error = str(getattr(exc, "message", "") or exc) or type(exc).__name__
        say(Rebuilt(token, error))

    try:
        while True:
            try:
                message = receive(inbox)
            except EOFError:
                break  # the app is gone
            if isinstance(message, Stop):
                break
            if isinstance(message, Flush):
                threading.Thread(target=flush, args=message, daemon=True).start()
            elif isinstance(message, Rescan):
                service.request_rescan()
            elif isinstance(message, Rebuild):
                threading.Thread(target=rebuild, args=message, daemon=True).start()
    finally:
        stopping.set()
        service.close()


def run() -> int:
    """The writer helper's entry point (see ``buildworker.run``)."""
    return main(serve)


if __name__ == "__main__":
    sys.exit(run())
