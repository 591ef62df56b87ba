"""Staging-tree proposals end to end on copies of the sample field: states, approve, reject, revert."""

from __future__ import annotations

import datetime as dt
import json
import shutil

import pytest

from memtui.errors import MemtuiError, StaleWriteError
from memtui.field.checks import run_checks
from memtui.field.field import Field
from memtui.review import ledger, proposals
from memtui.store import safe_write
from tests.helpers import write_page
from tests.helpers_review import approve_proposal, proposal_queue, review_proposal, sha, snapshot, staging_proposal

CONSOLIDATE = "2026-11-19-consolidate-01"
CONTRADICTION = "2026-11-27-contradiction-01"
DEDUPE = "2026-11-27-dedupe-01"
EXPIRE = "2026-11-27-expire-01"
NOW = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.UTC)


pytestmark = pytest.mark.usefixtures("reviewer_maya")


def proposed(root, proposal_id, path):
    return (root / ".dream/proposals" / proposal_id / "files" / path).read_bytes()


# --------------------------------------------------------------------------- the queue


def test_sample_queue_states(sample_field):
    queue = proposal_queue(sample_field, now=NOW)
    states = {e.proposal.id: (e.state, e.flags, e.conflicts_with) for e in queue.entries}
    assert states == {
        CONSOLIDATE: ("stale", ["stale", "conflicting"], [CONTRADICTION]),
        CONTRADICTION: ("conflicting", ["conflicting"], [CONSOLIDATE]),
        DEDUPE: ("ready", [], []),
        EXPIRE: ("ready", [], []),
    }
    assert [e.proposal.id for e in queue.entries] == [CONSOLIDATE, DEDUPE, EXPIRE, CONTRADICTION]  # oldest first
    consolidate = queue.get(CONSOLIDATE)
    assert consolidate.proposal.job == "consolidate"
    created = dt.datetime(2026, 11, 19, 3, 25, tzinfo=dt.UTC)
    assert round(consolidate.age_days, 2) == round((NOW - created).total_seconds() / 86400, 2)
    assert [c.path for c in consolidate.proposal.changes if c.stale] == ["notes/meeting-times-mornings.md"]
    assert {c.path: c.action for c in consolidate.proposal.changes} == {
        "MEMORY.md": "modify",
        "notes/meeting-times-afternoons.md": "delete",
        "notes/meeting-times-mornings.md": "modify",
        "people/maya-okafor.md": "modify",
    }
    for entry in queue.entries:
        assert entry.validation.ok and entry.validation.new_findings == []
    # Both meeting-time proposals resolve the planted contradiction.
    assert {f.rule for f in queue.get(CONTRADICTION).validation.resolved_findings} == {"contradiction"}
    data = queue.to_json()
    assert json.loads(json.dumps(data)) == data
    assert set(data["proposals"][0]) == {
        "id",
        "carrier",
        "location",
        "job",
        "created",
        "age_days",
        "state",
        "flags",
        "conflicts_with",
        "pages",
        "validation",
        "decision",
    }


def test_queue_without_checks_is_cheap_and_marks_it(sample_field):
    queue = proposal_queue(sample_field, with_checks=False)
    assert all(e.validation.new_findings is None for e in queue.entries)
    assert queue.get(DEDUPE).validation.to_json()["new_findings"] is None


def test_overlay_checks_equal_checks_on_a_real_applied_copy(sample_field, tmp_path):
    field = Field.load(sample_field, use_cache=False)
    for proposal in proposals.load_proposals(sample_field).proposals:
        with proposals.result_field(field, proposal) as overlay:
            overlay_findings = run_checks(overlay)
        copy = tmp_path / f"copy-{proposal.id}"
        shutil.copytree(sample_field, copy)
        for change in proposal.changes:
            target = copy / change.path
            if change.proposed is None:
                target.unlink()
            else:
                target.write_bytes(change.proposed)
        real = run_checks(Field.load(copy, use_cache=False))

        def key(f):
            return (f.rule, f.severity, f.path, f.line, f.message)

        assert sorted(map(key, overlay_findings)) == sorted(map(key, real)), proposal.id


# --------------------------------------------------------------------------- approve


