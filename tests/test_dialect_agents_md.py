"""AGENTS.md: the root file every session, nested ones on match, Codex's 32 KiB for the
whole chain, and never taking an OpenClaw workspace's (or memtui's) page.

Fields are written by ``tests/fixtures_instructions.py`` and ``tests/fixtures_dialects.py``;
every figure asserted is computed from the fixture."""

from __future__ import annotations

from pathlib import Path

from memtui.dialects.formats.agents_md import CODEX_MAX_BYTES
from memtui.dialects.loading import ALWAYS, ON_MATCH
from memtui.session.loaded import loaded_context
from memtui.session.opening import FieldOptions, open_field
from tests import fixtures_instructions as fx
from tests.fixtures_dialects import claude_project, openclaw_workspace
from tests.helpers import write_page
from tests.helpers_field import run_cli


def test_root_every_session_nested_on_match_override_for_codex(tmp_path: Path) -> None:
    field = open_field(fx.agents_md_project(tmp_path / "repo"), FieldOptions())
    agent = loaded_context(field).agent("agents-md")
    assert agent is not None and "Codex" in agent.title and "Windsurf" in agent.title
    files = {f.path: f for f in agent.files}
    assert files["AGENTS.md"].loaded == ALWAYS
    assert (files["packages/api/AGENTS.md"].loaded, files["packages/api/AGENTS.md"].pattern) == (
        ON_MATCH,
        "packages/api/**",
    )
    assert files["packages/api/handlers/AGENTS.md"].pattern == "packages/api/handlers/**"
    assert "Codex reads AGENTS.override.md here instead" in files["packages/web/AGENTS.md"].how
    assert files["packages/web/AGENTS.md"].cap is None  # Codex does not read it; the others document no cap
    assert "Codex's override" in files["packages/web/AGENTS.override.md"].how
    assert field.pages["AGENTS.md"].dialect == "agents-md"
    assert field.pages["AGENTS.md"].norm.role == "instructions"
    assert [f.path for f in agent.files][0] == "AGENTS.md"  # the root first, then deeper


def test_codex_budget_is_shared_along_the_chain(tmp_path: Path) -> None:
    root = fx.agents_md_project(tmp_path / "repo", root_bytes=fx.CODEX_ROOT_BYTES)
    agent = loaded_context(open_field(root, FieldOptions())).agent("agents-md")
    assert agent is not None
    files = {f.path: f for f in agent.files}
    top = (root / "AGENTS.md").stat().st_size
    api = (root / "packages/api/AGENTS.md").stat().st_size
    assert top < CODEX_MAX_BYTES < top + api  # the fixture's premise
    assert files["AGENTS.md"].cut_at_line is None
    nested = files["packages/api/AGENTS.md"]
    left = CODEX_MAX_BYTES - top
    assert nested.cap is not None and nested.cap.bytes == left and f"{left:,} bytes left" in nested.cap.words
    assert nested.cut_at_line is not None and 0 < nested.loaded_bytes <= left
    # Below it nothing is left: Codex reads none of it.
    deepest = files["packages/api/handlers/AGENTS.md"]
    assert deepest.cap is not None and deepest.cap.bytes == 0
    assert (deepest.cut_at_line, deepest.loaded_bytes) == (1, 0)


def test_an_openclaw_workspace_keeps_its_agents_md(tmp_path: Path, capsys) -> None:
    """Rules chosen by the field: a format found here never takes OpenClaw's reading of its
    bootstrap file; both agents that load it list it."""
    root = openclaw_workspace(tmp_path / "ws")
    field = open_field(root, FieldOptions())
    assert field.pages["AGENTS.md"].dialect == "openclaw"
    report = loaded_context(field)
    openclaw, agents = report.agent("openclaw"), report.agent("agents-md")
    assert openclaw is not None and agents is not None
    assert any(f.path == "AGENTS.md" and f.loaded == ALWAYS for f in openclaw.files)
    assert [f.path for f in agents.files] == ["AGENTS.md"]
    code, out, _ = run_cli(["context", root], capsys)
    assert code == 0 and "OpenClaw" in out and "AGENTS.md" in out


def test_a_memtui_field_keeps_its_reading_of_agents_md(tmp_path: Path) -> None:
    """Rules chosen by the field: an AGENTS.md planted in a memtui-format field stays memtui's
    page (its checks apply), and is still shown as loaded by the agents."""
    root = tmp_path / "mem"
    write_page(root, "IDENTITY.md", "# Identity\n")
    write_page(root, "MEMORY.md", "# Memory\n\n- [a](a.md)\n")
    write_page(root, "a.md", "---\nkind: fact\n---\n# A\n")
    write_page(root, "AGENTS.md", "---\nkind: nonsense\n---\n# Agents\n")
    field = open_field(root, FieldOptions())
    assert field.pages["AGENTS.md"].dialect != "agents-md"
    agents = loaded_context(field).agent("agents-md")
    assert agents is not None and [f.path for f in agents.files] == ["AGENTS.md"]


def test_claude_code_and_agents_md_side_by_side(tmp_path: Path) -> None:
    root = claude_project(tmp_path / "repo")
    write_page(root, "AGENTS.md", "# Agents\n\n- Same rules as CLAUDE.md.\n")
    report = loaded_context(open_field(root, FieldOptions()))
    claude, agents = report.agent("claude-code"), report.agent("agents-md")
    assert claude is not None and agents is not None
    assert "CLAUDE.md" in {f.path for f in claude.files} and "AGENTS.md" not in {f.path for f in claude.files}
    assert [f.path for f in agents.files] == ["AGENTS.md"]


def test_an_agents_md_in_a_hidden_top_folder_is_read(tmp_path: Path) -> None:
    root = fx.agents_md_project(tmp_path / "repo")
    write_page(root, ".github/AGENTS.md", "# CI\n\n- Pin every action.\n")
    write_page(root, ".github/workflows/notes.md", "# Not an AGENTS.md\n")
    field = open_field(root, FieldOptions())
    assert ".github/workflows/notes.md" not in field.pages
    agent = loaded_context(field).agent("agents-md")
    assert agent is not None
    found = next(f for f in agent.files if f.path == ".github/AGENTS.md")
    assert (found.loaded, found.pattern, found.exists) == (ON_MATCH, ".github/**", True)
