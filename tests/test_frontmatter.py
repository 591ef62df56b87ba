"""Frontmatter: locating the block, parsing it safely, and one-key edits that keep every other byte."""

from __future__ import annotations

import datetime as dt

import pytest

from memtui.errors import FrontmatterError
from memtui.field import frontmatter as fm

# --------------------------------------------------------------------------- locating


def test_page_without_frontmatter_is_all_body():
    result = fm.parse("# Title\n\nSome text.\n")
    assert not result.present
    assert result.error is None
    assert result.body_offset == 0
    assert result.data == {}


def test_simple_frontmatter_offsets_and_lines():
    text = "---\nid: mem_1\ntitle: Hello\n---\n# Body\n"
    result = fm.parse(text)
    assert result.present and result.closed
    assert result.data == {"id": "mem_1", "title": "Hello"}
    assert result.raw == "id: mem_1\ntitle: Hello\n"
    assert text[result.body_offset :] == "# Body\n"
    assert result.first_line == 2
    assert result.body_line == 5
    assert result.key_lines == {"id": 2, "title": 3}


def test_bom_before_the_fence_is_accepted():
    text = "\ufeff---\ntitle: BOM page\n---\nbody\n"
    result = fm.parse(text)
    assert result.present
    assert result.data == {"title": "BOM page"}
    assert text[result.body_offset :] == "body\n"


def test_crlf_frontmatter_parses_and_reports_line_numbers():
    text = "---\r\ntitle: Windows\r\nkind: semantic\r\n---\r\nbody\r\n"
    result = fm.parse(text)
    assert result.data == {"title": "Windows", "kind": "semantic"}
    assert result.key_lines == {"title": 2, "kind": 3}
    assert text[result.body_offset :] == "body\r\n"
    assert fm.newline_of(text) == "\r\n"
    assert fm.newline_of("a\nb\r\n") == "\n"


def test_dots_close_the_block_and_fences_may_have_trailing_blanks():
    result = fm.parse("---  \na: 1\n...\nbody\n")
    assert result.present and result.closed
    assert result.data == {"a": 1}


def test_empty_block_is_an_empty_mapping():
    result = fm.parse("---\n---\nbody\n")
    assert result.present and result.error is None and result.data == {}


def test_a_lone_fence_without_newline_is_not_frontmatter():
    result = fm.parse("---")
    assert not result.present and result.error is None


def test_unclosed_block_is_reported_and_the_whole_text_stays_body():
    text = "---\ntitle: never closed\n\nBody text that matters.\n"
    result = fm.parse(text)
    assert result.present and not result.closed
    assert result.error_rule == "frontmatter-unclosed"
    assert result.error_line == 1
    assert result.data == {}
    assert text[result.body_offset :] == text  # nothing is hidden


# --------------------------------------------------------------------------- parse errors


def test_malformed_yaml_gives_the_line_of_the_problem():
    text = "---\nid: mem_1\nsummary: Offsite in Half Moon Bay: Dec 9-10\nkind: semantic\n---\n"
    result = fm.parse(text)
    assert result.error_rule == "yaml-invalid"
    assert result.error_line == 3
    assert "mapping values are not allowed" in result.error
    assert result.data == {}


def test_alias_bomb_is_refused_before_it_expands():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for n in range(1, 12):
        prev = f"*a{n - 1}"
        lines.append(f"a{n}: &a{n} [{', '.join([prev] * 10)}]")
    text = "---\n" + "\n".join(lines) + "\n---\nbody\n"
    assert len(text) < 2000  # ten to the twelfth strings if it were expanded
    result = fm.parse(text)
    assert result.error_rule == "yaml-alias"
    assert result.error_line == 3  # the first alias
    assert result.data == {}


def test_a_single_harmless_alias_is_also_refused():
    result = fm.parse("---\nbase: &b mem_1\nsupersedes: *b\n---\n")
    assert result.error_rule == "yaml-alias"


def test_a_star_inside_a_quoted_string_is_not_an_alias():
    result = fm.parse('---\ntitle: "5 * 3 = 15"\nnote: a*b\n---\n')
    assert result.error is None
    assert result.data == {"title": "5 * 3 = 15", "note": "a*b"}


@pytest.mark.parametrize(
    "value",
    [
        "!!python/object/apply:os.system ['touch {marker}']",
        "!!python/object/new:os.system ['touch {marker}']",
        "!!python/name:os.system",
        "!!python/object:builtins.object {{}}",
        "!!python/tuple [1, 2]",
    ],
)
def test_python_tags_are_refused_and_never_run(tmp_path, value):
    marker = tmp_path / "pwned"
    text = "---\nx: " + value.format(marker=marker) + "\n---\nbody\n"
    result = fm.parse(text)
    assert result.error_rule == "yaml-invalid"
    assert "constructor" in result.error
    assert result.error_line == 2
    assert not marker.exists()


def test_frontmatter_that_is_a_list_is_not_a_mapping():
    result = fm.parse("---\n- a\n- b\n---\n")
    assert result.error_rule == "frontmatter-not-mapping"


