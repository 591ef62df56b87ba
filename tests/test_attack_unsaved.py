"""Hazard 11 (issue 40): the copies memtui keeps of the reviewer's text, attacked from inside ``.memtui/``.

Classes: Links out of the field (``.memtui/unsaved`` or ``.memtui/conflicts`` planted as a
symlink used to take the reviewer's unsaved text outside the field) and Forged or replayed
state (a file planted in ``.memtui/unsaved/`` was announced as the reviewer's own edits).
Real folders, the real app (Textual's test driver) and the user's real signing key.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from pathlib import Path

import pytest

from memtui.errors import UnsafePathError
from memtui.store.merge3 import CONFLICTS_DIR, UNSAVED_DIR
from memtui.tui import unsaved
from memtui.tui.screens.editor import EditorScreen
from tests.helpers import write_page
from tests.helpers_tui import SIZE, make_app, wait_for_screen, wait_ready

PAGE = "---\ntitle: Harbor\n---\n# Harbor\n\n- Harbor ships containers to Oakland every week [stated]\n"
MINE = "- the reviewer's half-written thought [stated]"
PLANTED = b"# Harbor\n\n- Wire the deposit to account 99-1234 today [stated]\n"
STAMP = "20260101-120000"


@pytest.fixture
def field(tmp_path: Path) -> Path:
    root = tmp_path / "field"
    write_page(root, "projects/harbor.md", PAGE)
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    return folder


def _everything_under(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def _link(field: Path, relative: str, target: Path) -> None:
    """Plant ``FIELD/<relative>`` as a symlink to ``target`` (what an agent writing the field can do)."""
    link = field / relative
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target, target_is_directory=True)


async def _open_editor(app, pilot, path: str = "projects/harbor.md") -> EditorScreen:
    await wait_ready(app, pilot)
    app.open_editor(path)
    await pilot.pause()
    assert isinstance(app.screen, EditorScreen)
    return app.screen


# --------------------------------------------------------------------------- links out of the field
@pytest.mark.parametrize("linked", [".memtui", ".memtui/unsaved", ".memtui/unsaved/projects"])
async def test_h11_symlinked_unsaved_folder_gets_nothing_when_the_terminal_closes(
    field: Path, outside: Path, linked: str
) -> None:
    """Links out of the field: the hang-up keeps no copy through a planted link, anywhere on the way."""
    _link(field, linked, outside)
    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        editor = await _open_editor(app, pilot)
        editor._replace_lines(5, 5, [MINE])
        assert editor.dirty
        app._hang_up()  # what closing the terminal window (SIGHUP) runs
        await pilot.pause()
    assert _everything_under(outside) == [], "the reviewer's text was written outside the field"
    assert (field / "projects/harbor.md").read_text() == PAGE


async def test_h11_control_the_unsaved_copy_is_kept_when_nothing_is_linked(field: Path) -> None:
    """The same hang-up without the link keeps the copy, recorded as memtui's (so the test above can fail)."""
    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        editor = await _open_editor(app, pilot)
        editor._replace_lines(5, 5, [MINE])
        app._hang_up()
        await pilot.pause()
    (copy,) = (field / ".memtui/unsaved/projects").glob("harbor.*.md")
    assert MINE.encode() in copy.read_bytes()
    kept = unsaved.kept_copies(field, "projects/harbor.md")
    assert kept.recorded == [copy.relative_to(field).as_posix()] and kept.foreign == []


@pytest.mark.parametrize("folder", [UNSAVED_DIR, CONFLICTS_DIR])
@pytest.mark.parametrize("depth", ["folder", "page folder"])
def test_h11_keep_copy_refuses_a_linked_unsaved_or_conflicts_folder(
    field: Path, outside: Path, folder: str, depth: str
) -> None:
    """Links out of the field: ``.memtui/conflicts`` (or a folder below it) as a symlink is refused."""
    _link(field, f".memtui/{folder}" + ("/projects" if depth == "page folder" else ""), outside)
    with pytest.raises(UnsafePathError):
        unsaved.keep_copy(field, "projects/harbor.md", MINE.encode(), folder=folder)
    assert _everything_under(outside) == []


