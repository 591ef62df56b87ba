"""Issue 40: attacks on memtui's own record (the signed ledger of decisions and the apply journals).

Class "Forged or replayed state" (THREATS.md): a journal copied back, a ledger line
written, prepended, truncated or emptied by whoever can write the field, a key that
does not persist or was lost; and class "Races and crashes": kill -9 in the middle of
a rejection. Every test performs the attack on a real field in tmp_path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.errors import MemtuiError
from memtui.review import apply_journal, ledger, quarantine, undo
from memtui.store import locations, signing
from memtui.store.files import sha256_bytes
from tests.helpers_field import run_cli, run_cli_json
from tests.helpers_review import approve_proposal, proposal_queue, snapshot

DEDUPE = "2026-11-27-dedupe-01"
EDI = "quarantine/edi-214-status-codes.md"
HOSTILE = "quarantine/vendor-pricing-update.md"

pytestmark = pytest.mark.usefixtures("reviewer_maya")


def journals(root: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in apply_journal.pending_journals(root)}


def put_back(root: Path, copies: dict[str, bytes]) -> None:
    folder = apply_journal.journal_dir(root)
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in copies.items():
        (folder / name).write_bytes(data)


def copy_journals_at(monkeypatch: pytest.MonkeyPatch, root: Path, point: str) -> dict[str, bytes]:
    """What an agent reading the field sees in ``.memtui/journal/`` while a change is at ``point``
    (the journal is signed and complete then); the change itself runs on to the end."""
    copies: dict[str, bytes] = {}
    real = apply_journal._maybe_crash

    def spy(at: str) -> None:
        if at == point:
            copies.update(journals(root))
        real(at)

    monkeypatch.setattr(apply_journal, "_maybe_crash", spy)
    return copies


def crash(root: Path, code: str, point: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run ``code`` in a child memtui that dies abruptly at ``point`` (as kill -9 would leave it)."""
    env = dict(os.environ, MEMTUI_TEST_CRASH=point, MEMTUI_REVIEWER="maya")
    return subprocess.run(
        [sys.executable, "-c", code, os.fspath(root), *args], env=env, capture_output=True, timeout=120, check=False
    )


APPROVE_CODE = (
    "import sys\n"
    "from memtui.review import proposals\n"
    "from memtui.session.opening import open_field\n"
    "proposals.approve(sys.argv[1], sys.argv[2], field=open_field(sys.argv[1]))\n"
)
REJECT_CODE = (
    "import sys\n"
    "from memtui.review import quarantine\n"
    "quarantine.reject_page(sys.argv[1], sys.argv[2], None, reason='prompt injection')\n"
)


def decided(root: Path) -> str | None:
    return proposal_queue(root, with_checks=False, include_decided=True).get(DEDUPE).state


# --------------------------------------------------------------------------- 2. journal replay


