"""The review ledger: one JSON line per decision, proposal states and the regret rate."""

from __future__ import annotations

import json
import subprocess

import pytest

from memtui.review import ledger
from memtui.review.ledger import LedgerEntry
from tests.helpers_review import use_git_identity

KEYS = {"ts", "who", "action", "target", "job", "carrier", "pages", "reason", "commit"}


def entry(action: str, target: str, job: str | None = "dedupe", ts: str = "2026-11-29T10:00:00Z") -> LedgerEntry:
    return LedgerEntry(ts=ts, who="maya", action=action, target=target, job=job, carrier="staging")


def test_append_writes_one_json_object_per_line(tmp_path):
    ledger.append(tmp_path, entry(ledger.PROPOSAL_APPROVE, "p1"))
    ledger.append(tmp_path, entry(ledger.PROPOSAL_REJECT, "p2"))
    path = tmp_path / ".memtui" / "ledger.jsonl"
    lines = path.read_text("utf-8").splitlines()
    assert len(lines) == 2
    for line in lines:
        data = json.loads(line)
        assert set(data) == KEYS | {"prev", "mac"}  # the chain link and the signature
    assert [e.target for e in ledger.read(tmp_path).entries] == ["p1", "p2"]


def test_append_refuses_an_unknown_action(tmp_path):
    with pytest.raises(ValueError):
        ledger.append(tmp_path, entry("proposal-merge", "p1"))
    assert not (tmp_path / ".memtui" / "ledger.jsonl").exists()


def test_reader_skips_torn_and_foreign_lines(tmp_path):
    ledger.append(tmp_path, entry(ledger.PROPOSAL_APPROVE, "p1"))
    path = ledger.ledger_path(tmp_path)
    with open(path, "ab") as handle:
        handle.write(b'{"ts": "2026-11-29T10:00:00Z", "who": "ma\n')  # torn by a crash
        handle.write(b"[1, 2, 3]\n")
        handle.write(b"\xff\xfe not utf-8\n")
    ledger.append(tmp_path, entry(ledger.PROPOSAL_REVERT, "p1"))
    read = ledger.read(tmp_path)
    assert [e.action for e in read.entries] == [ledger.PROPOSAL_APPROVE, ledger.PROPOSAL_REVERT]
    assert read.bad_lines == [2, 3, 4]


def test_missing_ledger_reads_as_empty(tmp_path):
    assert ledger.read(tmp_path).entries == []


def test_last_proposal_decision_wins():
    entries = [
        entry(ledger.PROPOSAL_APPROVE, "p1"),
        entry(ledger.QUARANTINE_APPROVE, "quarantine/a.md", job=None),
        entry(ledger.PROPOSAL_REVERT, "p1"),
        entry(ledger.PROPOSAL_REJECT, "p2"),
    ]
    decisions = ledger.proposal_decisions(entries)
    assert {k: ledger.proposal_state(v) for k, v in decisions.items()} == {"p1": "reverted", "p2": "rejected"}
    assert ledger.proposal_state(None) is None
    assert ledger.last_approval(entries, "p1") is entries[0]


def test_regret_rate_per_job_kind():
    entries = [
        entry(ledger.PROPOSAL_APPROVE, "d1", "dedupe"),
        entry(ledger.PROPOSAL_APPROVE, "d2", "dedupe"),
        entry(ledger.PROPOSAL_APPROVE, "d3", "dedupe"),
        entry(ledger.PROPOSAL_APPROVE, "d4", "dedupe"),
        entry(ledger.PROPOSAL_REVERT, "d2", "dedupe"),
        entry(ledger.PROPOSAL_REJECT, "e1", "expire"),
        entry(ledger.PROPOSAL_REVERT, "never-approved", "expire"),  # not a regret: nothing was approved
        entry(ledger.QUARANTINE_REJECT, "quarantine/x.md", None),
    ]
    jobs, total = ledger.regret_stats(entries)
    assert jobs["dedupe"].to_json() == {
        "job": "dedupe",
        "approved": 4,
        "rejected": 0,
        "reverted": 1,
        "regret_rate": 0.25,
    }
    assert jobs["expire"].regret_rate is None
    assert jobs["expire"].rejected == 1 and jobs["expire"].reverted == 0
    assert (total.approved, total.reverted, total.regret_rate) == (4, 1, 0.25)


def test_page_decisions_follow_moves():
    moved = LedgerEntry(
        ts="t",
        who="w",
        action=ledger.QUARANTINE_APPROVE,
        target="quarantine/a.md",
        pages=[{"path": "quarantine/a.md", "before": "1", "after": "2", "moved_to": "notes/a.md"}],
    )
    assert ledger.page_decisions([moved], "notes/a.md") == [moved]
    assert ledger.page_decisions([moved], "notes/b.md") == []


def test_reviewer_name_precedence(tmp_path, monkeypatch):
    use_git_identity(monkeypatch, tmp_path)
    monkeypatch.setenv("MEMTUI_REVIEWER", "from-env")
    assert ledger.reviewer_name("  explicit ") == "explicit"
    assert ledger.reviewer_name(None) == "from-env"
    monkeypatch.delenv("MEMTUI_REVIEWER")
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "config", "user.name", "Repo Reviewer"], check=True)
    assert ledger.reviewer_name(None, repo) == "Repo Reviewer"
    # No git name anywhere: the operating-system user (never empty).
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "no-such-gitconfig"))
    assert ledger.reviewer_name(None, plain)


def test_entry_round_trip():
    original = LedgerEntry(
        ts="2026-11-29T10:00:00Z",
        who="maya",
        action=ledger.PROPOSAL_APPROVE,
        target="p1",
        job="expire",
        carrier="git",
        pages=[{"path": "a.md", "before": None, "after": "ab"}],
        reason="ok",
        commit="c0ffee",
    )
    assert LedgerEntry.from_json(json.loads(json.dumps(original.to_json()))) == original
    with pytest.raises(ValueError):
        LedgerEntry.from_json({"ts": 1})
