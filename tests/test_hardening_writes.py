"""Issue 12, writes in the wrong place and lost data: items 4, 5, 6, 8 and 19.

4. ``.memtui/`` (or its ledger, journal, blobs) as a symlink; a proposal writing
   into ``.memtui/`` or another proposal's ``files/`` through a symlinked folder.
5. An agent write between the hash check and the replacement.
6. Quarantine approval interrupted between the move and the review-key edit.
8. A newline in a quarantined page's file name.
19. A page named ``a\\b.md``.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.errors import MemtuiError, StaleWriteError, UnsafePathError
from memtui.field import trust
from memtui.field.field import Field
from memtui.field.page import parse_bytes
from memtui.review import apply_journal, ledger, proposals, quarantine
from memtui.store import safe_write
from tests.helpers import write_page
from tests.helpers_field import run_cli, tree_hashes
from tests.helpers_review import approve_proposal, opened, sha, staging_proposal

EDI = "quarantine/edi-214-status-codes.md"
EDI_TO = "knowledge/concepts/edi-214-status-codes.md"
DEDUPE = "2026-11-27-dedupe-01"


pytestmark = pytest.mark.usefixtures("reviewer_maya")


def blobs(root: Path) -> set[bytes]:
    folder = root / ".memtui" / "blobs"
    return {p.read_bytes() for p in folder.rglob("*") if p.is_file()} if folder.exists() else set()


def agent_writes(path: Path, data: bytes) -> None:
    """Another process writes ``path`` the way an agent does (temp file, rename over it)."""
    code = (
        "import os, sys\n"
        "path, data = sys.argv[1], sys.argv[2].encode('utf-8', 'surrogateescape')\n"
        "tmp = path + '.agent-tmp'\n"
        "open(tmp, 'wb').write(data)\n"
        "os.replace(tmp, path)\n"
    )
    subprocess.run([sys.executable, "-c", code, os.fspath(path), data.decode("utf-8", "surrogateescape")], check=True)


@pytest.fixture
def in_the_window(monkeypatch):
    """Run a real concurrent writer between memtui's hash check and its replacement of the page."""

    def arm(writer):
        def hook(target: Path) -> None:
            monkeypatch.setattr(safe_write, "_before_swap", None)  # once
            writer(target)

        monkeypatch.setattr(safe_write, "_before_swap", hook)

    return arm


@pytest.fixture(params=["exchange", "fallback"])
def swap_mode(request, monkeypatch):
    """Both ways of closing the window: renameat2(RENAME_EXCHANGE), and the rename-aside fallback."""
    if request.param == "fallback":
        monkeypatch.setattr(safe_write, "_renameat2_function", None)
    return request.param


# --------------------------------------------------------------------------- item 4


ACTIONS = {
    "quarantine approve": lambda root: quarantine.approve_page(root, EDI, None),
    "quarantine reject": lambda root: quarantine.reject_page(root, EDI, None, reason="spam"),
    "proposal approve": lambda root: approve_proposal(root, DEDUPE),
    "proposal reject": lambda root: proposals.reject(root, DEDUPE, reason="no"),
    "editor save": lambda root: safe_write.write_page(
        root, "notes/q3-digest.md", b"edited\n", expected_hash=sha((root / "notes/q3-digest.md").read_bytes())
    ),
    "ledger append": lambda root: ledger.append(
        root, ledger.LedgerEntry("2026-12-01T00:00:00Z", "x", ledger.PROPOSAL_REJECT, DEDUPE)
    ),
}
# Which actions need which of memtui's records (and so must refuse a symlink there).
NEEDS = {
    ".memtui": set(ACTIONS),
    ".memtui/blobs": {"quarantine approve", "quarantine reject", "proposal approve", "editor save"},
    ".memtui/journal": {"quarantine approve", "quarantine reject", "proposal approve"},
    ".memtui/ledger.jsonl": set(ACTIONS) - {"editor save"},
}