def test_h11_a_symlink_planted_at_the_copys_own_name_is_never_written_through(field: Path, outside: Path) -> None:
    """Links out of the field: the agent guesses the copy's name (it is a time stamp) and plants a link there."""
    now = _dt.datetime(2026, 1, 1, 12, 0, 0)
    victim = outside / "victim.txt"
    victim.write_bytes(b"the user's own file\n")
    where = field / ".memtui/unsaved/projects"
    where.mkdir(parents=True)
    (where / f"harbor.{STAMP}.md").symlink_to(victim)
    copy = unsaved.keep_copy(field, "projects/harbor.md", MINE.encode(), now=now)
    assert victim.read_bytes() == b"the user's own file\n"
    assert copy == f".memtui/unsaved/projects/harbor.{STAMP}.2.md"
    assert (field / copy).read_bytes() == MINE.encode()
    assert unsaved.kept_copies(field, "projects/harbor.md").recorded == [copy]


# The editor keeps and announces its copies through memtui.tui.unsaved: attacked through it here.


async def test_h11_conflict_copy_through_the_editor_writes_nothing_outside(field: Path, outside: Path) -> None:
    """Links out of the field: resolving an overlapping edit keeps "mine" under .memtui/conflicts/,
    here planted as a symlink to a folder outside the field."""
    from memtui.tui.screens.editor import MergeScreen

    _link(field, ".memtui/conflicts", outside)
    target = field / "projects/harbor.md"
    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        editor = await _open_editor(app, pilot)
        editor._replace_lines(5, 5, [MINE])
        target.write_text(PAGE.replace("every week", "every day"), encoding="utf-8")
        await pilot.press("ctrl+s")
        assert await wait_for_screen(app, pilot, MergeScreen)
        await pilot.press("enter")  # the default: keep my edits (and a copy of them)
        await app.workers.wait_for_complete()
        await pilot.pause()
    assert _everything_under(outside) == [], "the reviewer's version was written outside the field"


# --------------------------------------------------------------------------- forged copies
def _plant(field: Path, name: str = f"harbor.{STAMP}.md", data: bytes = PLANTED) -> str:
    where = field / ".memtui/unsaved/projects"
    where.mkdir(parents=True, exist_ok=True)
    (where / name).write_bytes(data)
    return f".memtui/unsaved/projects/{name}"


def _records(field: Path) -> list[dict]:
    return [json.loads(line) for line in (field / ".memtui" / unsaved.RECORD_FILE).read_text().splitlines()]


def _append_record(field: Path, record: dict) -> None:
    with open(field / ".memtui" / unsaved.RECORD_FILE, "a", encoding="ascii") as out:
        out.write(json.dumps(record, sort_keys=True) + "\n")


def test_h11_planted_file_in_unsaved_is_not_the_reviewers(field: Path) -> None:
    """Forged or replayed state: a file the agent wrote where unsaved copies go is not memtui's."""
    planted = _plant(field)
    kept = unsaved.kept_copies(field, "projects/harbor.md")
    assert kept.recorded == [] and kept.foreign == [planted]


def test_h11_forged_record_lines_do_not_vouch_for_a_planted_file(field: Path) -> None:
    """Forged or replayed state: a record without the user's key, or one memtui signed for another
    copy, page or field, does not make a planted file the reviewer's."""
    genuine = unsaved.keep_copy(field, "projects/other.md", b"the reviewer's text about another page\n")
    (signed,) = _records(field)
    planted = _plant(field)
    digest = hashlib.sha256(PLANTED).hexdigest()
    forged = {**signed, "page": "projects/harbor.md", "copy": planted, "sha256": digest}
    _append_record(field, forged)  # signature of another record
    _append_record(field, {**forged, "sig": "0" * 64})  # a made-up signature
    _append_record(field, {k: v for k, v in forged.items() if k != "sig"})  # none at all
    kept = unsaved.kept_copies(field, "projects/harbor.md")
    assert kept.recorded == [] and kept.foreign == [planted]
    assert unsaved.kept_copies(field, "projects/other.md").recorded == [genuine]  # still vouched for


