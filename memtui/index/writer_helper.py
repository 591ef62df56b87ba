"""The index writer of a large field in a process of its own, beside the app.

At 100,000 pages the writer thread's commits and merges took about half of the
app's interpreter while an agent wrote 50 pages a second (every thread of a
process shares one lock): keys waited for it and the index fell behind the
screen. From ``WRITER_HELPER_MIN_PAGES`` on (``service.py``), ``IndexService``
opens the index as before, then hands the writer's role to this helper: it
releases the writer lock, the helper takes it and keeps the index current with
an ``IndexService`` of its own (the same watcher, debouncer, commits and merges),
and the app's service searches what the helper commits, as a second memtui on
the same field does (``service.py``, "Roles"). If the helper stops, the app's
service takes the lock back and writes again itself.

The helper process itself is ``writer_process.py`` (what it says and is told is listed
there); this module is the app's side of it.
"""

from __future__ import annotations

import itertools
import os
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path

from memtui.index.buildworker import receive
from memtui.index.model import SyncState
from memtui.index.parallel import _Worker

STOP_TIMEOUT = 30.0  # seconds the app waits for the helper to close its index when it exits


class WriterHelper(_Worker):
    """The app's side: start the helper, follow its state, ask it to flush, rescan, rebuild, stop."""

    MODULE = "memtui.index.writer_process"

    def __init__(self, root: Path) -> None:
        self.opened = threading.Event()
        self.writer = False  # the helper holds the writer lock (known once ``opened`` is set)
        self.failure = ""
        self.sync = SyncState("starting", None, 0, 0, "")
        self.busy = True  # until the helper says otherwise: its open compares the folder with the index
        self.merges = False
        self._replies: dict[int, queue.Queue] = {}
        self._tokens = itertools.count(1)
        self._progress: dict[int, Callable[[int, int, str], None]] = {}
        self._send_lock = threading.Lock()
        super().__init__(0, root)

    def open(self, root: Path, index_dir: Path, spec: dict | None, golden: Path) -> None:
        self.send(("open", os.path.abspath(root), os.path.abspath(index_dir), spec, os.path.abspath(golden)))

    def send(self, message) -> None:
        with self._send_lock:
            super().send(message)

    def alive(self) -> bool:
        return self.proc.poll() is None and not self.failure

    def _read(self) -> None:  # the message thread (``_Worker`` starts it)
        try:
            while True:
                self._handle(receive(self.proc.stdout))
        except Exception as exc:  # noqa: BLE001 - EOF or garbage: the helper is gone
            self.failure = self.failure or f"stopped ({type(exc).__name__}: {exc})"
        finally:
            self.busy = False
            self.opened.set()
            for answers in list(self._replies.values()):
                answers.put(None)

    def _handle(self, message) -> None:
        kind = message[0]
        if kind == "state":
            self.sync, self.busy, self.merges = message[1], message[2], message[3]
        elif kind == "opened":
            self.writer, self.sync = message[1], SyncState("watching", time.time(), 0, message[2], message[3])
            self.opened.set()
        elif kind == "progress":
            callback = self._progress.get(message[1])
            if callback is not None:
                callback(*message[2:])
        elif kind in ("flushed", "rebuilt"):
            answers = self._replies.get(message[1])
            if answers is not None:
                answers.put(message[2])
        elif kind == "error":
            self.failure = f"failed: {str(message[1]).splitlines()[0] if message[1] else 'no reason given'}"

    def _ask(self, message: tuple, timeout: float, progress=None):
        """Send a request that is answered; its answer, or None (timeout, or the helper is gone)."""
        token = next(self._tokens)
        answers: queue.Queue = queue.Queue()
        self._replies[token] = answers
        if progress is not None:
            self._progress[token] = progress
        try:
            if not self.alive():
                return None
            try:
                self.send((message[0], token, *message[1:]))
            except (OSError, ValueError):
                return None
            try:
                return answers.get(timeout=timeout)
            except queue.Empty:
                return None
        finally:
            self._replies.pop(token, None)
            self._progress.pop(token, None)

    def flush(self, timeout: float) -> bool:
        return bool(self._ask(("flush", timeout), timeout + 1.0))

    def rebuild(self, progress=None) -> str | None:
        """Empty text once rebuilt; the error's text; None if the helper did not answer."""
        return self._ask(("rebuild",), 24 * 3600.0, progress)

    def request_rescan(self) -> None:
        try:
            self.send(("rescan",))
        except (OSError, ValueError):
            pass

    def stop(self) -> None:
        """Ask the helper to close its index, wait for it (``STOP_TIMEOUT``), kill it if it hangs."""
        if self.proc.poll() is None:
            try:
                self.send(("stop",))
                self.proc.stdin.close()
            except (OSError, ValueError):
                pass
            try:
                self.proc.wait(timeout=STOP_TIMEOUT)
            except Exception:  # noqa: BLE001 - subprocess.TimeoutExpired: killed below
                pass
        super().stop()
