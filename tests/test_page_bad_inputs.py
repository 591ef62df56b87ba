"""Bad input on real files: each gives a finding or a clear error, never a traceback.

Covers the inputs the issue lists: malformed YAML, a YAML alias bomb, ``!!python/object``
tags, invalid UTF-8, a BOM, CRLF, an unclosed frontmatter block, an empty file, a
5 MB file, a binary file, a symlink leaving the folder, a file deleted between listing
and reading; plus a few more hostile shapes (a FIFO, a folder where a page was).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from memtui.field import field as field_mod
from memtui.field import page as page_mod
from memtui.field import page_cache
from memtui.field.checks import run_checks
from memtui.field.field import Field
from memtui.field.page import parse_bytes, read_page
from tests.helpers import write_page
from tests.helpers_field import make_field, rule_paths, run_cli, run_cli_json

ALIAS_BOMB = (
    "---\n"
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n"
    "i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
    "---\nbody\n"
)

BIG = 5 * 1024 * 1024

# name -> (bytes, rule expected for that page, or None when the page must be clean)
BAD_PAGES: dict[str, tuple[bytes, str | None]] = {
    "notes/malformed.md": (b"---\ntitle: ok\nsummary: Offsite: Dec 9-10\n---\nbody\n", "yaml-invalid"),
    "notes/alias-bomb.md": (ALIAS_BOMB.encode(), "yaml-alias"),
    "notes/python-tag.md": (b"---\nx: !!python/object/apply:os.system ['echo pwned']\n---\nbody\n", "yaml-invalid"),
    "notes/bad-utf8.md": (b"---\ntitle: fine\n---\nA caf\xe9 line with bad bytes\n", "utf8-invalid"),
    "notes/bom.md": ("\ufeff---\ntitle: BOM page\n---\nA clean line about BOMs [observed]\n".encode(), None),
    "notes/crlf.md": (b"---\r\ntitle: CRLF page\r\n---\r\nA clean line about line ends [observed]\r\n", None),
    "notes/unclosed.md": (b"---\ntitle: no closing fence\nbody text\n", "frontmatter-unclosed"),
    "notes/empty.md": (b"", "empty-page"),
    "notes/binary.md": (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "binary-file"),
}


def _write_bad_field(root: Path) -> Path:
    for rel, (data, _) in BAD_PAGES.items():
        write_page(root, rel, data)
    return root


@pytest.mark.parametrize("rel", sorted(BAD_PAGES))
def test_read_page_never_raises_and_reports_the_problem(tmp_path, rel):
    data, rule = BAD_PAGES[rel]
    write_page(tmp_path, rel, data)
    info = read_page(tmp_path, rel)
    assert info is not None
    assert info.sha256 == page_mod.sha256_bytes(data)
    assert info.size == len(data)
    problem_rules = [p[0] for p in info.problems]
    if rule is None:
        assert problem_rules == []
    else:
        assert rule in problem_rules
    # The cache round trip keeps everything.
    page_cache.write(tmp_path / "cache", [info])
    assert page_cache.read_infos(tmp_path / "cache") == {rel: info}


def test_each_bad_page_becomes_a_finding_in_the_checks(tmp_path):
    root = _write_bad_field(tmp_path / "f")
    found = rule_paths(run_checks(Field.load(root, use_cache=False)))
    for rel, (_, rule) in BAD_PAGES.items():
        if rule is not None:
            assert (rule, rel) in found
        else:
            assert not any(path == rel for _, path in found), rel


def test_error_findings_carry_a_line_number_where_one_exists(tmp_path):
    root = _write_bad_field(tmp_path / "f")
    lines = {(f.rule, f.path): f.line for f in run_checks(Field.load(root, use_cache=False))}
    assert lines[("yaml-invalid", "notes/malformed.md")] == 3
    assert lines[("yaml-alias", "notes/alias-bomb.md")] == 3
    assert lines[("yaml-invalid", "notes/python-tag.md")] == 2
    assert lines[("utf8-invalid", "notes/bad-utf8.md")] == 4
    assert lines[("frontmatter-unclosed", "notes/unclosed.md")] == 1


def test_bom_and_crlf_pages_parse_like_plain_ones(tmp_path):
    _write_bad_field(tmp_path)
    bom = read_page(tmp_path, "notes/bom.md")
    crlf = read_page(tmp_path, "notes/crlf.md")
    assert bom.has_bom and bom.title == "BOM page" and bom.hazards == []
    assert crlf.newline == "\r\n" and crlf.title == "CRLF page" and crlf.hazards == []
    assert bom.tag_counts["observed"] == crlf.tag_counts["observed"] == 1


def test_a_bom_in_the_middle_of_a_page_is_a_hidden_character(tmp_path):
    write_page(tmp_path, "a.md", "Text with a hidden\ufeff mark in the middle [observed]\n")
    info = read_page(tmp_path, "a.md")
    assert [(h[0], h[2]) for h in info.hazards] == [(1, "zero-width")]


def test_invalid_utf8_bytes_are_kept_exactly(tmp_path):
    data = b"---\ntitle: fine\n---\nbad \xff\xfe bytes\n"
    parsed = parse_bytes("a.md", data)
    assert parsed.text.encode("utf-8", "surrogateescape") == data
    assert parsed.problems[0].rule == "utf8-invalid"
    assert "byte 24" in parsed.problems[0].message


def test_a_5_mb_page_is_listed_but_neither_read_nor_parsed(tmp_path):
    line = b"A long line about freight that repeats [stated]\n"
    data = line * (BIG // len(line) + 1)
    write_page(tmp_path, "notes/huge.md", data)
    info = read_page(tmp_path, "notes/huge.md")
    assert not info.parsed
    assert info.size == len(data) > BIG
    assert info.sha256 == ""  # its size is checked first: it is never read (so never hashed)
    assert [p[0] for p in info.problems] == ["page-too-large"]
    assert "too large to parse" in info.problems[0][2]
    found = run_checks(Field.load(tmp_path, use_cache=False))
    assert ("page-too-large", "notes/huge.md") in rule_paths(found)
    assert "page-size" not in {f.rule for f in found}  # one finding, not two


def test_a_large_binary_file_is_reported_as_binary(tmp_path):
    write_page(tmp_path, "blob.md", b"\x00" * (3 * 1024 * 1024))
    info = read_page(tmp_path, "blob.md")
    assert [p[0] for p in info.problems] == ["binary-file"]


def test_a_symlink_leaving_the_folder_is_reported_and_never_read(tmp_path):
    outside = tmp_path / "outside"
    write_page(outside, "secret.md", "SECRET-CONTENT [stated]\n")
    write_page(outside, "folder/inner.md", "INNER-SECRET [stated]\n")
    root = make_field(tmp_path / "f", {"a.md": "# A\n"})
    os.symlink(outside / "secret.md", root / "leak.md")
    os.symlink(outside / "folder", root / "linked-folder")
    field = Field.load(root, use_cache=False)
    assert sorted(field.pages) == ["a.md"]
    found = rule_paths(run_checks(field))
    assert ("symlink-outside", "leak.md") in found
    assert ("symlink-outside", "linked-folder") in found
    dump = repr(list(field))
    assert "SECRET" not in dump


def test_read_page_refuses_to_follow_a_symlink_even_when_asked_directly(tmp_path):
    write_page(tmp_path, "outside.md", "SECRET\n")
    root = make_field(tmp_path / "f", {})
    os.symlink(tmp_path / "outside.md", root / "link.md")
    info = read_page(root, "link.md")
    assert info is not None and not info.parsed
    assert info.problems[0][0] == "page-unreadable"
    assert "SECRET" not in repr(info)


def test_a_dangling_symlink_is_reported_not_crashed_on(tmp_path):
    root = make_field(tmp_path / "f", {"a.md": "# A\n"})
    os.symlink(tmp_path / "nowhere.md", root / "dangling.md")
    found = rule_paths(run_checks(Field.load(root, use_cache=False)))
    assert ("symlink-outside", "dangling.md") in found


def test_a_file_deleted_between_listing_and_reading_is_page_vanished(tmp_path, monkeypatch):
    root = make_field(tmp_path / "f", {"a.md": "# A\n", "gone.md": "# Gone\n"})
    real_read_page = field_mod.read_page

    def delete_then_read(root_arg, rel):
        if rel == "gone.md":
            os.unlink(Path(root_arg) / rel)  # the file disappears after the listing
        return real_read_page(root_arg, rel)

    monkeypatch.setattr(field_mod, "read_page", delete_then_read)
    field = Field.load(root, use_cache=False)
    assert sorted(field.pages) == ["a.md"]
    assert field.vanished == ["gone.md"]
    found = run_checks(field)
    assert [(f.rule, f.path, f.severity) for f in found] == [("page-vanished", "gone.md", "info")]


def test_a_folder_where_a_page_was_is_unreadable_not_a_crash(tmp_path, monkeypatch):
    root = make_field(tmp_path / "f", {"swap.md": "# Swap\n"})
    real_read_page = field_mod.read_page

    def swap_then_read(root_arg, rel):
        target = Path(root_arg) / rel
        target.unlink()
        target.mkdir()
        return real_read_page(root_arg, rel)

    monkeypatch.setattr(field_mod, "read_page", swap_then_read)
    found = run_checks(Field.load(root, use_cache=False))
    assert [(f.rule, f.path) for f in found] == [("page-unreadable", "swap.md")]


def test_a_fifo_named_like_a_page_never_blocks_the_reader(tmp_path):
    root = make_field(tmp_path / "f", {"a.md": "# A\n"})
    os.mkfifo(root / "pipe.md")
    field = Field.load(root, use_cache=False)  # the scan lists regular files only
    assert sorted(field.pages) == ["a.md"]

    result: list = []
    reader = threading.Thread(target=lambda: result.append(read_page(root, "pipe.md")), daemon=True)
    reader.start()
    reader.join(5)
    if reader.is_alive():  # unblock the thread before failing
        with open(root / "pipe.md", "wb"):
            pass
        reader.join(5)
        pytest.fail("read_page blocked on a FIFO")
    (info,) = result
    assert info.problems[0][0] == "page-unreadable"
    assert "regular file" in info.problems[0][2]


def test_hostile_text_becomes_hazard_findings(tmp_path):
    text = "Title with \x1b]0;pwned\x07 and \x1b[2J here [observed]\nReversed \u202etext\u202c and hidden\u200bspace [observed]\n"
    write_page(tmp_path, "notes/hostile.md", text)
    found = run_checks(Field.load(tmp_path, use_cache=False))
    got = sorted((f.rule, f.line) for f in found)
    assert got == [
        ("bidi-override", 2),
        ("bidi-override", 2),
        ("control-chars", 1),
        ("control-chars", 1),
        ("control-chars", 1),
        ("zero-width", 2),
    ]
    assert all("\x1b" not in f.message and "\u202e" not in f.message for f in found)


def test_hidden_tag_characters_are_found_and_spelled_out(tmp_path):
    # "ASCII smuggling": invisible Unicode tag characters carrying an instruction.
    hidden = "".join(chr(0xE0000 + ord(c)) for c in "curl")
    write_page(tmp_path, "notes/smuggled.md", f"Pricing is unchanged.{hidden} [observed]\n")
    found = [f for f in run_checks(Field.load(tmp_path, use_cache=False)) if f.path == "notes/smuggled.md"]
    assert [(f.rule, f.line) for f in found] == [("zero-width", 1)] * 4
    by_column = sorted(found, key=lambda f: int(f.message.rsplit(" ", 1)[1]))
    assert [f.message for f in by_column] == [
        "⟨TAG c⟩ at column 22",
        "⟨TAG u⟩ at column 23",
        "⟨TAG r⟩ at column 24",
        "⟨TAG l⟩ at column 25",
    ]


def test_hazard_findings_are_capped_per_page_with_the_true_count(tmp_path):
    write_page(tmp_path, "noisy.md", "x\x07 " * 100 + "\n")
    found = [f for f in run_checks(Field.load(tmp_path, use_cache=False)) if f.rule == "control-chars"]
    assert len(found) == 21
    (summary,) = [f for f in found if f.line is None]
    assert summary.message == "... and 80 more like this"


def test_a_flood_of_one_hazard_kind_does_not_hide_another(tmp_path):
    write_page(tmp_path, "flood.md", "\x07" * 500 + "\nthen \u202ereversed\n")
    found = run_checks(Field.load(tmp_path, use_cache=False))
    assert ("bidi-override", 2) in {(f.rule, f.line) for f in found}
    assert any(f.message == "... and 480 more like this" for f in found)


def test_the_cli_check_survives_every_bad_input_at_once(tmp_path, monkeypatch, capsys):
    root = _write_bad_field(tmp_path / "f")
    write_page(root, "notes/huge.md", b"x" * (BIG + 1))
    write_page(tmp_path, "outside.md", "SECRET\n")
    os.symlink(tmp_path / "outside.md", root / "leak.md")
    write_page(root, "evil\x1b]0;pwned\x07.md", "")  # empty, so it has a finding
    write_page(root, os.fsdecode(b"bad\xe9name.md"), "# bad name\n")
    code, data, err = run_cli_json(["check", root], capsys)
    assert code == 1
    assert err == ""
    found = {(f["rule"], f["path"]) for f in data["findings"]}
    for rel, (_, rule) in BAD_PAGES.items():
        if rule:
            assert (rule, rel) in found
    assert ("page-too-large", "notes/huge.md") in found
    assert ("symlink-outside", "leak.md") in found
    assert ("empty-page", "evil\x1b]0;pwned\x07.md") in found
    # The human-readable table shows the odd name inertly.
    monkeypatch.setenv("COLUMNS", "250")
    code, out, err = run_cli(["check", root], capsys)
    assert code == 1 and err == ""
    assert "\x1b" not in out and "\x07" not in out
    assert "evil␛]0;pwned␇.md" in out
