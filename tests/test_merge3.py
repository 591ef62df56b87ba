"""Three-way merge of a page (memtui.store.merge3)."""

from __future__ import annotations

from memtui.store import merge3
from memtui.store.merge3 import MINE, THEIRS, has_markers

BASE = b"---\ntitle: T\nupdated: 2026-01-01\n---\n- one [stated]\n- two [stated]\n- three [stated]\n- four [stated]\n"


def test_edits_on_different_lines_merge():
    mine = BASE.replace(b"- one [stated]", b"- ONE [stated]")
    theirs = BASE.replace(b"- four [stated]", b"- FOUR [observed]")
    result = merge3.merge3(BASE, mine, theirs)
    assert result.clean
    assert result.merged == BASE.replace(b"- one", b"- ONE").replace(b"- four [stated]", b"- FOUR [observed]")


def test_edits_on_neighbouring_lines_merge():
    mine = BASE.replace(b"- two", b"- TWO")
    theirs = BASE.replace(b"- three", b"- THREE")
    result = merge3.merge3(BASE, mine, theirs)
    assert result.clean
    assert b"- TWO" in result.merged and b"- THREE" in result.merged


def test_insertions_and_deletions_merge():
    mine = BASE + b"- five [stated]\n"
    theirs = BASE.replace(b"- one [stated]\n", b"")
    result = merge3.merge3(BASE, mine, theirs)
    assert result.clean
    assert result.merged == BASE.replace(b"- one [stated]\n", b"") + b"- five [stated]\n"


def test_the_same_change_on_both_sides_is_taken_once():
    both = BASE.replace(b"- two", b"- 2")
    assert merge3.merge3(BASE, both, both).merged == both


def test_overlapping_edits_conflict_and_keep_all_three():
    mine = BASE.replace(b"- two [stated]", b"- two, said Maya [stated]")
    theirs = BASE.replace(b"- two [stated]", b"- two, per the log [observed]")
    result = merge3.merge3(BASE, mine, theirs)
    assert not result.clean and result.merged is None
    (conflict,) = result.conflicts
    assert conflict.base == ("- two [stated]\n",)
    assert conflict.mine == ("- two, said Maya [stated]\n",)
    assert conflict.theirs == ("- two, per the log [observed]\n",)
    assert conflict.base_start == conflict.mine_start == conflict.theirs_start == 6
    assert result.resolve(MINE) == mine
    assert result.resolve(THEIRS) == theirs
    marked = result.resolve().decode()
    assert has_markers(marked)
    assert marked.index("said Maya") < marked.index("- two [stated]") < marked.index("per the log")


def test_crlf_and_bom_are_kept():
    base = "\ufeffa\r\nb\r\nc\r\n".encode()
    mine = "\ufeffA\r\nb\r\nc\r\n".encode()
    theirs = "\ufeffa\r\nb\r\nC\r\n".encode()
    assert merge3.merge3(base, mine, theirs).merged == "\ufeffA\r\nb\r\nC\r\n".encode()


def test_both_appending_different_lines_conflicts():
    result = merge3.merge3(BASE, BASE + b"- mine\n", BASE + b"- theirs\n")
    (conflict,) = result.conflicts
    assert conflict.base == () and conflict.mine == ("- mine\n",) and conflict.theirs == ("- theirs\n",)
