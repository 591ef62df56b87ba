"""Issue 40, hazard 10: an agent's ``[suggested]`` idea laundered into a ``[stated]`` decision, unseen.

Class: Forged or replayed state (a job rewrites what a claim's provenance says; memtui must show it
wherever the rewrite happens: another page, another hunk, a second proposal, one more git commit).
Each test performs the laundering for real, on folders in ``tmp_path`` and real git repositories.
"""

from __future__ import annotations

import pytest

from memtui.dialects.open import open_field
from memtui.field.checks import run_checks
from memtui.field.claims import field_claims
from memtui.review.tag_changes import proposal_tag_changes, tag_changes
from tests.helpers_field import make_field, page, run_cli_json
from tests.helpers_review import (
    approve_proposal,
    git,
    init_repo,
    review_proposal,
    sha,
    staging_proposal,
    use_git_identity,
)

IDEA = "- Use Redis for the job queue [suggested]\n"
# The same claim reworded (as a consolidation writes it) and stated as the user's decision.
DECISION = "- We use Redis for the job queue, as decided [stated]\n"
FILLER = "".join(f"- Unrelated note number {n} about invoices [observed]\n" for n in range(12))

DRAFT = page("id: draft\ntitle: Queue ideas", "# Ideas\n\n" + IDEA + "- Cache warmups [observed]\n")
TARGET = page("id: queue\ntitle: Queue", "# Queue\n\n- Postgres holds the jobs [observed]\n")
MERGED = page("id: queue\ntitle: Queue", "# Queue\n\n- Postgres holds the jobs [observed]\n" + DECISION)


def _promotions(changes):
    return [(c.path, c.before, c.after, c.from_path, c.via) for c in changes if c.promotion]


# ------------------------------------------------------------------ one proposal


def test_h10_reworded_and_moved_to_another_page_is_a_promotion(tmp_path, capsys):
    """Attack: a consolidation retires the draft holding the idea and writes it, reworded, as a
    decision into another page. The words differ (no exact match) and the pages differ (no hunk)."""
    root = make_field(tmp_path / "f", {"notes/draft.md": DRAFT, "notes/queue.md": TARGET})
    staging_proposal(
        root,
        "2026-12-01-consolidate-01",
        job="consolidate",
        files={"notes/queue.md": MERGED.encode()},
        base={"notes/queue.md": sha(TARGET.encode()), "notes/draft.md": sha(DRAFT.encode())},
        delete=["notes/draft.md"],
    )
    code, data, _ = run_cli_json(["proposals", "show", root, "2026-12-01-consolidate-01"], capsys)
    assert code == 0
    assert [(c["path"], c["from"], c["to"], c["promotion"], c.get("from_path")) for c in data["tag_changes"]] == [
        ("notes/queue.md", "suggested", "stated", True, "notes/draft.md")
    ]


def test_h10_reworded_and_moved_to_another_hunk_of_the_same_page(tmp_path):
    """Attack: the idea is deleted at the top of the page and written, reworded and stated, twelve
    lines further down: two hunks, so the same-hunk rewrite match never paired them."""
    before = "# Queue\n\n" + IDEA + FILLER
    after = "# Queue\n\n" + FILLER + DECISION
    found = tag_changes("notes/q.md", before.encode(), after.encode())
    assert [(c.line, c.old_line, c.before, c.after, c.promotion) for c in found] == [
        (15, 3, "suggested", "stated", True)
    ]
    # Control: an unrelated claim written in the other hunk is no tag change.
    unrelated = "# Queue\n\n" + FILLER + "- Invoices are paid within thirty days [stated]\n"
    assert tag_changes("notes/q.md", before.encode(), unrelated.encode()) == []


def test_h10_a_hostile_proposal_of_thousands_of_claims_is_matched_in_bounded_work(tmp_path):
    """Unbounded reads: 3,000 removed and 3,000 added claims sharing common words stay tractable
    (candidates come from shared rare words, at most a few compared each), and the laundered one is
    still found among them."""
    olds = "".join(f"- the a of to item{n} alpha{n} [observed]\n" for n in range(3000)) + IDEA
    news = "".join(f"- the a of to thing{n} beta{n} [stated]\n" for n in range(3000)) + DECISION
    found = proposal_tag_changes([("a.md", olds.encode(), None), ("b.md", None, news.encode())])
    assert _promotions(found) == [("b.md", "suggested", "stated", "a.md", "")]


# ------------------------------------------------------------------ split over two proposals


@pytest.fixture
def split(tmp_path):
    """Attack: proposal A only retires the draft (no tag change in it); proposal B only adds the
    ``[stated]`` line to another page (no weaker version in it). Neither alone shows laundering."""
    root = make_field(tmp_path / "f", {"notes/draft.md": DRAFT, "notes/queue.md": TARGET})
    staging_proposal(
        root,
        "2026-12-01-dedupe-01",
        job="dedupe",
        base={"notes/draft.md": sha(DRAFT.encode())},
        delete=["notes/draft.md"],
        created="2026-12-01T03:00:00Z",
    )
    staging_proposal(
        root,
        "2026-12-01-consolidate-02",
        job="consolidate",
        files={"notes/queue.md": MERGED.encode()},
        base={"notes/queue.md": sha(TARGET.encode())},
        created="2026-12-01T03:05:00Z",
    )
    return root


def test_h10_split_over_two_pending_proposals(split):
    review = review_proposal(split, "2026-12-01-consolidate-02")
    assert _promotions(review.tag_changes) == [
        ("notes/queue.md", "suggested", "stated", "notes/draft.md", "proposal 2026-12-01-dedupe-01")
    ]
    assert review.promoted_lines("notes/queue.md") == {8}
    # The retiring half alone adds nothing, so it shows no promotion of its own.
    assert _promotions(review_proposal(split, "2026-12-01-dedupe-01").tag_changes) == []


