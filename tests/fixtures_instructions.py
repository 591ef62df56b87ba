"""Repositories holding instruction files in the documented layouts of Windsurf, GitHub
Copilot and the AGENTS.md convention. Every text here is written for these tests; none
is copied from a real project."""

from __future__ import annotations

from pathlib import Path

from tests.helpers_field import make_field

LONG_RULE_LINES = 120  # of 60 characters: 7,320 characters, past Windsurf's 6,000


def _long_lines(count: int, word: str) -> str:
    return "".join(f"- {word} {n:04d} " + "x" * 46 + "\n" for n in range(count))


def windsurf_project(root: Path) -> Path:
    """A repository with workspace rules of every trigger, a nested rules folder, and the legacy file."""
    make_field(
        root,
        {
            "README.md": "# Kettle\n\nA tea timer.\n",
            ".windsurf/rules/style.md": "---\ntrigger: always_on\n---\n\n# Style\n\n- Tabs are four spaces.\n",
            ".windsurf/rules/frontend.md": (
                '---\ntrigger: glob\nglobs: "web/**/*.ts, web/**/*.tsx"\n---\n\n# Frontend\n\n- Hooks only.\n'
            ),
            ".windsurf/rules/release.md": (
                "---\ntrigger: model_decision\ndescription: when preparing a release\n---\n\n# Release\n\n"
                "- Bump the version in one commit.\n"
            ),
            ".windsurf/rules/legacy-api.md": "---\ntrigger: manual\n---\n\n# Legacy API\n\n- Never call v1.\n",
            ".windsurf/rules/orphan.md": "---\ntrigger: glob\n---\n\n# Orphan\n\n- Names no files.\n",
            ".windsurf/rules/long.md": "---\ntrigger: always_on\n---\n\n" + _long_lines(LONG_RULE_LINES, "rule"),
            "services/brewer/.windsurf/rules/brewer.md": (
                "---\ntrigger: always_on\n---\n\n# Brewer\n\n- Steep for four minutes.\n"
            ),
            ".windsurf/workflows/ship.md": "# Ship\n\n1. Run the tests.\n",
        },
    )
    (root / ".windsurfrules").write_text("Answer in British English.\n", encoding="utf-8")
    return root


def copilot_project(root: Path) -> Path:
    """A repository with repository-wide and path-specific instructions, and prompt files."""
    return make_field(
        root,
        {
            "README.md": "# Ledger\n\nDouble-entry bookkeeping.\n",
            ".github/copilot-instructions.md": "# Ledger\n\n- Amounts are integers of cents.\n",
            ".github/instructions/python.instructions.md": (
                '---\napplyTo: "src/**/*.py,tests/**/*.py"\n---\n\n# Python\n\n- Type every function.\n'
            ),
            ".github/instructions/docs/markdown.instructions.md": (
                '---\napplyTo:\n  - "docs/**/*.md"\n  - "*.md"\nexcludeAgent: "code-review"\n---\n\n'
                "# Docs\n\n- One sentence per line.\n"
            ),
            ".github/instructions/everywhere.instructions.md": (
                '---\napplyTo: "**"\n---\n\n# Everywhere\n\n- Never log an account number.\n'
            ),
            ".github/instructions/migrations.instructions.md": (
                "---\ndescription: how to write a schema migration\n---\n\n# Migrations\n\n- Reversible only.\n"
            ),
            ".github/instructions/web.instructions.md": (
                "---\napplyTo: '{web,admin}/**/*.{ts,tsx},package.json'\n---\n\n# Web\n\n- No inline styles.\n"
            ),
            ".github/instructions/README.md": "# About these files\n\nNot an instruction file.\n",
            ".github/prompts/new-account.prompt.md": "---\nmode: agent\n---\n\nCreate a new account type.\n",
            ".github/workflows/notes.md": "# CI notes\n\nNot Copilot's.\n",
            ".github/agents/reviewer.agent.md": "---\nname: reviewer\n---\n\nReview carefully.\n",
        },
    )


CODEX_ROOT_BYTES = 30_000  # the root AGENTS.md: most of Codex's 32 KiB


def agents_md_project(root: Path, *, root_bytes: int = 0) -> Path:
    """A monorepo with a root AGENTS.md, nested ones, and a Codex override in one package;
    ``root_bytes``: pad the root file to about that size."""
    body = "# Orchard\n\n- Run `make check` before every commit.\n"
    if root_bytes:
        body += _long_lines(max((root_bytes - len(body)) // 60, 0), "root")
    return make_field(
        root,
        {
            "AGENTS.md": body,
            "packages/api/AGENTS.md": "# API\n\n" + _long_lines(60, "api"),
            "packages/api/handlers/AGENTS.md": "# Handlers\n\n- Validate before writing.\n",
            "packages/web/AGENTS.md": "# Web\n\n- Use the design tokens.\n",
            "packages/web/AGENTS.override.md": "# Web (Codex)\n\n- Skip the visual tests.\n",
            "docs/guide.md": "# Guide\n\nHow to plant.\n",
        },
    )
