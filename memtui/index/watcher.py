"""Watch a field for changes with watchdog; events are only hints.

``FieldWatcher`` runs a watchdog observer over the field and turns its events
into relative paths handed to ``on_path`` (a file) or ``on_path(..., True, ...)`` (a
folder). Nothing here reads a page: the writer thread waits until a path has
been quiet for ``QUIET`` seconds (``Debouncer``), then stats and hashes the real
file. That is what makes every editor's way of saving look the same: writing a
temp file and renaming it over the page, vim's backup rename, ``touch``.

Robustness, because watchdog does not give it for free:

- the handler catches everything: an exception escaping a handler kills
  watchdog's dispatcher thread silently;
- on inotify the observer reports a kernel queue overflow and any folder it
  could not watch (``inotify`` watch limit): the service then rescans, or falls
  back to polling and says so;
- ``healthy()`` tells a supervisor whether the observer and its emitters are
  still alive, so a dead observer is replaced and the folder rescanned.

Editor scratch files are ignored: ``*.swp`` ``*.swx`` ``*~`` ``4913`` ``.#*``
``*.tmp`` ``___jb_*___``; so is everything a folder scan skips (``.git``,
``.memtui`` ...). ``FLUSH_PREFIX`` files under ``.memtui/`` are barriers written
by ``IndexService.flush``: inotify reports events in order, so seeing the
barrier means every earlier change has been seen too.
"""

from __future__ import annotations

import errno
import logging
import os
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileAttribEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers.api import BaseObserver
from watchdog.observers.polling import PollingObserver

from memtui.field.field import PLAIN_SCOPE, Scope, is_scratch_name
from memtui.store import locations

# watchdog reports through logging and warnings from its own threads; in the TUI
# that text would land on the screen. What matters (overflow, dead observer) is
# detected here and shown in the status instead.
logging.getLogger("watchdog").addHandler(logging.NullHandler())
warnings.filterwarnings("ignore", message="Callback with id .* already exists", category=RuntimeWarning)

QUIET = 0.1  # a path must be quiet this long before it is read ...
# ... or this long after it was closed after writing or renamed into place: a finished
# write (editors and agents write a temp file and rename it). Still a moment, so that a
# burst of pages lands in one commit.
COMPLETE_QUIET = 0.02
MAX_WAIT = 1.0  # ... but is read at the latest this long after its first event
GRACE = 0.03  # paths whose last events are this close are read in the same batch (a move's two ends)
POLL_INTERVAL = 2.0
FLUSH_PREFIX = "flush-barrier-"
EVENT_TYPES = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileClosedEvent,
    FileAttribEvent,
    FileDeletedEvent,
    FileMovedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]


def relevant(rel: str, is_dir: bool, scope: Scope = PLAIN_SCOPE) -> bool:
    """Could a change at ``rel`` (relative, POSIX) change a page (itself, or its JSON sidecar)?

    Hidden top-level folders count only where the field's dialects read pages (``scope``).
    """
    parts = rel.split("/")
    if not rel or any(part in locations.SKIPPED_DIRS for part in parts):
        return False
    if parts[0].startswith("."):
        if is_dir and len(parts) == 1:
            if not scope.admits_dir(rel):
                return False
        elif not (scope.admits_dir(parts[0]) and (is_dir or scope.admits_hidden(rel))):
            return False
    if is_scratch_name(parts[-1]):
        return False
    return is_dir or parts[-1].endswith((".md", ".json")) or scope.names_page(rel)  # .mdc, .cursorrules


# ---------------------------------------------------------------------- debouncing
@dataclass(slots=True)
class _Pending:
    first: float
    last: float
    is_dir: bool
    quiet: float  # of its latest event


