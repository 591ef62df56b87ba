"""The index writer of a large field, as a process of its own (``writer_helper.py`` is the
app's side of it, and says why).

The helper is started like the build helpers (``parallel.py``: isolated, from
the root folder, an explicit ``sys.path``) and speaks length-prefixed pickles
on stdin/stdout with the process that started it:

    <- ("open", root, index_dir, reader spec or None, golden path)
    -> ("opened", writer, pages, message)  writer False: another memtui holds the lock; it exits
    -> ("state", SyncState, writing, merging)
                                           whenever one of them changes (polled every 50 ms),
                                           and after each commit
    <- ("flush", token, timeout)           -> ("flushed", token, ok)
    <- ("rescan",)
    <- ("rebuild", token)                  -> ("progress", token, done, total, phase) ...
                                           -> ("rebuilt", token, error text or "")
    <- ("stop",)  or the pipe closing      it closes its service (saves the snapshot,
                                           releases the lock) and exits
    -> ("error", text)                     it failed; it exits

The pipe closing is how it learns that the app is gone, however the app ended
(a crash or ``kill -9`` included): it never outlives it.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import BinaryIO

from memtui.index.buildworker import main, receive, send

STATE_POLL = 0.05  # seconds between the helper's looks at its service's state


def serve(inbox: BinaryIO, outbox: BinaryIO) -> None:
    from memtui.dialects.reader import DialectReader
    from memtui.field.field import PLAIN_READER
    from memtui.index.service import IndexService

    lock = threading.Lock()

    def say(message) -> None:
        with lock:
            send(outbox, message)

    command, root, index_dir, spec, golden = receive(inbox)
    assert command == "open"
    reader = DialectReader.from_spec(spec) if spec is not None else PLAIN_READER
    service = IndexService(
        Path(root), index_dir=Path(index_dir), golden=Path(golden), reader=reader, writer_helper=False
    )
    service.open()
    if service.read_only:  # another memtui took the lock meanwhile: the app follows that one
        say(("opened", False, service.state.indexed_pages, service.state.message))
        service.close()
        return
    stopping = threading.Event()
    last: list = [None]

    def report(force: bool = False) -> None:
        now = (service.state, service.writing(), service.merging())
        seen = (now[0].mode, now[0].pending, now[0].indexed_pages, now[0].message, now[1], now[2])
        if force or seen != last[0]:
            last[0] = seen
            say(("state", *now))

    def watch_state() -> None:
        while not stopping.wait(STATE_POLL):
            report()

    service.start_watching(lambda batch: report(force=True))
    # What changed between open()'s look at the folder and the watcher's start (the app wrote a
    # page meanwhile, say) is found by comparing the folder again, now that events are seen.
    service.request_rescan()
    say(("opened", True, service.state.indexed_pages, service.state.message))
    threading.Thread(target=watch_state, daemon=True, name="memtui-helper-state").start()

    def flush(token: int, timeout: float) -> None:
        ok = service.flush(timeout)
        report()
        say(("flushed", token, ok))

    def rebuild(token: int) -> None:
        def progress(done: int, total: int, phase: str) -> None:
            say(("progress", token, done, total, phase))

        try:
            service.rebuild(progress=progress)
            error = ""
        except Exception as exc:  # noqa: BLE001 - told to the app, which shows it
            error = str(getattr(exc, "message", "") or exc) or type(exc).__name__
        say(("rebuilt", token, error))

    try:
        while True:
            try:
                message = receive(inbox)
            except EOFError:
                break  # the app is gone
            if message[0] == "stop":
                break
            if message[0] == "flush":
                threading.Thread(target=flush, args=message[1:], daemon=True).start()
            elif message[0] == "rescan":
                service.request_rescan()
            elif message[0] == "rebuild":
                threading.Thread(target=rebuild, args=message[1:], daemon=True).start()
    finally:
        stopping.set()
        service.close()


if __name__ == "__main__":
    sys.exit(main(serve))