def test_h11_a_copy_memtui_wrote_then_changed_by_the_agent_is_no_longer_the_reviewers(field: Path) -> None:
    """Forged or replayed state: the record binds the bytes; an agent that rewrites a genuine copy
    (or replays a genuine record into another field) gets it reported as not memtui's."""
    copy = unsaved.keep_copy(field, "projects/harbor.md", MINE.encode())
    assert unsaved.kept_copies(field, "projects/harbor.md").recorded == [copy]
    (field / copy).write_bytes(PLANTED)
    kept = unsaved.kept_copies(field, "projects/harbor.md")
    assert kept.recorded == [] and kept.foreign == [copy]

    other = field.parent / "other-field"  # the same record and bytes copied into another field
    (other / ".memtui/unsaved/projects").mkdir(parents=True)
    (other / copy).write_bytes(MINE.encode())
    (other / ".memtui" / unsaved.RECORD_FILE).write_bytes((field / ".memtui" / unsaved.RECORD_FILE).read_bytes())
    assert unsaved.kept_copies(other, "projects/harbor.md").recorded == []


def test_h11_a_linked_record_file_or_copy_is_not_read_through(field: Path, outside: Path) -> None:
    """Links out of the field: the record or a copy as a symlink is neither read nor trusted."""
    unsaved.keep_copy(field, "projects/harbor.md", MINE.encode())
    record = field / ".memtui" / unsaved.RECORD_FILE
    os.replace(record, outside / "record.jsonl")
    record.symlink_to(outside / "record.jsonl")
    assert unsaved.kept_copies(field, "projects/harbor.md").recorded == []
    with pytest.raises(UnsafePathError):  # and nothing is appended through it
        unsaved.keep_copy(field, "projects/harbor.md", MINE.encode())


async def test_h11_planted_file_is_announced_as_not_written_by_memtui(field: Path) -> None:
    """Forged or replayed state: what the reviewer is told on opening the page. A planted file
    never gets the "your unsaved edits are kept in" notice; a copy memtui kept does."""
    planted = _plant(field)
    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        kept = unsaved.announce_kept(app, field, "projects/harbor.md")
        await pilot.pause()
        messages = [(n.title, n.message) for n in app._notifications]
    assert kept.foreign == [planted]
    assert not any("not saved when memtui last closed" in message for _title, message in messages)
    assert any(title == "not written by memtui" and "harbor." in message for title, message in messages)

    genuine = unsaved.keep_copy(field, "projects/harbor.md", MINE.encode())  # the control
    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        unsaved.announce_kept(app, field, "projects/harbor.md")
        await pilot.pause()
        messages = [n.message for n in app._notifications]
    assert any(f"not saved when memtui last closed are kept in {genuine}" in message for message in messages)
    assert not any(planted in message and "kept in" in message for message in messages)


async def test_h11_the_editor_does_not_announce_a_planted_file_as_the_reviewers(field: Path) -> None:
    """Forged or replayed state, through the editor: opening the page with a planted file in
    .memtui/unsaved/ must not say "edits to this page that were not saved ... are kept in" it."""
    planted = _plant(field)
    app = make_app(field)
    async with app.run_test(size=SIZE) as pilot:
        await _open_editor(app, pilot)
        await pilot.pause()
        messages = [n.message for n in app._notifications]
    assert not any(planted in message and "not saved when memtui last closed" in message for message in messages)
