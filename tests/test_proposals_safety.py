"""Proposals that try to write where memtui never writes: each is invalid, approving changes nothing.

Covered for both carriers: ``../``, absolute paths, a symlinked folder leaving the
field, ``sessions/``, ``.git/`` (``.git/hooks`` in a branch), non-Markdown files,
symlinks and submodules in a branch, symlinks inside a staging tree.
"""

from __future__ import annotations

import os
import shutil

import pytest

from memtui.errors import MemtuiError
from memtui.review import proposals
from tests.helpers_review import (
    approve_proposal,
    branch_proposal,
    git,
    init_repo,
    proposal_queue,
    sha,
    snapshot,
    staging_proposal,
    tree_with_extra_entry,
    use_git_identity,
)

PAGE = b"---\ntitle: planted\n---\nplanted [stated]\n"


pytestmark = pytest.mark.usefixtures("reviewer_maya")


@pytest.fixture
def field(tmp_path):
    root = tmp_path / "field"
    (root / "notes").mkdir(parents=True)
    (root / "notes/a.md").write_bytes(b"---\ntitle: a\n---\na [stated]\n")
    (root / "sessions").mkdir()
    (root / "sessions/2026-01-01.md").write_bytes(b"raw log\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.md").write_bytes(b"outside the field\n")
    return root


def assert_refused(root, proposal_id, fragment):
    entry = proposal_queue(root).get(proposal_id)
    assert entry is not None and entry.state == "invalid"
    assert any(fragment in problem for problem in entry.validation.errors), entry.validation.errors
    before = snapshot(root.parent)
    with pytest.raises(MemtuiError):
        approve_proposal(root, proposal_id, accept_stale=True)
    assert snapshot(root.parent) == before


# --------------------------------------------------------------------------- staging trees


@pytest.mark.parametrize(
    ("delete", "fragment"),
    [
        ("../outside/victim.md", "leaves the field"),
        ("notes/../../outside/victim.md", "leaves the field"),
        ("/etc/passwd.md", "absolute path"),
        ("sessions/2026-01-01.md", "sessions"),
        (".git/config.md", ".git"),
        ("notes/a.txt", "not a Markdown page"),
    ],
)
def test_staging_delete_outside_the_allowed_pages(field, delete, fragment):
    staging_proposal(field, "p-del", delete=[delete], base={delete: sha(b"x")})
    assert_refused(field, "p-del", fragment)


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("sessions/2026-01-01.md", "sessions"),
        ("sessions/new.md", "sessions"),
        (".git/hooks/pre-commit", ".git"),
        (".memtui/ledger.md", ".memtui"),
        ("notes/run.sh", "not a Markdown page"),
    ],
)
def test_staging_files_outside_the_allowed_pages(field, path, fragment):
    staging_proposal(field, "p-file", files={path: PAGE})
    assert_refused(field, "p-file", fragment)


def test_staging_base_with_an_absolute_path(field):
    staging_proposal(field, "p-abs", files={"notes/a.md": PAGE}, base={"notes/a.md": sha(b"x")}, delete=["/tmp/x.md"])
    proposal = proposals.get_proposal(field, "p-abs")
    assert not proposal.valid


def test_symlinked_folder_leaving_the_field(field):
    os.symlink(field.parent / "outside", field / "linked")
    staging_proposal(
        field, "p-link", files={"linked/victim.md": PAGE}, base={"linked/victim.md": sha(b"outside the field\n")}
    )
    assert_refused(field, "p-link", "symlinked folder")
    assert (field.parent / "outside/victim.md").read_bytes() == b"outside the field\n"


def test_symlink_inside_the_staging_tree_is_not_followed(field):
    base = {"notes/a.md": sha((field / "notes/a.md").read_bytes())}
    folder = staging_proposal(field, "p-sym", files={"notes/a.md": PAGE}, base=base)
    os.symlink(field.parent / "outside/victim.md", folder / "files/notes/b.md")
    assert_refused(field, "p-sym", "symlink")
    os.unlink(folder / "files/notes/b.md")
    os.symlink(field.parent / "outside", folder / "files/evil")
    assert_refused(field, "p-sym", "symlink")


