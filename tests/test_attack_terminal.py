"""Hazard 22 (issue 40): the TUI without a terminal, and the TUI whose terminal closed.

Class: Races and crashes (and the user's caches: the index's writer lock). ``memtui FIELD
< /dev/null`` used to start a TUI nobody could see whose input thread read end-of-file in
a loop: a core spinning forever, the writer lock held. A TUI whose terminal closed without
a signal reaching it (the terminal was not its controlling one) spun the same way and never
let go of the lock; one with a dialog open must end too. Each test runs the real ``memtui``
in a subprocess, on a real pty or in tmux, and checks the lock from another process.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import shlex
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memtui.tui import unsaved
from tests.helpers import write_page
from tests.terminal import Terminal, available, memtui_script

PAGE = "---\ntitle: Harbor\n---\n# Harbor\n\n- Harbor ships containers to Oakland every week [stated]\n"
REPO = Path(__file__).resolve().parent.parent
START_TIMEOUT = 60.0
EXIT_TIMEOUT = 30.0  # well over unsaved.HANGUP_GRACE


@pytest.fixture
def field(tmp_path: Path) -> Path:
    root = tmp_path / "field"
    write_page(root, "projects/harbor.md", PAGE)
    return root


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update(
        XDG_CACHE_HOME=str(tmp_path / "cache"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        TERM="xterm-256color",
        PYTHONPATH=str(REPO),
    )
    return env


def _wait_until(check, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"never happened within {timeout:.0f} s: {what}")


def _writer_locks(cache: Path) -> list[Path]:
    return sorted(cache.rglob("writer.lock")) if cache.exists() else []


def _taken_by_another_process(lock: Path) -> bool:
    """Can a separate process take the writer lock right now? (flock, without waiting.)"""
    code = (
        "import fcntl, os, sys\n"
        "fd = os.open(sys.argv[1], os.O_RDWR)\n"
        "try:\n"
        "    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        "except BlockingIOError:\n"
        "    sys.exit(3)\n"
    )
    result = subprocess.run([sys.executable, "-c", code, str(lock)], timeout=30)
    assert result.returncode in (0, 3)
    return result.returncode == 0


def _held_lock(cache: Path) -> Path | None:
    for lock in _writer_locks(cache):
        if not _taken_by_another_process(lock):
            return lock
    return None


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    with contextlib.suppress(OSError):  # a zombie is gone too: it holds no descriptor
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    return False


# --------------------------------------------------------------------------- no terminal at all
@pytest.mark.parametrize("stdin", ["/dev/null", "a closed pipe", "an open pipe"])
def test_h22_tui_with_stdin_not_a_terminal_exits_2_with_the_scripting_commands(
    tmp_path: Path, field: Path, stdin: str
) -> None:
    """Races and crashes: `memtui FIELD < /dev/null` (or in a pipe) refuses at once instead of spinning."""
    command = [sys.executable, "-m", "memtui", str(field)]
    env = _env(tmp_path)
    started = time.monotonic()
    if stdin == "/dev/null":
        result = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=60)
        code, err = result.returncode, result.stderr
    else:
        proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        assert proc.stdin is not None
        if stdin == "a closed pipe":
            proc.stdin.close()
        try:
            err = _stderr_once_ended(proc)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        code = proc.returncode
    assert code == 2, err
    assert time.monotonic() - started < 30
    assert "Traceback" not in err
    assert "terminal" in err
    for command_name in ("memtui check", "memtui context", "memtui search"):
        assert command_name in err
    assert _writer_locks(tmp_path / "cache") == []  # it never opened the field's index


def _stderr_once_ended(proc: subprocess.Popen[str]) -> str:
    """Wait for the process (its stdin pipe closed, or open with nothing ever written); its stderr."""
    assert proc.stderr is not None
    proc.wait(timeout=60)
    return proc.stderr.read()


def test_h22_control_a_real_terminal_is_not_refused(tmp_path: Path, field: Path) -> None:
    """The refusal must not hit a real terminal (or the test above could pass on a broken TUI)."""
    with _on_a_pty(tmp_path, field, controlling=True) as run:
        _wait_until(lambda: _held_lock(tmp_path / "cache") is not None, "the TUI took the writer lock", START_TIMEOUT)
        assert run.proc.poll() is None
        assert b"the TUI needs a terminal" not in bytes(run.output)


# --------------------------------------------------------------------------- the terminal closes
class PtyRun:
    """``memtui FIELD`` on a pty of its own; ``close_terminal()`` closes the pty's master end."""

    def __init__(self, proc: subprocess.Popen[bytes], master: int) -> None:
        self.proc = proc
        self.master = master
        self.output = bytearray()
        self._stop = threading.Event()
        self._drainer = threading.Thread(target=self._drain, daemon=True)
        self._drainer.start()

    def _drain(self) -> None:
        """Read what the app draws (a terminal nobody reads fills up and blocks the app). Never
        blocked in ``read``: a thread blocked there keeps the master open after ``close``, and
        the terminal would never hang up."""
        while not self._stop.is_set():
            try:
                ready, _, _ = select.select([self.master], [], [], 0.05)
                data = os.read(self.master, 65536) if ready else b"-"
            except OSError:
                return
            if not data:
                return
            if ready:
                self.output.extend(data)

    def close_terminal(self) -> None:
        """Close the master end (the terminal window closes): the app's side hangs up."""
        self._stop.set()
        self._drainer.join(timeout=30)
        if self.master >= 0:
            os.close(self.master)
            self.master = -1


