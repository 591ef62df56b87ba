"""What each agent is told next session (issue 41): ``memtui context`` and ``session.loaded``.

Fields in each format's documented layout (``tests/fixtures_dialects.py``); every figure
asserted is computed from the fixture, never copied from the output.
"""

from __future__ import annotations

from pathlib import Path

from memtui.dialects.loading import ALWAYS, NEVER, ON_DEMAND, ON_MATCH, Cap
from memtui.session.loaded import NO_AGENT, loaded_context
from memtui.session.opening import FieldOptions, open_field
from tests.fixtures_dialects import claude_auto_memory, claude_project, obsidian_vault, openclaw_workspace
from tests.helpers import write_page
from tests.helpers_field import make_field, run_cli, run_cli_json


def _modes(report, agent: str) -> dict[str, str]:
    found = report.agent(agent)
    assert found is not None, [a.agent for a in report.agents]
    return {f.path: f.loaded for f in found.files}


def test_claude_project_files_load_in_order_with_imports_rules_and_nested(tmp_path: Path) -> None:
    root = claude_project(tmp_path / "repo")
    write_page(root, "src/api/CLAUDE.md", "# API\n\nValidate every body.\n")
    report = loaded_context(open_field(root, FieldOptions()))
    modes = _modes(report, "claude-code")
    assert modes["CLAUDE.md"] == ALWAYS
    assert modes[".claude/CLAUDE.md"] == ALWAYS
    assert modes["docs/build.md"] == ALWAYS  # imported by an always-loaded file
    assert modes[".claude/rules/testing.md"] == ON_MATCH  # it names paths: src/**
    assert modes["src/api/CLAUDE.md"] == ON_MATCH
    assert "docs/not-an-import.md" not in modes  # in a code span
    assert "docs/also-not-an-import.md" not in modes  # in a fenced block
    agent = report.agent("claude-code")
    assert agent is not None
    sizes = {f.path: f.bytes for f in agent.files}
    assert agent.total_bytes == sum(
        (root / p).stat().st_size for p, mode in modes.items() if mode == ALWAYS and (root / p).exists()
    )
    assert sizes["CLAUDE.md"] == (root / "CLAUDE.md").stat().st_size
    assert any("~/.claude/CLAUDE.md" in line for line in agent.outside)  # named, never read


def test_auto_memory_index_is_cut_at_200_lines_and_topics_load_on_demand(tmp_path: Path) -> None:
    root = claude_auto_memory(tmp_path / "mem", index_lines=260)
    report = loaded_context(open_field(root, FieldOptions()))
    agent = report.agent("claude-code")
    assert agent is not None
    by_path = {f.path: f for f in agent.files}
    index = by_path["memory/MEMORY.md"]
    assert index.loaded == ALWAYS and index.cut_at_line == 201
    lines = (root / "memory/MEMORY.md").read_text().split("\n")
    assert index.loaded_bytes == sum(len(line.encode()) + 1 for line in lines[:200])
    assert by_path["memory/staging.md"].loaded == ON_DEMAND


def test_openclaw_bootstrap_files_in_injection_order_and_the_char_cap(tmp_path: Path) -> None:
    root = openclaw_workspace(tmp_path / "ws", memory_chars=30_000)
    report = loaded_context(open_field(root, FieldOptions()))
    agent = report.agent("openclaw")
    assert agent is not None
    always = [f.path for f in agent.files if f.loaded == ALWAYS]
    assert always[:2] == ["AGENTS.md", "SOUL.md"]
    assert {"USER.md", "IDENTITY.md", "TOOLS.md", "HEARTBEAT.md", "MEMORY.md"} <= set(always)
    memory = next(f for f in agent.files if f.path == "MEMORY.md")
    assert memory.cut_at_line is not None and memory.loaded_bytes < memory.bytes
    daily = next(f for f in agent.files if f.path == "memory/2026-11-02.md")
    assert daily.loaded == ON_DEMAND  # daily logs are read by the agent, not injected


def test_a_secret_in_an_imported_file_reaches_the_session_and_is_reported(tmp_path: Path, capsys) -> None:
    root = make_field(
        tmp_path / "repo",
        {
            "CLAUDE.md": "# Project\n\nSee @docs/ops.md\n",
            "docs/ops.md": "# Ops\n\nThe staging password: hunter2-Blue7\n",
            "docs/other.md": "# Other\n\nThe prod password: Zq8-pass-9911\n",  # loaded by nobody
            "memtui.toml": '[rules]\nsecret = "off"\n',  # the field's own file cannot hide it here
        },
    )
    code, data, _err = run_cli_json(["context", root], capsys)
    assert code == 1
    assert [(f["rule"], f["path"], f["line"]) for f in data["findings"]] == [("secret", "docs/ops.md", 3)]
    assert "hunter2" not in str(data)
    code, out, _err = run_cli(["context", root], capsys)
    assert code == 1
    assert "docs/ops.md" in out and "secret" in out and "hunter2" not in out
    assert "docs/other.md" not in out


def test_an_unknown_agent_is_a_usage_error_naming_the_agents(tmp_path: Path, capsys) -> None:
    root = claude_project(tmp_path / "repo")
    try:
        run_cli(["context", root, "--agent", "cursor"], capsys)
    except SystemExit as exc:
        assert exc.code == 2
    err = capsys.readouterr().err
    assert "no agent 'cursor' here" in err and "claude-code" in err


def test_a_field_with_no_agent_files_says_it_cannot_tell(tmp_path: Path, capsys) -> None:
    root = make_field(tmp_path / "notes", {"a.md": "# A\n\nA note.\n"})
    report = loaded_context(open_field(root, FieldOptions()))
    assert report.agents == [] and NO_AGENT in report.unknown
    vault = obsidian_vault(tmp_path / "vault")
    report = loaded_context(open_field(vault, FieldOptions()))
    assert any("no agent is known to load this format" in line for line in report.unknown)
    code, out, _err = run_cli(["context", vault], capsys)
    assert code == 0
    assert "no agent is known to load this format" in out and "instructions memtui cannot see" in out


def test_memtui_format_sessions_and_quarantine_never_load(tmp_path: Path, sample_field: Path) -> None:
    report = loaded_context(open_field(sample_field, FieldOptions()))
    modes = _modes(report, "memtui")
    assert modes["MEMORY.md"] == ALWAYS and modes["IDENTITY.md"] == ALWAYS
    assert all(mode == NEVER for path, mode in modes.items() if path.startswith(("sessions/", "quarantine/")))


def test_a_cap_cuts_at_the_first_line_that_does_not_fit() -> None:
    assert Cap("3 lines", lines=3).cut("a\nb\nc\nd\n") == (4, 6)
    assert Cap("5 bytes", bytes=5).cut("ab\ncd\nef\n") == (2, 3)
    assert Cap("é", chars=2).cut("é\né\n") == (2, 3)  # characters, not bytes
    assert Cap("none", lines=10).cut("a\nb\n") == (None, 4)
