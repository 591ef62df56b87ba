"""A human's approval in memtui's ledger is review evidence for exactly the bytes approved:
the page reads "reviewed" until those bytes change, the approval is undone or reverted."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtui.dialects.open import open_field
from memtui.review import ledger, proposals, undo
from memtui.store.files import sha256_bytes
from tests.helpers import write_page
from tests.helpers_review import approve_proposal, staging_proposal

pytestmark = pytest.mark.usefixtures("reviewer_maya")

PAGE = "notes/hosting.md"
OLD = b"---\ntitle: Hosting\n---\n- Deploy on Heroku. [stated]\n"
NEW = b"---\ntitle: Hosting\n---\n- Deploy on Fly.io. [stated]\n"


def trust_now(root: Path) -> str:
    return ledger.with_approvals(open_field(root)).trust(PAGE)


@pytest.fixture
def field(tmp_path: Path) -> Path:
    root = tmp_path / "field"
    write_page(root, PAGE, OLD.decode())
    staging_proposal(root, "2026-12-01-host-01", files={PAGE: NEW}, base={PAGE: sha256_bytes(OLD)})
    return root


def test_an_approved_proposal_makes_its_pages_reviewed_while_they_keep_those_bytes(field: Path) -> None:
    assert trust_now(field) == "unknown"  # no review record anywhere
    approve_proposal(field, "2026-12-01-host-01")
    assert (field / PAGE).read_bytes() == NEW
    assert trust_now(field) == "reviewed"
    assert ledger.approvals(field)[PAGE] == (sha256_bytes(NEW), "maya")
    (field / PAGE).write_bytes(NEW + b"- An agent added this. [inferred]\n")
    assert trust_now(field) == "unknown"  # the approval was for other bytes


def test_an_undone_or_reverted_approval_is_no_evidence(field: Path) -> None:
    approve_proposal(field, "2026-12-01-host-01")
    undo.undo(field, kind="proposals")
    assert trust_now(field) == "unknown"
    approve_proposal(field, "2026-12-01-host-01")
    proposals.revert(field, "2026-12-01-host-01", reason="wrong host")
    assert (field / PAGE).read_bytes() == OLD and trust_now(field) == "unknown"


def test_a_forged_ledger_line_is_no_evidence(field: Path) -> None:
    forged = ledger.LedgerEntry(
        ts=ledger.now_iso(),
        who="mallory",
        action=ledger.PROPOSAL_APPROVE,
        target="x",
        pages=[{"path": PAGE, "before": None, "after": sha256_bytes(OLD)}],
    )
    path = ledger.ledger_path(field)
    path.parent.mkdir(parents=True, exist_ok=True)
    import json

    path.write_text(json.dumps(forged.to_json()) + "\n")  # no signature, no chain
    assert trust_now(field) == "unknown"
