"""Git-branch proposals (``dream/<id>``) end to end on real repositories.

Branches are made with plumbing in a private index, as a job would; memtui must
read them without a checkout, never run a hook, and commit exactly the touched pages.
"""

from __future__ import annotations

import shutil

import pytest

from memtui.errors import MemtuiError, StaleWriteError
from memtui.review import ledger, proposals
from memtui.store import gitrepo
from tests.helpers_review import (
    approve_proposal,
    branch_proposal,
    git,
    init_repo,
    proposal_queue,
    review_proposal,
    sha,
    snapshot,
    staging_proposal,
    use_git_identity,
)

PID = "2026-11-28-expire-02"
TRIAL = "notes/trackstream-trial-terms.md"
EXPECT = "notes/brightline-sla-expectations.md"
MESSAGE = (
    "Expire the TrackStream trial page\n\n"
    "The trial ended on 2026-09-30; the page still reads as current.\n\n"
    "Dream-Job: expire\n"
    "Evidence: sessions/2026-03-11-vendor-call.md#L16-L19\n"
)


@pytest.fixture
def repo(sample_field, tmp_path, monkeypatch):
    """The sample field without staging proposals, as a git repository."""
    use_git_identity(monkeypatch, tmp_path)
    monkeypatch.setenv("MEMTUI_REVIEWER", "maya")
    shutil.rmtree(sample_field / ".dream")
    init_repo(sample_field)
    return sample_field


def trial_edit(root):
    old = (root / TRIAL).read_bytes()
    return old, old.replace(b"valid_to: null", b"valid_to: 2026-09-30")


def make_proposal(root):
    old, new = trial_edit(root)
    branch_proposal(root, PID, {TRIAL: new, EXPECT: None}, MESSAGE)
    return old, new


