"""Hazard 17: a "clean" 3-way merge of a page with repeated lines must never put back a line the
reviewer deleted nor add a heading twice (class: Races and crashes, "what the reviewer sees is
what gets saved and signed"). Each test performs the merge an editor save makes when an agent
wrote the page meanwhile: base = what the editor opened, mine = the reviewer's text, theirs = disk.
"""

from __future__ import annotations

from memtui.store import merge3


def _text(*lines: str) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


def test_h17_a_line_the_reviewer_deleted_among_repeated_lines_is_not_put_back() -> None:
    """Races and crashes: the reviewer deletes one of two equal lines while the agent adds a line
    next to them; the old anchoring took the agent's copy of the repeated run and put it back."""
    base = _text("- a [stated]", "- a [stated]", "- b [stated]")
    mine = _text("- a [stated]", "- b [stated]")  # the reviewer deleted the duplicate
    theirs = _text("- a [stated]", "- b [stated]", "- a [stated]", "- b [stated]")  # the agent inserted "- b"
    result = merge3.merge3(base, mine, theirs)
    assert not result.clean or result.merged.count(b"- a [stated]") == 1
    assert not result.clean  # the two changes touch: the reviewer decides


def test_h17_a_deletion_is_kept_when_the_other_side_inserts_among_equal_lines() -> None:
    """Races and crashes: difflib explained "insert a blank line" as "insert two, delete one
    further down", so the reviewer's deletion of the same line counted as "the same change"."""
    base = _text("- a [stated]", "- a [stated]", "- a [stated]")
    mine = _text("- a [stated]", "- a [stated]")  # the reviewer deleted one line
    theirs = _text("- a [stated]", "", "- a [stated]", "- a [stated]")  # the agent inserted a blank line
    result = merge3.merge3(base, mine, theirs)
    assert result.clean
    assert result.merged == _text("- a [stated]", "", "- a [stated]")
    # and the other way round: the agent's deletion is not lost to the reviewer's insertion
    assert merge3.merge3(base, theirs, mine).merged == _text("- a [stated]", "", "- a [stated]")


def test_h17_two_insertions_at_one_place_under_repeated_headings_conflict_and_add_no_heading() -> None:
    """Races and crashes: both sides add a line under the same one of four equal headings; the
    old merge anchored each on a different heading and wrote a fifth ``## Notes``."""
    base = _text("- b [stated]", "## Notes", "## Notes", "## Notes", "## Notes")
    mine = _text("- b [stated]", "## Notes", "- b [stated]", "## Notes", "## Notes", "## Notes")
    theirs = _text("- b [stated]", "## Notes", "- a [stated]", "## Notes", "## Notes", "## Notes")
    result = merge3.merge3(base, mine, theirs)
    assert not result.clean
    for side in (merge3.MINE, merge3.THEIRS):
        assert result.resolve(side).count(b"## Notes") == 4
    (conflict,) = result.conflicts
    assert conflict.mine == ("- b [stated]\n",) and conflict.theirs == ("- a [stated]\n",)


def test_h17_adjacent_changes_conflict() -> None:
    """Races and crashes: a deletion and an edit of the next line, an insertion at the edge of an
    edit: no unchanged line between them, so no anchor: a conflict, never a guess."""
    base = _text("---", "title: T", "---", "- one [stated]", "- two [stated]", "- three [stated]")
    deleted = base.replace(b"- two [stated]\n", b"")
    edited_next = base.replace(b"- three [stated]", b"- three, per the log [observed]")
    assert not merge3.merge3(base, deleted, edited_next).clean
    assert not merge3.merge3(base, edited_next, deleted).clean
    inserted = base.replace(b"- two [stated]\n", b"- two [stated]\n- two and a half [inferred]\n")
    assert not merge3.merge3(base, inserted, edited_next).clean
    # a stable line between the changes: both are kept, each where it was made
    far = base.replace(b"- one [stated]", b"- ONE [stated]")
    merged = merge3.merge3(base, far, edited_next).merged
    assert merged == far.replace(b"- three [stated]", b"- three, per the log [observed]")


def test_h17_a_clean_merge_holds_each_sides_changes_exactly_once() -> None:
    """Races and crashes: many pages of repeated lines (blank lines, one heading, ``---``), two
    random edits each: every clean merge equals applying both sides' changes, which is only
    certain when a stable line separates them; otherwise it must be a conflict or the same change."""
    import random

    alphabet = ["## Notes\n", "- a [stated]\n", "\n", "---\n"]
    rng = random.Random(17)
    clean = 0
    for _ in range(3000):
        base = [rng.choice(alphabet) for _ in range(rng.randint(2, 8))]
        i = rng.randint(0, len(base) - 1)
        j = rng.randint(0, len(base) - 1)
        if abs(i - j) < 2:
            continue  # adjacent: the positional answer is not the only right one
        mine = base[:i] + ["- mine [stated]\n"] + base[i + 1 :]
        theirs = base[:j] + base[j + 1 :]  # the other side deletes a line
        want = [line for n, line in enumerate(base) if n != j]
        want[i if i < j else i - 1] = "- mine [stated]\n"
        result = merge3.merge3("".join(base).encode(), "".join(mine).encode(), "".join(theirs).encode())
        if result.clean:
            clean += 1
            assert result.merged.count(b"- mine [stated]") == 1
            assert sorted(result.merged.decode().splitlines(True)) == sorted(want)
    assert clean > 1000


def test_h17_a_long_page_with_changes_far_apart_still_merges_by_the_same_rules() -> None:
    """Races and crashes: past ``_EXACT_CELLS`` the alignment falls back to difflib; the grouping that
    makes adjacent changes conflict is the same, and changes far apart are each kept once."""
    base = [f"- fact {n} [stated]\n" if n % 3 else "\n" for n in range(3000)]
    mine = list(base)
    mine[10], mine[2900] = "- mine early [stated]\n", "- mine late [stated]\n"
    theirs = list(base)
    del theirs[1500]
    assert (2890 * 2890) > merge3._EXACT_CELLS  # the fallback is what this test runs
    want = list(mine)
    del want[1500]
    result = merge3.merge3(*("".join(lines).encode() for lines in (base, mine, theirs)))
    assert result.merged == "".join(want).encode()
    del theirs[11]  # a deletion next to mine's first change (two one-for-one rewrites would merge)
    assert not merge3.merge3(*("".join(lines).encode() for lines in (base, mine, theirs))).clean