@contextlib.contextmanager
def _on_a_pty(tmp_path: Path, field: Path, *, controlling: bool) -> Iterator[PtyRun]:
    """``memtui FIELD`` on a new pty, its output drained.

    ``controlling``: the pty is the process's controlling terminal (closing it sends SIGHUP);
    otherwise it is only its stdin/stdout/stderr, and closing it sends no signal at all.
    """
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))

    def become_controlled() -> None:
        if controlling:
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "memtui", str(field)],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=_env(tmp_path),
            start_new_session=True,
            preexec_fn=become_controlled,
        )
    finally:
        os.close(slave)
    run = PtyRun(proc, master)
    try:
        yield run
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        run.close_terminal()


@pytest.mark.parametrize("controlling", [True, False], ids=["with SIGHUP", "no signal"])
def test_h22_closed_pty_ends_the_tui_and_frees_the_writer_lock(tmp_path: Path, field: Path, controlling: bool) -> None:
    """Races and crashes: close the terminal under a running TUI (the pty's master end, as a
    terminal window does). memtui must exit, and another process must get the writer lock.
    Without a signal (the pty is not its controlling terminal) memtui used to spin forever."""
    cache = tmp_path / "cache"
    with _on_a_pty(tmp_path, field, controlling=controlling) as run:
        _wait_until(lambda: _held_lock(cache) is not None, "the TUI took the writer lock", START_TIMEOUT)
        (lock,) = _writer_locks(cache)
        assert not _taken_by_another_process(lock)  # held while the TUI runs
        run.close_terminal()  # the terminal window closes
        try:
            run.proc.wait(timeout=EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail("the TUI kept running after its terminal closed")
        assert run.proc.returncode == unsaved.HANGUP_EXIT_CODE
        assert _taken_by_another_process(lock)


# --------------------------------------------------------------------------- a real terminal (tmux)
def _start_in_tmux(term: Terminal, tmp_path: Path, field: Path) -> int:
    env = _env(tmp_path)
    exports = " ".join(
        f"{k}={shlex.quote(env[k])}" for k in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "TERM", "PYTHONPATH")
    )
    term.run(field, f"{exports} {memtui_script()} {shlex.quote(str(field))}")
    pid = int(term._tmux("display-message", "-p", "-t", "t:w0", "#{pane_pid}").stdout.strip())
    return pid


def _editing_with_the_quit_dialog_open(term: Terminal) -> None:
    assert term.wait_for("Harbor", timeout=START_TIMEOUT), term.screen()
    term.keys("e")
    assert term.wait_for("Edit: projects/harbor.md"), term.screen()
    term.keys("End")
    term.keys("-l", " DRAFT never saved")
    assert term.wait_for("modified"), term.screen()
    term.keys("C-q")
    assert term.wait_for("Unsaved edits"), term.screen()  # the app now waits on the dialog


