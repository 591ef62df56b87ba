"""A real terminal for tests: memtui run in tmux the way a person runs it (``cd FIELD && memtui``).

Each ``Terminal`` has a tmux server of its own (its own socket), so nothing is
shared with any other tmux; ``close()`` stops that server and whatever runs in it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

WIDTH, HEIGHT = 160, 45


def memtui_script() -> str:
    """The ``memtui`` console script installed beside this Python."""
    script = Path(sys.executable).parent / "memtui"
    return str(script) if script.exists() else f"{shlex.quote(sys.executable)} -m memtui"


def available() -> bool:
    return shutil.which("tmux") is not None


class Terminal:
    def __init__(self) -> None:
        self.socket = f"memtui-test-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.windows: list[str] = []

    def _tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            check=check,
            timeout=30,
        )

    def run(self, folder: Path, command: str = "") -> str:
        """Start ``cd folder && memtui`` in a new window; return the window's name."""
        name = f"w{len(self.windows)}"
        # COLUMNS and LINES (set by pytest) would make the app draw for another terminal size.
        line = f"cd {shlex.quote(str(folder))} && exec env -u COLUMNS -u LINES {command or memtui_script()}"
        if not self.windows:
            self._tmux("new-session", "-d", "-s", "t", "-n", name, "-x", str(WIDTH), "-y", str(HEIGHT), line)
            self._tmux("set-option", "-g", "remain-on-exit", "on")
        else:
            self._tmux("new-window", "-t", "t", "-n", name, line)
            self._tmux("resize-window", "-t", f"t:{name}", "-x", str(WIDTH), "-y", str(HEIGHT), check=False)
        self.windows.append(name)
        return name

    def screen(self, window: str = "w0") -> str:
        return self._tmux("capture-pane", "-p", "-t", f"t:{window}", check=False).stdout

    def wait_for(self, text: str, window: str = "w0", timeout: float = 40.0, absent: bool = False) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if (text in self.screen(window)) != absent:
                return True
            time.sleep(0.2)
        return (text in self.screen(window)) != absent

    def keys(self, *keys: str, window: str = "w0") -> None:
        self._tmux("send-keys", "-t", f"t:{window}", *keys)

    def close(self) -> None:
        self._tmux("kill-server", check=False)