def test_symlinked_proposal_folder_and_manifest(field, tmp_path):
    elsewhere = staging_proposal(tmp_path / "elsewhere", "p-away", files={"notes/a.md": PAGE})
    (field / ".dream/proposals").mkdir(parents=True)
    os.symlink(elsewhere, field / ".dream/proposals/p-away")
    loaded = proposals.load_proposals(field)
    assert loaded.proposals == [] and "symlink" in loaded.problems[0]
    folder = staging_proposal(field, "p-man", files={"notes/a.md": PAGE})
    manifest = folder / "proposal.yaml"
    shutil.move(manifest, tmp_path / "real.yaml")
    os.symlink(tmp_path / "real.yaml", manifest)
    assert_refused(field, "p-man", "not a regular file")


def test_the_page_itself_a_symlink(field):
    os.symlink(field.parent / "outside/victim.md", field / "notes/victim.md")
    staging_proposal(
        field, "p-pagelink", files={"notes/victim.md": PAGE}, base={"notes/victim.md": sha(b"outside the field\n")}
    )
    assert_refused(field, "p-pagelink", "symlink")


@pytest.mark.parametrize("bad_id", ["../escape", "a/b", ".hidden", "x..y"])
def test_unsafe_ids(field, bad_id):
    from memtui.review.proposal_model import id_problem

    assert id_problem(bad_id)


# --------------------------------------------------------------------------- git branches


@pytest.fixture
def repo(field, tmp_path, monkeypatch):
    use_git_identity(monkeypatch, tmp_path)
    init_repo(field)
    return field


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("sessions/2026-01-01.md", "sessions"),
        ("notes/script.py", "not a Markdown page"),
        (".memtui/x.md", ".memtui"),
        (".dream/proposals/x.md", ".dream"),
    ],
)
def test_branch_changing_forbidden_paths(repo, path, fragment):
    branch_proposal(repo, "2026-11-28-dedupe-01", {path: PAGE, "notes/a.md": PAGE}, "bad\n")
    assert_refused(repo, "2026-11-28-dedupe-01", fragment)


def test_branch_adding_a_git_hook(repo):
    head = git(repo, "rev-parse", "HEAD")
    tree = tree_with_extra_entry(repo, head, ".git", ["hooks", "pre-commit"], b"#!/bin/sh\ntouch /tmp/pwned\n")
    commit = git(repo, "commit-tree", tree, "-p", head, "-m", "install a hook\n\nDream-Job: dedupe\n")
    git(repo, "update-ref", "refs/heads/dream/2026-11-28-dedupe-02", commit)
    assert_refused(repo, "2026-11-28-dedupe-02", ".git")
    assert not (repo / ".git/hooks/pre-commit").exists()


def test_branch_with_a_symlink_or_submodule(repo):
    target = b"../../outside/victim.md"
    link_mode = {"notes/link.md": "120000"}
    branch_proposal(repo, "2026-11-28-dedupe-03", {"notes/link.md": target}, "link\n", modes=link_mode)
    assert_refused(repo, "2026-11-28-dedupe-03", "symlink")
    assert not os.path.lexists(repo / "notes/link.md")
    sub = git(repo, "rev-parse", "HEAD").encode()
    branch_proposal(repo, "2026-11-28-dedupe-04", {"notes/sub.md": sub}, "sub\n", modes={"notes/sub.md": "160000"})
    assert_refused(repo, "2026-11-28-dedupe-04", "submodule")


def test_branch_through_a_symlinked_folder(repo):
    os.symlink(repo.parent / "outside", repo / "linked")
    git(repo, "add", "linked")
    git(repo, "commit", "-qm", "add a symlink to a folder outside")
    branch_proposal(repo, "2026-11-28-dedupe-05", {"notes/a.md": PAGE}, "fine page\n")
    # Replace the tracked symlink with a folder path in the branch tree: git itself would never
    # write through it, and neither may memtui.
    head = git(repo, "rev-parse", "dream/2026-11-28-dedupe-05")
    tree = tree_with_extra_entry(repo, head, "linked2", ["victim.md"], PAGE)
    commit = git(repo, "commit-tree", tree, "-p", head, "-m", "write outside\n")
    git(repo, "update-ref", "refs/heads/dream/2026-11-28-dedupe-05", commit)
    os.symlink(repo.parent / "outside", repo / "linked2")
    assert_refused(repo, "2026-11-28-dedupe-05", "symlinked folder")
    assert (repo.parent / "outside/victim.md").read_bytes() == b"outside the field\n"