@pytest.mark.parametrize("action", sorted(ACTIONS))
@pytest.mark.parametrize("link", sorted(NEEDS))
def test_a_symlink_in_memtuis_records_is_never_written_through(
    sample_field: Path, tmp_path: Path, link: str, action: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "ledger.jsonl").write_text("precious\n")
    if link != ".memtui":
        (sample_field / ".memtui").mkdir(exist_ok=True)
    (sample_field / link).symlink_to(outside / "ledger.jsonl" if link.endswith(".jsonl") else outside)
    before_outside = tree_hashes(outside)
    before_pages = {k: v for k, v in tree_hashes(sample_field).items() if not k.startswith(".memtui")}
    if action in NEEDS[link]:
        with pytest.raises(UnsafePathError, match="symlink"):
            ACTIONS[action](sample_field)
        after_pages = {k: v for k, v in tree_hashes(sample_field).items() if not k.startswith(".memtui")}
        assert after_pages == before_pages  # refused before any page changed
    else:
        ACTIONS[action](sample_field)
    assert tree_hashes(outside) == before_outside


def test_the_cli_says_what_is_wrong_with_a_symlinked_state_folder(sample_field: Path, tmp_path: Path, capsys) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (sample_field / ".memtui").symlink_to(outside)
    code, _, err = run_cli(["quarantine", "approve", sample_field, EDI, "--yes"], capsys)
    assert code == 1 and "symlink" in err and "Traceback" not in err
    assert list(outside.iterdir()) == []


def test_a_planted_symlink_at_a_blob_name_does_not_stop_the_previous_bytes_being_kept(
    sample_field: Path, tmp_path: Path
) -> None:
    page = sample_field / "notes" / "q3-digest.md"
    old = page.read_bytes()
    digest = sha(old)
    folder = sample_field / ".memtui" / "blobs" / digest[:2]
    folder.mkdir(parents=True)
    (folder / digest).symlink_to(tmp_path / "nowhere")
    safe_write.write_page(sample_field, "notes/q3-digest.md", old + b"x\n", expected_hash=digest)
    assert safe_write.read_blob(sample_field, digest) == old
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("into", [".memtui/archive", ".dream/proposals/2026-11-19-consolidate-01/files/notes"])
def test_a_proposal_cannot_write_through_a_symlinked_folder_into_memtuis_or_another_proposals_files(
    sample_field: Path, into: str
) -> None:
    (sample_field / into).mkdir(parents=True, exist_ok=True)
    (sample_field / "notes" / "via").symlink_to(sample_field / into, target_is_directory=True)
    staging_proposal(sample_field, "2026-12-01-dedupe-09", files={"notes/via/planted.md": b"planted [stated]\n"})
    proposal = proposals.get_proposal(sample_field, "2026-12-01-dedupe-09")
    assert not proposal.valid
    assert "resolves into" in " ".join(proposal.problems)
    with pytest.raises(MemtuiError):
        approve_proposal(sample_field, "2026-12-01-dedupe-09")
    assert not (sample_field / into / "planted.md").exists()


# --------------------------------------------------------------------------- item 5


def test_a_write_in_the_window_is_neither_overwritten_nor_lost(tmp_path: Path, in_the_window, swap_mode) -> None:
    root = tmp_path / "field"
    write_page(root, "notes/a.md", "mine to start with\n")
    loaded = (root / "notes/a.md").read_bytes()
    theirs = b"the agent's newer fact [observed]\n"
    in_the_window(lambda target: agent_writes(target, theirs))
    with pytest.raises(StaleWriteError) as info:
        safe_write.write_page(root, "notes/a.md", b"the human's edit\n", expected_hash=sha(loaded))
    assert (root / "notes/a.md").read_bytes() == theirs
    assert theirs in blobs(root) and loaded in blobs(root)
    assert info.value.current_hash == sha(theirs)
    assert [p.name for p in (root / "notes").iterdir()] == ["a.md"]  # no temp file left


