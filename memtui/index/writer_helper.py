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
from typing import Any, NamedTuple

from memtui.index.buildworker import Failed, receive
from memtui.index.model import SyncState
from memtui.index.parallel import HelperProcess

STOP_TIMEOUT = 30.0  # seconds the app waits for the helper to close its index when it exits


# The helper's messages (what each means: ``writer_process.py``).
class Open(NamedTuple):
    root: str
    index_dir: str
    spec: dict[str, Any] | None
    golden: str


class Opened(NamedTuple):
    writer: bool
    pages: int
    message: str


class State(NamedTuple):
    sync: Any  # SyncState
    writing: bool
    merging: bool


class Flush(NamedTuple):
    token: int
    timeout: float


class Flushed(NamedTuple):
    token: int
    ok: bool


class Rescan(NamedTuple):
    pass


class Rebuild(NamedTuple):
    token: int


class RebuildProgress(NamedTuple):
    token: int
    done: int
    total: int
    phase: str


class Rebuilt(NamedTuple):
    token: int
    error: str


class Stop(NamedTuple):
    pass


class WriterHelper(HelperProcess):
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
        self.send(Open(os.path.abspath(root), os.path.abspath(index_dir), spec, os.path.abspath(golden)))

    def send(self, message) -> None:
        with self._send_lock:
            super().send(message)

    def alive(self) -> bool:
        return self.proc.poll() is None and not self.failure

    def _read(self) -> None:  # the message thread (``HelperProcess`` starts it)
        try:
            while True:
                self._handle(receive(self.from_helper))
        except Exception as exc:  # noqa: BLE001 - EOF or garbage: the helper is gone
            self.failure = self.failure or f"stopped ({type(exc).__name__}: {exc})"
        finally:
            self.busy = False
            self.opened.set()
            for answers in list(self._replies.values()):
                answers.put(None)

    def _handle(self, message: object) -> None:
        if isinstance(message, State):
            self.sync, self.busy, self.merges = message
        elif isinstance(message, Opened):
            self.writer, self.sync = (
                message.writer,
                SyncState("watching", time.time(), 0, message.pages, message.message),
            )
            self.opened.set()
        elif isinstance(message, RebuildProgress):
            callback = self._progress.get(message.token)
            if callback is not None:
                callback(message.done, message.total, message.phase)
        elif isinstance(message, Flushed | Rebuilt):
            answers = self._replies.get(message.token)
            if answers is not None:
                answers.put(message[1])
        elif isinstance(message, Failed):
            self.failure = f"failed: {message.text.splitlines()[0] if message.text else 'no reason given'}"

    def _ask(self, ask: Callable[[int], NamedTuple], timeout: float, progress=None):
        """Send a request that is answered (``ask(token)``); its answer, or None (timeout, or the
        helper is gone)."""
        token = next(self._tokens)
        answers: queue.Queue = queue.Queue()
        self._replies[token] = answers
        if progress is not None:
            self._progress[token] = progress
        try:
            if not self.alive():
                return None
            try:
                self.send(ask(token))
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
        return bool(self._ask(lambda token: Flush(token, timeout), timeout + 1.0))

    def rebuild(self, progress=None) -> str | None:
        """Empty text once rebuilt; the error's text; None if the helper did not answer."""
        return self._ask(Rebuild, 24 * 3600.0, progress)

    def request_rescan(self) -> None:
        try:
            self.send(Rescan())
        except (OSError, ValueError):
            pass

    def stop(self) -> None:
        """Ask the helper to close its index, wait for it (``STOP_TIMEOUT``), kill it if it hangs."""
        if self.proc.poll() is None:
            try:
                self.send(Stop())
                self.to_helper.close()
            except (OSError, ValueError):
                pass
            try:
                self.proc.wait(timeout=STOP_TIMEOUT)
            except Exception:  # noqa: BLE001 - subprocess.TimeoutExpired: killed below
                pass
        super().stop()