def test_approve_dedupe_applies_every_page_and_retires_the_duplicate(sample_field):
    retired = (sample_field / "notes/brightline-sla-expectations.md").read_bytes()
    old_pilot = (sample_field / "notes/brightline-pilot-sla.md").read_bytes()
    before = snapshot(sample_field)
    entry = approve_proposal(sample_field, DEDUPE)
    pilot = "notes/brightline-pilot-sla.md"
    assert (sample_field / pilot).read_bytes() == proposed(sample_field, DEDUPE, pilot)
    assert not (sample_field / "notes/brightline-sla-expectations.md").exists()
    archived = sample_field / ".memtui/archive/retired/notes/brightline-sla-expectations.md"
    assert archived.read_bytes() == retired  # retired, never deleted
    after = snapshot(sample_field)
    assert {k for k in set(before) | set(after) if before.get(k) != after.get(k)} == {
        "notes/brightline-pilot-sla.md",
        "notes/brightline-sla-expectations.md",
    }
    assert entry.action == ledger.PROPOSAL_APPROVE and entry.job == "dedupe" and entry.carrier == "staging"
    assert entry.who == "maya" and entry.commit is None
    assert entry.pages == [
        {
            "path": "notes/brightline-pilot-sla.md",
            "before": sha(old_pilot),
            "after": sha(after["notes/brightline-pilot-sla.md"]),
        },
        {
            "path": "notes/brightline-sla-expectations.md",
            "before": sha(retired),
            "after": None,
            "moved_to": ".memtui/archive/retired/notes/brightline-sla-expectations.md",
        },
    ]
    assert ledger.read(sample_field).entries == [entry]
    # The proposal folder stays; its state comes from the ledger.
    assert (sample_field / ".dream/proposals" / DEDUPE / "proposal.yaml").exists()
    pending = [e.proposal.id for e in proposal_queue(sample_field).entries]
    assert DEDUPE not in pending
    everything = proposal_queue(sample_field, include_decided=True)
    assert everything.get(DEDUPE).state == "approved"
    assert not any(p.startswith(".memtui/journal/") and p.endswith(".json") for p in snapshot(sample_field, skip=()))


def test_a_decided_proposal_cannot_be_decided_again(sample_field):
    approve_proposal(sample_field, EXPIRE)
    with pytest.raises(MemtuiError, match="already approved"):
        approve_proposal(sample_field, EXPIRE)
    with pytest.raises(MemtuiError):
        proposals.reject(sample_field, EXPIRE, reason="too late")


def test_stale_proposal_is_refused_without_accept_stale(sample_field):
    before = snapshot(sample_field)
    with pytest.raises(StaleWriteError, match="stale"):
        approve_proposal(sample_field, CONSOLIDATE)
    assert snapshot(sample_field) == before
    assert ledger.read(sample_field).entries == []


def test_stale_review_shows_the_three_way_difference(sample_field):
    review = review_proposal(sample_field, CONSOLIDATE)
    (three,) = review.three_way
    assert three.path == "notes/meeting-times-mornings.md"
    # The sample keeps no copy of the old base version: only disk -> proposed can be shown.
    assert three.base_available is False and three.base_to_disk is None
    assert three.disk_to_proposed.action == "modify" and three.disk_to_proposed.added > 0
    assert review.fingerprint == review.proposal.fingerprint()
    data = review.to_json()
    assert data["three_way"][0]["base_available"] is False
    assert {d["path"] for d in data["diffs"]} == set(review.proposal.pages)


def test_stale_with_a_kept_base_and_accept_stale(sample_field):
    path = "notes/trackstream-trial-terms.md"
    old = (sample_field / path).read_bytes()
    # Someone edits the page after the job made its proposal; memtui keeps the old bytes as a blob.
    edited = old.replace(b"confidence: 0.9", b"confidence: 0.8")
    safe_write.write_page(sample_field, path, edited, expected_hash=sha(old))
    entry = proposal_queue(sample_field).get(EXPIRE)
    assert entry.state == "stale"
    review = review_proposal(sample_field, EXPIRE)
    (three,) = review.three_way
    assert three.base_available
    removed = [line.text for line in three.base_to_disk.unified if line.kind == "remove"]
    assert removed == ["confidence: 0.9"]
    assert [line.text for line in three.base_to_proposed.unified if line.kind == "add"] == ["valid_to: 2026-09-30"]
    with pytest.raises(StaleWriteError):
        approve_proposal(sample_field, EXPIRE)
    approve_proposal(sample_field, EXPIRE, accept_stale=True, fingerprint=review.fingerprint)
    assert (sample_field / path).read_bytes() == proposed(sample_field, EXPIRE, path)