def test_a_new_page_is_never_placed_over_one_that_appeared_in_the_window(
    tmp_path: Path, in_the_window, swap_mode
) -> None:
    root = tmp_path / "field"
    (root / "notes").mkdir(parents=True)
    theirs = b"created by the agent first\n"
    in_the_window(lambda target: agent_writes(target, theirs))
    with pytest.raises(StaleWriteError, match="already exists"):
        safe_write.write_page(root, "notes/new.md", b"mine\n", expected_hash=safe_write.MUST_NOT_EXIST)
    assert (root / "notes/new.md").read_bytes() == theirs


def test_keep_mine_still_keeps_what_it_replaced(tmp_path: Path, in_the_window, swap_mode) -> None:
    root = tmp_path / "field"
    write_page(root, "notes/a.md", "old\n")
    theirs = b"written in the window\n"
    in_the_window(lambda target: agent_writes(target, theirs))
    safe_write.write_page(root, "notes/a.md", b"mine on purpose\n", expected_hash=None)
    assert (root / "notes/a.md").read_bytes() == b"mine on purpose\n"
    assert theirs in blobs(root)


def test_proposal_approval_with_a_write_in_the_window_changes_nothing(
    sample_field: Path, in_the_window, swap_mode
) -> None:
    proposal = proposals.get_proposal(sample_field, DEDUPE)
    touched = [c.path for c in proposal.changes if c.proposed is not None]
    victim = sample_field / touched[-1]
    theirs = victim.read_bytes() + b"- added by the agent just now [observed]\n"
    before = tree_hashes(sample_field)

    def writer(target: Path) -> None:
        agent_writes(victim, theirs)

    in_the_window(writer)
    with pytest.raises(StaleWriteError):
        approve_proposal(sample_field, DEDUPE)
    assert victim.read_bytes() == theirs
    assert theirs in blobs(sample_field)
    after = tree_hashes(sample_field)
    changed = {k for k in before if k in after and before[k] != after[k] and not k.startswith(".memtui/")}
    assert changed == {touched[-1]}  # only the agent's own write
    assert ledger.read(sample_field).entries == []
    assert apply_journal.pending_journals(sample_field) == []


async def test_editor_save_with_a_write_in_the_window_keeps_the_agents_version(
    tmp_path: Path, in_the_window, swap_mode
) -> None:
    from tests.helpers_tui import make_app, wait_ready

    root = tmp_path / "field"
    write_page(root, "notes/a.md", "---\ntitle: A\n---\n- first fact [stated]\n")
    theirs = b"---\ntitle: A\n---\n- first fact [stated]\n- the agent's fact [observed]\n"
    app = make_app(root)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(app, pilot)
        app.open_editor("notes/a.md")
        await pilot.pause()
        app.screen.area.insert("- the human's fact [stated]\n", (4, 0))
        in_the_window(lambda target: agent_writes(target, theirs))
        await pilot.press("ctrl+s")
        for _ in range(50):
            await pilot.pause(0.02)
        await app.workers.wait_for_complete()
        messages = [n.message for n in app._notifications]
        assert app.screen.dirty  # the human's edit is still in the editor
    assert (root / "notes/a.md").read_bytes() == theirs
    assert theirs in blobs(root)
    assert any("while it was being saved" in m for m in messages)


# --------------------------------------------------------------------------- item 6


def crash_quarantine_approve(root: Path, point: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, MEMTUI_TEST_CRASH=point, MEMTUI_REVIEWER="maya")
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from memtui.cli import main; sys.exit(main())",
            "quarantine",
            "approve",
            os.fspath(root),
            EDI,
            "--yes",
            *args,
        ],
        env=env,
        capture_output=True,
        timeout=120,
    )


