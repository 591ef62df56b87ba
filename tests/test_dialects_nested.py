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
from memtui.index import IndexService
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
        "sidecar-store@.memory",
        "sidecar-store@packages/api/.memory",
        "sidecar-store@packages/web/.memory",
    }
    assert all(found[key]["pages"] == 5 for key in found if key.startswith("sidecar-store@"))


def test_a_memory_folder_with_unrelated_json_beside_it_is_not_a_store(tmp_path):
    repo = make_field(
        tmp_path / "app",
        {
            "docs/memory/cache.md": "# Cache\n\nHow the memory cache works.\n",
            "docs/memory/cache.json": json.dumps({"example": True}),
            "docs/memory/pool.md": "# Pool\n",
            "docs/memory/pool.json": "{}",
        },
    )
    field = open_field(repo)
    assert {info.dialect for info in field} == {"markdown"}


# --------------------------------------------------------------------------- Claude Code memory inside .claude/


def _claude_repo(tmp_path: Path, **extra: str) -> Path:
    repo = make_field(
        tmp_path / "repo",
        {
            "README.md": "# App\n",
            ".claude/settings.json": "{}",
            **extra,
        },
    )
    fx.claude_auto_memory(repo / ".claude")
    return repo


def test_auto_memory_in_dot_claude_memory_is_read_at_a_repository_root(tmp_path, capsys):
    repo = _claude_repo(tmp_path)
    field = open_field(repo)
    topic = field.pages[".claude/memory/deploy-windows.md"]
    assert (topic.dialect, topic.kind, topic.title) == ("claude-code", "feedback", "Deploy windows")
    assert field.pages[".claude/memory/MEMORY.md"].role == "index"
    _, out = _check_json(repo, capsys)
    assert _dialects(out["summary"])["claude-code@.claude/memory"]["pages"] == 4
    assert out["summary"]["skipped"] == []
    with IndexService(repo) as svc:
        svc.open()
        assert ".claude/memory/deploy-windows.md" in {h.path for h in svc.search("Tuesday Thursday")}


def test_dot_claude_with_instructions_and_memory_reads_the_memory_and_labels_the_rest(tmp_path, capsys):
    repo = _claude_repo(
        tmp_path,
        **{
            "CLAUDE.md": "# App\n",
            ".claude/rules/style.md": "# Style\n",
            ".claude/agents/reviewer.md": "---\nname: reviewer\ndescription: reviews\n---\nReview the diff.\n",
        },
    )
    field = open_field(repo)
    assert field.pages[".claude/memory/user-role.md"].kind == "user"
    assert field.pages[".claude/rules/style.md"].kind == "rules"
    _, out = _check_json(repo, capsys)
    skipped = {s["path"]: s["what"] for s in out["summary"]["skipped"]}
    assert set(skipped) == {".claude/agents"}
    assert "not memory" not in skipped[".claude/agents"]
    assert "instructions" in skipped[".claude/agents"]


def test_other_memory_folders_inside_dot_claude_are_read_never_called_not_memory(tmp_path, capsys):
    repo = make_field(
        tmp_path / "repo",
        {
            "README.md": "# App\n",
            ".claude/projects/-home-me-app/memory/MEMORY.md": "# App memory\n- [Style](style.md)\n",
            ".claude/projects/-home-me-app/memory/style.md": fx.TOPIC.format(
                name="Style", description="style", kind="feedback", body="Short answers."
            ),
            ".claude/notes/MEMORY.md": "# Notes index\n- [Ops](ops.md)\n",
            ".claude/notes/ops.md": fx.TOPIC.format(
                name="Ops", description="ops", kind="project", body="Deploy Friday."
            ),
            ".claude/scratch/todo.md": "# Todo\n\n- a thing\n",
        },
    )
    field = open_field(repo)
    assert field.pages[".claude/projects/-home-me-app/memory/style.md"].kind == "feedback"
    assert field.pages[".claude/notes/ops.md"].dialect == "claude-code"
    _, out = _check_json(repo, capsys)
    skipped = {s["path"]: s for s in out["summary"]["skipped"]}
    assert set(skipped) == {".claude/scratch"}
    assert "not memory" not in skipped[".claude/scratch"]["what"]
    assert skipped[".claude/scratch"]["command"].startswith("memtui ")


# --------------------------------------------------------------------------- weak and duplicated claims


def test_one_memtui_key_in_one_page_does_not_claim_memtuis_format(tmp_path, capsys):
    pages = {f"docs/spec-{n}.md": f"# Spec {n}\n\nA design document.\n" for n in range(15)}
    pages["docs/spec-3.md"] = "---\ntitle: Spec 3\nsupersedes: spec-2\n---\n# Spec 3\n"
    repo = make_field(tmp_path / "app", pages)
    _, out = _check_json(repo, capsys)
    assert "memtui@." not in _dialects(out["summary"])


def test_memtui_format_is_still_claimed_on_real_marks(tmp_path, capsys):
    pages = {
        f"notes/n{n}.md": f"---\nkind: semantic\norigin: user\n---\n# N{n}\n\n- a fact [stated]\n" for n in range(6)
    }
    repo = make_field(tmp_path / "mem", pages)
    _, out = _check_json(repo, capsys)
    assert _dialects(out["summary"])["memtui@."]["pages"] == 6


def test_one_dialect_at_one_root_is_one_entry(tmp_path, capsys):
    pages = ("CLAUDE.md", "commands/release.md", "projects/-home-me-app/memory/notes.md")
    root = make_field(tmp_path / "claude-backup", dict.fromkeys(pages, "# A page\n"))
    _, out = _check_json(root, capsys)
    names = [(d["name"], d["root"]) for d in out["summary"]["dialects"]]
    assert names.count(("claude-code", ".")) == 1
    entry = _dialects(out["summary"])["claude-code@."]
    assert entry["pages"] == 2 and any("CLAUDE.md with" in e for e in entry["evidence"])
    assert _dialects(out["summary"])["claude-code@projects/-home-me-app/memory"]["pages"] == 1


def test_instructions_and_auto_memory_in_one_folder_are_one_entry(tmp_path, capsys):
    root = make_field(tmp_path / "memory", {"CLAUDE.md": "# Project\n", "MEMORY.md": "# Index\n- [a](a.md)\n"})
    make_field(root, {"a.md": fx.TOPIC.format(name="A", description="a", kind="project", body="Fact.")})
    main(["check", str(root)])
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("read as Claude Code")]
    assert len(lines) == 1 and ": 3 pages" in lines[0], lines