def test_frontmatter_over_the_size_limit_is_not_parsed():
    big = "---\n" + "".join(f"k{i}: {'x' * 60}\n" for i in range(1200)) + "---\n"
    assert len(big) > fm.MAX_FRONTMATTER_BYTES
    result = fm.parse(big)
    assert result.error_rule == "frontmatter-too-large"
    assert result.data == {}


def test_invalid_utf8_in_frontmatter_is_an_error_not_a_crash():
    text = b"---\ntitle: caf\xe9\n---\nbody\n".decode("utf-8", "surrogateescape")
    result = fm.parse(text)
    assert result.error_rule == "yaml-invalid"
    assert "UTF-8" in result.error


@pytest.mark.parametrize(
    "raw, error",
    [
        ("x: " + "[" * 5000 + "]" * 5000, "nesting depth"),
        ("x: !!timestamp 2026-13-45", "cannot be read"),
        ("? [a, b]\n: c", "unhashable"),
    ],
)
def test_odd_yaml_gives_a_clear_error(raw, error):
    result = fm.parse(f"---\n{raw}\n---\n")
    assert result.error_rule == "yaml-invalid"
    assert error in result.error


def test_values_are_normalised_to_json_safe_types():
    text = (
        "---\ncreated: 2026-10-02T09:00:00Z\nvalid_from: 2026-10-02\nconfidence: .nan\n"
        "data: !!binary aGVsbG8=\nnested: {when: 2026-01-01, n: [1, 2.5]}\n---\n"
    )
    data = fm.parse(text).data
    assert data == {
        "created": "2026-10-02T09:00:00Z",
        "valid_from": "2026-10-02",
        "confidence": "nan",
        "data": "hello",
        "nested": {"when": "2026-01-01", "n": [1, 2.5]},
    }


def test_parse_yaml_mapping_raises_a_frontmatter_error_with_hint():
    with pytest.raises(FrontmatterError) as info:
        fm.parse_yaml_mapping("a: [1, 2\n", first_line=10)
    assert info.value.hint
    assert info.value.line is not None and info.value.line >= 10


def test_top_level_key_lines_ignore_nested_keys_and_list_items():
    raw = "id: x\nmeta:\n  title: nested\n- item\n'quoted key': 1\nsources:\n  - a\n"
    assert fm.top_level_key_lines(raw, 2) == {"id": 2, "meta": 3, "quoted key": 6, "sources": 7}


# --------------------------------------------------------------------------- editing


def _replace_line(text: str, old_line: str, new_line: str) -> str:
    assert text.count(old_line) == 1, old_line
    return text.replace(old_line, new_line)


RICH_PAGE = (
    "---\n"
    "# a comment the user wrote\n"
    "id: mem_4kq2   # keep me\n"
    'title: "Acme: renewal"\n'
    "summary: 'It''s renewed'\n"
    "tags: [a, b,   c]\n"
    "x-custom:   {weird: true}\n"
    "sources:\n"
    "  - nas://box/a.md#L1\n"
    "  - sessions/b.md\n"
    "reviewed: false # not yet\n"
    "valid_to: null\n"
    "---\n"
    "Body [stated]\n"
)


@pytest.mark.parametrize(
    "key, value, old_line, new_line",
    [
        ("reviewed", True, "reviewed: false # not yet\n", "reviewed: true # not yet\n"),
        ("id", "mem_9", "id: mem_4kq2   # keep me\n", "id: mem_9   # keep me\n"),
        ("title", "New: title", 'title: "Acme: renewal"\n', "title: 'New: title'\n"),
        ("summary", "plain", "summary: 'It''s renewed'\n", "summary: plain\n"),
        ("tags", ["x", "y"], "tags: [a, b,   c]\n", "tags: [x, y]\n"),
        ("x-custom", 3, "x-custom:   {weird: true}\n", "x-custom: 3\n"),
        ("valid_to", "2026-11-01", "valid_to: null\n", "valid_to: '2026-11-01'\n"),
        ("valid_to", dt.date(2026, 11, 1), "valid_to: null\n", "valid_to: 2026-11-01\n"),
        (
            "sources",
            ["sessions/c.md"],
            "sources:\n  - nas://box/a.md#L1\n  - sessions/b.md\n",
            "sources: [sessions/c.md]\n",
        ),
    ],
)
def test_set_key_changes_only_that_keys_lines(key, value, old_line, new_line):
    result = fm.set_key(RICH_PAGE, key, value)
    assert result == _replace_line(RICH_PAGE, old_line, new_line)
    assert fm.parse(result).data[key] == fm.normalise(value)


def test_set_key_keeps_crlf_and_bom():
    text = "\ufeff---\r\nid: a\r\nreviewed: false\r\nunknown_key: kept\r\n---\r\nBody\r\n"
    result = fm.set_key(text, "reviewed", True)
    assert result == text.replace("reviewed: false\r\n", "reviewed: true\r\n")
    added = fm.set_key(text, "reviewed_by", "maya")
    assert added == text.replace("unknown_key: kept\r\n", "unknown_key: kept\r\nreviewed_by: maya\r\n")