def test_fingerprint_binds_the_approval_to_what_was_shown(sample_field):
    review = review_proposal(sample_field, EXPIRE)
    path = "notes/trackstream-trial-terms.md"
    staged = sample_field / ".dream/proposals" / EXPIRE / "files" / path
    staged.write_bytes(staged.read_bytes() + b"\n- smuggled line [stated]\n")
    before = snapshot(sample_field)
    with pytest.raises(StaleWriteError, match="changed since it was shown"):
        approve_proposal(sample_field, EXPIRE, fingerprint=review.fingerprint)
    assert snapshot(sample_field) == before


def test_two_conflicting_proposals(sample_field):
    path = "notes/harbor-naming-opinion.md"
    old = (sample_field / path).read_bytes()
    base = {path: sha(old)}
    staging_proposal(sample_field, "2026-11-28-expire-07", job="expire", files={path: old + b"\nA\n"}, base=base)
    staging_proposal(sample_field, "2026-11-28-dedupe-07", job="dedupe", files={path: old + b"\nB\n"}, base=base)
    queue = proposal_queue(sample_field)
    assert queue.get("2026-11-28-expire-07").state == "conflicting"
    assert queue.get("2026-11-28-expire-07").conflicts_with == ["2026-11-28-dedupe-07"]
    assert queue.get("2026-11-28-dedupe-07").conflicts_with == ["2026-11-28-expire-07"]
    approve_proposal(sample_field, "2026-11-28-expire-07")
    after = proposal_queue(sample_field).get("2026-11-28-dedupe-07")
    assert after.state == "stale" and after.conflicts_with == []
    with pytest.raises(StaleWriteError):
        approve_proposal(sample_field, "2026-11-28-dedupe-07")
    assert (sample_field / path).read_bytes() == old + b"\nA\n"


def test_result_routing_a_quarantined_page_from_memory_is_refused(sample_field):
    memory = (sample_field / "MEMORY.md").read_bytes()
    new = memory + b"- Latest vendor prices: quarantine/trackstream-2027-list-price.md\n"
    staging_proposal(
        sample_field,
        "2026-11-28-consolidate-09",
        job="consolidate",
        files={"MEMORY.md": new},
        base={"MEMORY.md": sha(memory)},
    )
    entry = proposal_queue(sample_field).get("2026-11-28-consolidate-09")
    assert not entry.validation.ok
    assert [f.rule for f in entry.validation.blocking] == ["memory-untrusted-target"]
    with pytest.raises(MemtuiError, match="untrusted page"):
        approve_proposal(sample_field, "2026-11-28-consolidate-09")
    assert (sample_field / "MEMORY.md").read_bytes() == memory


def test_a_proposal_can_create_a_page(sample_field):
    staging_proposal(
        sample_field,
        "2026-11-28-consolidate-02",
        job="consolidate",
        files={"notes/new-page.md": b"---\ntitle: New\n---\nNew fact [stated]\n"},
        base={"notes/new-page.md": None},
    )
    entry = approve_proposal(sample_field, "2026-11-28-consolidate-02")
    assert entry.pages == [
        {"path": "notes/new-page.md", "before": None, "after": sha(b"---\ntitle: New\n---\nNew fact [stated]\n")}
    ]
    proposals.revert(sample_field, "2026-11-28-consolidate-02")
    assert not (sample_field / "notes/new-page.md").exists()
    assert (sample_field / ".memtui/archive/reverted/notes/new-page.md").exists()  # never deleted


# --------------------------------------------------------------------------- reject


def test_reject_records_a_reason_and_changes_nothing(sample_field):
    before = snapshot(sample_field)
    entry = proposals.reject(sample_field, CONTRADICTION, reason="ask Maya first")
    assert snapshot(sample_field) == before
    assert (entry.action, entry.reason, entry.job) == (ledger.PROPOSAL_REJECT, "ask Maya first", "contradiction")
    queue = proposal_queue(sample_field)
    assert CONTRADICTION not in [e.proposal.id for e in queue.entries]
    # With the contradiction proposal decided, consolidate no longer conflicts (still stale).
    assert queue.get(CONSOLIDATE).flags == ["stale"]
    with pytest.raises(MemtuiError):
        proposals.reject(sample_field, DEDUPE, reason=" ")


def test_unknown_proposal(sample_field):
    with pytest.raises(proposals.ProposalNotFoundError):
        approve_proposal(sample_field, "2026-01-01-nothing-01")
    with pytest.raises(proposals.ProposalNotFoundError):
        review_proposal(sample_field, "2026-01-01-nothing-01")


# --------------------------------------------------------------------------- revert and the regret rate