def test_h2_a_journal_copied_during_an_approve_and_put_back_does_not_roll_it_back(
    sample_field: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Replayed state: the signed journal of an approve, copied mid-apply, put back after it."""
    copies = copy_journals_at(monkeypatch, sample_field, "after-page-1")
    approve_proposal(sample_field, DEDUPE)
    approved = snapshot(sample_field)
    assert len(copies) == 1 and journals(sample_field) == {}
    put_back(sample_field, copies)
    (recovery,) = apply_journal.recover_interrupted(sample_field)
    assert recovery.outcome == "needs-attention"
    assert "already used" in recovery.problems[0] and "replayed" in recovery.problems[0]
    assert snapshot(sample_field) == approved  # not rolled back
    assert decided(sample_field) == ledger.APPROVED
    code, _, err = run_cli(["proposals", "list", sample_field], capsys)
    assert code == 0 and "replayed copy" in err and "rolled back" not in err
    assert snapshot(sample_field) == approved


def test_h2_an_undos_journal_put_back_does_not_reapply_the_undone_approval(
    sample_field: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replayed state: the journal of an undo, copied mid-undo, put back after it."""
    original = (sample_field / EDI).read_bytes()
    decision = quarantine.approve_page(sample_field, EDI, sha256_bytes(original), to="notes")
    assert decision.moved_to and (sample_field / decision.moved_to).exists()
    copies = copy_journals_at(monkeypatch, sample_field, "after-page-1")
    undo.undo(sample_field, kind="quarantine")
    assert copies and (sample_field / EDI).read_bytes() == original
    put_back(sample_field, copies)
    (recovery,) = apply_journal.recover_interrupted(sample_field)
    assert recovery.outcome == "needs-attention" and "already used" in recovery.problems[0]
    assert (sample_field / EDI).read_bytes() == original  # still undone
    assert not (sample_field / decision.moved_to).exists()
    assert ledger.in_force(ledger.read(sample_field).entries) == []


def test_h2_a_rolled_back_journal_put_back_after_a_later_approve_is_not_replayed(sample_field: Path) -> None:
    """Replayed state: a real crash's journal (rolled back since) copied back after the proposal was approved."""
    result = crash(sample_field, APPROVE_CODE, "after-page-1", DEDUPE)
    assert result.returncode == apply_journal.CRASH_EXIT_CODE, result.stderr
    copies = journals(sample_field)
    (recovery,) = apply_journal.recover_interrupted(sample_field)
    assert recovery.outcome == "rolled-back"
    approve_proposal(sample_field, DEDUPE)
    approved = snapshot(sample_field)
    put_back(sample_field, copies)
    (replay,) = apply_journal.recover_interrupted(sample_field)
    assert replay.outcome == "needs-attention" and "replayed" in replay.problems[0]
    assert snapshot(sample_field) == approved
    assert decided(sample_field) == ledger.APPROVED


def test_h2_a_journal_from_another_field_is_not_replayed(sample_field: Path, tmp_path: Path) -> None:
    """Replayed state: a signed journal of one field (same user key) copied into another."""
    import shutil

    other = tmp_path / "other-field"
    shutil.copytree(sample_field, other)
    assert crash(sample_field, APPROVE_CODE, "after-page-1", DEDUPE).returncode == apply_journal.CRASH_EXIT_CODE
    approve_proposal(other, DEDUPE)
    approved = snapshot(other)
    put_back(other, journals(sample_field))
    (recovery,) = apply_journal.recover_interrupted(other)
    assert recovery.outcome == "needs-attention" and "another field" in recovery.problems[0]
    assert snapshot(other) == approved
    (own,) = apply_journal.recover_interrupted(sample_field)  # the field it belongs to still recovers
    assert own.outcome == "rolled-back"


# --------------------------------------------------------------------------- 5. unsigned lines


def unsigned_line(action: str, target: str, **extra: object) -> bytes:
    line = {
        "ts": "2026-12-01T09:00:00Z",
        "who": "Maya",
        "action": action,
        "target": target,
        "job": "dedupe",
        "carrier": "staging",
        "pages": [],
        "reason": "looks fine",
        "commit": None,
    }
    line.update(extra)
    return json.dumps(line).encode() + b"\n"


def test_h5_an_unsigned_line_prepended_or_appended_decides_nothing_until_adopted(
    sample_field: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Forged state: one unsigned line, before the first signed line (where an older memtui's
    lines were trusted) or after the last, decides a proposal "by Maya"."""
    ledger.append(sample_field, ledger.LedgerEntry("2026-12-01T08:00:00Z", "maya", ledger.PROPOSAL_REJECT, "p-real"))
    path = ledger.ledger_path(sample_field)
    path.write_bytes(unsigned_line(ledger.PROPOSAL_APPROVE, DEDUPE) + path.read_bytes())  # prepended
    read = ledger.read(sample_field)
    assert [e.target for e in read.entries] == ["p-real"]
    assert [(u.number, u.why) for u in read.unverified] == [(1, ledger.UNSIGNED)]
    assert any("ledger line 1 is ignored" in p and "decides nothing" in p for p in read.problems)
    assert decided(sample_field) not in (ledger.APPROVED, ledger.REJECTED)  # still pending
    with open(path, "ab") as handle:  # appended (the old F24)
        handle.write(unsigned_line(ledger.PROPOSAL_REJECT, DEDUPE))
    assert decided(sample_field) not in (ledger.APPROVED, ledger.REJECTED)
    assert len(ledger.read(sample_field).unverified) == 2

    code, out, _ = run_cli(["proposals", "decided", sample_field], capsys)
    assert code == 0 and "ledger line 1 is ignored" in out and "2 decisions are not signed" in out
    code, data, _ = run_cli_json(["proposals", "decided", sample_field], capsys)
    assert [d["decision"]["target"] for d in data["decisions"]] == ["p-real"]
    assert any("not signed" in p for p in data["problems"])

    # The reviewer vouches for the first line only: it counts again, in its place, re-signed.
    code, _, err = run_cli(["proposals", "decided", sample_field, "--adopt", "1", "--yes"], capsys)
    assert code == 0, err
    read = ledger.read(sample_field)
    assert [e.target for e in read.entries] == [DEDUPE, "p-real"] and all(e.signed for e in read.entries)
    assert [u.number for u in read.unverified] == [3]
    assert decided(sample_field) == ledger.APPROVED


def test_h5_an_unsigned_quarantine_approval_is_no_review_evidence(sample_field: Path) -> None:
    """Forged state: an unsigned line claiming Maya approved exactly the bytes of a quarantined page."""
    digest = sha256_bytes((sample_field / HOSTILE).read_bytes())
    line = unsigned_line(
        ledger.QUARANTINE_APPROVE,
        HOSTILE,
        job=None,
        carrier=None,
        pages=[{"path": HOSTILE, "before": digest, "after": digest}],
    )
    path = ledger.ledger_path(sample_field)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(line)  # the only line: before any signed one
    assert ledger.approvals(sample_field) == {}
    assert ledger.read(sample_field).entries == []
    assert undo.candidates(sample_field) == []


# --------------------------------------------------------------------------- 6. truncation


def three_decisions(root: Path) -> None:
    for target in ("p-one", "p-two", "p-three"):
        ledger.append(root, ledger.LedgerEntry("2026-12-01T09:00:00Z", "maya", ledger.PROPOSAL_REJECT, target))


def test_h6_truncating_emptying_or_deleting_the_ledger_is_reported_as_lost_decisions(
    sample_field: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Forged state: the agent truncates, empties, deletes or rewrites ``ledger.jsonl``."""
    three_decisions(sample_field)
    path = ledger.ledger_path(sample_field)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:1]))
    assert "the ledger lost 2 decisions" in ledger.read(sample_field).problems[0]
    anchor = Path(signing.record_path(sample_field, ledger.HEAD_RECORD))
    assert anchor.exists() and sample_field not in anchor.parents  # kept outside the field
    path.write_bytes(b"")
    assert "the ledger lost 3 decisions" in ledger.read(sample_field).problems[0]
    path.write_bytes(b"\n\n\n")  # the right number of lines, none of them decisions
    assert ledger.read(sample_field).lost == 3
    path.unlink()
    read = ledger.read(sample_field)
    assert read.entries == [] and read.lost == 3
    path.write_bytes(lines[0] + lines[1] + unsigned_line(ledger.PROPOSAL_REJECT, "p-three"))  # the last one rewritten
    assert "the ledger lost 1 decision " in ledger.read(sample_field).problems[0]

    path.write_bytes(b"")
    ledger.append(sample_field, ledger.LedgerEntry("2026-12-02T09:00:00Z", "maya", ledger.PROPOSAL_REJECT, "p-four"))
    assert ledger.read(sample_field).lost == 3  # a later decision does not hide the loss
    code, out, _ = run_cli(["quarantine", "decided", sample_field], capsys)
    assert code == 0 and "the ledger lost 3 decisions" in out
    code, out, _ = run_cli(["proposals", "list", sample_field, "--no-checks"], capsys)
    assert "the ledger lost 3 decisions" in out

    code, _, err = run_cli(["quarantine", "decided", sample_field, "--accept-loss", "--yes"], capsys)
    assert code == 0, err
    read = ledger.read(sample_field)
    assert read.lost == 0 and [e.target for e in read.entries] == ["p-four"] and read.problems == []