def test_set_key_adds_a_missing_key_before_the_closing_fence():
    text = "---\nid: a\ntitle: T\n---\nbody\n"
    assert fm.set_key(text, "reviewed", True) == "---\nid: a\ntitle: T\nreviewed: true\n---\nbody\n"


def test_set_key_does_not_confuse_a_nested_key_with_a_top_level_one():
    text = "---\nmeta:\n  reviewed: false\n---\nbody\n"
    result = fm.set_key(text, "reviewed", True)
    assert result == "---\nmeta:\n  reviewed: false\nreviewed: true\n---\nbody\n"


def test_set_key_on_an_unindented_block_list_and_a_block_scalar():
    text = "---\nsources:\n- a\n- b\nsummary: |\n  line one\n  line two\nkind: semantic\n---\n"
    result = fm.set_key(text, "sources", ["c"])
    assert result == "---\nsources: [c]\nsummary: |\n  line one\n  line two\nkind: semantic\n---\n"
    result = fm.set_key(text, "summary", "short")
    assert result == "---\nsources:\n- a\n- b\nsummary: short\nkind: semantic\n---\n"


def test_set_key_keeps_a_comment_after_a_quoted_value_and_a_hash_inside_quotes():
    text = "---\ntitle: \"Issue #4\" # from the tracker\nnote: 'a # b'\n---\n"
    result = fm.set_key(text, "title", "Issue 5")
    assert result == "---\ntitle: Issue 5 # from the tracker\nnote: 'a # b'\n---\n"
    result = fm.set_key(text, "note", "c")
    assert result == '---\ntitle: "Issue #4" # from the tracker\nnote: c\n---\n'


def test_set_key_keeps_a_comment_on_the_line_of_a_block_value():
    text = "---\nsources:   # where it came from\n  - a\nid: x\n---\n"
    assert fm.set_key(text, "sources", ["b"]) == "---\nsources: [b]   # where it came from\nid: x\n---\n"


def test_set_key_value_with_a_line_break_stays_on_one_line_in_a_crlf_page():
    text = "---\r\ntitle: x\r\n---\r\nbody\r\n"
    result = fm.set_key(text, "summary", "two\nlines")
    assert result == '---\r\ntitle: x\r\nsummary: "two\\nlines"\r\n---\r\nbody\r\n'
    assert fm.parse(result).data["summary"] == "two\nlines"


def test_set_key_on_a_page_without_frontmatter_adds_a_block():
    assert fm.set_key("# T\nbody\n", "reviewed", False) == "---\nreviewed: false\n---\n# T\nbody\n"
    assert fm.set_key("\ufeff# T\r\nbody\r\n", "id", "a") == "\ufeff---\r\nid: a\r\n---\r\n# T\r\nbody\r\n"
    assert fm.set_key("", "id", "a") == "---\nid: a\n---\n"


@pytest.mark.parametrize(
    "text",
    [
        "---\ntitle: a: b\n---\nbody\n",
        "---\ntitle: never closed\nbody\n",
        "---\na: &x 1\nb: *x\n---\n",
        "---\n- a list\n---\n",
    ],
)
def test_set_key_refuses_frontmatter_that_does_not_parse(text):
    with pytest.raises(FrontmatterError) as info:
        fm.set_key(text, "reviewed", True)
    assert "will not edit" in info.value.message
    assert info.value.hint


def test_set_key_refuses_an_edit_that_would_not_round_trip():
    # A duplicated key: editing the first copy would leave the second one in force.
    text = "---\nreviewed: false\nreviewed: false\n---\n"
    with pytest.raises(FrontmatterError):
        fm.set_key(text, "reviewed", True)


@pytest.mark.parametrize("key", ["", "a b", "a:b", "-x", "x\n"])
def test_set_key_refuses_odd_key_names(key):
    with pytest.raises(FrontmatterError):
        fm.set_key("---\nid: a\n---\n", key, 1)


def test_set_keys_applies_each_edit_minimally():
    text = "---\nid: a   # c\nreviewed: false\n---\nbody\n"
    result = fm.set_keys(text, {"reviewed": True, "reviewed_by": "maya"})
    assert result == "---\nid: a   # c\nreviewed: true\nreviewed_by: maya\n---\nbody\n"


def test_dump_scalar_quotes_what_yaml_would_misread():
    assert fm.dump_scalar("null") == "'null'"
    assert fm.dump_scalar("123") == "'123'"
    assert fm.dump_scalar("a: b") == "'a: b'"
    assert fm.dump_scalar("") == "''"
    assert fm.dump_scalar(None) == "null"
    assert fm.dump_scalar(False) == "false"
    assert fm.dump_scalar(dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=dt.UTC)) == "2026-01-02T03:04:05Z"
    assert "\x1b" not in fm.dump_scalar("\x1b[2J")
