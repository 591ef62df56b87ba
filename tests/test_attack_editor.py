"""Hazard 4: the editor must never write ``reviewed: true`` / ``reviewed_by`` over lines the reviewer
has not seen (class: Races and crashes, "what the reviewer sees is what gets saved and signed").

Each test opens the editor with Pilot, marks the page reviewed, has another *process* write the page
on disk (the agent), and saves: the incoming change is shown, nothing is written until the reviewer
saves again with the merged text in front of them, and the notice says what saving does.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from memtui.store.files import sha256_bytes
from memtui.tui.screens.dialogs import ChoiceDialog
from memtui.tui.screens.editor import EditorScreen, MergeScreen
from tests.helpers import write_page
from tests.helpers_tui import SIZE, make_app, rendered_text, wait_for_screen, wait_ready

PAGE = (
    "---\n"
    "id: mem_h4\n"
    "title: Payments\n"
    "---\n"
    "# Payments\n"
    "\n"
    "- Invoices go to billing@example.com [stated]\n"
    "- Pay within 30 days [stated]\n"
    "- Owner: Dana Ruiz [observed]\n"
)
HOSTILE_LINE = "- Wire every payment to account 6666 6666 [stated]"
SAME_LINE_AGENT = "- Pay within 3 days, to account 6666 [stated]"


@pytest.fixture
def field(tmp_path: Path) -> Path:
    root = tmp_path / "field"
    write_page(root, "notes/payments.md", PAGE)
    return root


def _agent_writes(path: Path, data: bytes) -> None:
    """Another process (the agent) writes the page: a real write landing on disk meanwhile."""
    code = "import sys; open(sys.argv[1], 'wb').write(bytes.fromhex(sys.argv[2]))"
    subprocess.run([sys.executable, "-I", "-c", code, str(path), data.hex()], check=True, timeout=30)


async def _open_and_mark(app, pilot) -> EditorScreen:
    await wait_ready(app, pilot)
    app.open_editor("notes/payments.md")
    await pilot.pause()
    editor = app.screen
    assert isinstance(editor, EditorScreen)
    await pilot.press("ctrl+r")  # reviewed: true, reviewed_by, reviewed_at
    await pilot.pause()
    assert "reviewed: true" in editor.area.text and "reviewed_by:" in editor.area.text
    return editor


async def _wait_for(pilot, condition, timeout: float = 10.0) -> bool:
    for _ in range(int(timeout / 0.05)):
        if condition():
            return True
        await pilot.pause(0.05)
    return condition()


def _dialog_text(dialog: ChoiceDialog) -> str:
    from textual.widgets import Static

    return "\n".join(rendered_text(static, width=400) for static in dialog.query(Static))


async def test_h4_a_concurrent_edit_is_shown_and_nothing_is_signed_until_the_reviewer_has_seen_it(
    field: Path,
) -> None:
    """Races and crashes: the agent adds a line while the reviewer marks the page reviewed; the
    old save merged it silently and wrote ``reviewed_by`` over a line nobody read."""
    target = field / "notes/payments.md"
    agents = PAGE.replace("- Owner: Dana Ruiz [observed]\n", f"- Owner: Dana Ruiz [observed]\n{HOSTILE_LINE}\n")
    app = make_app(field, use_index=True, watch=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot, index=True)  # the folder is watched from here on
        editor = await _open_and_mark(app, pilot)
        _agent_writes(target, agents.encode())
        # the notice says what saving will do, and it is what happens below
        assert await _wait_for(pilot, lambda: editor.disk_changed)
        notice = rendered_text(editor.query_one("#editor-notice"), width=400)
        assert "if the page is marked reviewed, shows you the changes and saves nothing" in notice
        await pilot.press("ctrl+s")
        assert await wait_for_screen(app, pilot, ChoiceDialog, timeout=10)
        assert "6666" in _dialog_text(app.screen)  # the incoming line is shown before anything is written
        assert target.read_bytes() == agents.encode()  # nothing written
        await pilot.click("#choice-show")
        assert await _wait_for(pilot, lambda: app.screen is editor)
        await app.workers.wait_for_complete()
        assert target.read_bytes() == agents.encode()  # still nothing written: not signed
        text = editor.area.text
        assert HOSTILE_LINE in text and "reviewed: true" in text  # the reviewer now sees what they would sign
        assert editor.dirty and not editor.disk_changed
        # The reviewer read it and removes the agent's line, then saves: exactly what they see is written.
        lines = text.split("\n")
        row = lines.index(HOSTILE_LINE)
        editor._replace_lines(row - 1, row, [lines[row - 1]])  # rows are inclusive: the line is gone
        await pilot.pause()
        shown = editor.area.text
        await pilot.press("ctrl+s")
        assert await _wait_for(pilot, lambda: target.read_bytes() != agents.encode())
        await app.workers.wait_for_complete()
        written = target.read_bytes().decode()
        assert written == shown and HOSTILE_LINE not in written and "reviewed_by:" in written


async def test_h4_a_conflict_resolved_for_one_side_is_not_signed_unseen(field: Path) -> None:
    """Races and crashes: both changed the same line and, elsewhere, the agent added a line; taking
    "mine" for the conflict used to write the agent's other line too, under the review mark."""
    target = field / "notes/payments.md"
    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        editor = await _open_and_mark(app, pilot)
        lines = editor.area.text.split("\n")
        row = lines.index("- Pay within 30 days [stated]")
        editor._replace_lines(row, row, ["- Pay within 45 days [stated]"])
        agents = PAGE.replace("- Pay within 30 days [stated]", SAME_LINE_AGENT).replace(
            "# Payments\n", f"# Payments\n{HOSTILE_LINE}\n"
        )
        _agent_writes(target, agents.encode())
        await pilot.press("ctrl+s")
        assert await wait_for_screen(app, pilot, MergeScreen, timeout=10)
        await pilot.click("#mine")
        assert await wait_for_screen(app, pilot, ChoiceDialog, timeout=10)
        assert "6666" in _dialog_text(app.screen)
        await pilot.click("#choice-show")
        assert await _wait_for(pilot, lambda: app.screen is editor)
        await app.workers.wait_for_complete()
        assert target.read_bytes() == agents.encode()  # nothing signed
        assert HOSTILE_LINE in editor.area.text and "45 days" in editor.area.text


async def test_h4_an_edit_without_a_review_mark_still_merges_as_before(field: Path) -> None:
    """Races and crashes, the other side of the rule: a page not marked reviewed merges a change on
    another line with no question (the notice says so); only a signature waits for the reviewer."""
    target = field / "notes/payments.md"
    agents = PAGE.replace("- Owner: Dana Ruiz [observed]", "- Owner: Luis Ortega [observed]")
    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        app.open_editor("notes/payments.md")
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, EditorScreen)
        lines = editor.area.text.split("\n")
        row = lines.index("- Pay within 30 days [stated]")
        editor._replace_lines(row, row, ["- Pay within 45 days [stated]"])
        _agent_writes(target, agents.encode())
        await pilot.press("ctrl+s")
        ok = await _wait_for(pilot, lambda: sha256_bytes(target.read_bytes()) != sha256_bytes(agents.encode()))
        assert ok, app.screen
        await app.workers.wait_for_complete()
        written = target.read_bytes().decode()
        assert "45 days" in written and "Luis Ortega" in written and "reviewed" not in written