def assert_still_quarantined(root: Path, original: bytes) -> None:
    assert (root / EDI).read_bytes() == original
    assert not (root / EDI_TO).exists()
    assert trust.trust_state(parse_bytes(EDI, original).meta, EDI) == trust.QUARANTINED
    assert [e.action for e in ledger.read(root).entries] == []


@pytest.mark.parametrize("point, extra", [("after-move-1", ()), ("after-page-1", ("--add-to-memory",))])
def test_a_crash_during_quarantine_approval_is_rolled_back(sample_field: Path, point: str, extra, capsys) -> None:
    original = (sample_field / EDI).read_bytes()
    memory = (sample_field / "MEMORY.md").read_bytes()
    result = crash_quarantine_approve(sample_field, point, *extra)
    assert result.returncode == apply_journal.CRASH_EXIT_CODE, result.stderr.decode()
    assert not (sample_field / EDI).exists()  # the crash left the page half-approved
    code, out, err = run_cli(["quarantine", "list", sample_field], capsys)
    assert code == 0 and "rolled back" in err
    assert_still_quarantined(sample_field, original)
    assert (sample_field / "MEMORY.md").read_bytes() == memory
    assert [i.path for i in quarantine.quarantine_queue(Field.load(sample_field, use_cache=False)).quarantined].count(
        EDI
    ) == 1


def test_a_full_disk_during_quarantine_approval_changes_nothing(sample_field: Path, in_the_window) -> None:
    original = (sample_field / EDI).read_bytes()

    def disk_full(target: Path) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    in_the_window(disk_full)
    with pytest.raises(MemtuiError) as info:
        quarantine.approve_page(sample_field, EDI, None)
    assert "No space left" in info.value.message and "not changed" in info.value.hint
    assert_still_quarantined(sample_field, original)


def test_an_agent_edit_during_quarantine_approval_goes_back_to_quarantine(
    sample_field: Path, in_the_window, swap_mode
) -> None:
    original = (sample_field / EDI).read_bytes()
    theirs = original + b"- one more line from the agent [observed]\n"
    in_the_window(lambda target: agent_writes(target, theirs))  # the page at its new place
    with pytest.raises(StaleWriteError):
        quarantine.approve_page(sample_field, EDI, None)
    assert (sample_field / EDI).read_bytes() == theirs  # back in quarantine/, with the agent's edit
    assert not (sample_field / EDI_TO).exists()
    assert trust.trust_state(parse_bytes(EDI, theirs).meta, EDI) == trust.QUARANTINED
    assert ledger.read(sample_field).entries == []


def test_quarantine_approval_is_still_one_ledger_line_per_page(sample_field: Path) -> None:
    decision = quarantine.approve_page(sample_field, EDI, None, add_to_memory=True, field=opened(sample_field))
    (entry,) = ledger.read(sample_field).entries
    assert entry == decision.entry
    assert entry.pages[0] == {"path": EDI, "before": decision.before, "after": decision.after, "moved_to": EDI_TO}
    assert entry.pages[1]["path"] == "MEMORY.md"
    assert apply_journal.pending_journals(sample_field) == []


# --------------------------------------------------------------------------- item 8


def test_a_newline_in_a_file_name_never_reaches_memory_md(sample_field: Path, capsys) -> None:
    name = "quarantine/innocent.md\n- quarantine/vendor-pricing-update.md"
    write_page(sample_field, name, "---\ntitle: Innocent\ntaint: external\nreviewed: false\n---\n- a fact [observed]\n")
    memory = (sample_field / "MEMORY.md").read_bytes()
    code, _, err = run_cli(["quarantine", "approve", sample_field, name, "--add-to-memory", "--yes"], capsys)
    assert code == 1 and "control character" in err
    assert (sample_field / "MEMORY.md").read_bytes() == memory
    assert ledger.read(sample_field).entries == []
    # It can still be rejected: archived under a name that shows the newline.
    (decision,) = quarantine.reject_pages(sample_field, [(name, None)], reason="hostile name")
    assert (
        decision.moved_to
        == ".memtui/archive/rejected/quarantine/innocent.md\u2424- quarantine/vendor-pricing-update.md"
    )
    assert (sample_field / decision.moved_to).is_file() and not (sample_field / name).exists()
    assert ledger.read(sample_field).entries[0].target == name


