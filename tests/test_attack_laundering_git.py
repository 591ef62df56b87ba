"""Issue 40, hazard 10, in git: a ``[suggested]`` claim reworded and moved to another page as ``[stated]``.

Class: Forged or replayed state (a commit, or an edit left uncommitted, rewrites a claim's provenance;
the history must still say the claim was the agent's idea). The weakest tag a claim ever had used to
be matched by the same text only: reworded as it moved, the claim was never reported as promoted.
Each test performs the laundering for real, in a git repository in ``tmp_path``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memtui.dialects.open import open_field
from memtui.field import claims as claims_mod
from memtui.field.checks import run_checks
from memtui.field.claims import KeptClaims, claims_in_page_order, field_claims, keep_claims
from tests.helpers_field import make_field, run_cli_json
from tests.helpers_review import git, init_repo, use_git_identity

IDEA = "- Ship the beta to testers in May [suggested]\n"
# The same claim as a consolidation rewords it, stated as the user's decision.
DECISION = "- We ship the beta to our testers in May, as decided [stated]\n"
# Shares words with the idea ("ship", "to", "the"), says something else.
UNRELATED = "- Ship the invoices to customers monthly [stated]\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    use_git_identity(monkeypatch, tmp_path)
    root = make_field(tmp_path / "f", {"notes/a.md": "# A\n\n" + IDEA + "- Other line [observed]\n"})
    init_repo(root)
    return root


def _promoted(root: Path) -> list[tuple[str, int, str | None, str]]:
    return [(c.path, c.line, c.promoted_from, c.tag) for c in field_claims(open_field(root)) if c.promoted_from]


def _move_reworded(root: Path, extra: str = "") -> None:
    (root / "notes/a.md").write_text("# A\n\n- Other line [observed]\n", encoding="utf-8")
    (root / "notes/b.md").write_text("# B\n\n" + DECISION + extra, encoding="utf-8")


def test_h10_git_a_reworded_claim_moved_to_another_page_in_a_commit_is_a_promotion(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Attack: one commit takes the idea off page A and writes it, reworded, into page B as a
    decision; one more commit buries it. The texts differ (no exact match), so did the pages."""
    _move_reworded(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "consolidate")
    (repo / "notes/b.md").write_text("# B\n\n" + DECISION + "- Padding [observed]\n", encoding="utf-8")
    git(repo, "commit", "-qam", "tidy")
    assert _promoted(repo) == [("notes/b.md", 3, "suggested", "stated")]
    assert any(f.rule == "tag-promoted" and f.path == "notes/b.md" for f in run_checks(open_field(repo)))
    code, data, _ = run_cli_json(["claims", str(repo), "--promoted"], capsys)
    assert code == 0
    assert [(c["path"], c["promoted_from"]) for c in data] == [("notes/b.md", "suggested")]


def test_h10_git_a_reworded_claim_moved_in_an_uncommitted_edit_is_a_promotion(repo: Path) -> None:
    """Attack: the same move left uncommitted, and the page that states it written *before* the
    idea is taken off its page, so the app's kept analysis saw page B while page A still held it."""
    per_page = KeptClaims()
    field = open_field(repo)
    keep_claims(field, per_page)
    (repo / "notes/b.md").write_text("# B\n\n" + DECISION, encoding="utf-8")
    field.refresh_page("notes/b.md")
    keep_claims(field, per_page)
    assert not [c for c in claims_in_page_order(field.pages, per_page) if c.promoted_from]
    (repo / "notes/a.md").write_text("# A\n\n- Other line [observed]\n", encoding="utf-8")
    field.refresh_page("notes/a.md")
    keep_claims(field, per_page)
    found = [(c.path, c.promoted_from) for c in claims_in_page_order(field.pages, per_page) if c.promoted_from]
    assert found == [("notes/b.md", "suggested")]
    assert _promoted(repo) == [("notes/b.md", 3, "suggested", "stated")]


def test_h10_git_an_unrelated_claim_is_not_matched(repo: Path) -> None:
    """The same commit also writes a stated claim sharing words with the idea: only the reworded
    idea is a promotion. Nor is a stated claim beside a suggested one still on its page."""
    _move_reworded(repo, UNRELATED)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "consolidate")
    assert _promoted(repo) == [("notes/b.md", 3, "suggested", "stated")]
    # A short claim sharing one word of two ("use") is another claim, not the idea reworded.
    (repo / "notes/c.md").write_text("- Use Redis [suggested]\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "idea")
    (repo / "notes/c.md").write_text("- Use Postgres [stated]\n", encoding="utf-8")
    # Still on its page, a suggestion is no earlier version of a stated claim like it beside it.
    (repo / "notes/d.md").write_text(
        "- The API should use JWT refresh tokens [suggested]\n- The API uses JWT tokens [observed]\n",
        encoding="utf-8",
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "more")
    assert _promoted(repo) == [("notes/b.md", 3, "suggested", "stated")]


def test_h10_git_the_match_is_bounded(repo: Path) -> None:
    """Unbounded work: a commit deletes 6,000 claims, each sharing five words (in the reverse order:
    not alike) with one of 100 stated claims now: 60 candidates per claim. At most ``EVER_ALIKE``
    claims of the history are indexed and each claim is compared word by word with at most
    ``MAX_CANDIDATES`` of them (60 each would be 6,000 comparisons); the reworded idea is still found."""
    stated, filler = [], []
    for j in range(100):
        words = [f"k{j}x{k}" for k in range(8)]
        stated.append(f"- {' '.join(words)} [stated]\n")
        for i in range(60):
            shared = [words[(i + t) % 8] for t in range(5)][::-1]
            filler.append(f"- {' '.join(shared)} u{j}y{i}a u{j}y{i}b u{j}y{i}c [suggested]\n")
    (repo / "notes/bulk.md").write_text("".join(filler), encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "bulk")
    (repo / "notes/bulk.md").unlink()
    _move_reworded(repo, "".join(stated))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "consolidate")
    field = open_field(repo)
    found = field_claims(field)
    assert [(c.path, c.line) for c in found if c.promoted_from] == [("notes/b.md", 3)]
    ever = claims_mod._git_ever(field)
    assert ever.indexed == claims_mod.EVER_ALIKE < len(filler) + 1
    looked_up = sum(1 for c in found if c.tag != "suggested")
    assert claims_mod.MAX_CANDIDATES * 50 <= ever.compared <= looked_up * claims_mod.MAX_CANDIDATES