def test_revert_restores_previous_bytes_and_counts_as_regret(sample_field):
    before = snapshot(sample_field)
    approve_proposal(sample_field, DEDUPE)
    approve_proposal(sample_field, EXPIRE)
    plan = proposals.plan_revert(sample_field, DEDUPE)
    assert plan.conflicts == [] and plan.missing == []
    entry = proposals.revert(sample_field, DEDUPE, reason="the two SLA pages differ after all")
    after = snapshot(sample_field)
    for path in ("notes/brightline-pilot-sla.md", "notes/brightline-sla-expectations.md"):
        assert after[path] == before[path]
    assert after["notes/trackstream-trial-terms.md"] != before["notes/trackstream-trial-terms.md"]
    assert entry.action == ledger.PROPOSAL_REVERT and entry.job == "dedupe"
    assert {p["path"]: (p["before"], p["after"]) for p in entry.pages} == {
        "notes/brightline-pilot-sla.md": (
            sha(proposed(sample_field, DEDUPE, "notes/brightline-pilot-sla.md")),
            sha(before["notes/brightline-pilot-sla.md"]),
        ),
        "notes/brightline-sla-expectations.md": (None, sha(before["notes/brightline-sla-expectations.md"])),
    }
    stats = proposals.stats(sample_field)
    assert stats.jobs["dedupe"].regret_rate == 1.0
    assert stats.jobs["expire"].regret_rate == 0.0
    assert (stats.total.approved, stats.total.reverted, stats.total.regret_rate) == (2, 1, 0.5)
    assert stats.pending == 2
    assert proposal_queue(sample_field, include_decided=True).get(DEDUPE).state == "reverted"
    with pytest.raises(MemtuiError):
        proposals.revert(sample_field, DEDUPE)  # already reverted


def test_revert_refuses_pages_edited_since_unless_forced(sample_field):
    path = "notes/trackstream-trial-terms.md"
    original = (sample_field / path).read_bytes()
    approve_proposal(sample_field, EXPIRE)
    approved = (sample_field / path).read_bytes()
    edited = approved + b"- Renewal call booked for 2027-09. [stated]\n"
    (sample_field / path).write_bytes(edited)
    plan = proposals.plan_revert(sample_field, EXPIRE)
    (page,) = plan.pages
    assert page.conflict and page.lost is not None
    lost = [line.text for line in page.lost.unified if line.kind == "add"]
    assert lost == ["- Renewal call booked for 2027-09. [stated]"]
    with pytest.raises(StaleWriteError):
        proposals.revert(sample_field, EXPIRE)
    assert (sample_field / path).read_bytes() == edited
    proposals.revert(sample_field, EXPIRE, force=True)
    assert (sample_field / path).read_bytes() == original
    assert safe_write.read_blob(sample_field, sha(edited)) == edited  # the overwritten edit is kept


def test_revert_of_a_pending_proposal_is_refused(sample_field):
    with pytest.raises(MemtuiError, match="not approved"):
        proposals.plan_revert(sample_field, DEDUPE)


# --------------------------------------------------------------------------- malformed proposals


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        (None, "no proposal.yaml"),
        (b"id: [unclosed\n", "proposal.yaml"),
        (b"- a list\n", "not a mapping"),
        (b"id: other-name\njob: x\nbase: {}\n", "but the folder is"),
        (b"id: p\njob: x\nbase: {notes/a.md: nothex}\n", "not a sha256"),
        (b"id: p\njob: x\nbase: {}\ndelete: [notes/b.md]\n", "needs its base hash"),
        (b"id: p\njob: x\nbase: {notes/a.md: null}\ndelete: [notes/a.md]\n", "both deleted and given"),
        (b"a: &x [1]\nb: *x\n", "aliases"),
    ],
)
def test_malformed_proposals_are_listed_as_invalid(tmp_path, manifest, message):
    root = tmp_path / "field"
    write_page(root, "notes/a.md", "---\ntitle: a\n---\na\n")
    folder = root / ".dream/proposals/p"
    (folder / "files/notes").mkdir(parents=True)
    (folder / "files/notes/a.md").write_bytes(b"new\n")
    if manifest is not None:
        (folder / "proposal.yaml").write_bytes(manifest)
    entry = proposal_queue(root).get("p")
    assert entry.state == "invalid"
    assert any(message in e for e in entry.validation.errors), entry.validation.errors
    with pytest.raises(MemtuiError, match="cannot be applied"):
        approve_proposal(root, "p")
    assert (root / "notes/a.md").read_text() == "---\ntitle: a\n---\na\n"
