"""A crash in the middle of applying a proposal leaves the old state or the new one, never a mix.

Each apply runs in a subprocess that dies abruptly (``os._exit`` through the
``MEMTUI_TEST_CRASH`` hook) after the first page is written, or right after the
git commit; recovery then has to roll back (or forward) exactly.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from memtui.review import apply_journal, ledger
from tests.helpers_field import run_cli
from tests.helpers_review import (
    GIT_ENV,
    approve_proposal,
    branch_proposal,
    git,
    init_repo,
    proposal_queue,
    snapshot,
    use_git_identity,
)

DEDUPE = "2026-11-27-dedupe-01"
CONSOLIDATE = "2026-11-19-consolidate-01"


def crash_apply(root, proposal_id: str, point: str, *extra: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.update(GIT_ENV)
    env["MEMTUI_TEST_CRASH"] = point
    env["MEMTUI_REVIEWER"] = "maya"
    code = (
        "import sys\n"
        "from memtui.review import proposals\n"
        "from memtui.session.opening import open_field\n"
        f"proposals.approve(sys.argv[1], sys.argv[2], field=open_field(sys.argv[1]), accept_stale={'--accept-stale' in extra})\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, str(root), proposal_id], env=env, capture_output=True, timeout=120
    )


def test_crash_after_the_first_page_rolls_back_exactly(sample_field):
    before = snapshot(sample_field)
    result = crash_apply(sample_field, DEDUPE, "after-page-1")
    assert result.returncode == apply_journal.CRASH_EXIT_CODE, result.stderr
    # The crash left a half-applied field and a journal behind.
    half = snapshot(sample_field)
    assert half != before
    assert [p for p in before if half.get(p) != before[p]] == ["notes/brightline-pilot-sla.md"]
    assert len(apply_journal.pending_journals(sample_field)) == 1
    (recovery,) = apply_journal.recover_interrupted(sample_field)
    assert recovery.outcome == "rolled-back" and recovery.problems == []
    assert snapshot(sample_field) == before
    assert apply_journal.pending_journals(sample_field) == []
    assert ledger.read(sample_field).entries == []
    # The proposal is still pending and can now be applied whole.
    assert proposal_queue(sample_field).get(DEDUPE).state == "ready"
    approve_proposal(sample_field, DEDUPE, reviewer="maya")
    assert not (sample_field / "notes/brightline-sla-expectations.md").exists()


def test_crash_after_retiring_a_page_rolls_it_back(sample_field):
    before = snapshot(sample_field)
    # consolidate touches four pages in path order: MEMORY.md, the retired afternoons page, ...
    result = crash_apply(sample_field, CONSOLIDATE, "after-page-2", "--accept-stale")
    assert result.returncode == apply_journal.CRASH_EXIT_CODE, result.stderr
    half = snapshot(sample_field)
    assert "notes/meeting-times-afternoons.md" not in half and half["MEMORY.md"] != before["MEMORY.md"]
    apply_journal.recover_interrupted(sample_field)
    assert snapshot(sample_field) == before
    assert not (sample_field / ".memtui/archive/retired/notes/meeting-times-afternoons.md").exists()


def test_the_cli_recovers_before_any_review_command(sample_field, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    before = snapshot(sample_field)
    assert crash_apply(sample_field, DEDUPE, "after-page-1").returncode == apply_journal.CRASH_EXIT_CODE
    code, out, err = run_cli(["proposals", "list", sample_field], capsys)
    assert code == 0
    assert "interrupted change was rolled back" in err
    assert snapshot(sample_field) == before
    assert DEDUPE in out


def test_a_change_by_someone_else_during_the_crash_is_not_overwritten(sample_field):
    assert crash_apply(sample_field, DEDUPE, "after-page-1").returncode == apply_journal.CRASH_EXIT_CODE
    target = sample_field / "notes/brightline-pilot-sla.md"
    target.write_bytes(b"edited by hand after the crash\n")
    (recovery,) = apply_journal.recover_interrupted(sample_field)
    assert recovery.outcome == "needs-attention"
    assert "changed by someone else" in recovery.problems[0]
    assert target.read_bytes() == b"edited by hand after the crash\n"
    assert len(apply_journal.pending_journals(sample_field)) == 1  # kept until someone looks


# --------------------------------------------------------------------------- git fields


@pytest.fixture
def repo(sample_field, tmp_path, monkeypatch):
    use_git_identity(monkeypatch, tmp_path)
    shutil.rmtree(sample_field / ".dream")
    init_repo(sample_field)
    old_a = (sample_field / "notes/trackstream-trial-terms.md").read_bytes()
    old_b = (sample_field / "notes/q3-digest.md").read_bytes()
    branch_proposal(
        sample_field,
        "2026-11-28-expire-02",
        {"notes/trackstream-trial-terms.md": old_a + b"x\n", "notes/q3-digest.md": old_b + b"y\n"},
        "two pages\n\nDream-Job: expire\n",
    )
    return sample_field


def test_git_crash_before_the_commit_rolls_back_and_cleans_the_index(repo):
    before = snapshot(repo)
    head = git(repo, "rev-parse", "HEAD")
    assert crash_apply(repo, "2026-11-28-expire-02", "after-page-1").returncode == apply_journal.CRASH_EXIT_CODE
    (recovery,) = apply_journal.recover_interrupted(repo)
    assert recovery.outcome == "rolled-back"
    assert snapshot(repo) == before
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == ""


def test_git_crash_after_the_commit_rolls_forward(repo):
    assert crash_apply(repo, "2026-11-28-expire-02", "after-commit").returncode == apply_journal.CRASH_EXIT_CODE
    commit = git(repo, "rev-parse", "HEAD")
    assert "Memtui-Txn:" in git(repo, "log", "-1", "--format=%B")
    assert ledger.read(repo).entries == []
    (recovery,) = apply_journal.recover_interrupted(repo)
    assert recovery.outcome == "completed"
    (entry,) = ledger.read(repo).entries
    assert (entry.action, entry.target, entry.commit) == (ledger.PROPOSAL_APPROVE, "2026-11-28-expire-02", commit)
    assert git(repo, "status", "--porcelain") == ""
    assert apply_journal.recover_interrupted(repo) == []