# --------------------------------------------------------------------------- 7. the key


def test_h7_no_decision_is_recorded_with_a_key_that_does_not_persist(
    sample_field: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Forged state: the key file is a symlink (or unreadable), so only a key for this run exists:
    a decision signed with it would vanish in the next run."""
    monkeypatch.setenv("XDG_CONFIG_HOME", os.fspath(tmp_path / "linked"))
    key = locations.user_config_dir() / signing.KEY_FILE
    key.parent.mkdir(parents=True)
    planted = tmp_path / "planted.key"
    planted.write_bytes(b"k" * signing.KEY_BYTES)
    key.symlink_to(planted)
    assert not signing.key_status().persistent
    before = snapshot(sample_field)
    with pytest.raises(MemtuiError) as caught:
        quarantine.reject_page(sample_field, HOSTILE, None, reason="injection")
    assert "does not persist" in caught.value.message and "symlink" in caught.value.message
    with pytest.raises(MemtuiError, match="does not persist"):
        quarantine.approve_page(sample_field, EDI, None)
    with pytest.raises(MemtuiError, match="does not persist"):
        approve_proposal(sample_field, DEDUPE)
    assert snapshot(sample_field) == before
    assert not ledger.ledger_path(sample_field).exists() or ledger.ledger_path(sample_field).read_bytes() == b""


def test_h7_decisions_signed_with_a_key_this_machine_lacks_are_announced_not_dropped(
    sample_field: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Forged state: the field moves to a new machine (or ~/.config/memtui is lost): every decision
    is signed with a key memtui no longer has."""
    quarantine.reject_page(sample_field, HOSTILE, None, reason="injection")
    approve_proposal(sample_field, DEDUPE)
    monkeypatch.setenv("XDG_CONFIG_HOME", os.fspath(tmp_path / "new-machine"))
    read = ledger.read(sample_field)
    assert read.entries == []
    assert any("2 decisions are signed with a key this machine does not have" in p for p in read.problems)
    assert any("new signing key" in p for p in read.problems)
    code, out, _ = run_cli(["quarantine", "decided", sample_field], capsys)
    assert code == 0 and "2 decisions are signed with a key this machine does not have" in out
    code, _, err = run_cli(["quarantine", "decided", sample_field, "--adopt", "all", "--yes"], capsys)
    assert code == 0, err
    read = ledger.read(sample_field)
    assert [e.action for e in read.entries] == [ledger.QUARANTINE_REJECT, ledger.PROPOSAL_APPROVE]
    assert read.unverified == [] and not any("key this machine" in p for p in read.problems)


# --------------------------------------------------------------------------- 14. kill -9 during reject


def test_h14_a_reject_killed_between_archiving_and_the_ledger_line_is_recovered(
    sample_field: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Races and crashes: the child memtui dies right after moving the page into the archive."""
    original = (sample_field / HOSTILE).read_bytes()
    result = crash(sample_field, REJECT_CODE, "after-page-1", HOSTILE)
    assert result.returncode == apply_journal.CRASH_EXIT_CODE, result.stderr
    archived = sample_field / ".memtui/archive/rejected" / HOSTILE
    assert not (sample_field / HOSTILE).exists() and archived.read_bytes() == original  # half done
    assert ledger.read(sample_field).entries == [] and len(journals(sample_field)) == 1

    code, _, err = run_cli(["quarantine", "list", sample_field], capsys)  # opening the field again
    assert code == 0 and "rolled back" in err
    assert (sample_field / HOSTILE).read_bytes() == original and not archived.exists()
    assert journals(sample_field) == {} and ledger.read(sample_field).entries == []
    assert undo.latest(sample_field, kind="quarantine") is None  # consistently absent

    decision = quarantine.reject_page(sample_field, HOSTILE, sha256_bytes(original), reason="prompt injection")
    assert decision.moved_to == f".memtui/archive/rejected/{HOSTILE}"
    undone, _ = undo.undo(sample_field, kind="quarantine")
    assert undone.action == ledger.QUARANTINE_REJECT
    assert (sample_field / HOSTILE).read_bytes() == original