class Debouncer:
    """Paths waiting for quiet. Thread-safe: the observer adds, the writer takes."""

    def __init__(self, quiet: float = QUIET, max_wait: float = MAX_WAIT) -> None:
        self.quiet = quiet
        self.max_wait = max_wait
        self._pending: dict[str, _Pending] = {}
        self._lock = threading.Lock()

    def add(self, rel: str, is_dir: bool = False, now: float | None = None, *, complete: bool = False) -> None:
        """A change at ``rel``; ``complete``: the file was closed after writing or renamed into
        place, so it is read after ``COMPLETE_QUIET`` unless another change follows."""
        now = time.monotonic() if now is None else now
        quiet = min(self.quiet, COMPLETE_QUIET) if complete else self.quiet
        with self._lock:
            item = self._pending.get(rel)
            if item is None:
                self._pending[rel] = _Pending(now, now, is_dir, quiet)
            else:
                item.last = now
                item.is_dir = item.is_dir or is_dir
                item.quiet = quiet

    def _due_at(self, item: _Pending) -> float:
        return min(item.last + item.quiet, item.first + self.max_wait)

    def take_due(self, now: float | None = None) -> list[tuple[str, bool]]:
        now = time.monotonic() if now is None else now
        with self._lock:
            due = [rel for rel, item in self._pending.items() if self._due_at(item) <= now]
            if due:
                # Take along what happened together with them, even if its own wait is not over.
                latest = max(self._pending[rel].last for rel in due)
                taken = set(due)
                due += [
                    rel for rel, item in self._pending.items() if rel not in taken and abs(item.last - latest) <= GRACE
                ]
            return [(rel, self._pending.pop(rel).is_dir) for rel in due]

    def next_due(self) -> float | None:
        with self._lock:
            if not self._pending:
                return None
            return min(self._due_at(item) for item in self._pending.values())

    def __len__(self) -> int:
        with self._lock:
            return len(self._pending)


# ---------------------------------------------------------------------- observers
class WatchListener:
    """What an observer reports besides events (set by ``FieldWatcher``)."""

    def __init__(self) -> None:
        self.overflowed = threading.Event()
        self.failed_dirs: list[str] = []

    def queue_overflow(self) -> None:
        self.overflowed.set()

    def watch_failed(self, path: str) -> None:
        self.failed_dirs.append(path)


def inotify_observer(listener: WatchListener) -> BaseObserver:
    """An inotify observer that reports queue overflows and folders it could not watch.

    Built on watchdog 7.1's inotify classes; if they are not there (another
    platform or version), the platform's default observer is used as it is.
    """
    try:
        from dataclasses import dataclass as _dataclass

        from watchdog.observers.inotify import (
            InotifyEmitter,
            InotifyObserver,
            InotifyWatchGroup,
        )
    except ImportError:  # pragma: no cover - not Linux
        from watchdog.observers import Observer

        return Observer()

    @_dataclass
    class ReportingWatchGroup(InotifyWatchGroup):
        listener: WatchListener | None = None

        def on_queue_overflow(self) -> None:
            super().on_queue_overflow()
            if self.listener is not None:
                self.listener.queue_overflow()

        def _add_callback(self, path: bytes) -> None:
            super()._add_callback(path)
            if self.listener is not None and path not in self._active_callbacks_by_path and os.path.isdir(path):
                self.listener.watch_failed(os.fsdecode(path))

    class ReportingEmitter(InotifyEmitter):
        def on_thread_start(self) -> None:
            self._inotify = ReportingWatchGroup(
                self._inotify_fd,
                os.fsencode(self.watch.path),
                is_recursive=self.watch.is_recursive,
                event_mask=self.get_event_mask_from_filter(),
                follow_symlink=self.watch.follow_symlink,
                listener=listener,
            )

    observer = InotifyObserver()
    observer._emitter_class = ReportingEmitter
    return observer


def polling_observer() -> BaseObserver:
    return PollingObserver(timeout=POLL_INTERVAL)


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: FieldWatcher) -> None:
        self.watcher = watcher

    def dispatch(self, event: FileSystemEvent) -> None:
        try:
            self.watcher._route(event)
        except Exception as exc:  # noqa: BLE001 - an escaping exception would kill the observer
            self.watcher.errors += 1
            self.watcher.last_error = f"{type(exc).__name__}: {exc}"