@pytest.mark.slow
@pytest.mark.skipif(not available(), reason="needs tmux")
def test_h22_killed_tmux_session_with_the_quit_dialog_open_exits_keeps_edits_frees_the_lock(
    tmp_path: Path, field: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Races and crashes: the terminal closes while the app waits on "Unsaved edits?". It keeps the
    edits (as a copy memtui records), exits, and another process can take the writer lock."""
    cache = tmp_path / "cache"
    term = Terminal()
    try:
        pid = _start_in_tmux(term, tmp_path, field)
        _editing_with_the_quit_dialog_open(term)
        lock = _held_lock(cache)
        assert lock is not None, "the TUI does not hold the writer lock"
        term._tmux("kill-session", "-t", "t")  # the terminal closes
        _wait_until(lambda: _gone(pid), "memtui ended after its terminal closed", EXIT_TIMEOUT)
        assert _taken_by_another_process(lock)
    finally:
        term.close()
    monkeypatch.setenv("XDG_CONFIG_HOME", _env(tmp_path)["XDG_CONFIG_HOME"])  # memtui's key, to verify its record
    kept = unsaved.kept_copies(field, "projects/harbor.md")
    assert len(kept.recorded) == 1 and kept.foreign == []
    assert b" DRAFT never saved" in (field / kept.recorded[0]).read_bytes()
    assert (field / "projects/harbor.md").read_text() == PAGE


@pytest.mark.slow
@pytest.mark.skipif(not available(), reason="needs tmux")
def test_h11_real_terminal_closed_with_unsaved_linked_outside_writes_nothing_outside(
    tmp_path: Path, field: Path
) -> None:
    """Links out of the field, in a real terminal: .memtui/unsaved is a symlink to a folder outside
    the field when the terminal closes with unsaved edits. Nothing is written there; memtui still exits."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (field / ".memtui").mkdir()
    (field / ".memtui/unsaved").symlink_to(outside, target_is_directory=True)
    cache = tmp_path / "cache"
    term = Terminal()
    try:
        pid = _start_in_tmux(term, tmp_path, field)
        _editing_with_the_quit_dialog_open(term)
        lock = _held_lock(cache)
        assert lock is not None
        term._tmux("kill-session", "-t", "t")
        _wait_until(lambda: _gone(pid), "memtui ended after its terminal closed", EXIT_TIMEOUT)
        assert _taken_by_another_process(lock)
    finally:
        term.close()
    assert list(outside.rglob("*")) == [], "the reviewer's text was written outside the field"


STUCK_LOOP = """
import asyncio, fcntl, os, sys, time
from textual.app import App
from memtui.tui import unsaved

lock = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(lock, fcntl.LOCK_EX)  # stands for the index's writer lock


async def main():
    guard = unsaved.HangupGuard(App(), lambda: None, grace=float(sys.argv[2]))
    guard.start()
    print("stuck", flush=True)
    time.sleep(3600)  # the event loop is blocked: no callback and no signal handler can run


asyncio.run(main())
"""


def test_h22_closed_terminal_ends_the_process_even_with_its_event_loop_stuck(tmp_path: Path) -> None:
    """Races and crashes: "whatever it was waiting on". The app's hang-up handler runs on the event
    loop; with the loop blocked it never runs. The guard's own thread sees the terminal close and,
    after its grace period, ends the process: the lock it held is free for another process."""
    lock = tmp_path / "writer.lock"
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", STUCK_LOOP, str(lock), "1.0"],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=_env(tmp_path),
            start_new_session=True,  # not its controlling terminal: no SIGHUP, only the guard can act
        )
    finally:
        os.close(slave)
    run = PtyRun(proc, master)
    try:
        _wait_until(lambda: b"stuck" in run.output, "the stand-in app started", START_TIMEOUT)
        assert not _taken_by_another_process(lock)
        run.close_terminal()
        try:
            proc.wait(timeout=EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail("a process whose terminal closed kept running with its loop stuck")
        assert proc.returncode == unsaved.HANGUP_EXIT_CODE
        assert _taken_by_another_process(lock)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)
        run.close_terminal()
