"""Source tags a proposal changes: ``review.tag_changes``, ``proposals show`` and the TUI's diff view."""

from __future__ import annotations

import pytest
from rich.console import Console

from memtui.render.diff import side_by_side, unified
from memtui.review.diffs import page_diff
from memtui.review.tag_changes import tag_changes
from tests.helpers_field import make_field, page, run_cli, run_cli_json
from tests.helpers_review import branch_proposal, init_repo, sha, staging_proposal

FM = "id: q\ntitle: Queue\nkind: semantic"
BEFORE = page(
    FM,
    (
        "# Queue\n\n"
        "- Postgres holds the jobs [observed]\n"  # line 8
        "- Use Redis for the job queue [suggested]\n"  # line 9
        "- Workers scale on queue depth [inferred]\n"  # line 10
        "- The queue is drained nightly [stated]\n"  # line 11
    ),
)
# The job rewrote line 9 (new words and a stronger tag), lowered line 11 and added an unrelated claim.
AFTER = page(
    FM,
    (
        "# Queue\n\n"
        "- Postgres holds the jobs [observed]\n"
        "- Maya chose Redis for the job queue in March [stated]\n"  # line 9: promoted, words changed
        "- Workers scale on queue depth [inferred]\n"
        "- The queue is drained nightly [inferred]\n"  # line 11: same words, weaker tag
        "- Invoices go out on the first of the month [stated]\n"  # line 12: new, not a rewrite
    ),
)


def _changes(before: str | bytes, after: str | bytes, path: str = "notes/q.md"):
    as_bytes = [t.encode("utf-8") if isinstance(t, str) else t for t in (before, after)]
    return [(c.line, c.before, c.after, c.promotion) for c in tag_changes(path, *as_bytes)]


def test_a_rewritten_line_and_a_lowered_tag():
    assert _changes(BEFORE, AFTER) == [(9, "suggested", "stated", True), (11, "stated", "inferred", False)]


def test_moved_claims_match_by_their_text_anywhere_in_the_page():
    before = (
        "- Alpha fact one [suggested]\n" + "".join(f"filler {n}\n" for n in range(12)) + "- Beta fact two [observed]\n"
    )
    after = (
        "- Beta fact two [stated] (standup 2026-03-02)\n"
        + "".join(f"filler {n}\n" for n in range(12))
        + "- Alpha fact one [suggested]\n"
    )
    assert _changes(before, after) == [(1, "observed", "stated", True)]  # the provenance is not the claim


def test_a_replaced_claim_with_other_words_is_not_a_tag_change():
    before = "- Use Redis for the job queue [suggested]\n"
    after = "- Invoices go out on the first of the month [stated]\n"
    assert _changes(before, after) == []


def test_striking_the_old_line_and_writing_it_stronger_is_a_promotion():
    before = "- Public API: REST [suggested]\n"
    after = "- ~~Public API: REST [suggested]~~ superseded 2026-04-03\n- Public API: REST [stated]\n"
    assert _changes(before, after) == [(2, "suggested", "stated", True)]


def test_unchanged_tags_rewritten_words_and_whole_pages_give_nothing():
    assert _changes(BEFORE, BEFORE) == []
    assert _changes("- A fact here [stated]\n", "- A fact right here [stated]\n") == []
    assert tag_changes("n.md", None, AFTER.encode()) == [] and tag_changes("n.md", BEFORE.encode(), None) == []


@pytest.mark.parametrize("form", ["lf", "crlf", "bom", "bom-crlf"])
def test_lines_are_counted_in_the_proposed_version_whatever_its_form(form):
    after = AFTER.replace("---\n# Queue", "---\n# Queue\n\nA new intro line. [observed]")  # shifts the body by 2
    if "crlf" in form:
        after = after.replace("\n", "\r\n")
    if "bom" in form:
        after = "\ufeff" + after
    found = _changes(BEFORE, after)
    assert found == [(11, "suggested", "stated", True), (13, "stated", "inferred", False)]
    lines = after.lstrip("\ufeff").splitlines()
    assert "[stated]" in lines[10] and "Redis" in lines[10] and "drained" in lines[12]


# ------------------------------------------------------------------ proposals show


@pytest.fixture
def field_with_proposal(tmp_path):
    root = make_field(tmp_path / "f", {"notes/q.md": BEFORE, "notes/other.md": "- Unrelated [observed]\n"})
    staging_proposal(
        root,
        "2026-12-01-consolidate-01",
        job="consolidate",
        files={"notes/q.md": AFTER.encode()},
        base={"notes/q.md": sha(BEFORE.encode())},
    )
    return root


def test_show_json_lists_the_tag_changes(field_with_proposal, capsys):
    code, data, _ = run_cli_json(["proposals", "show", field_with_proposal, "2026-12-01-consolidate-01"], capsys)
    assert code == 0
    assert data["tag_changes"] == [
        {"path": "notes/q.md", "line": 9, "from": "suggested", "to": "stated", "promotion": True},
        {"path": "notes/q.md", "line": 11, "from": "stated", "to": "inferred", "promotion": False},
    ]


