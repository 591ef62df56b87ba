"""The list as last shown comes back at once on the next launch, for unchanged pages only."""

from __future__ import annotations

import os
from pathlib import Path

from memtui.field.field import scan
from memtui.tui.model import PENDING
from memtui.tui.row_cache import ROW_CACHE, load_rows
from tests.helpers_tui import SIZE, make_app, wait_ready


async def test_rows_are_saved_after_analysis_and_reused_for_unchanged_pages(sample_field: Path) -> None:
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        shown = dict(app.rows)
        cache_dir = app.field.cache_dir
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
