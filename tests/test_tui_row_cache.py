"""The list as last shown comes back at once on the next launch, for unchanged pages only."""

from __future__ import annotations

import os
from pathlib import Path

from memtui.field.field import scan
from memtui.render.glyphs import PENDING
from memtui.session.row_cache import ROW_CACHE, load_rows
from tests.helpers_tui import SIZE, make_app, wait_ready


async def test_rows_are_saved_after_analysis_and_reused_for_unchanged_pages(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        shown = dict(app.session.rows)
        cache_dir = app.session.field.cache_dir
    assert (cache_dir / ROW_CACHE).is_file()
    changed = sample_field / "people/dana-ruiz.md"
    changed.write_text(changed.read_text() + "\n- One more line. [stated]\n")
    os.utime(changed, ns=(1, 1))
    entries, _ = scan(sample_field)
    rows = load_rows(cache_dir, entries)
    assert set(rows) == {entry.path for entry in entries}
    assert rows["people/dana-ruiz.md"].trust == PENDING
    kept = rows["decisions/public-api-rest.md"]
    assert kept == shown["decisions/public-api-rest.md"] and "superseded" in kept.states()
    assert rows["quarantine/vendor-pricing-update.md"].cells == shown["quarantine/vendor-pricing-update.md"].cells


def test_a_damaged_row_cache_only_means_placeholders(tmp_path: Path) -> None:
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "a.md").write_text("# A\n")
    entries, _ = scan(tmp_path / "f")
    for content in (b"", b"{", b"[]", b'{"schema": 1, "version": "0.1.0", "rows": {"a.md": [1, 2, 3]}}', b"\xff"):
        (tmp_path / ROW_CACHE).write_bytes(content)
        rows = load_rows(tmp_path, entries)
        assert rows["a.md"].trust == PENDING


def test_a_second_write_reencodes_only_what_changed_and_reads_back_the_same(tmp_path: Path) -> None:
    """The writer keeps each row's bytes: a kept row (the same object, the same size and time)
    is not encoded again, a changed row or a page rewritten on disk is, and a page gone is gone."""
    import dataclasses
    import json

    from memtui.session.row_cache import RowCacheWriter
    from memtui.session.rows import PageRow, make_cells

    def make_row(path: str, title: str) -> PageRow:
        return make_cells(PageRow(path, title, "note", "", "", "reviewed", "current", 0, 1, 0))

    root = tmp_path / "f"
    root.mkdir()
    for name in ("a", "b", "c", "d"):
        (root / f"{name}.md").write_text(f'# {name} "quoted" \\ é\n')
    entries, _ = scan(root)
    pages = {entry.path: entry for entry in entries}
    rows = {path: make_row(path, f"Title {path}") for path in pages}
    writer = RowCacheWriter()
    cache = tmp_path / "cache"
    cache.mkdir()
    writer.save(cache, rows, pages)
    first = (cache / ROW_CACHE).read_bytes()
    kept_part, untouched = writer._parts["a.md"][3], writer._parts["d.md"][3]
    rows["b.md"] = dataclasses.replace(rows["b.md"], title='Now "b" \\ ü')
    (root / "c.md").write_text("# c, longer now\n")
    del rows["a.md"]
    rows["a.md"] = make_row("a.md", "Title a.md")
    entries, _ = scan(root)
    pages = {entry.path: entry for entry in entries}
    writer.save(cache, rows, pages)
    second = (cache / ROW_CACHE).read_bytes()
    assert second != first and writer._parts["a.md"][3] == kept_part  # a new object, equal bytes
    assert writer._parts["d.md"][3] is untouched  # kept, not encoded again
    body = json.loads(second.partition(b"\n")[2])
    c = pages["c.md"]
    assert body["b.md"][5] == 'Now "b" \\ ü' and body["c.md"][:5] == [c.size, c.mtime_ns, *c.ident]
    loaded = load_rows(cache, entries)
    assert {path: row.title for path, row in loaded.items()} == {path: rows[path].title for path in pages}
    rows.pop("c.md")
    writer.save(cache, rows, pages)
    assert load_rows(cache, entries)["c.md"].trust == PENDING and "c.md" not in writer._parts
