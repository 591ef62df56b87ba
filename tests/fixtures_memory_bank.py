"""Small Cline / Roo Code projects with a memory bank, for the memory-bank dialect tests.

Every file here was written for these tests, in the layout Cline's and Roo Code's
documentation describes (``memory-bank/`` core files, ``.clinerules``, ``.roo/rules*/``);
none is copied from anyone's memory bank or custom instructions. Each builder writes
into a folder and returns it.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers_field import make_field

# The six core files, each with a line in its role (written for these tests).
CORE_PAGES = {
    "projectbrief.md": "# Project brief\n\nTideline tracks harbour tides for small boat owners.\n",
    "productContext.md": "# Product context\n\nOwners need the next safe launch window at a glance.\n",
    "systemPatterns.md": "# System patterns\n\nA fetcher feeds a cache; the app reads only the cache.\n",
    "techContext.md": "# Tech context\n\nPython 3.12, SQLite, a small Flask front end.\n",
    "activeContext.md": (
        "# Active context\n\n## Current focus\n\nThe launch-window calculator.\n\n"
        "## Recent changes\n\n- Cache now expires after six hours.\n\n## Next steps\n\n- Add moon phases.\n"
    ),
    "progress.md": "# Progress\n\n- Works: fetching, caching.\n- Left: alerts.\n- Known issue: DST off by one hour.\n",
}
# A rule telling the agent to read the bank at the start of every task (line 3 says so).
READ_ALL = (
    "# Memory bank\n\n"
    "At the start of every task, read ALL memory bank files in memory-bank/ before doing anything.\n"
    "Update activeContext.md and progress.md when a task ends.\n"
)


def _bank(prefix: str = "memory-bank/", names: tuple[str, ...] | None = None) -> dict[str, str]:
    chosen = names if names is not None else tuple(CORE_PAGES)
    return {prefix + name: CORE_PAGES[name] for name in chosen}


def cline_project(root: Path) -> Path:
    """A repository whose ``.clinerules/`` folder tells Cline to read the whole memory bank,
    with a conditional rule (``paths:``), a workflow and an extra memory-bank file."""
    return make_field(
        root,
        {
            "README.md": "# Tideline\n\nTide windows for small harbours.\n",
            **_bank(),
            "memory-bank/features/alerts.md": "# Alerts\n\nPush a note an hour before the window opens.\n",
            ".clinerules/memory-bank.md": READ_ALL,
            ".clinerules/python-style.md": "---\npaths:\n  - 'src/**/*.py'\n---\n# Python style\n\nType every function.\n",
            ".clinerules/workflows/release.md": "# Release\n\n1. Tag.\n2. Build.\n3. Read the memory bank first.\n",
        },
    )


def bare_bank(root: Path) -> Path:
    """A repository with a memory bank and no instruction to read it (two core files missing)."""
    names = ("projectbrief.md", "productContext.md", "systemPatterns.md", "activeContext.md")
    return make_field(root, {"README.md": "# Tideline\n", **_bank(names=names)})


def clinerules_file_project(root: Path) -> Path:
    """A repository whose single ``.clinerules`` file (not Markdown-named) names the bank."""
    root = make_field(root, {"README.md": "# Tideline\n", **_bank()})
    (root / ".clinerules").write_text(READ_ALL, encoding="utf-8")
    return root


def roo_project(root: Path) -> Path:
    """A Roo Code project: ``.roo/rules/`` names two memory-bank files to read (not all),
    an architect-mode rule, a ``.roorules-code`` file naming the bank for the code mode,
    and a Roo variant bank with ``decisionLog.md``."""
    root = make_field(
        root,
        {
            **_bank(names=("productContext.md", "activeContext.md", "progress.md")),
            "memory-bank/decisionLog.md": "# Decision log\n\n- 2026-03-02: SQLite over Postgres (one user).\n",
            ".roo/rules/01-memory.md": (
                "# Memory\n\nBefore each task, read memory bank files activeContext.md and decisionLog.md.\n"
            ),
            ".roo/rules-architect/diagrams.md": "# Diagrams\n\nDraw the data flow before proposing a change.\n",
        },
    )
    (root / ".roorules-code").write_text("Read progress.md from the memory bank first.\n", encoding="utf-8")
    return root


def roo_rules_bank(root: Path) -> Path:
    """A bank kept inside ``.roo/rules/`` itself: Roo Code loads it as rules."""
    return make_field(
        root,
        {
            ".roo/rules/memory-bank.md": READ_ALL,
            **_bank(prefix=".roo/rules/memory-bank/"),
        },
    )
