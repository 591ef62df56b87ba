"""Hazard 3: the page, row and index caches were keyed on size + mtime, both set by whoever writes
the page (class: Trusted metadata). A same-size rewrite with ``os.utime`` putting the old mtime back
kept the old summary, "approved in the ledger" for bytes nobody approved, and search missed the new
words. Each test performs that rewrite for real, in-process and through the CLI in a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memtui.dialects.open import open_field, open_field_cached
from memtui.field import page_cache
from memtui.field.checks import page_findings
from memtui.field.field import RACY_WINDOW_NS, Field, scan
from memtui.review import ledger
from memtui.session import row_cache
from memtui.session.rows import PageRow, make_cells
from memtui.store import locations
from memtui.store.files import sha256_bytes
from tests.helpers import write_page
from tests.helpers_field import run_cli_json
from tests.helpers_review import approve_proposal, staging_proposal

pytestmark = pytest.mark.usefixtures("reviewer_maya")

PAGE = "notes/hosting.md"
APPROVED = b"---\ntitle: Hosting\n---\n- Deploy on Heroku. [stated]\n- The staging box is called alpha. [observed]\n"
# The agent's bytes: the same size, a secret and a new word, nobody approved them.
FORGED = b"---\ntitle: Hosting\n---\n- Deploy on Heroku. [stated]\n- password = Zq8vLm2Rt9 zanzibarite  [stated]\n"
WORD = "zanzibarite"
assert len(FORGED) == len(APPROVED)


@pytest.fixture
def field(tmp_path: Path) -> Path:
    """A page approved in memtui's ledger (a proposal approved by maya), its bytes ``APPROVED``."""
    root = tmp_path / "field"
    write_page(root, PAGE, "---\ntitle: Hosting\n---\n- Deploy on Heroku. [stated]\n")
    old = (root / PAGE).read_bytes()
    staging_proposal(root, "2026-12-01-host-01", files={PAGE: APPROVED}, base={PAGE: sha256_bytes(old)})
    approve_proposal(root, "2026-12-01-host-01")
    assert (root / PAGE).read_bytes() == APPROVED
    _settle(root / PAGE)
    return root


def _settle(path: Path) -> None:
    """Wait until the page's last change is older than the racy window: its summary is then
    cached with its stat (not re-hashed at the next load), the case the writer attacks."""
    deadline = time.monotonic() + 30
    while time.time_ns() - os.stat(path).st_ctime_ns <= RACY_WINDOW_NS + 50_000_000:
        assert time.monotonic() < deadline
        time.sleep(0.05)


def _same_size_rewrite(path: Path, data: bytes) -> None:
    """The attack: new bytes of the same size written in place, the old mtime put back."""
    before = os.stat(path)
    assert len(data) == before.st_size
    with open(path, "r+b") as handle:
        handle.write(data)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)


def _cached(field: Field):  # noqa: ANN202 - a PageInfo
    """The page's summary as the page cache holds it for this field's reading."""
    assert field.cache_dir is not None
    return page_cache.read_infos(field.cache_dir, signature=field.reader.signature)[PAGE]


def _reviewer_view(root: Path) -> Field:
    return ledger.with_approvals(open_field(root))


def _memtui(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    """The CLI in its own process (the user cache of this test: the environment is inherited)."""
    return subprocess.run(
        [sys.executable, "-m", "memtui", *map(str, argv)], capture_output=True, text=True, timeout=120, check=False
    )


def test_h3_a_same_size_rewrite_with_the_old_mtime_is_read_again_in_process(field: Path, capsys) -> None:
    """Trusted metadata: summary, findings, ledger approval and search all follow the new bytes."""
    first = _reviewer_view(field)
    assert first.trust(PAGE) == "reviewed" and first.approved(PAGE) == "maya"
    code, hits, _ = run_cli_json(["search", str(field), WORD], capsys)  # the index is built now
    assert hits["hits"] == [] if isinstance(hits, dict) else hits == []
    cached = _cached(first)
    assert cached.ident is not None and cached.sha256 == sha256_bytes(APPROVED)  # kept by its stat

    _same_size_rewrite(field / PAGE, FORGED)

    again = _reviewer_view(field)
    info = again.pages[PAGE]
    assert info.sha256 == sha256_bytes(FORGED)
    assert "secret" in {finding.rule for finding in page_findings(again, info)}
    assert again.approved(PAGE) == "" and again.trust(PAGE) != "reviewed"  # nobody approved these bytes
    code, hits, _ = run_cli_json(["search", str(field), WORD], capsys)
    found = hits["hits"] if isinstance(hits, dict) else hits
    assert [hit["path"] for hit in found] == [PAGE]


def test_h3_a_same_size_rewrite_with_the_old_mtime_is_seen_by_the_cli(field: Path) -> None:
    """Trusted metadata, through ``memtui check`` and ``memtui search`` in their own processes,
    each keeping its caches in the user cache folder between runs."""
    clean = _memtui("check", field, "--json")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    missed = _memtui("search", field, WORD, "--json")
    assert missed.returncode == 0 and WORD not in missed.stdout
    assert _cached(open_field(field)).ident is not None

    _same_size_rewrite(field / PAGE, FORGED)

    checked = _memtui("check", field, "--json", "--all")
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert '"secret"' in checked.stdout and PAGE in checked.stdout
    found = _memtui("search", field, WORD, "--json")
    assert found.returncode == 0 and PAGE in json.dumps(json.loads(found.stdout))


def test_h3_an_approval_holds_only_for_bytes_read_in_this_run(field: Path) -> None:
    """Trusted metadata: a summary from the page cache is not proof of the bytes on disk; the bytes
    change after the scan took the cached summary, and the ledger approval must not be shown."""
    _reviewer_view(field)  # writes the page cache
    opened, pending = open_field_cached(field)
    assert pending == []  # the summary came from the cache
    _same_size_rewrite(field / PAGE, FORGED)
    ledger.with_approvals(opened)
    assert opened.pages[PAGE].sha256 == sha256_bytes(APPROVED)  # the watcher has not re-read it yet
    assert opened.approved(PAGE) == ""
    assert opened.trust(PAGE) != "reviewed"


def test_h3_the_row_cache_does_not_show_the_old_row_after_a_same_size_rewrite(field: Path) -> None:
    """Trusted metadata: the page list shown at launch (``rows.json``) keyed on size + mtime showed
    the approved page's "reviewed" row for the agent's bytes."""
    cache = locations.default_cache_dir(field)
    entries = scan(field)[0]
    row = make_cells(PageRow(PAGE, "Hosting", "note", "", "", "reviewed", "current", 0, 0, 0))
    row_cache.RowCacheWriter().save(cache, {PAGE: row}, {entry.path: entry for entry in entries})
    assert row_cache.load_rows(cache, scan(field)[0])[PAGE].trust == "reviewed"
    _same_size_rewrite(field / PAGE, FORGED)
    assert row_cache.load_rows(cache, scan(field)[0])[PAGE].trust != "reviewed"


def test_h3_a_page_cached_while_racy_is_never_taken_for_unchanged(tmp_path: Path) -> None:
    """Trusted metadata: a page read right after it was written is cached without its stat ident;
    the next load re-hashes it, so a same-size, same-mtime rewrite in the same tick is read."""
    root = tmp_path / "field"
    write_page(root, PAGE, APPROVED.decode())
    cached = _cached(Field.load(root))
    assert cached.ident is None and cached.sha256 == sha256_bytes(APPROVED)
    _same_size_rewrite(root / PAGE, FORGED)
    assert Field.load(root).pages[PAGE].sha256 == sha256_bytes(FORGED)
