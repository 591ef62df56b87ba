"""Undo of review decisions (memtui.review.undo): bytes come back, the ledger keeps both lines."""

from __future__ import annotations

import pytest

from memtui.errors import MemtuiError, StaleWriteError
from memtui.review import ledger, proposals, quarantine, undo
from memtui.store.files import sha256_bytes
from tests.helpers_review import approve_proposal, git, init_repo, opened, proposal_queue

EDI = "quarantine/edi-214-status-codes.md"
HOSTILE = "quarantine/vendor-pricing-update.md"
EXPIRE = "2026-11-27-expire-01"
DEDUPE = "2026-11-27-dedupe-01"


pytestmark = pytest.mark.usefixtures("reviewer_maya")


def test_undo_a_quarantine_approval_that_moved_the_page(sample_field):
    before = (sample_field / EDI).read_bytes()
    decision = quarantine.approve_page(
        sample_field, EDI, sha256_bytes(before), add_to_memory=True, field=opened(sample_field)
    )
    moved = decision.moved_to
    assert moved and (sample_field / moved).exists()
    memory_after = (sample_field / "MEMORY.md").read_bytes()
    assert f"- {moved}".encode() in memory_after

    assert undo.latest(sample_field, kind="quarantine").to_json() == decision.entry.to_json()
    undone, entry = undo.undo(sample_field, kind="quarantine")
    assert undone.action == ledger.QUARANTINE_APPROVE
    assert entry.action == ledger.DECISION_UNDO and entry.target == EDI
    assert (sample_field / EDI).read_bytes() == before  # back where it was, byte for byte
    assert not (sample_field / moved).exists()
    assert f"- {moved}".encode() not in (sample_field / "MEMORY.md").read_bytes()
    archived = list((sample_field / ".memtui" / "archive" / "undone").rglob("*.md"))
    assert archived, "the approved version is kept, not deleted"
    # both lines stay in the ledger; the approval is no longer in force
    entries = ledger.read(sample_field).entries
    assert [e.action for e in entries[-2:]] == [ledger.QUARANTINE_APPROVE, ledger.DECISION_UNDO]
    assert ledger.in_force(entries) == entries[:-2]
    # the page is in the queue again
    from memtui.field.field import Field

    assert quarantine.quarantine_queue(Field.load(sample_field)).find(EDI) is not None


def test_undo_a_quarantine_rejection_brings_the_page_back(sample_field):
    before = (sample_field / HOSTILE).read_bytes()
    quarantine.reject_page(sample_field, HOSTILE, None, reason="injection")
    assert not (sample_field / HOSTILE).exists()
    undone, _ = undo.undo(sample_field, kind="quarantine")
    assert undone.action == ledger.QUARANTINE_REJECT
    assert (sample_field / HOSTILE).read_bytes() == before
    # nothing left to undo
    assert undo.latest(sample_field, kind="quarantine") is None
    with pytest.raises(MemtuiError):
        undo.undo(sample_field, kind="quarantine")


def test_undo_goes_back_one_decision_at_a_time(sample_field):
    quarantine.reject_page(sample_field, HOSTILE, None, reason="injection")
    quarantine.approve_page(sample_field, EDI, None)
    first, _ = undo.undo(sample_field, kind="quarantine")
    second, _ = undo.undo(sample_field, kind="quarantine")
    assert (first.action, first.target) == (ledger.QUARANTINE_APPROVE, EDI)
    assert (second.action, second.target) == (ledger.QUARANTINE_REJECT, HOSTILE)
    assert (sample_field / HOSTILE).exists() and (sample_field / EDI).exists()


def test_undo_refuses_a_decision_that_is_no_longer_the_latest(sample_field):
    decision = quarantine.reject_page(sample_field, HOSTILE, None, reason="injection").entry
    undo.undo(sample_field, decision=decision)
    with pytest.raises(StaleWriteError):
        undo.undo(sample_field, decision=decision)


def test_undo_of_an_edited_approval_needs_force_and_keeps_the_edit(sample_field):
    page = "quarantine/portlink-pricing-2027.md"
    before = (sample_field / page).read_bytes()
    decision = quarantine.approve_page(sample_field, page, None)
    where = sample_field / (decision.moved_to or page)
    edited = where.read_bytes() + b"\n- a later edit [stated]\n"
    where.write_bytes(edited)
    plan = undo.plan_undo(sample_field, decision.entry)
    assert [p.path for p in plan.conflicts] == [decision.moved_to or page]
    with pytest.raises(StaleWriteError):
        undo.undo(sample_field, kind="quarantine")
    undo.undo(sample_field, kind="quarantine", force=True)
    assert (sample_field / page).read_bytes() == before
    blobs = sample_field / ".memtui" / "blobs"
    assert (blobs / sha256_bytes(edited)[:2] / sha256_bytes(edited)).exists()


def test_undo_a_proposal_approval_makes_it_pending_and_does_not_count_as_regret(sample_field):
    snapshot = {p: p.read_bytes() for p in sample_field.rglob("*.md") if ".dream" not in p.parts}
    approve_proposal(sample_field, EXPIRE)
    assert proposals.stats(sample_field).total.approved == 1
    plan = undo.plan_undo(sample_field, undo.latest(sample_field, kind="proposals"))
    assert plan.pages and not plan.problems
    undone, entry = undo.undo(sample_field, kind="proposals")
    assert undone.action == ledger.PROPOSAL_APPROVE and entry.action == ledger.DECISION_UNDO
    after = {
        p: p.read_bytes() for p in sample_field.rglob("*.md") if ".dream" not in p.parts and ".memtui" not in p.parts
    }
    assert after == snapshot
    stats = proposals.stats(sample_field)
    assert stats.total.approved == 0 and stats.total.reverted == 0 and stats.pending == 4
    queue = proposal_queue(sample_field, with_checks=False)
    assert queue.get(EXPIRE).pending


def test_undo_a_proposal_rejection(sample_field):
    proposals.reject(sample_field, DEDUPE, reason="keep both")
    undone, _ = undo.undo(sample_field, kind="proposals")
    assert undone.action == ledger.PROPOSAL_REJECT
    assert proposal_queue(sample_field, with_checks=False).get(DEDUPE).pending
    approve_proposal(sample_field, DEDUPE)  # it can be decided again


def test_a_reverted_approval_is_not_undone(sample_field):
    approve_proposal(sample_field, EXPIRE)
    proposals.revert(sample_field, EXPIRE, reason="too early")
    assert undo.latest(sample_field, kind="proposals") is None


def test_undo_in_a_git_field_commits(sample_field):
    init_repo(sample_field)
    approve_proposal(sample_field, EXPIRE)
    undo.undo(sample_field, kind="proposals")
    subject = git(sample_field, "log", "-1", "--format=%s")
    assert subject.startswith("memtui: undo the approval of dream proposal 2026-11-27-expire-01")
    assert git(sample_field, "status", "--porcelain", "--", ".") == ""


def test_decision_records_show_who_when_why_and_undo(sample_field):
    quarantine.reject_page(sample_field, HOSTILE, None, reason="injection")
    undo.undo(sample_field, kind="quarantine")
    quarantine.reject_page(sample_field, HOSTILE, None, reason="injection, really")
    records = ledger.decision_records(ledger.read(sample_field).entries, ledger.QUARANTINE_ACTIONS)
    assert [(r.entry.reason, r.undone_by is not None) for r in records] == [
        ("injection, really", False),
        ("injection", True),
    ]
    assert all(r.entry.who == "maya" for r in records)