def test_a_pointer_that_would_route_to_an_untrusted_page_is_refused(sample_field: Path) -> None:
    # "- notes/my page.md" is read as a pointer to "page.md": an agent's tainted page at the top.
    write_page(sample_field, "page.md", "---\ntitle: Payload\ntaint: external\n---\n- payload [observed]\n")
    write_page(
        sample_field,
        "quarantine/my page.md",
        "---\ntitle: Mine\ntaint: external\nmove_to: notes\n---\n- a fact [observed]\n",
    )
    memory = (sample_field / "MEMORY.md").read_bytes()
    with pytest.raises(MemtuiError, match="untrusted page") as info:
        quarantine.approve_page(
            sample_field, "quarantine/my page.md", None, add_to_memory=True, field=opened(sample_field)
        )
    assert "nothing was changed" in info.value.hint
    assert (sample_field / "MEMORY.md").read_bytes() == memory
    assert (sample_field / "quarantine/my page.md").exists()
    assert ledger.read(sample_field).entries == []


# --------------------------------------------------------------------------- item 19


def test_a_backslash_is_part_of_a_file_name() -> None:
    assert safe_write.check_relpath("notes/a\\b.md") == "notes/a\\b.md"
    for hostile in ("notes\\..\\..\\x.md", "\\\\server\\share\\x.md", "sessions\\x.md", "notes\\.git\\x.md"):
        with pytest.raises(UnsafePathError):
            safe_write.check_relpath(hostile)


async def test_a_page_named_with_a_backslash_is_saved_and_recreated_under_its_own_name(tmp_path: Path) -> None:
    from tests.helpers_tui import SIZE, make_app, wait_ready
    from tests.test_tui_editor import choose

    root = tmp_path / "field"
    name = "notes/a\\b.md"
    write_page(root, name, "---\ntitle: Backslash\n---\n- first [stated]\n")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        app.open_editor(name)
        await pilot.pause()
        editor = app.screen
        editor.area.insert("- second [stated]\n", (4, 0))
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.pause()
        assert not editor.dirty
        assert b"- second [stated]" in (root / name).read_bytes()
        editor.area.insert("- third [stated]\n", (5, 0))
        (root / name).unlink()
        await pilot.press("ctrl+s")
        await choose(pilot, "recreate")
        await app.workers.wait_for_complete()
    assert b"- third [stated]" in (root / name).read_bytes()
    assert not (root / "notes" / "a").exists()
    assert sorted(p.name for p in (root / "notes").iterdir()) == ["a\\b.md"]


def test_no_zip_member_or_exported_file_gets_a_name_with_a_control_character(
    sample_field: Path, tmp_path: Path, capsys
) -> None:
    import zipfile

    from memtui.errors import ArchiveError
    from memtui.store import archive

    archive_path = tmp_path / "hostile.memoryfield.zip"
    with zipfile.ZipFile(archive_path, "w") as out:
        out.writestr("notes/a.md\n- quarantine/x.md", "x [stated]\n")
    with pytest.raises(ArchiveError, match="control character"):
        archive.extract_for_reading(archive_path)
    code, _, err = run_cli(["check", archive_path], capsys)
    assert code != 0 and "control character" in err and "Traceback" not in err
    write_page(sample_field, "notes/bad\nname.md", "x [stated]\n")
    with pytest.raises(ArchiveError, match="control character"):
        archive.export_field(sample_field, tmp_path / "out.memoryfield.zip")
    assert not (tmp_path / "out.memoryfield.zip").exists()
