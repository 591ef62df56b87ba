"""What a session needs from the program it runs in: an owner thread, background threads, timers.

A ``Session`` is owned by one thread (the TUI's event loop); its state changes only there.
Slow work (reading pages, the analysis, opening the index) runs on background threads the
host starts, and comes back to the owner thread through ``call_from_thread`` (waits) or
``post`` (does not wait). The TUI's host is its ``App`` (``memtui.tui.host``); a script or a
test can use ``LoopHost``, which runs everything on the thread that calls ``run_until``.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from memtui.session.events import SessionEvent


class Timer(Protocol):
    def stop(self) -> None: ...


class Host(Protocol):
    def call_from_thread(self, callback: Callable[..., Any], *args: Any) -> Any:
        """Run ``callback(*args)`` on the owner thread and wait for it (from a background thread)."""

    def post(self, callback: Callable[..., Any], *args: Any) -> bool:
        """Run ``callback(*args)`` on the owner thread soon, without waiting; False if closing."""

    def set_timer(self, delay: float, callback: Callable[[], Any]) -> Timer:
        """Run ``callback`` on the owner thread after ``delay`` seconds."""

    def run_thread(self, work: Callable[[], Any], *, name: str, group: str) -> None:
        """Start ``work`` on a background thread (``group``: what it is, for cancelling on close)."""

    def emit(self, event: SessionEvent) -> None:
        """Tell the session's user (on the owner thread)."""


class _LoopTimer:
    def __init__(self) -> None:
        self.stopped = False

    def stop(self) -> None:
        self.stopped = True


class LoopHost:
    """A host for scripts and tests: ``run_until(condition)`` runs what the session hands to
    its owner thread on the calling thread; background work runs on plain threads."""

    def __init__(self) -> None:
        self.events: list[SessionEvent] = []
        self._calls: queue.SimpleQueue[tuple[Callable[..., Any], tuple[Any, ...], queue.SimpleQueue[Any] | None]]
        self._calls = queue.SimpleQueue()
        self._timers: list[tuple[float, Callable[[], Any], _LoopTimer]] = []
        self._threads: list[threading.Thread] = []
        self._owner = threading.get_ident()
        self.closing = False

    def call_from_thread(self, callback: Callable[..., Any], *args: Any) -> Any:
        if threading.get_ident() == self._owner:
            return callback(*args)
        answer: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._calls.put((callback, args, answer))
        ok, value = answer.get()
        if not ok:
            raise value
        return value

    def post(self, callback: Callable[..., Any], *args: Any) -> bool:
        if self.closing:
            return False
        self._calls.put((callback, args, None))
        return True

    def set_timer(self, delay: float, callback: Callable[[], Any]) -> _LoopTimer:
        timer = _LoopTimer()
        self._timers.append((time.monotonic() + delay, callback, timer))
        return timer

    def run_thread(self, work: Callable[[], Any], *, name: str, group: str) -> None:
        thread = threading.Thread(target=work, name=f"memtui {group}: {name}", daemon=True)
        self._threads.append(thread)
        thread.start()

    def emit(self, event: SessionEvent) -> None:
        self.events.append(event)

    def busy(self) -> bool:
        """Is any background thread running, a call waiting, or a timer due later?"""
        self._threads = [thread for thread in self._threads if thread.is_alive()]
        return bool(self._threads) or not self._calls.empty() or any(not t.stopped for _, _, t in self._timers)

    def run_until(self, condition: Callable[[], bool], timeout: float = 60.0) -> bool:
        """Run owner-thread work until ``condition()`` holds (True) or ``timeout`` passes (False)."""
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                return False
            self._run_due(0.01)
        return True

    def run_until_idle(self, timeout: float = 60.0) -> bool:
        """Run until nothing is left to do (no thread, call or timer)."""
        return self.run_until(lambda: not self.busy(), timeout)

    def _run_due(self, wait: float) -> None:
        now = time.monotonic()
        due = [entry for entry in self._timers if entry[0] <= now]
        if due:
            self._timers = [entry for entry in self._timers if entry[0] > now]
            for _, callback, timer in due:
                if not timer.stopped:
                    timer.stopped = True
                    callback()
        with contextlib.suppress(queue.Empty):
            callback, args, answer = self._calls.get(timeout=wait)
            try:
                value = callback(*args)
            except BaseException as exc:  # handed back to the waiting thread
                if answer is None:
                    raise
                answer.put((False, exc))
            else:
                if answer is not None:
                    answer.put((True, value))
