"""Hazard 3 (issue 40), the sidecar part: an aictx page's status, trust and title come from its
JSON sidecar, and the caches kept that reading while the sidecar's size and mtime were unchanged,
both set by whoever writes it (class: Trusted metadata). A same-length sidecar rewrite with
``os.utime`` putting the old mtime back kept the old reading: a stale memory shown as stale after
the agent made it active again, a memory captured from a web page not quarantined. Each test
performs that rewrite for real, in-process and through the CLI in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from memtui.dialects.formats.sidecar_store import content_hash
from memtui.dialects.open import open_field
from memtui.field import page_cache
from memtui.field.field import scan
from memtui.field.history import CURRENT, STALE
from memtui.index.service import IndexService
from memtui.session import row_cache
from memtui.session.rows import PageRow, make_cells
from memtui.store import locations
from tests import fixtures_dialects as fx
from tests.helpers_field import settle_change_times

PAGE = ".memory/memory/gotchas/build-cache.md"
SIDECAR = ".memory/memory/gotchas/build-cache.json"
BODY = "The build cache must be cleared after a Node upgrade.\n"  # the fixture's body of PAGE


def _same_size_sidecar_rewrite(path: Path, change: dict[str, Any]) -> None:
    """The attack: the sidecar rewritten in place with ``change`` (its content hash made again,
    as aictx itself would, so nothing looks edited behind the store's back), padded to the old
    length with JSON whitespace, and the old mtime put back."""
    before = os.stat(path)
    sidecar = {**json.loads(path.read_text()), **change}
    sidecar["content_hash"] = content_hash({k: v for k, v in sidecar.items() if k != "content_hash"}, BODY)
    data = json.dumps(sidecar, separators=(",", ":")).encode()
    assert len(data) <= before.st_size
    with open(path, "r+b") as handle:
        handle.write(data.ljust(before.st_size))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)


def _memtui(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    """The CLI in its own process (the user cache of this test: the environment is inherited)."""
    return subprocess.run(
        [sys.executable, "-m", "memtui", *map(str, argv)], capture_output=True, text=True, timeout=120, check=False
    )


def _checked(root: Path) -> dict[str, Any]:
    """``memtui check --json`` run in its own process: its trust counts and findings."""
    done = _memtui("check", root, "--json")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _history_status(root: Path, ident: str) -> str:
    """The status ``memtui history --json`` (its own process) gives the one version of ``ident``."""
    done = _memtui("history", root, ident, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    versions = json.loads(done.stdout)
    assert len(versions) == 1
    status: str = versions[0]["status"]
    return status


def test_h3_a_same_size_sidecar_rewrite_with_the_old_mtime_is_read_again(tmp_path: Path) -> None:
    """Trusted metadata: status and trust follow the sidecar's new bytes, in-process and in the CLI."""
    root = fx.sidecar_store(tmp_path / "repo")
    settle_change_times(root)  # every reading is cached with its stamp, not as racy
    first = open_field(root)  # writes the page cache
    assert first.history.status[PAGE] == STALE and first.trust(PAGE) != "quarantined"
    before = _checked(root)
    assert before["findings"] == [] and before["summary"]["trust"]["quarantined"] == 1  # retry-owner only
    assert _history_status(root, "gotcha.build-cache") == "stale"
    assert page_cache.read_infos(first.cache_dir or root, signature=first.reader.signature)[PAGE].ident is not None

    # Made active again, and marked as captured from a web page: same length, old mtime.
    _same_size_sidecar_rewrite(
        root / SIDECAR, {"status": "active", "origin": {"kind": "url", "locator": "https://e.io/x"}}
    )

    after = _checked(root)
    assert after["findings"] == []  # the store's own hash holds: nothing to see but the reading
    assert after["summary"]["trust"]["quarantined"] == 2, after["summary"]["trust"]
    assert _history_status(root, "gotcha.build-cache") == "current"
    again = open_field(root)
    assert again.pages[PAGE].norm.status == "active"
    assert again.history.status[PAGE] == CURRENT
    assert again.trust(PAGE) == "quarantined"


def test_h3_a_sidecar_rewrite_after_the_field_was_opened_is_seen_by_rescan(tmp_path: Path) -> None:
    """Trusted metadata: an open field's rescan (the app's watcher falling back to a scan) compares
    the sidecar's stamp too: a same-length rewrite with the old mtime is read again."""
    root = fx.sidecar_store(tmp_path / "repo")
    settle_change_times(root)
    field = open_field(root)
    assert field.history.status[PAGE] == STALE
    _same_size_sidecar_rewrite(root / SIDECAR, {"status": "active"})
    assert PAGE in field.rescan()["changed"]
    assert field.history.status[PAGE] == CURRENT


def test_h3_search_reads_a_same_size_sidecar_rewrite_with_the_old_mtime(tmp_path: Path) -> None:
    """Trusted metadata: the search index kept the sidecar's old reading (its status, which ranks
    current pages first) while the sidecar's size and mtime were unchanged."""
    root = fx.sidecar_store(tmp_path / "repo")
    settle_change_times(root)
    open_field(root)  # the page cache the index builds from
    title = "Clear the build cache after a Node upgrade"
    with IndexService(root) as svc:
        svc.open()
        assert [hit.title for hit in svc.search("status:stale")] == [title]
    _same_size_sidecar_rewrite(root / SIDECAR, {"status": "active"})
    with IndexService(root) as svc:
        svc.open()
        assert [hit.title for hit in svc.search("status:stale")] == []
        assert title in [hit.title for hit in svc.search("status:current")]


def test_h3_a_sidecar_read_while_racy_is_cached_without_its_ident(tmp_path: Path) -> None:
    """Trusted metadata: a sidecar written just before the page was read may be rewritten again in
    the same clock tick, its change time unchanged; its stamp is then cached without the ident,
    which never matches a scan, so the next load reads the page and its sidecar again."""
    root = fx.sidecar_store(tmp_path / "repo")
    settle_change_times(root)
    (root / SIDECAR).write_bytes((root / SIDECAR).read_bytes())  # changed now: racy when read next
    field = open_field(root)
    assert field.cache_dir is not None
    cached = page_cache.read_infos(field.cache_dir, signature=field.reader.signature)[PAGE]
    assert cached.side is not None and len(cached.side) == 3  # [path, size, mtime]: no ident
    _same_size_sidecar_rewrite(root / SIDECAR, {"status": "active"})
    assert open_field(root).history.status[PAGE] == CURRENT


def test_h3_the_row_cache_does_not_show_the_old_row_after_a_same_size_sidecar_rewrite(tmp_path: Path) -> None:
    """Trusted metadata: the page list shown at launch (``rows.json``) was keyed on the page's own
    stamp only, and showed the "stale" row after the sidecar made the page active again."""
    root = fx.sidecar_store(tmp_path / "repo")
    settle_change_times(root)
    field = open_field(root)
    cache = locations.default_cache_dir(root)
    row = make_cells(PageRow(PAGE, "Clear the build cache", "gotcha", "", "", "unknown", "stale", 0, 0, 0))
    row_cache.RowCacheWriter().save(cache, {PAGE: row}, field.pages)
    assert row_cache.load_rows(cache, scan(root, field.scope)[0])[PAGE].status == "stale"
    _same_size_sidecar_rewrite(root / SIDECAR, {"status": "active"})
    assert row_cache.load_rows(cache, scan(root, field.scope)[0])[PAGE].status != "stale"