def test_h10_split_over_two_proposals_after_the_first_is_approved(split, monkeypatch):
    """The draft is already retired (``.memtui/archive/retired/``) when the second proposal is shown:
    the retired version, kept in ``.memtui/blobs/`` under the ledger's hash, still holds the idea."""
    monkeypatch.setenv("MEMTUI_REVIEWER", "maya")
    approve_proposal(split, "2026-12-01-dedupe-01")
    assert not (split / "notes/draft.md").exists()
    review = review_proposal(split, "2026-12-01-consolidate-02")
    assert _promotions(review.tag_changes) == [
        ("notes/queue.md", "suggested", "stated", "notes/draft.md", "approved 2026-12-01-dedupe-01")
    ]
    assert review.to_json()["tag_changes"][0]["via"] == "approved 2026-12-01-dedupe-01"


def test_h10_a_tampered_retired_copy_does_not_count(split, monkeypatch):
    """Forged state: the agent rewrites the blob memtui kept of the retired page: it no longer hashes
    to what the ledger signed, so it is ignored (neither trusted nor a crash)."""
    monkeypatch.setenv("MEMTUI_REVIEWER", "maya")
    approve_proposal(split, "2026-12-01-dedupe-01")
    digest = sha(DRAFT.encode())
    blob = split / ".memtui" / "blobs" / digest[:2] / digest
    assert blob.exists()
    blob.write_bytes(DRAFT.replace("[suggested]", "[stated]").encode())
    assert _promotions(review_proposal(split, "2026-12-01-consolidate-02").tag_changes) == []


# ------------------------------------------------------------------ git: the weakest tag a claim ever had


@pytest.fixture
def repo(tmp_path, monkeypatch):
    use_git_identity(monkeypatch, tmp_path)
    root = make_field(tmp_path / "f", {"notes/a.md": "- Ship the beta in May [suggested]\n- Other line [observed]\n"})
    init_repo(root)
    return root


def _promoted(root):
    return [(c.path, c.line, c.promoted_from, c.tag) for c in field_claims(open_field(root)) if c.promoted_from]


def test_h10_git_one_more_commit_after_a_promotion_keeps_it(repo):
    """Attack: promote in one commit, then commit an unrelated edit to the same page: the previous
    revision now holds ``[stated]`` too, and the promotion used to vanish."""
    (repo / "notes/a.md").write_text("- Ship the beta in May [stated]\n- Other line [observed]\n", encoding="utf-8")
    git(repo, "commit", "-qam", "decided")
    assert _promoted(repo) == [("notes/a.md", 1, "suggested", "stated")]
    (repo / "notes/a.md").write_text(
        "- Ship the beta in May [stated]\n- Other line [observed]\n- Padding [observed]\n", encoding="utf-8"
    )
    git(repo, "commit", "-qam", "tidy")
    assert _promoted(repo) == [("notes/a.md", 1, "suggested", "stated")]
    assert any(f.rule == "tag-promoted" and f.path == "notes/a.md" for f in run_checks(open_field(repo)))


def test_h10_git_an_uncommitted_edit_after_a_committed_promotion_keeps_it(repo):
    (repo / "notes/a.md").write_text("- Ship the beta in May [stated]\n- Other line [observed]\n", encoding="utf-8")
    git(repo, "commit", "-qam", "decided")
    # Attack: an edit left uncommitted makes HEAD (already [stated]) the "previous revision".
    (repo / "notes/a.md").write_text("- Ship the beta in May [stated]\n- Other line [inferred]\n", encoding="utf-8")
    assert _promoted(repo) == [("notes/a.md", 1, "suggested", "stated")]


def test_h10_git_a_claim_moved_to_another_page_in_a_commit(repo):
    """Attack: one commit deletes the page holding the idea and creates another stating it."""
    (repo / "notes/a.md").unlink()
    (repo / "notes/b.md").write_text("# B\n\n- Ship the beta in May [stated]\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "moved")
    assert _promoted(repo) == [("notes/b.md", 3, "suggested", "stated")]
    # Control: a claim that was only ever stated is no promotion; transcripts are evidence, not claims.
    (repo / "sessions").mkdir()
    (repo / "sessions/t.md").write_text("- Invoices monthly [suggested]\n", encoding="utf-8")
    (repo / "notes/c.md").write_text("- Keep the old logo [stated]\n- Invoices monthly [stated]\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "more")
    assert _promoted(repo) == [("notes/b.md", 3, "suggested", "stated")]


def test_h10_git_the_walk_is_three_git_commands_per_head(repo, monkeypatch):
    """Unbounded reads: the history walk asks git a fixed number of times, whatever the history
    holds (50 commits here), and nothing again while HEAD stays."""
    for number in range(50):
        (repo / "notes/a.md").write_text(f"- Ship the beta in May [stated]\n- Edit {number} [observed]\n")
        git(repo, "commit", "-qam", f"edit {number}")
    from memtui.store import gitrepo

    calls: list[tuple[str, ...]] = []
    real = gitrepo.run

    def counted(root, *args, **kwargs):
        calls.append(args)
        return real(root, *args, **kwargs)

    monkeypatch.setattr(gitrepo, "run", counted)
    field = open_field(repo)
    assert [c.promoted_from for c in field_claims(field) if c.promoted_from] == ["suggested"]
    walk = [c for c in calls if c[0] == "log" or c[:2] in (("cat-file", "--batch-check"),)]
    assert len([c for c in walk if c[0] == "log" and "--raw" in c]) == 1
    calls.clear()
    field_claims(field)
    assert not [c for c in calls if c[0] == "log" and "--raw" in c]
