"""GitHub Copilot: repository-wide instructions, path instructions by ``applyTo``,
``excludeAgent``, prompt files.

The repository is written by ``tests/fixtures_instructions.py`` in Copilot's documented
layout; nothing in it is copied from a real project."""

from __future__ import annotations

from pathlib import Path

from memtui.dialects.loading import ALWAYS, ON_DEMAND, ON_MATCH
from memtui.session.loaded import loaded_context
from memtui.session.opening import FieldOptions, open_field
from tests import fixtures_instructions as fx
from tests.helpers_field import make_field, run_cli_json

INSTRUCTIONS = ".github/instructions/"


def test_copilot_files_load_as_the_docs_say(tmp_path: Path) -> None:
    field = open_field(fx.copilot_project(tmp_path / "repo"), FieldOptions())
    agent = loaded_context(field).agent("copilot")
    assert agent is not None and agent.title == "GitHub Copilot"
    files = {f.path: f for f in agent.files}
    assert files[".github/copilot-instructions.md"].loaded == ALWAYS
    python = files[INSTRUCTIONS + "python.instructions.md"]
    assert python.loaded == ON_MATCH and python.pattern == "src/**/*.py, tests/**/*.py"
    docs = files[INSTRUCTIONS + "docs/markdown.instructions.md"]
    assert docs.loaded == ON_MATCH and docs.pattern == "docs/**/*.md, *.md"  # a list, as real repositories write it
    assert "not used by Copilot's code-review" in docs.how
    assert files[INSTRUCTIONS + "everywhere.instructions.md"].loaded == ALWAYS
    manual = files[INSTRUCTIONS + "migrations.instructions.md"]
    assert manual.loaded == ON_DEMAND and "without applyTo" in manual.how
    braces = files[INSTRUCTIONS + "web.instructions.md"]
    assert braces.loaded == ON_MATCH and braces.pattern == "{web,admin}/**/*.{ts,tsx}, package.json"
    assert files[".github/prompts/new-account.prompt.md"].loaded == ON_DEMAND
    # Only Copilot's own files: a README beside them, CI notes and custom agents are not instructions it loads.
    assert set(files) == {
        ".github/copilot-instructions.md",
        INSTRUCTIONS + "python.instructions.md",
        INSTRUCTIONS + "docs/markdown.instructions.md",
        INSTRUCTIONS + "everywhere.instructions.md",
        INSTRUCTIONS + "migrations.instructions.md",
        INSTRUCTIONS + "web.instructions.md",
        ".github/prompts/new-account.prompt.md",
    }
    assert field.pages[".github/copilot-instructions.md"].norm.role == "instructions"
    assert agent.total_bytes == sum(f.bytes for f in agent.files if f.loaded == ALWAYS) > 0


def test_only_what_copilot_loads_by_itself_without_all(tmp_path: Path, capsys) -> None:
    root = fx.copilot_project(tmp_path / "repo")
    _, data, _ = run_cli_json(["context", root], capsys)
    copilot = next(a for a in data["agents"] if a["agent"] == "copilot")
    assert {f["loaded"] for f in copilot["files"]} <= {"always", "on-match", "on-demand"}
    assert any("~/.copilot/" in note for note in copilot["outside"])
    report = loaded_context(open_field(root, FieldOptions()), all_files=False)
    agent = report.agent("copilot")
    assert agent is not None and {f.loaded for f in agent.files} == {ALWAYS, ON_MATCH}


def test_a_github_folder_without_copilot_files_is_no_copilot(tmp_path: Path, capsys) -> None:
    root = make_field(tmp_path / "repo", {"README.md": "# R\n", ".github/workflows/notes.md": "# CI\n"})
    report = loaded_context(open_field(root, FieldOptions()))
    assert report.agent("copilot") is None
    _, data, _ = run_cli_json(["check", root], capsys)
    assert not any(d["name"] == "copilot" for d in data["summary"]["dialects"])


def test_a_copilot_file_elsewhere_is_not_copilots(tmp_path: Path) -> None:
    """Copilot reads the .github/ at the root of the repository, not one in a subfolder."""
    root = make_field(
        tmp_path / "repo",
        {"vendor/lib/.github/copilot-instructions.md": "# Not ours\n", ".github/copilot-instructions.md": "# Ours\n"},
    )
    agent = loaded_context(open_field(root, FieldOptions())).agent("copilot")
    assert agent is not None and [f.path for f in agent.files] == [".github/copilot-instructions.md"]
