"""One reading of a page for everyone: the index sees a page exactly as the field does.

The index reads pages through the field's parser (``memtui.field.page``), and a
page the field has already read (its page cache) is not parsed again by a build:
only its bytes are read, for the words, and its content hash must match.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memtui.dialects.open import open_field
from memtui.field import page as page_mod
from memtui.index import IndexService
from memtui.index import records as records_mod
from tests.helpers import write_page
from tests.helpers_field import settle_change_times
from tests.helpers_index import page


def _old(root: Path) -> None:
    """Date every file back a minute and wait until their change times are past the racy window,
    so the page cache keeps them with their identity (recent writes are 'racy')."""
    for path in root.rglob("*.md"):
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 60_000_000_000))
    settle_change_times(root)


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    parsed: list[str] = []
    real = page_mod.info_from_bytes

    def counting(path, data, size, mtime_ns):
        parsed.append(path)
        return real(path, data, size, mtime_ns)

    monkeypatch.setattr(page_mod, "info_from_bytes", counting)
    return parsed


def test_the_index_sees_every_page_as_the_field_does(sample_field: Path) -> None:
    field = open_field(sample_field, use_cache=False)
    with IndexService(sample_field) as svc:
        svc.open()
        records = svc._gen.records
        assert set(records) == set(field.pages)
        for path, info in field.pages.items():
            record = records[path]
            assert record.title == info.title, path
            assert record.heading == info.heading_title, path
            assert record.trust == field.trust(path), path
            assert record.tag_counts == info.tag_counts, path
            assert record.sha256 == info.sha256, path
            assert record.status == field.history.status[path], path


def test_a_build_takes_pages_the_field_has_read_from_its_page_cache(
    sample_field: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _old(sample_field)
    open_field(sample_field)  # reads every page once and writes the page cache
    parsed = _count_parses(monkeypatch)
    with IndexService(sample_field) as svc:
        report = svc.open()
        assert report.rebuilt
        assert parsed == []
        assert svc.search("public API decision")[0].path == "decisions/public-api-trpc.md"


def test_a_page_changed_behind_the_cache_is_parsed_again(sample_field: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _old(sample_field)
    open_field(sample_field)
    target = sample_field / "notes" / "q3-digest.md"
    st = target.stat()
    original = target.read_bytes()
    # Same size and modification time, different bytes: only the content hash can tell.
    swapped = original.replace(b"a", b"e", 1)
    assert len(swapped) == len(original) and swapped != original
    target.write_bytes(swapped)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    parsed = _count_parses(monkeypatch)
    with IndexService(sample_field) as svc:
        svc.open()
        assert parsed == ["notes/q3-digest.md"]
        assert svc.indexed_inputs()["notes/q3-digest.md"] == records_mod.sha256_bytes(swapped)


def test_without_a_page_cache_the_index_parses_with_the_fields_parser(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "f"
    write_page(root, "notes/a.md", page("Alpha", "- Alpha is a fact with three words. [stated]"))
    write_page(root, "notes/b.md", "---\nreviewed: false\n---\n# Heading title\n- Beta claim line here. [inferred]\n")
    parsed = _count_parses(monkeypatch)
    with IndexService(root) as svc:
        svc.open()
        assert sorted(parsed) == ["notes/a.md", "notes/b.md"]
        records = svc._gen.records
        assert records["notes/b.md"].title == "Heading title"
        assert records["notes/b.md"].trust == "unreviewed"
        assert records["notes/b.md"].tag_counts["inferred"] == 1
