"""Page diffs as plain data: unified lines, side-by-side rows with word spans, safe text."""

from __future__ import annotations

from memtui.review.diffs import page_diff, source_tag_spans, split_lines, word_spans


def test_unified_diff_like_diff_u():
    old = b"a\nb\nc\nd\ne\nf\ng\nh\n"
    new = b"a\nb\nc\nD\ne\nf\ng\nh\ni\n"
    diff = page_diff("n.md", old, new)
    assert diff.action == "modify" and (diff.added, diff.removed) == (2, 1)
    kinds = [(line.kind, line.old, line.new, line.text) for line in diff.unified]
    assert kinds[0] == ("hunk", None, None, "@@ -1,8 +1,9 @@")
    assert ("remove", 4, None, "d") in kinds and ("add", None, 4, "D") in kinds and ("add", None, 9, "i") in kinds


def test_side_by_side_pairs_lines_and_marks_changed_words():
    old = b"- Meetings go in the morning [stated]\nsame\n"
    new = b"- Meetings go in the afternoon [stated]\nsame\nextra\n"
    diff = page_diff("n.md", old, new, context=None)
    rows = diff.side_by_side
    assert [r.kind for r in rows] == ["replace", "equal", "insert"]
    replace = rows[0]
    assert replace.old_text[slice(*replace.old_spans[0])] == "morning"
    assert replace.new_text[slice(*replace.new_spans[0])] == "afternoon"
    assert rows[2].new_spans == ((0, 5),)


def test_gap_rows_between_hunks():
    old = "".join(f"{i}\n" for i in range(40)).encode()
    new = old.replace(b"\n2\n", b"\nTWO\n").replace(b"\n35\n", b"\nTHIRTY-FIVE\n")
    diff = page_diff("n.md", old, new)
    assert sum(1 for line in diff.unified if line.kind == "hunk") == 2
    assert [r.kind for r in diff.side_by_side].count("gap") == 1


def test_create_delete_and_same():
    assert page_diff("n.md", None, b"x\n").action == "create"
    deleted = page_diff("n.md", b"x\ny\n", None)
    assert deleted.action == "delete" and deleted.removed == 2
    same = page_diff("n.md", b"x\n", b"x\n")
    assert same.action == "same" and same.unified == [] and same.side_by_side == []


def test_hostile_text_is_made_visible_and_spans_index_it():
    old = b"status: ok\n"
    new = "status: \x1b[2J\u202eko\n".encode()
    diff = page_diff("n.md", old, new)
    for line in diff.unified:
        for bad in ("\x1b", "\u202e"):
            assert bad not in line.text
    row = next(r for r in diff.side_by_side if r.kind == "replace")
    changed = row.new_text[slice(*row.new_spans[0])]
    assert "\u241b" in changed and "\u27e8RLO\u27e9" in changed


def test_invisible_differences_get_a_note():
    crlf = page_diff("n.md", b"a\nb\n", b"a\r\nb\r\n")
    assert crlf.notes == ["line endings change from LF to CRLF"] and crlf.unified == []
    assert page_diff("n.md", b"a\n", b"\xef\xbb\xbfa\n").notes == ["a byte order mark is added"]
    assert page_diff("n.md", b"a\nb\n", b"a\nb").notes == ["the final newline is removed"]


def test_split_lines_keeps_invalid_bytes_visible():
    assert split_lines(b"ok\n\xff\n") == ["ok", "\u27e8xFF\u27e9"]
    assert split_lines(None) == [] and split_lines(b"") == []


def test_word_spans_and_source_tags():
    assert word_spans("a b c", "a x c") == (((2, 3),), ((2, 3),))
    assert source_tag_spans("x [stated] y [Inferred]") == [(2, 10, "stated"), (13, 23, "inferred")]
    json_ready = page_diff("n.md", b"a\n", b"b\n").to_json()
    assert json_ready["side_by_side"][0]["old_spans"] == [[0, 1]]
