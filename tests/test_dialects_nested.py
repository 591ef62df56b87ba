"""Dialects below the opened folder: every store is read by its own format, or named as skipped.

A store nested in a repository (an aictx ``.memory/`` under ``fixtures/`` or in
``packages/<x>/`` of a monorepo, Claude Code's auto memory in ``.claude/memory/``)
must be read as that format where it lies: read as plain Markdown, a page its
store marks superseded would be shown current. The folders are synthetic, written
by ``tests/fixtures_dialects.py`` and here.
"""

from __future__ import annotations

import json
from pathlib import Path

from memtui.cli import main
from memtui.dialects.open import open_field
from memtui.field.history import CURRENT, STALE, SUPERSEDED
from tests import fixtures_dialects as fx
from tests.helpers_field import make_field
from tests.test_dialects import _check_json, _dialects

REST = "memory/decisions/public-api-rest.md"
TRPC = "memory/decisions/public-api-trpc.md"
CACHE = "memory/gotchas/build-cache.md"


# --------------------------------------------------------------------------- aictx stores below the field root


def _nested_store(tmp_path: Path) -> Path:
    proj = make_field(tmp_path / "proj", {"README.md": "# Project\n\nA tool with test fixtures.\n"})
    fx.sidecar_store(proj / "fixtures" / ".memory", in_repository=False)
    return proj


def test_a_store_below_the_field_root_is_read_with_its_sidecars(tmp_path, capsys):
    proj = _nested_store(tmp_path)
    field = open_field(proj)
    store = "fixtures/.memory/"
    assert field.pages[store + REST].dialect == "sidecar-store"
    assert field.history.status[store + REST] == SUPERSEDED
    assert field.history.status[store + CACHE] == STALE
    assert field.history.status[store + TRPC] == CURRENT
    assert field.pages[store + TRPC].title == "Public API: tRPC"
    assert field.pages["README.md"].dialect == "markdown"
    _, out = _check_json(proj, capsys)
    found = _dialects(out["summary"])
    assert found["sidecar-store@fixtures/.memory"]["pages"] == 5
    assert any("fixtures/.memory/config.json" in e for e in found["sidecar-store@fixtures/.memory"]["evidence"])
    main(["check", str(proj)])
    text = " ".join(capsys.readouterr().out.split())
    assert "read as JSON-sidecar store (aictx) in fixtures/.memory/: 5 pages" in text


def test_search_at_the_root_shows_a_nested_superseded_page_superseded(tmp_path, capsys):
    proj = _nested_store(tmp_path)
    main(["search", str(proj), "path:fixtures*", "--json"])
    hits = {hit["path"]: hit for hit in json.loads(capsys.readouterr().out)}
    assert hits["fixtures/.memory/" + REST]["status"] == "superseded"
    assert hits["fixtures/.memory/" + TRPC]["status"] == "current"


def test_every_store_of_a_monorepo_is_read_with_its_own_root(tmp_path, capsys):
    repo = make_field(tmp_path / "mono", {"README.md": "# Monorepo\n", "packages/web/README.md": "# Web\n"})
    fx.sidecar_store(repo, in_repository=True)  # the root store: .memory/
    for name in ("api", "web"):
        fx.sidecar_store(repo / "packages" / name / ".memory", in_repository=False)
    field = open_field(repo)
    for store in (".memory/", "packages/api/.memory/", "packages/web/.memory/"):
        assert field.history.status[store + REST] == SUPERSEDED, store
        assert field.pages[store + REST].dialect == "sidecar-store"
    assert field.pages["packages/web/README.md"].dialect == "markdown"
    # Each store keeps its own relations and timeline.
    assert field.pages["packages/api/.memory/" + TRPC].supersedes == ["decision.public-api-graphql"]
    _, out = _check_json(repo, capsys)
    found = _dialects(out["summary"])
    assert {key for key in found if key.startswith("sidecar-store@")} == {
        "sidecar-store@.memory", "sidecar-store@packages/api/.memory", "sidecar-store@packages/web/.memory"
    }
    assert all(found[key]["pages"] == 5 for key in found if key.startswith("sidecar-store@"))


def test_a_memory_folder_with_unrelated_json_beside_it_is_not_a_store(tmp_path):
    repo = make_field(tmp_path / "app", {
        "docs/memory/cache.md": "# Cache\n\nHow the memory cache works.\n",
        "docs/memory/cache.json": json.dumps({"example": True}),
        "docs/memory/pool.md": "# Pool\n",
        "docs/memory/pool.json": "{}",
    })
    field = open_field(repo)
    assert {info.dialect for info in field} == {"markdown"}