def test_show_text_flags_the_promotion(field_with_proposal, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run_cli(["proposals", "show", field_with_proposal, "2026-12-01-consolidate-01"], capsys)
    assert code == 0
    assert "\u2691 promoted [suggested] \u2192 [stated] notes/q.md:9" in out
    assert "tag changed [stated] \u2192 [inferred] notes/q.md:11" in out
    assert out.index("Source tags it changes") < out.index("Changes (disk now")


def test_a_git_branch_proposal_gets_them_too(tmp_path, capsys):
    root = make_field(tmp_path / "f", {"notes/q.md": BEFORE})
    init_repo(root)
    branch_proposal(
        root, "2026-12-01-consolidate-02", {"notes/q.md": AFTER.encode()}, "Consolidate\n\nDream-Job: consolidate"
    )
    code, data, _ = run_cli_json(["proposals", "show", root, "2026-12-01-consolidate-02"], capsys)
    assert code == 0
    assert [(c["line"], c["promotion"]) for c in data["tag_changes"]] == [(9, True), (11, False)]


# ------------------------------------------------------------------ the TUI's diff view


def _render(renderable) -> list[str]:
    console = Console(width=200, record=True, color_system=None)
    console.print(renderable)
    return console.export_text().splitlines()


def test_the_diff_view_marks_the_promoted_line_only():
    diff = page_diff("notes/q.md", BEFORE.encode(), AFTER.encode())
    lines = _render(unified(diff, {}, {9}))
    marked = [line for line in lines if "\u2691 promoted" in line]
    assert len(marked) == 1 and "+ - Maya chose Redis" in marked[0]
    rows = [line for line in _render(side_by_side(diff, {}, {9})) if "\u2691 promoted" in line]
    assert len(rows) == 1 and "Maya chose Redis" in rows[0]
    assert not any("\u2691" in line for line in _render(unified(diff, {})))


# ------------------------------------------------------------------ claims moved between pages


def test_a_consolidation_that_moves_an_idea_into_another_page_as_a_decision_is_a_promotion(
    tmp_path, capsys, monkeypatch
):
    """dedupe/consolidate retire one page and rewrite another: the claim changes page and tag at once."""
    monkeypatch.setenv("COLUMNS", "200")
    draft = page(
        "id: draft\ntitle: Queue ideas",
        "# Ideas\n\n- Use Redis for the job queue [suggested]\n- Cache warmups [observed]\n",
    )
    target = page("id: queue\ntitle: Queue", "# Queue\n\n- Postgres holds the jobs [observed]\n")
    merged = page(
        "id: queue\ntitle: Queue",
        (
            "# Queue\n\n- Postgres holds the jobs [observed]\n"
            "- Use Redis for the job queue [stated]\n"  # line 8: the draft's idea (its line 7), now a decision
            "- Cache warmups [observed]\n"  # moved as it was: no change
        ),
    )
    root = make_field(tmp_path / "f", {"notes/draft.md": draft, "notes/queue.md": target})
    staging_proposal(
        root,
        "2026-12-01-consolidate-03",
        job="consolidate",
        files={"notes/queue.md": merged.encode()},
        base={"notes/queue.md": sha(target.encode()), "notes/draft.md": sha(draft.encode())},
        delete=["notes/draft.md"],
    )
    code, data, _ = run_cli_json(["proposals", "show", root, "2026-12-01-consolidate-03"], capsys)
    assert code == 0
    assert data["tag_changes"] == [
        {
            "path": "notes/queue.md",
            "line": 8,
            "from": "suggested",
            "to": "stated",
            "promotion": True,
            "from_path": "notes/draft.md",
            "from_line": 7,
        },
    ]
    code, out, _ = run_cli(["proposals", "show", root, "2026-12-01-consolidate-03"], capsys)
    assert "\u2691 promoted [suggested] \u2192 [stated] notes/queue.md:8 (was [suggested] in notes/draft.md:7)" in out


def test_a_claim_moved_with_its_tag_or_kept_on_its_page_is_not_matched_elsewhere():
    from memtui.review.tag_changes import proposal_tag_changes

    a = b"- Redis for the queue [suggested]\n- Other [observed]\n"
    b_before = b"- Redis for the queue [stated]\n"
    # Page a keeps its idea; page b already held the decision and keeps it: nothing moved.
    assert (
        proposal_tag_changes(
            [("a.md", a, a + b"- New [observed]\n"), ("b.md", b_before, b_before + b"- More [observed]\n")]
        )
        == []
    )
    # Moved to a new page with the same tag: no change; with a weaker tag: a tag change, not a promotion.
    moved = proposal_tag_changes(
        [("a.md", a, None), ("c.md", None, b"- Redis for the queue [suggested]\n- Other [inferred]\n")]
    )
    assert [(c.path, c.line, c.before, c.after, c.promotion, c.from_path) for c in moved] == [
        ("c.md", 2, "observed", "inferred", False, "a.md"),
    ]
