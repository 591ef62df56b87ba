"""The context screen (issue 41): what each agent loads next session, in the TUI."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtui.tui.screens.context import ContextScreen
from memtui.tui.screens.page import PageScreen
from tests.helpers_field import make_field
from tests.helpers_tui import SIZE, make_app, screen_text, wait_ready

PAGES = {
    "CLAUDE.md": "# Project\n\nRun tests with make test.\nSee @docs/ops.md\n",
    "docs/ops.md": "# Ops\n\nDeploy from main.\nThe staging password: hunter2-Blue7\n",
    ".claude/rules/api.md": "---\npaths:\n  - 'src/api/**'\n---\n# API\n\nValidate bodies.\n",
    ".claude/agents/reviewer.md": "---\nname: reviewer\ndescription: reviews diffs\n---\nReview the diff.\n",
}


async def _context_screen(app, pilot) -> ContextScreen:
    await wait_ready(app, pilot)
    await pilot.press("7")
    for _ in range(200):
        await pilot.pause(0.02)
        screen = app.screen
        if isinstance(screen, ContextScreen) and screen.report is not None:
            await app.workers.wait_for_complete()
            await pilot.pause()
            return screen
    raise AssertionError(f"no context screen: {type(app.screen).__name__}")


async def test_seven_shows_each_file_an_agent_loads_and_enter_opens_the_finding(tmp_path: Path) -> None:
    root = make_field(tmp_path / "repo", PAGES)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _context_screen(app, pilot)
        text = screen_text(app)
        assert "Claude Code" in text and "every session: 2 files" in text
        assert "docs/ops.md" in text and "imported by CLAUDE.md:4" in text
        assert "secret" in text and "hunter2" not in text
        assert "not read: .claude/agents/" in text  # a folder memtui skips is said, with how to open it
        assert ".claude/rules/api.md" in text  # on match
        await pilot.press("a")
        await pilot.pause()
        assert screen.all_files
        listing = screen.query_one("#context-list")
        listing.focus()
        listing.highlighted = listing.get_option_index("file:0:docs/ops.md")
        await pilot.press("enter")
        for _ in range(200):
            await pilot.pause(0.02)
            if isinstance(app.screen, PageScreen):
                break
        assert isinstance(app.screen, PageScreen) and app.screen.path == "docs/ops.md"
        assert app.screen.jump_line == 4  # the secret's line


async def test_a_field_with_no_agent_files_says_memtui_cannot_tell(tmp_path: Path) -> None:
    root = make_field(tmp_path / "notes", {"a.md": "# A\n\nA note.\n"})
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await _context_screen(app, pilot)
        assert "memtui found no agent's own files here" in " ".join(screen_text(app).split())


async def test_a_lists_the_files_an_agent_reads_on_demand(tmp_path: Path) -> None:
    from tests.fixtures_dialects import claude_auto_memory

    root = claude_auto_memory(tmp_path / "mem", index_lines=230)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _context_screen(app, pilot)
        text = " ".join(screen_text(app).split())
        assert "memory/MEMORY.md" in text and "cut at line 201" in text
        assert "memory/staging.md" not in text and "3 files it reads when it decides to" in text
        await pilot.press("a")
        await pilot.pause()
        assert screen.all_files and "memory/staging.md" in screen_text(app)


LAYOUTS = {
    # builder (module, name) -> the agent title the context screen must show for it
    ("fixtures_dialects", "claude_project"): "Claude Code",
    ("fixtures_dialects", "claude_auto_memory"): "Claude Code",
    ("fixtures_dialects", "openclaw_workspace"): "OpenClaw",
    ("fixtures_dialects", "serena_project"): "Serena",
    ("fixtures_rules", "kiro_workspace"): "Kiro",
    ("fixtures_rules", "cursor_project"): "Cursor",
    ("fixtures_instructions", "windsurf_project"): "Windsurf",
    ("fixtures_instructions", "copilot_project"): "Copilot",
    ("fixtures_instructions", "agents_md_project"): "AGENTS.md",
    ("fixtures_memory_bank", "cline_project"): "Cline",
    ("fixtures_memory_bank", "roo_project"): "Roo Code",
    ("fixtures_dialects", "obsidian_vault"): "no agent is known to load this format",
}


@pytest.mark.parametrize(
    ("builder", "title"), sorted(LAYOUTS.items()), ids=lambda v: v[1] if isinstance(v, tuple) else ""
)
async def test_the_context_screen_on_each_layout(builder: tuple[str, str], title: str, tmp_path: Path) -> None:
    """Issue 41: the context screen on each layout's fixture names its agent (or says why none)."""
    import importlib

    module, name = builder
    root = getattr(importlib.import_module(f"tests.{module}"), name)(tmp_path / name)
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _context_screen(app, pilot)
        assert screen.report is not None
        text = " ".join(screen_text(app).split())
        assert title in text, text[:600]
        assert "Traceback" not in text
