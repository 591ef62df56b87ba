"""``*.memoryfield.zip``: export, open read-only, and refuse malicious archives."""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path

import pytest

from memtui.dialects.open import open_field
from memtui.errors import ArchiveError, ReadOnlyFieldError
from memtui.field.checks import run_checks
from memtui.field.field import Field
from memtui.store import archive
from memtui.store import safe_write as sw
from memtui.store.archive import export_field, extract_for_reading, extract_safely
from memtui.store.locations import user_cache_dir
from tests.helpers import write_page
from tests.helpers_field import make_field, rule_paths, tree_hashes


def all_files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() or p.is_symlink()}


def make_zip(path: Path, members: list[tuple[str | zipfile.ZipInfo, bytes]]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members:
            zf.writestr(name, data)
    return path


# --------------------------------------------------------------------------- export and open


def test_export_then_open_read_only(sample_field, tmp_path):
    before = tree_hashes(sample_field)
    out = tmp_path / "out" / "sample.memoryfield.zip"
    count = export_field(sample_field, out)
    assert tree_hashes(sample_field) == before  # exporting never changes the field
    with zipfile.ZipFile(out) as zf:
        names = set(zf.namelist())
    expected = {rel for rel in before if not rel.startswith((".dream/", ".memtui/", ".git/"))}
    assert names == expected and count == len(expected)

    field = open_field(out)
    assert field.readonly and field.source == out
    assert field.root != sample_field and user_cache_dir() in field.root.parents
    original = Field.load(sample_field, use_cache=False)
    assert sorted(field.pages) == sorted(original.pages)
    assert {p: i.sha256 for p, i in field.pages.items()} == {p: i.sha256 for p, i in original.pages.items()}
    assert rule_paths(run_checks(field)) == rule_paths(run_checks(original))
    extracted = field.root / "notes" / "q3-digest.md"
    assert stat.S_IMODE(extracted.stat().st_mode) == 0o444
    assert not (field.root / ".memtui").exists()  # the cache of a read-only field lives in the user cache
    with pytest.raises(ReadOnlyFieldError):
        sw.write_page(field.root, "notes/q3-digest.md", b"x", expected_hash=None, readonly=field.readonly)


def test_reopening_an_unchanged_archive_reuses_the_extraction(tmp_path):
    root = make_field(tmp_path / "f", {"a.md": "# A\n"})
    out = tmp_path / "f.memoryfield.zip"
    export_field(root, out)
    first = extract_for_reading(out)
    marker = first / "a.md"
    assert extract_for_reading(out) == first and marker.is_file()
    write_page(root, "b.md", "# B\n")
    export_field(root, out)
    os.utime(out, ns=(1, 1))  # a different archive key even within one clock tick
    second = extract_for_reading(out)
    assert second != first and not first.exists()
    assert all_files(second) == {"a.md", "b.md", ".memtui-extracted"}


def test_export_skips_symlinks_tool_folders_and_the_output_itself(tmp_path):
    root = make_field(
        tmp_path / "f",
        {
            "a.md": "# A\n",
            "notes/data.json": "{}",
            ".git/HEAD": "ref",
            ".memtui/cache/pages.json": "{}",
            ".dream/proposals/p/proposal.yaml": "id: p",
        },
    )
    write_page(tmp_path, "outside/secret.md", "SECRET\n")
    os.symlink(tmp_path / "outside" / "secret.md", root / "leak.md")
    os.symlink(tmp_path / "outside", root / "leakdir")
    out = root / "self.memoryfield.zip"
    export_field(root, out)
    export_field(root, out)  # the second export does not swallow the first
    with zipfile.ZipFile(out) as zf:
        assert sorted(zf.namelist()) == ["a.md", "notes/data.json"]
    assert [p.name for p in root.iterdir() if ".tmp" in p.name] == []


def test_export_keeps_files_dated_before_1980(tmp_path):
    root = make_field(tmp_path / "f", {"old.md": "# Old\n"})
    os.utime(root / "old.md", (0, 0))
    assert export_field(root, tmp_path / "x.memoryfield.zip") == 1


def test_export_refuses_a_bad_name_a_missing_folder_and_a_non_utf8_file_name(tmp_path):
    root = make_field(tmp_path / "f", {"a.md": "# A\n"})
    with pytest.raises(ArchiveError, match="must end with"):
        export_field(root, tmp_path / "x.zip")
    with pytest.raises(ArchiveError, match="not a folder"):
        export_field(tmp_path / "missing", tmp_path / "x.memoryfield.zip")
    write_page(root, os.fsdecode(b"caf\xe9.md"), "# bad name\n")
    with pytest.raises(ArchiveError, match="not valid UTF-8") as info:
        export_field(root, tmp_path / "x.memoryfield.zip")
    assert "\udce9" not in info.value.message
    assert not (tmp_path / "x.memoryfield.zip").exists()
    assert [p.name for p in tmp_path.iterdir() if ".tmp" in p.name] == []


def test_export_leaves_out_a_file_deleted_while_exporting(tmp_path, monkeypatch):
    root = make_field(tmp_path / "f", {"a.md": "# A\n", "b.md": "# B\n"})
    real_write = zipfile.ZipFile.write

    def delete_then_write(self, filename, arcname=None, *args, **kwargs):
        if arcname == "b.md":
            os.unlink(filename)
        return real_write(self, filename, arcname, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "write", delete_then_write)
    out = tmp_path / "x.memoryfield.zip"
    assert export_field(root, out) == 1
    with zipfile.ZipFile(out) as zf:
        assert zf.namelist() == ["a.md"]


def test_archives_written_by_other_tools_are_accepted(tmp_path):
    # zipfile.writestr stores permission bits without a file type; Windows tools store none.
    windows = zipfile.ZipInfo("notes/b.md")
    windows.create_system = 0
    windows.external_attr = 0x20  # MS-DOS "archive" attribute only
    folder = zipfile.ZipInfo("empty/")
    z = make_zip(tmp_path / "x.memoryfield.zip", [("a.md", b"# A\n"), (windows, b"# B\n"), (folder, b"")])
    dest = tmp_path / "dest"
    dest.mkdir()
    assert extract_safely(z, dest) == 2
    assert (dest / "a.md").read_bytes() == b"# A\n" and (dest / "notes" / "b.md").read_bytes() == b"# B\n"
    assert (dest / "empty").is_dir()


# --------------------------------------------------------------------------- malicious archives


def _symlink_member(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target.encode()


def _fifo_member(name: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.create_system = 3
    info.external_attr = (stat.S_IFIFO | 0o644) << 16
    return info, b""


MALICIOUS = {
    "dotdot": ([("a.md", b"ok"), ("../escaped.md", b"pwned")], "leaves the folder"),
    "nested dotdot": ([("notes/../../escaped.md", b"pwned")], "leaves the folder"),
    "backslash dotdot": ([("..\\escaped.md", b"pwned")], "leaves the folder"),
    "absolute": ([("/tmp/escaped.md", b"pwned")], "absolute path"),
    "drive letter": ([("C:/escaped.md", b"pwned")], "absolute path"),
    "symlink": ([_symlink_member("link.md", "../../../../etc/passwd")], "symlink"),
    "fifo": ([_fifo_member("pipe.md")], "not a regular file"),
    "duplicate": ([("a.md", b"one"), ("a.md", b"two")], "appears twice"),
    "file then folder": ([("a", b"file"), ("a/b.md", b"under it")], "cannot extract"),
}


@pytest.mark.parametrize("case", sorted(MALICIOUS))
def test_malicious_archives_are_refused(tmp_path, case):
    import warnings

    members, message = MALICIOUS[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name
        z = make_zip(tmp_path / "evil.memoryfield.zip", members)
    outside_before = all_files(tmp_path)
    with pytest.raises(ArchiveError, match=message) as info:
        open_field(z)
    assert info.value.hint
    assert all_files(tmp_path) == outside_before  # nothing written beside or above
    assert not Path("/tmp/escaped.md").exists()
    fields = user_cache_dir() / "fields"
    leftovers = [p for p in fields.rglob("*") if p.is_file()] if fields.exists() else []
    assert leftovers == []  # the staging folder is removed


def test_an_oversized_member_is_refused_while_reading(tmp_path, monkeypatch):
    monkeypatch.setattr(archive, "MAX_MEMBER_BYTES", 1000)
    z = make_zip(tmp_path / "big.memoryfield.zip", [("small.md", b"x" * 10), ("big.md", b"x" * 100_000)])
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(ArchiveError, match="zip bomb"):
        extract_safely(z, dest)
    assert (dest / "big.md").stat().st_size <= 1000 + 65536  # stopped early, inside dest
    with pytest.raises(ArchiveError, match="over"):
        open_field(z)
    # Only the extraction folder was written to (open_field's staging folder is removed).
    assert all_files(tmp_path) == {"big.memoryfield.zip", "dest/small.md", "dest/big.md"}
    assert [p for p in (user_cache_dir() / "fields").rglob("*") if p.is_file()] == []


def test_a_header_that_lies_about_the_size_is_caught_by_counting(tmp_path, monkeypatch):
    monkeypatch.setattr(archive, "MAX_MEMBER_BYTES", 1000)
    z = tmp_path / "liar.memoryfield.zip"
    make_zip(z, [("a.md", b"y" * 50_000)])
    for info in zipfile.ZipFile(z).infolist():
        assert info.file_size == 50_000
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(ArchiveError):
        extract_safely(z, dest)


def test_the_total_size_cap(tmp_path, monkeypatch):
    monkeypatch.setattr(archive, "MAX_TOTAL_BYTES", 5000)
    z = make_zip(tmp_path / "many.memoryfield.zip", [(f"p{n}.md", b"z" * 2000) for n in range(5)])
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(ArchiveError, match="expands past"):
        extract_safely(z, dest)


def test_too_many_members(tmp_path, monkeypatch):
    monkeypatch.setattr(archive, "MAX_MEMBERS", 3)
    z = make_zip(tmp_path / "m.memoryfield.zip", [(f"p{n}.md", b"") for n in range(4)])
    with pytest.raises(ArchiveError, match="members"):
        open_field(z)


@pytest.mark.parametrize("content", [b"", b"not a zip at all", b"PK\x03\x04truncated"])
def test_damaged_archives_are_clear_errors(tmp_path, content):
    z = tmp_path / "bad.memoryfield.zip"
    z.write_bytes(content)
    with pytest.raises(ArchiveError, match="cannot open"):
        open_field(z)


def test_a_corrupted_member_is_a_clear_error(tmp_path):
    z = tmp_path / "c.memoryfield.zip"
    with zipfile.ZipFile(z, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a.md", b"hello world " * 200)
    data = bytearray(z.read_bytes())
    data[60:80] = b"\xff" * 20  # inside the compressed bytes of a.md
    z.write_bytes(bytes(data))
    dest = tmp_path / "dest"
    dest.mkdir()
    with pytest.raises(ArchiveError):
        extract_safely(z, dest)


def test_extract_for_reading_refuses_a_missing_archive(tmp_path):
    with pytest.raises(ArchiveError, match="no such file"):
        extract_for_reading(tmp_path / "nope.memoryfield.zip")
