"""The real app in a real terminal (tmux), driven one key at a time through a whole review.

Triage two quarantined notes, undo one decision, approve and revert a proposal, edit a
page while another process edits another line of it (the save merges both), and quit
with unsaved edits (memtui asks; the edits are not written). Every step waits for text
on screen, with generous timeouts, so a slow machine only makes it slower.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import SAMPLE_FIELD

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux"),
    pytest.mark.timeout(420),
]

WIDTH, HEIGHT = 120, 40
KEY_PAUSE = 0.15
TIMEOUT = 30.0


class Terminal:
    """One tmux server of our own (its own socket), one session, one pane."""

    def __init__(self, tmp: Path, command: list[str], env: dict[str, str]) -> None:
        self.socket = f"memtui-e2e-{os.getpid()}-{int(time.time() * 1000) % 100000}"
        self.session = "review"
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        # COLUMNS/LINES from the test runner would override the real terminal size.
        shell = f"cd {shlex.quote(str(tmp))} && env -u COLUMNS -u LINES {exports} {shlex.join(command)}"
        self.tmux("new-session", "-d", "-s", self.session, "-x", str(WIDTH), "-y", str(HEIGHT), shell)
        self.socket_path = self.tmux("display-message", "-p", "-t", self.session, "#{socket_path}").stdout.strip()

    def tmux(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=30)

    def alive(self) -> bool:
        return self.tmux("has-session", "-t", self.session).returncode == 0

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.session).stdout

    def key(self, key: str) -> None:
        """One key (tmux key name: Enter, Down, C-s ...)."""
        self.tmux("send-keys", "-t", self.session, key)
        time.sleep(KEY_PAUSE)

    def type(self, text: str) -> None:
        for char in text:  # one key per call, as a person types
            self.tmux("send-keys", "-t", self.session, "-l", char)
            time.sleep(0.05)
        time.sleep(KEY_PAUSE)

    def wait_for(self, text: str, timeout: float = TIMEOUT) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never appeared; the screen was:\n{screen}")

    def wait_gone(self, text: str, timeout: float = TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text not in self.screen():
                return
            time.sleep(0.2)
        raise AssertionError(f"{text!r} stayed on screen:\n{self.screen()}")

    def wait_exit(self, timeout: float = TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive():
                return
            time.sleep(0.2)
        raise AssertionError(f"the app did not quit:\n{self.screen()}")

    def close(self) -> None:
        self.tmux("kill-server")
        if self.socket_path:
            Path(self.socket_path).unlink(missing_ok=True)  # the server leaves its socket file behind


def _ledger(root: Path) -> list[tuple[str, str]]:
    path = root / ".memtui" / "ledger.jsonl"
    if not path.exists():
        return []
    return [(e["action"], e["target"]) for e in map(json.loads, path.read_text().splitlines())]


def _wait_until(check, what: str, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"never happened: {what}")


def test_a_whole_review_in_a_real_terminal(tmp_path: Path) -> None:
    field = tmp_path / "sample-field"
    shutil.copytree(SAMPLE_FIELD, field, ignore=shutil.ignore_patterns(".memtui"))
    page = field / "decisions/hosting-fly-io.md"
    env = {
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "MEMTUI_REVIEWER": "maya",
        "TERM": "xterm-256color",
        "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
    }
    term = Terminal(tmp_path, [sys.executable, "-m", "memtui", str(field)], env)
    try:
        term.wait_for("73 pages", timeout=60)
        term.wait_for("4 quarantined", timeout=60)

        # ---- triage two quarantined notes
        term.key("4")
        term.wait_for("Quarantined: 4 waiting")
        term.wait_for("▶ ⛔ Portlink public pricing")
        term.key("a")
        term.wait_for("Approve this page?")
        term.key("Enter")
        term.wait_for("APPROVED Portlink")
        term.wait_for("▶ ⛔ TrackStream 2027 list price")  # the cursor moved on by itself
        term.key("x")
        term.wait_for("Reject this page")
        term.type("list price rumour")
        term.key("Enter")
        term.wait_for("REJECTED TrackStream")
        assert _ledger(field) == [
            ("quarantine-approve", "quarantine/portlink-pricing-2027.md"),
            ("quarantine-reject", "quarantine/trackstream-2027-list-price.md"),
        ]

        # ---- undo one decision
        term.key("z")
        term.wait_for("Undo this decision?")
        term.key("Enter")
        term.wait_gone("REJECTED TrackStream")
        term.wait_for("Quarantined: 3 waiting")
        assert (field / "quarantine/trackstream-2027-list-price.md").exists()
        assert _ledger(field)[-1] == ("decision-undo", "quarantine/trackstream-2027-list-price.md")

        # ---- approve and revert a proposal
        term.key("5")
        term.wait_for("Pending proposals: 4")
        term.key("Down")
        term.key("Down")
        term.wait_for("▶ ● ready 2026-11-27-expire-01")
        term.wait_for("+ valid_to: 2026-09-30")  # expire-01's own review has loaded, not the one before
        term.key("a")
        term.wait_for("Approve this proposal?")
        term.key("Enter")
        term.wait_for("APPROVED 2026-11-27-expire-01")
        term.wait_for("regret rate 0% (0/1 reverted)")
        term.key("Up")
        term.wait_for("z undoes the approval")
        term.key("u")
        term.wait_for("Revert? This is what it changes")
        term.wait_for("valid_to: null")  # the diff is shown before the reason is asked
        term.key("Enter")
        term.wait_for("Why is it reverted?")
        term.type("the trial is not over")
        term.key("Enter")
        term.wait_for("REVERTED 2026-11-27-expire-01")
        term.wait_for("regret rate 100% (1/1 reverted)")
        assert [a for a, _ in _ledger(field)][-2:] == ["proposal-approve", "proposal-revert"]

        # ---- edit a page while another process edits another line of it
        term.key("1")
        term.key("C-p")
        term.wait_for("Search for commands")
        term.type("Hosting on Fly")
        term.wait_for("decisions/hosting-fly-io.md")
        term.key("Enter")
        term.wait_for("Hosting on Fly.io")
        term.key("e")
        term.wait_for("Edit: decisions/hosting-fly-io.md")
        term.key("C-g")
        term.wait_for("Go to line")
        term.key("C-u")
        term.type("22")
        term.key("Enter")
        term.wait_for("L22:1")
        term.key("End")
        term.type(" (confirmed in May)")
        term.wait_for("● modified")
        theirs = page.read_bytes().replace(b"Spend in March 2026 was $1,240", b"Spend in March 2026 was $1,250")
        page.write_bytes(theirs)  # another process, another line
        term.wait_for("changed on disk", timeout=60)
        term.key("C-s")
        term.wait_for("Set updated: too?")
        term.key("Enter")
        # The page is marked reviewed: the changes made on disk are shown before anything is signed.
        term.wait_for("read the changes before you sign it", timeout=60)
        term.wait_for("$1,250")
        assert "(confirmed in May)" not in page.read_text()  # nothing written unseen
        term.key("Enter")  # show the merge in the editor
        term.wait_for("not saved yet")
        term.key("C-s")  # now seen: saving signs it (updated: was settled by the first save)
        _wait_until(lambda: "(confirmed in May)" in page.read_text(), "the merged save", timeout=60)
        term.wait_for("✓ saved")
        saved = page.read_text()
        assert "$1,800 per month [cite:1]. [stated] (confirmed in May)" in saved
        assert "Spend in March 2026 was $1,250" in saved
        assert sorted(p.name for p in page.parent.iterdir()) == sorted(
            p.name for p in (SAMPLE_FIELD / "decisions").iterdir()
        )

        # ---- quit with unsaved edits: memtui asks, Enter keeps editing, nothing is written
        term.type(" DRAFT")
        term.wait_for("● modified")
        term.key("C-q")
        term.wait_for("Unsaved edits")
        term.key("Enter")  # the focused choice keeps editing
        term.wait_gone("Unsaved edits")
        assert term.alive()
        term.key("C-q")
        term.wait_for("Quit without saving")
        term.key("Tab")
        term.key("Tab")
        term.key("Enter")
        term.wait_exit()
        assert "DRAFT" not in page.read_text()
    finally:
        term.close()