class FieldWatcher:
    """A watchdog observer over one field, reporting relative paths."""

    def __init__(
        self,
        root: Path,
        on_path: Callable[[str, bool, bool], None],
        on_barrier: Callable[[str], None],
        scope: Scope = PLAIN_SCOPE,
    ) -> None:
        # The folder as the kernel names it: watchdog reports paths under the path it was given,
        # so a relative one ("." when memtui runs inside the field) would match nothing.
        self.root = Path(os.path.realpath(root))
        self._prefix = os.path.join(os.fspath(self.root), "")
        self.scope = scope
        self.on_path = on_path
        self.on_barrier = on_barrier
        self.listener = WatchListener()
        self.observer: BaseObserver | None = None
        self.mode: str | None = None  # "inotify" | "polling"
        self.message = ""
        self.errors = 0
        self.last_error = ""

    # ------------------------------------------------------------------ lifecycle
    def start(self, *, polling: bool = False) -> str:
        """Start watching; inotify first, polling if that fails. Returns the mode; raises OSError if neither works."""
        self.stop()
        self.listener = WatchListener()
        if not polling:
            try:
                self._start(inotify_observer(self.listener))
                self.mode = "inotify"
                self.message = ""
                return self.mode
            except OSError as exc:
                self.message = _inotify_problem(exc)
        self._start(polling_observer())
        self.mode = "polling"
        return self.mode

    def _start(self, observer: BaseObserver) -> None:
        observer.schedule(_Handler(self), str(self.root), recursive=True, event_filter=EVENT_TYPES)
        try:
            observer.start()
        except BaseException:
            _stop_observer(observer)
            raise
        self.observer = observer

    def stop(self) -> None:
        observer, self.observer = self.observer, None
        if observer is not None:
            _stop_observer(observer)

    def healthy(self) -> tuple[bool, str]:
        """Is the observer (and every emitter) still running? If not, why."""
        observer = self.observer
        if observer is None:
            return False, "not started"
        if not observer.is_alive():
            return False, "the watcher thread stopped"
        for emitter in list(observer.emitters):
            if not emitter.is_alive():
                return False, "the watcher lost its folder watch"
        if not observer.emitters:
            return False, "the watcher has no folder watch"
        return True, ""

    # ------------------------------------------------------------------ events
    def _rel(self, path: str | bytes) -> str | None:
        text = os.fsdecode(path)
        if not text.startswith(self._prefix):
            return None
        return text[len(self._prefix) :].replace(os.sep, "/")

    def _route(self, event: FileSystemEvent) -> None:
        paths = [(event.src_path, isinstance(event, FileClosedEvent))]
        if isinstance(event, (FileMovedEvent, DirMovedEvent)) and event.dest_path:
            paths.append((event.dest_path, isinstance(event, FileMovedEvent)))  # renamed into place: whole
        for path, complete in paths:
            rel = self._rel(path)
            if rel is None:
                continue
            if rel.startswith(f"{locations.STATE_DIR_NAME}/{FLUSH_PREFIX}"):
                self.on_barrier(rel.rsplit("/", 1)[-1])
                continue
            if relevant(rel, event.is_directory, self.scope):
                self.on_path(rel, event.is_directory, complete)


def _stop_observer(observer: BaseObserver) -> None:
    try:
        observer.stop()
        if observer.is_alive():
            observer.join(timeout=5)
    except Exception:  # noqa: BLE001, S110 - stopping a broken observer must not raise
        pass


def _inotify_problem(exc: OSError) -> str:
    if exc.errno == errno.ENOSPC:
        return "inotify watch limit reached (fs.inotify.max_user_watches): polling every 2 s instead"
    if exc.errno == errno.EMFILE:
        return "too many inotify instances (fs.inotify.max_user_instances): polling every 2 s instead"
    return f"inotify unavailable ({exc.strerror or exc}): polling every 2 s instead"