def test_branch_is_read_as_a_proposal(repo):
    old, new = make_proposal(repo)
    (proposal,) = proposals.load_proposals(repo).proposals
    assert (proposal.id, proposal.carrier, proposal.location, proposal.job) == (PID, "git", f"dream/{PID}", "expire")
    assert proposal.rationale.startswith("Expire the TrackStream trial page")
    assert "Dream-Job" not in proposal.rationale
    assert proposal.evidence == ["sessions/2026-03-11-vendor-call.md#L16-L19"]
    assert proposal.base_commit == git(repo, "rev-parse", "HEAD")
    trial = proposal.change(TRIAL)
    assert (trial.action, trial.base, trial.proposed, trial.stale) == ("modify", sha(old), new, False)
    assert proposal.change(EXPECT).action == "delete"
    entry = proposal_queue(repo).get(PID)
    assert entry.state == "ready" and entry.validation.ok
    # Reading never checks the branch out.
    assert git(repo, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert (repo / TRIAL).read_bytes() == old


def test_approve_makes_one_commit_of_exactly_the_touched_pages(repo):
    old, new = make_proposal(repo)
    head_before = git(repo, "rev-parse", "HEAD")
    # The user has unrelated work staged and unstaged: it must stay out of memtui's commit.
    (repo / "people/dana-ruiz.md").write_bytes((repo / "people/dana-ruiz.md").read_bytes() + b"staged edit\n")
    git(repo, "add", "people/dana-ruiz.md")
    (repo / "people/hannah-lee.md").write_bytes((repo / "people/hannah-lee.md").read_bytes() + b"unstaged edit\n")
    entry = approve_proposal(repo, PID)
    assert entry.commit == git(repo, "rev-parse", "HEAD")
    assert git(repo, "rev-parse", "HEAD^") == head_before
    subject = git(repo, "log", "-1", "--format=%s")
    assert subject == f"memtui: apply dream proposal {PID} (expire)"
    body = git(repo, "log", "-1", "--format=%B")
    assert "The trial ended on 2026-09-30" in body and f"Memtui-Proposal: {PID}" in body
    changed = git(repo, "diff-tree", "-r", "--name-status", "--no-commit-id", "HEAD").splitlines()
    assert sorted(changed) == sorted([f"D\t{EXPECT}", f"M\t{TRIAL}"])
    status = git(repo, "status", "--porcelain").splitlines()
    assert set(status) == {"M  people/dana-ruiz.md", " M people/hannah-lee.md"}
    assert (repo / TRIAL).read_bytes() == new
    assert (repo / ".memtui/archive/retired" / EXPECT).exists()
    assert git(repo, "symbolic-ref", "HEAD") == "refs/heads/main"
    assert git(repo, "rev-parse", f"dream/{PID}")  # the branch stays


def test_revert_is_a_commit_restoring_the_previous_bytes(repo):
    before = snapshot(repo)
    make_proposal(repo)
    approval = approve_proposal(repo, PID)
    entry = proposals.revert(repo, PID, reason="trial was extended again")
    assert entry.commit == git(repo, "rev-parse", "HEAD") != approval.commit
    assert git(repo, "log", "-1", "--format=%s") == f"memtui: revert dream proposal {PID} (expire)"
    assert f"This reverts commit {approval.commit}" in git(repo, "log", "-1", "--format=%B")
    assert snapshot(repo) == before
    assert git(repo, "diff", "HEAD~2", "HEAD", "--stat") == ""
    assert git(repo, "status", "--porcelain") == ""
    stats = proposals.stats(repo)
    assert stats.jobs["expire"].regret_rate == 1.0
    kinds = [e.action for e in ledger.read(repo).entries]
    assert kinds == [ledger.PROPOSAL_APPROVE, ledger.PROPOSAL_REVERT]


def test_revert_finds_previous_bytes_in_git_when_blobs_are_gone(repo):
    old, _ = make_proposal(repo)
    approve_proposal(repo, PID)
    shutil.rmtree(repo / ".memtui/blobs")
    proposals.revert(repo, PID)
    assert (repo / TRIAL).read_bytes() == old


def test_hooks_never_run(repo):
    marker = repo.parent / "hook-ran"
    hooks = ("pre-commit", "commit-msg", "post-commit", "prepare-commit-msg", "post-checkout", "reference-transaction")
    for hook in hooks:
        path = repo / ".git/hooks" / hook
        path.write_text(f"#!/bin/sh\necho {hook} >> '{marker}'\n")
        path.chmod(0o755)
    git(repo, "config", "core.hooksPath", ".git/hooks")
    git(repo, "commit", "-q", "--allow-empty", "-m", "hooks are live")
    assert "pre-commit" in marker.read_text()  # the hooks do run for ordinary git use
    make_proposal(repo)
    marker.unlink()
    proposal_queue(repo)
    review_proposal(repo, PID)
    approve_proposal(repo, PID)
    proposals.revert(repo, PID)
    assert not marker.exists()


def test_stale_when_the_page_changed_on_head(repo):
    old, new = make_proposal(repo)
    edited = old.replace(b"confidence: 0.9", b"confidence: 0.7")
    (repo / TRIAL).write_bytes(edited)
    git(repo, "commit", "-qam", "lower confidence")
    entry = proposal_queue(repo).get(PID)
    assert entry.state == "stale"
    review = review_proposal(repo, PID)
    (three,) = review.three_way
    assert three.base_available  # the base comes from the merge-base commit
    assert [line.text for line in three.base_to_disk.unified if line.kind == "add"] == ["confidence: 0.7"]
    assert [line.text for line in three.base_to_proposed.unified if line.kind == "add"] == ["valid_to: 2026-09-30"]
    with pytest.raises(StaleWriteError):
        approve_proposal(repo, PID)
    assert (repo / TRIAL).read_bytes() == edited
    approve_proposal(repo, PID, accept_stale=True)
    assert (repo / TRIAL).read_bytes() == new


def test_uncommitted_edit_makes_it_stale_too(repo):
    old, _ = make_proposal(repo)
    (repo / TRIAL).write_bytes(old + b"local edit\n")
    assert proposal_queue(repo).get(PID).state == "stale"


def test_branch_and_staging_proposals_conflict_and_share_ids_safely(repo):
    old, new = make_proposal(repo)
    staging_proposal(repo, "2026-11-28-dedupe-03", files={TRIAL: new + b"x\n"}, base={TRIAL: sha(old)})
    queue = proposal_queue(repo)
    assert queue.get(PID).conflicts_with == ["2026-11-28-dedupe-03"]
    assert queue.get("2026-11-28-dedupe-03").state == "conflicting"
    staging_proposal(repo, PID, files={TRIAL: new}, base={TRIAL: sha(old)})
    same = [p for p in proposals.load_proposals(repo).proposals if p.id == PID]
    assert {p.carrier for p in same} == {"git", "staging"}
    assert all(not p.valid for p in same)
    with pytest.raises(MemtuiError):
        approve_proposal(repo, PID)


def test_staging_proposal_in_a_git_field_is_committed_too(repo):
    old, new = trial_edit(repo)
    staging_proposal(repo, "2026-11-28-expire-05", job="expire", files={TRIAL: new}, base={TRIAL: sha(old)})
    entry = approve_proposal(repo, "2026-11-28-expire-05")
    assert entry.commit == git(repo, "rev-parse", "HEAD")
    assert git(repo, "log", "-1", "--format=%s") == "memtui: apply dream proposal 2026-11-28-expire-05 (expire)"
    assert git(repo, "status", "--porcelain") == "?? .dream/"


def test_branch_adding_a_page(repo):
    branch_proposal(
        repo,
        "2026-11-28-consolidate-04",
        {"notes/new.md": b"---\ntitle: n\n---\nn [stated]\n"},
        "Add a page\n\nDream-Job: consolidate\n",
    )
    entry = approve_proposal(repo, "2026-11-28-consolidate-04")
    assert entry.pages == [{"path": "notes/new.md", "before": None, "after": sha(b"---\ntitle: n\n---\nn [stated]\n")}]
    assert git(repo, "ls-files", "notes/new.md") == "notes/new.md"
    proposals.revert(repo, "2026-11-28-consolidate-04")
    assert not (repo / "notes/new.md").exists()
    assert git(repo, "ls-files", "notes/new.md") == ""


def test_a_merged_or_unrelated_branch_is_invalid(repo):
    git(repo, "branch", "dream/2026-11-28-expire-09")  # no commit beyond HEAD
    entry = proposal_queue(repo).get("2026-11-28-expire-09")
    assert entry.state == "invalid"
    assert "no commit beyond HEAD" in entry.validation.errors[0]


def test_not_a_repository_top_is_not_a_git_field(repo):
    sub = repo / "knowledge"
    assert gitrepo.is_field_repo(repo)
    assert not gitrepo.is_field_repo(sub)
    assert not gitrepo.is_field_repo(repo.parent)
