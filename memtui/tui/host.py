"""The Textual app as a session's host: its event loop is the session's owner thread."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App
from textual.timer import Timer

from memtui.session.events import SessionEvent
from memtui.tui.messages import Invoke


class AppHost:
    """``memtui.session.host.Host`` on a Textual ``App``: background work runs as thread workers
    (``app.workers`` waits for them), results come back with ``call_from_thread`` or a posted
    ``Invoke`` message, and events go to ``emit``."""

    def __init__(self, app: App[Any], emit: Callable[[SessionEvent], None]) -> None:
        self.app = app
        self._emit = emit

    def call_from_thread(self, callback: Callable[..., Any], *args: Any) -> Any:
        return self.app.call_from_thread(callback, *args)

    def post(self, callback: Callable[..., Any], *args: Any) -> bool:
        # Posted, not called: the thread goes on at once instead of waiting for the UI to take it
        # (call_from_thread held the index writer up to 115 ms a commit while an agent wrote).
        return self.app.post_message(Invoke(callback, args))

    def set_timer(self, delay: float, callback: Callable[[], Any]) -> Timer:
        return self.app.set_timer(delay, callback)

    def run_thread(self, work: Callable[[], Any], *, name: str, group: str) -> None:
        self.app.run_worker(work, name=name, group=group, description=name, thread=True)

    def emit(self, event: SessionEvent) -> None:
        self._emit(event)
