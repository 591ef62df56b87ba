"""Safe writes: atomic, hash-guarded, confined to the field, keeping the bytes they replace."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from memtui.errors import (
    FrontmatterError,
    MemtuiError,
    ReadOnlyFieldError,
    StaleWriteError,
    UnsafePathError,
)
from memtui.field import frontmatter as fm_edit
from memtui.field.frontmatter import parse
from memtui.store import safe_write as sw
from memtui.store.files import sha256_bytes
from tests.helpers import write_page
from tests.helpers_field import make_field, tree_hashes


def sha(path: Path) -> str:
    return sha256_bytes(path.read_bytes())


def leftovers(root: Path) -> list[str]:
    return [p.name for p in root.rglob("*") if ".tmp" in p.name]


@pytest.fixture
def root(tmp_path) -> Path:
    return make_field(
        tmp_path / "field",
        {"notes/a.md": "---\nid: a\n---\nold body\n", "sessions/s.md": "raw\n", ".git/config": "[core]\n"},
    )


# --------------------------------------------------------------------------- write_page


def test_write_page_replaces_atomically_and_keeps_the_mode(root):
    target = root / "notes" / "a.md"
    os.chmod(target, 0o640)
    old = target.read_bytes()
    new_hash = sw.write_page(root, "notes/a.md", b"new bytes\n", expected_hash=sha256_bytes(old))
    assert target.read_bytes() == b"new bytes\n"
    assert new_hash == sha256_bytes(b"new bytes\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert leftovers(root) == []
    assert sw.read_blob(root, sha256_bytes(old)) == old  # the previous bytes are kept


def test_a_new_page_gets_the_umask_mode_and_its_folders(root):
    mask = os.umask(0o027)
    try:
        sw.write_page(root, "knowledge/new/page.md", b"# New\n", expected_hash=sw.MUST_NOT_EXIST)
    finally:
        os.umask(mask)
    target = root / "knowledge" / "new" / "page.md"
    assert target.read_bytes() == b"# New\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert not (root / ".memtui" / "blobs").exists()  # nothing was replaced


def test_a_stale_hash_refuses_and_leaves_the_file_untouched(root):
    target = root / "notes" / "a.md"
    loaded = sha(target)
    write_page(root, "notes/a.md", "someone else's edit\n")
    with pytest.raises(StaleWriteError) as info:
        sw.write_page(root, "notes/a.md", b"mine\n", expected_hash=loaded)
    assert target.read_bytes() == b"someone else's edit\n"
    assert info.value.current_hash == sha(target)
    assert "changed on disk" in info.value.message and info.value.hint
    assert not (root / ".memtui").exists()


def test_a_deleted_file_is_stale_too(root):
    loaded = sha(root / "notes" / "a.md")
    (root / "notes" / "a.md").unlink()
    with pytest.raises(StaleWriteError, match="deleted"):
        sw.write_page(root, "notes/a.md", b"mine\n", expected_hash=loaded)
    assert not (root / "notes" / "a.md").exists()


def test_must_not_exist_never_overwrites(root):
    with pytest.raises(StaleWriteError, match="already exists"):
        sw.write_page(root, "notes/a.md", b"x", expected_hash=sw.MUST_NOT_EXIST)
    assert (root / "notes" / "a.md").read_bytes() == b"---\nid: a\n---\nold body\n"


def test_expected_none_overwrites_on_purpose_but_still_keeps_a_blob(root):
    old = (root / "notes" / "a.md").read_bytes()
    sw.write_page(root, "notes/a.md", b"keep mine\n", expected_hash=None)
    assert (root / "notes" / "a.md").read_bytes() == b"keep mine\n"
    assert sw.read_blob(root, sha256_bytes(old)) == old


def test_blobs_are_stored_once_and_read_only(root):
    digest = sw.keep_blob(root, b"same bytes")
    assert sw.keep_blob(root, b"same bytes") == digest
    blob = root / ".memtui" / "blobs" / digest[:2] / digest
    assert blob.read_bytes() == b"same bytes"
    assert stat.S_IMODE(blob.stat().st_mode) == 0o444
    with pytest.raises(MemtuiError, match="no saved copy"):
        sw.read_blob(root, "0" * 64)


def test_a_read_only_field_refuses_every_write(root):
    before = tree_hashes(root)
    with pytest.raises(ReadOnlyFieldError):
        sw.write_page(root, "notes/a.md", b"x", expected_hash=None, readonly=True)
    with pytest.raises(ReadOnlyFieldError):
        fm_edit.set_frontmatter_key(root, "notes/a.md", "reviewed", True, expected_hash=None, readonly=True)
    with pytest.raises(ReadOnlyFieldError):
        sw.move_page(root, "notes/a.md", "notes/b.md", expected_hash=None, readonly=True)
    assert tree_hashes(root) == before


# --------------------------------------------------------------------------- confinement


@pytest.mark.parametrize(
    "relpath, message",
    [
        ("", "empty"),
        ("/etc/passwd.md", "absolute"),
        ("C:/x.md", "absolute"),
        ("\\\\server\\share\\x.md", "absolute"),
        ("../outside.md", "leaves the field"),
        ("notes/../../outside.md", "leaves the field"),
        ("notes\\..\\..\\outside.md", "leaves the field"),
        ("sessions/s.md", "sessions/"),
        ("./sessions/new.md", "sessions/"),
        (".git/x.md", ".git/"),
        ("notes/.git/x.md", ".git"),
        (".memtui/x.md", ".memtui/"),
        (".dream/proposals/x.md", ".dream/"),
        ("notes/a.txt", "not a Markdown page"),
        ("notes/a", "not a Markdown page"),
        ("notes/x\x00.md", "invalid"),
        ("./.", "empty path"),
    ],
)
def test_unsafe_paths_are_refused(root, relpath, message):
    before = tree_hashes(root)
    with pytest.raises(UnsafePathError) as info:
        sw.write_page(root, relpath, b"x", expected_hash=None)
    assert message in info.value.message
    assert info.value.hint
    assert tree_hashes(root) == before
    assert not (root.parent / "outside.md").exists()


def test_a_symlinked_folder_leaving_the_field_is_refused(root, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, root / "linked")
    with pytest.raises(UnsafePathError, match="symlinked folder"):
        sw.write_page(root, "linked/x.md", b"x", expected_hash=None)
    with pytest.raises(UnsafePathError, match="symlinked folder"):
        sw.write_page(root, "linked/deeper/x.md", b"x", expected_hash=None)
    assert list(outside.iterdir()) == []


def test_a_symlinked_folder_into_sessions_is_refused(root):
    os.symlink(root / "sessions", root / "evidence")
    with pytest.raises(UnsafePathError, match="sessions"):
        sw.write_page(root, "evidence/s.md", b"x", expected_hash=None)
    assert (root / "sessions" / "s.md").read_bytes() == b"raw\n"


def test_a_symlinked_page_is_never_written_through(root, tmp_path):
    target = tmp_path / "victim.md"
    target.write_bytes(b"victim\n")
    os.symlink(target, root / "notes" / "link.md")
    with pytest.raises(UnsafePathError, match="symlink"):
        sw.write_page(root, "notes/link.md", b"x", expected_hash=None)
    assert target.read_bytes() == b"victim\n"


def test_a_folder_named_like_a_page_is_refused(root):
    (root / "notes" / "dir.md").mkdir()
    with pytest.raises(UnsafePathError, match="regular file"):
        sw.write_page(root, "notes/dir.md", b"x", expected_hash=None)


def test_os_errors_become_clear_errors_not_tracebacks(root):
    # notes/a.md is a file, so nothing can be written "inside" it.
    before = tree_hashes(root)
    with pytest.raises(MemtuiError, match="cannot read notes/a.md/x.md") as info:
        sw.write_page(root, "notes/a.md/x.md", b"x", expected_hash=None)
    assert info.value.hint
    with pytest.raises(MemtuiError, match="cannot read notes/a.md/sub/x.md"):
        sw.write_page(root, "notes/a.md/sub/x.md", b"x", expected_hash=sw.MUST_NOT_EXIST)
    with pytest.raises(MemtuiError, match="cannot move"):
        sw.move_page(root, "notes/a.md", "notes/a.md/inside.md", expected_hash=None)
    assert tree_hashes(root) == before


def test_a_field_reached_through_a_symlink_is_written_inside_it(tmp_path, root):
    os.symlink(root, tmp_path / "alias")
    sw.write_page(tmp_path / "alias", "notes/z.md", b"z\n", expected_hash=sw.MUST_NOT_EXIST)
    assert (root / "notes" / "z.md").read_bytes() == b"z\n"


def test_check_relpath_normalises(root):
    assert sw.check_relpath("./notes//a.md") == "notes/a.md"
    assert sw.check_relpath("notes\\a.md") == "notes\\a.md"  # on Linux a backslash is part of the name
    assert sw.check_relpath(".memtui/archive/x.md", allow_state=True) == ".memtui/archive/x.md"
    assert sw.check_relpath("notes/data.json", pages_only=False) == "notes/data.json"


# --------------------------------------------------------------------------- set_frontmatter_key

EDIT_CASES = {
    "crlf": (
        b"---\r\nid: a\r\nreviewed: false\r\ntitle: T\r\n---\r\nBody\r\n",
        b"reviewed: false\r\n",
        b"reviewed: true\r\n",
    ),
    "bom": (
        b"\xef\xbb\xbf---\nid: a\nreviewed: false\n---\nBody\n",
        b"reviewed: false\n",
        b"reviewed: true\n",
    ),
    "comments": (
        b"---\n# who wrote this\nid: a  # the id\nreviewed: no   # pending\n# trailing comment\n---\nBody\n",
        b"reviewed: no   # pending\n",
        b"reviewed: true   # pending\n",
    ),
    "quoted values": (
        b"---\ntitle: \"A: quoted\"\nsummary: 'single ''quoted'''\nreviewed: 'false'\n---\n",
        b"reviewed: 'false'\n",
        b"reviewed: true\n",
    ),
    "flow lists": (
        b"---\nsources: [a.md,   b.md]\nsupersedes: [ mem_1 ]\nreviewed: false\n---\n",
        b"reviewed: false\n",
        b"reviewed: true\n",
    ),
    "unknown keys": (
        b"---\nx-agent-meta: {run: 7, tool: [a, b]}\nreviewed: false\nzz_unknown: |\n  kept\n---\n",
        b"reviewed: false\n",
        b"reviewed: true\n",
    ),
    "block lists": (
        b"---\nsources:\n  - a.md\n  - b.md\nreviewed: false\ntags:\n- x\n- y\n---\n",
        b"reviewed: false\n",
        b"reviewed: true\n",
    ),
    "invalid utf-8 in the body": (
        b"---\nreviewed: false\n---\nbad \xff bytes kept\n",
        b"reviewed: false\n",
        b"reviewed: true\n",
    ),
    "missing key": (
        b"---\nid: a\ntitle: T\n---\nBody\n",
        b"title: T\n",
        b"title: T\nreviewed: true\n",
    ),
    "missing key, crlf": (
        b"---\r\nid: a\r\n---\r\n",
        b"id: a\r\n",
        b"id: a\r\nreviewed: true\r\n",
    ),
    "no frontmatter": (
        b"# Just a body\n\nText.\n",
        b"# Just a body\n",
        b"---\nreviewed: true\n---\n# Just a body\n",
    ),
    "no frontmatter, bom and crlf": (
        b"\xef\xbb\xbf# Body\r\n",
        b"\xef\xbb\xbf# Body\r\n",
        b"\xef\xbb\xbf---\r\nreviewed: true\r\n---\r\n# Body\r\n",
    ),
}


@pytest.mark.parametrize("name", sorted(EDIT_CASES))
def test_set_frontmatter_key_changes_only_that_keys_line(root, name):
    original, old_line, new_line = EDIT_CASES[name]
    assert original.count(old_line) == 1
    write_page(root, "notes/p.md", original)
    loaded = sha256_bytes(original)
    new_hash = fm_edit.set_frontmatter_key(root, "notes/p.md", "reviewed", True, expected_hash=loaded)
    after = (root / "notes" / "p.md").read_bytes()
    assert after == original.replace(old_line, new_line)
    assert new_hash == sha256_bytes(after)
    assert sw.read_blob(root, loaded) == original
    assert parse(after.decode("utf-8", "surrogateescape")).data["reviewed"] is True


def test_set_frontmatter_keys_sets_several(root):
    original = b"---\nid: a\nreviewed: false\n---\nBody\n"
    write_page(root, "notes/p.md", original)
    fm_edit.set_frontmatter_keys(
        root, "notes/p.md", {"reviewed": True, "reviewed_by": "maya"}, expected_hash=sha256_bytes(original)
    )
    assert (root / "notes" / "p.md").read_bytes() == b"---\nid: a\nreviewed: true\nreviewed_by: maya\n---\nBody\n"


@pytest.mark.parametrize(
    "original",
    [
        b"---\nsummary: Offsite in Half Moon Bay: Dec 9-10\n---\nBody\n",
        b"---\nid: a\nnever closed\n",
        b"---\na: &x 1\nb: *x\n---\n",
        b"---\ntitle: caf\xe9\n---\n",
    ],
)
def test_set_frontmatter_key_refuses_unparseable_frontmatter(root, original):
    write_page(root, "notes/p.md", original)
    with pytest.raises(FrontmatterError) as info:
        fm_edit.set_frontmatter_key(root, "notes/p.md", "reviewed", True, expected_hash=sha256_bytes(original))
    assert info.value.hint
    assert (root / "notes" / "p.md").read_bytes() == original
    assert not (root / ".memtui").exists()


def test_set_frontmatter_key_refuses_a_stale_or_missing_page(root):
    original = (root / "notes" / "a.md").read_bytes()
    with pytest.raises(StaleWriteError):
        fm_edit.set_frontmatter_key(root, "notes/a.md", "reviewed", True, expected_hash="0" * 64)
    assert (root / "notes" / "a.md").read_bytes() == original
    with pytest.raises(StaleWriteError, match="no longer exists"):
        fm_edit.set_frontmatter_key(root, "notes/gone.md", "reviewed", True, expected_hash=None)


def test_set_frontmatter_key_never_touches_sessions(root):
    with pytest.raises(UnsafePathError):
        fm_edit.set_frontmatter_key(root, "sessions/s.md", "reviewed", True, expected_hash=None)
    assert (root / "sessions" / "s.md").read_bytes() == b"raw\n"


# --------------------------------------------------------------------------- move_page


def test_move_page_moves_and_never_overwrites(root):
    write_page(root, "notes/b.md", "B\n")
    a_bytes = (root / "notes" / "a.md").read_bytes()
    with pytest.raises(UnsafePathError, match="already exists"):
        sw.move_page(root, "notes/a.md", "notes/b.md", expected_hash=None)
    assert (root / "notes" / "a.md").read_bytes() == a_bytes
    assert (root / "notes" / "b.md").read_bytes() == b"B\n"
    sw.move_page(root, "notes/a.md", "knowledge/a.md", expected_hash=sha256_bytes(a_bytes))
    assert not (root / "notes" / "a.md").exists()
    assert (root / "knowledge" / "a.md").read_bytes() == a_bytes


def test_move_page_into_the_archive_needs_permission(root):
    with pytest.raises(UnsafePathError):
        sw.move_page(root, "notes/a.md", ".memtui/archive/notes/a.md", expected_hash=None)
    sw.move_page(root, "notes/a.md", ".memtui/archive/notes/a.md", expected_hash=None, allow_into_state=True)
    assert (root / ".memtui" / "archive" / "notes" / "a.md").is_file()


def test_move_page_refuses_stale_missing_and_protected(root):
    with pytest.raises(StaleWriteError):
        sw.move_page(root, "notes/a.md", "notes/c.md", expected_hash="0" * 64)
    with pytest.raises(StaleWriteError, match="no longer exists"):
        sw.move_page(root, "notes/zzz.md", "notes/c.md", expected_hash=None)
    with pytest.raises(UnsafePathError):
        sw.move_page(root, "sessions/s.md", "notes/s.md", expected_hash=None)
    with pytest.raises(UnsafePathError):
        sw.move_page(root, "notes/a.md", "sessions/a.md", expected_hash=None)
    with pytest.raises(UnsafePathError):
        sw.move_page(root, "notes/a.md", "../a.md", expected_hash=None)
    assert (root / "notes" / "a.md").is_file() and not (root / "notes" / "c.md").exists()


# --------------------------------------------------------------------------- memtui's own files


def test_write_internal_file_and_append_line(tmp_path):
    target = tmp_path / "state" / "settings.json"
    sw.write_internal_file(target, b"{}")
    sw.write_internal_file(target, b'{"a": 1}')
    assert target.read_bytes() == b'{"a": 1}'
    log = tmp_path / "state" / "ledger.jsonl"
    sw.append_line(log, '{"n": 1}')
    sw.append_line(log, '{"n": 2}\n')
    assert log.read_text() == '{"n": 1}\n{"n": 2}\n'
    assert leftovers(tmp_path) == []
