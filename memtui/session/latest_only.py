"""One thread worker at a time for work asked for again and again, the newest request waiting.

Textual cancels an ``exclusive`` worker of the same group when a new one starts, but a
cancelled *thread* worker runs on to its end. Work asked for on every field event (a
page-list refill, a row-cache write, the proposal queue, the claims list) therefore ran
side by side whenever it took longer than the events' spacing, each run with its own
copy of the data, each slowing the others: at 100,000 pages an agent writing pages drove
the app to 18 GB. ``LatestOnly`` starts the work when nothing runs; otherwise it keeps
only the newest request and starts it when the running one reports that it finished.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import Any, Protocol

_NOTHING = object()


class CallsFromThread(Protocol):
    """What ``reporting`` needs of its app (the Textual ``App``, a session ``Host``)."""

    def call_from_thread(self, callback: Callable[..., Any], *args: Any) -> Any: ...


class LatestOnly:
    """``request(*args)`` starts ``start(*args)`` (which starts a worker) unless one runs; the worker
    calls ``finished()`` on the UI thread when it ends, however it ends.

    ``later(go)`` starts a waiting request after the finished one: ``App.call_later`` (not at
    once: the finishing worker is still inside ``call_from_thread``, and a new exclusive worker
    of its group would cancel it there), or a caller's own pacing timer."""

    def __init__(
        self, start: Callable[..., Any], later: Callable[[Callable[[], None]], Any], *, hold: bool = False
    ) -> None:
        """``hold``: after each run ``later`` is called (a timer that paces the work) and, until it
        calls back, the work counts as running: requests meanwhile only replace the waiting one,
        which starts when the pause ends."""
        self._start = start
        self._later = later
        self._hold = hold
        self.running = False
        self.working = False  # the work itself runs (not the pause after it)
        self.last_seconds = 0.0  # how long the last run took, from its start to finished()
        self._started_at = 0.0
        self._waiting: Any = _NOTHING

    def request(self, *args: Any) -> None:
        if self.running:
            self._waiting = args
            return
        self._run(args)

    @property
    def pending(self) -> bool:
        """Is work running or waiting to run (not only the pause after a run)?"""
        return self.working or self._waiting is not _NOTHING

    def finished(self) -> None:
        self.running = False
        self.working = False
        self.last_seconds = time.perf_counter() - self._started_at
        if self._hold:
            self.running = True  # the pause after a run holds it, whether or not a request waits
            self._later(self._run_waiting)
            return
        waiting, self._waiting = self._waiting, _NOTHING
        if waiting is not _NOTHING:
            self._later(lambda: self.request(*waiting))

    def take_waiting(self) -> tuple[Any, ...] | None:
        """The request still waiting (its arguments), now no longer waiting; None if none waits."""
        waiting, self._waiting = self._waiting, _NOTHING
        return None if waiting is _NOTHING else waiting

    def _run_waiting(self) -> None:
        waiting, self._waiting = self._waiting, _NOTHING
        if waiting is _NOTHING:
            self.running = False  # nothing was asked for during the pause
            return
        self._run(waiting)

    def _run(self, args: tuple[Any, ...]) -> None:
        self.running = True
        self.working = True
        self._started_at = time.perf_counter()
        self._start(*args)

    @contextlib.contextmanager
    def reporting(self, app: CallsFromThread) -> Iterator[None]:
        """Around a worker's body, on its thread: ``finished()`` on the UI thread however it ends."""
        try:
            yield
        finally:
            app.call_from_thread(self.finished)
