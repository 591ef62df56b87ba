"""Unsaved edits are never dropped: quitting asks, a closed terminal keeps them under .memtui/unsaved/.

The copies memtui keeps of the reviewer's text (``.memtui/unsaved/`` when the terminal
closed with edits not saved, ``.memtui/conflicts/`` when a conflict was resolved for the
other side) live in ``FIELD/.memtui/``, which the agent under audit can write too. So:

* they are written through the state writer (``memtui.store.state.StateDir``): every
  folder on the way is opened with ``O_NOFOLLOW`` relative to the one above, and the
  file is created with ``O_EXCL | O_NOFOLLOW``. A ``.memtui/unsaved`` (or ``conflicts``,
  or a page folder below it) planted as a symlink is refused: the reviewer's text is
  never written outside the field, nor over a file someone placed at the copy's name;
* each copy memtui writes is recorded in ``.memtui/kept-copies.jsonl``, one line signed
  with the user's key (``memtui.store.signing``, kept outside every field) binding the
  field, the page, the copy's name and the SHA-256 of its bytes. Only a copy whose record
  verifies and whose bytes still match is announced as the reviewer's; any other file
  where copies go (planted, or changed since) is reported as not written by memtui, so
  an agent cannot put words in the reviewer's mouth ("your unsaved edits are in X").
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as _dt
import hashlib
import json
import os
import re
import select
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from rich.text import Text
from textual.app import App

from memtui.errors import MemtuiError, UnsafePathError
from memtui.store import locations, signing, state
from memtui.store.merge3 import CONFLICTS_DIR, UNSAVED_DIR
from memtui.store.safe_write import check_relpath
from memtui.textsafety import one_line
from memtui.tui import safe
from memtui.tui.compat import screen_stacks

RECORD_FILE = "kept-copies.jsonl"  # in .memtui/: one signed line per copy memtui wrote
RECORD_VERSION = 1
KEPT_FOLDERS = (UNSAVED_DIR, CONFLICTS_DIR)
_COPY_MODE = 0o600  # the reviewer's own text: nobody else's to read


@dataclass(frozen=True, slots=True)
class KeptCopies:
    """What lies where copies of one page are kept (paths relative to the field, oldest first)."""

    recorded: list[str] = field(default_factory=list)  # written by memtui, bytes unchanged since
    foreign: list[str] = field(default_factory=list)  # anything else there: never the reviewer's text
    problem: str | None = None  # the folder could not be read safely (a symlink): why


def _copy_name(stem: PurePosixPath, stamp: str, number: int) -> str:
    suffix = f".{number}" if number > 1 else ""
    return f"{stem.stem}.{stamp}{suffix}{stem.suffix}"


def _record(root: Path, folder: str, page: str, copy: str, digest: str) -> dict[str, Any]:
    """What is signed about one copy: it binds the copy to this field, this page and these bytes."""
    return {
        "v": RECORD_VERSION,
        "field": locations.field_key(root),
        "folder": folder,
        "page": page,
        "copy": copy,
        "sha256": digest,
    }


def keep_copy(
    root: Path, relpath: str, data: bytes, *, folder: str = UNSAVED_DIR, now: _dt.datetime | None = None
) -> str:
    """Store ``data`` as ``.memtui/<folder>/<relpath>.<time>.md`` and record it signed; return its path.

    Never through a link (``UnsafePathError`` when a folder on the way is one) and never
    over an existing file (a planted one, or a link, at the name: the next number is taken).
    Not a page: memtui never scans ``.memtui/``, so the copy cannot become a second
    version of the page.
    """
    if folder not in KEPT_FOLDERS:
        raise UnsafePathError(f"not a folder for kept copies: {folder!r}", "this is a bug in memtui")
    root = Path(root)
    clean = check_relpath(relpath)
    stem = PurePosixPath(clean)
    stamp = (now or _dt.datetime.now()).strftime("%Y%m%d-%H%M%S")
    with state.StateDir(root, folder, *stem.parent.parts) as where:
        number = 1
        while True:
            name = _copy_name(stem, stamp, number)
            try:
                fd = where.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, _COPY_MODE)
                break
            except (FileExistsError, UnsafePathError):
                number += 1  # something is already there (perhaps planted): never written over
                if number > 10_000:
                    raise UnsafePathError(
                        f"{where.shown} holds too many copies named {stem.name}", "clear it out"
                    ) from None
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        where.sync()
    copy = PurePosixPath(locations.STATE_DIR_NAME, folder, *stem.parent.parts, name).as_posix()
    record = _record(root, folder, clean, copy, hashlib.sha256(data).hexdigest())
    line = json.dumps({**record, "sig": signing.sign_json(record)}, sort_keys=True, ensure_ascii=True)
    with state.StateDir(root) as top:
        top.append(RECORD_FILE, line.encode("ascii") + b"\n")
    return copy


def _recorded_digests(root: Path, folder: str, page: str) -> dict[str, str]:
    """copy path -> SHA-256, for every line of the record that verifies for this field, folder and page."""
    found: dict[str, str] = {}
    key = locations.field_key(root)
    try:
        lines = state.read_lines(root, RECORD_FILE)
    except (OSError, MemtuiError):
        return found
    if lines is None:
        return found
    with lines:
        for line in lines:
            if line.data is None:
                continue
            try:
                entry = json.loads(line.data)
            except ValueError:
                continue
            if not isinstance(entry, dict):
                continue
            signature = entry.pop("sig", None)
            if entry.get("field") != key or entry.get("folder") != folder or entry.get("page") != page:
                continue
            if not signing.verify_json(entry, signature):
                continue
            copy, digest = entry.get("copy"), entry.get("sha256")
            if isinstance(copy, str) and isinstance(digest, str):
                found[copy] = digest
    return found


def kept_copies(root: Path, relpath: str, *, folder: str = UNSAVED_DIR) -> KeptCopies:
    """The copies of ``relpath`` under ``.memtui/<folder>/``: the ones memtui recorded, and the rest.

    A file counts as recorded only when a signed record names it for this field and page
    and its bytes still have the recorded SHA-256. Read without following a link.
    """
    root = Path(root)
    try:
        clean = check_relpath(relpath, naming=False)
    except MemtuiError:
        return KeptCopies()
    stem = PurePosixPath(clean)
    base = PurePosixPath(locations.STATE_DIR_NAME, folder, *stem.parent.parts)
    pattern = re.compile(rf"{re.escape(stem.stem)}\.\d{{8}}-\d{{6}}(\.\d+)?{re.escape(stem.suffix)}")
    recorded: list[str] = []
    foreign: list[str] = []
    try:
        with state.opened(root, folder, *stem.parent.parts, create=False) as where:
            if where is None:
                return KeptCopies()
            candidates = [name for name in where.names() if pattern.fullmatch(name)]
            if not candidates:
                return KeptCopies()
            digests = _recorded_digests(root, folder, clean)
            for name in candidates:
                copy = (base / name).as_posix()
                expected = digests.get(copy)
                try:
                    data = where.read(name, kind="a kept copy") if expected is not None else None
                except (OSError, MemtuiError):
                    data = None
                if data is not None and hashlib.sha256(data).hexdigest() == expected:
                    recorded.append(copy)
                else:
                    foreign.append(copy)
    except UnsafePathError as exc:
        return KeptCopies(problem=exc.message)
    except OSError as exc:
        return KeptCopies(problem=f"cannot read {base.as_posix()}: {exc.strerror or exc}")
    return KeptCopies(sorted(recorded, key=_by_name), sorted(foreign, key=_by_name))


def _by_name(copy: str) -> tuple[str, int]:
    """Oldest first: by time stamp, then by the number added to a name already taken."""
    name = PurePosixPath(copy).name
    match = re.search(r"\.(\d{8}-\d{6})(?:\.(\d+))?", name)
    return (match.group(1), int(match.group(2) or 1)) if match else (name, 0)


def announce_kept(screen: Any, root: Path, relpath: str) -> KeptCopies:
    """Tell the reviewer (on ``screen``) about copies of ``relpath`` memtui kept when it last closed.

    Only copies memtui recorded are announced as the reviewer's edits. Anything else in
    ``.memtui/unsaved/`` for this page is named as not written by memtui, so a planted
    file is never mistaken for text the reviewer wrote.
    """
    kept = kept_copies(root, relpath)
    if kept.recorded:
        safe.notify(
            screen,
            f"edits to this page that were not saved when memtui last closed are kept in {kept.recorded[-1]}",
            title="unsaved edits kept",
            severity="warning",
            timeout=10,
        )
    if kept.foreign:
        count = len(kept.foreign)
        files_word = "a file" if count == 1 else f"{count} files"
        safe.notify(
            screen,
            f"{files_word} in {PurePosixPath(kept.foreign[-1]).parent.as_posix()} (e.g. "
            f"{one_line(PurePosixPath(kept.foreign[-1]).name, 80)}) {'was' if count == 1 else 'were'} not written by "
            "memtui or changed since: not your unsaved edits; nothing was taken from "
            f"{'it' if count == 1 else 'them'}",
            title="not written by memtui",
            severity="warning",
            timeout=10,
        )
    if kept.problem:
        safe.notify(
            screen,
            f"unsaved copies not checked: {kept.problem}",
            title="not written by memtui",
            severity="warning",
            timeout=10,
        )
    return kept


def editors(app: App[Any]) -> list[Any]:
    """Every editor open in any mode, the active one first."""
    from memtui.tui.screens.editor import EditorScreen

    found: list[Any] = [screen for screen in screen_stacks(app) if isinstance(screen, EditorScreen)]
    found.sort(key=lambda screen: screen is not app.screen)
    return found


def keep_unsaved_edits(app: App[Any]) -> list[str]:
    """Store every editor's unsaved text under .memtui/unsaved/ (nothing in the field changes).

    Through ``keep_copy``: a linked ``.memtui/unsaved`` is refused, never followed. A copy
    that cannot be kept is skipped (the terminal is gone: there is nobody to ask).
    """
    kept: list[str] = []
    for editor in editors(app):
        data = editor.unsaved_bytes()
        if data is None:
            continue
        try:
            kept.append(keep_copy(editor.root, editor.path, data, folder=UNSAVED_DIR))
        except (OSError, MemtuiError):
            continue
    return kept


async def quit_asking(app: App[Any]) -> None:
    """Quit, or, with edits not saved, ask first: keep editing, save and quit, quit without saving."""
    dirty = [editor for editor in editors(app) if editor.dirty]
    if not dirty:
        app.exit()
        return
    app.run_worker(_ask_before_quitting(app, dirty), exclusive=True, group="quit", description="ask before quitting")


async def _ask_before_quitting(app: App[Any], dirty: list[Any]) -> None:
    from memtui.tui.screens.dialogs import ChoiceDialog

    names = ", ".join(editor.path for editor in dirty)
    verb = "has" if len(dirty) == 1 else "have"
    choice = await app.push_screen_wait(
        ChoiceDialog(
            "Unsaved edits",
            Text(f"{safe.line(names, limit=300).plain} {verb} edits that are not saved."),
            [("stay", "Keep editing"), ("save", "Save and quit"), ("discard", "Quit without saving")],
            variant_of={"save": "primary", "discard": "error"},
        )
    )
    if choice == "discard":
        app.exit()
        return
    if choice != "save":
        return
    for editor in dirty:
        if not await editor.save().wait():
            safe.notify(app, f"{editor.path} was not saved; still here", severity="warning")
            return
    app.exit()


# --------------------------------------------------------------------------- a closed terminal
HANGUP_GRACE = 8.0  # seconds an app whose terminal closed has to finish on its own
HANGUP_EXIT_CODE = 129  # 128 + SIGHUP, as a shell reports a process its hang-up ended
_POLL_MS = 500


class HangupGuard:
    """Make sure an app whose terminal closed ends, whatever it is waiting on.

    Closing the terminal (the window, ``tmux kill-session``, an ssh link dropped) sends
    SIGHUP, which the app handles on its event loop: it keeps the unsaved edits, then
    exits. That is not enough on its own. The handler never runs while the loop is busy or
    blocked; a process that is not the terminal's session leader may get no signal at all;
    and once the terminal is gone Textual's input thread reads end-of-file in a loop (a
    core spinning) while the app may sit in a dialog, a worker or the index's close. All
    that time the index's writer lock stays held and no other memtui on the field can write.

    So a thread watches the terminal itself (``poll`` for POLLHUP on standard input:
    no reading, no spinning) and hands the hang-up to the loop. From the first sign of a
    hang-up (that thread, or the signal) the app has ``grace`` seconds; after that the
    guard keeps the unsaved edits itself if the loop never did, and ends the process with
    ``os._exit``, which closes every descriptor: the kernel drops the writer lock
    (``flock``), and the writer helper, if any, reads end-of-file and stops.
    """

    def __init__(self, app: App[Any], on_hang_up: Any, *, grace: float = HANGUP_GRACE) -> None:
        self.app = app
        self.on_hang_up = on_hang_up  # run on the event loop
        self.grace = grace
        self.kept = False  # the unsaved edits were kept (once is enough)
        self._armed = threading.Event()
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> None:
        """Watch the terminal (call on the event loop, once the app runs in a real terminal)."""
        self._loop = asyncio.get_running_loop()
        fd = _terminal_fd()
        if fd is not None and hasattr(select, "poll"):
            threading.Thread(target=self._watch, args=(fd,), name="memtui-hangup-watch", daemon=True).start()

    def stop(self) -> None:
        """Stop watching (the app ended normally). An armed deadline still runs: the process must end."""
        self._stopped.set()

    def claim_keeping(self) -> bool:
        """True once: whoever gets it keeps the unsaved edits."""
        with self._lock:
            if self.kept:
                return False
            self.kept = True
            return True

    def arm(self) -> None:
        """The terminal is gone: from now on the process has ``grace`` seconds to end."""
        with self._lock:
            if self._armed.is_set():
                return
            self._armed.set()
        threading.Thread(target=self._deadline, name="memtui-hangup-deadline", daemon=True).start()

    def _watch(self, fd: int) -> None:
        poller = select.poll()
        poller.register(fd, 0)  # POLLHUP, POLLERR and POLLNVAL are always reported; input is not
        while not self._stopped.is_set():
            try:
                events = poller.poll(_POLL_MS)
            except InterruptedError:
                continue
            except OSError:
                return
            if any(mask & (select.POLLHUP | select.POLLERR | select.POLLNVAL) for _fd, mask in events):
                break
        else:
            return
        self.arm()
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop already closed: the app is ending
                loop.call_soon_threadsafe(self.on_hang_up)

    def _deadline(self) -> None:
        time.sleep(self.grace)
        # Still running: the loop is stuck (or exiting hangs). Last resort, from this thread.
        if self.claim_keeping():
            with contextlib.suppress(Exception):
                keep_unsaved_edits(self.app)
        os._exit(HANGUP_EXIT_CODE)


def _terminal_fd() -> int | None:
    """The descriptor Textual reads keys from, when it is a terminal."""
    stream = sys.__stdin__
    try:
        fd = stream.fileno() if stream is not None else -1
        return fd if fd >= 0 and os.isatty(fd) else None
    except (OSError, ValueError):
        return None


def hang_up(app: App[Any], guard: HangupGuard | None) -> None:
    """The terminal closed (SIGHUP, or the guard saw it): keep unsaved edits, then exit.

    Runs on the event loop. With a guard, the process ends within its grace period even
    if exiting gets stuck.
    """
    if guard is not None:
        guard.arm()
    if guard is None or guard.claim_keeping():
        keep_unsaved_edits(app)
    app.exit(return_code=HANGUP_EXIT_CODE)
