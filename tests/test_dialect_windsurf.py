"""Windsurf rules: triggers as load modes, the 6,000-character cap, the legacy file, the
memories that live outside the repository.

The repository is written by ``tests/fixtures_instructions.py`` in Windsurf's documented
layout; every figure asserted is computed from the fixture."""

from __future__ import annotations

from pathlib import Path

from memtui.dialects.formats.windsurf import RULE_MAX_CHARS, pattern_text
from memtui.dialects.loading import ALWAYS, ON_DEMAND, ON_MATCH, UNKNOWN
from memtui.field.checks import run_checks
from memtui.session.loaded import loaded_context
from memtui.session.opening import FieldOptions, open_field
from tests import fixtures_instructions as fx
from tests.helpers_field import make_field, run_cli, run_cli_json

RULES = ".windsurf/rules/"


def test_each_trigger_is_a_load_mode_with_its_pattern(tmp_path: Path) -> None:
    root = fx.windsurf_project(tmp_path / "repo")
    field = open_field(root, FieldOptions())
    agent = loaded_context(field).agent("windsurf")
    assert agent is not None and agent.title.startswith("Windsurf")
    files = {f.path: f for f in agent.files}
    assert files[RULES + "style.md"].loaded == ALWAYS
    assert files[RULES + "frontend.md"].loaded == ON_MATCH
    assert files[RULES + "frontend.md"].pattern == "web/**/*.ts, web/**/*.tsx"
    assert files[RULES + "release.md"].loaded == ON_DEMAND and "decides" in files[RULES + "release.md"].how
    assert files[RULES + "legacy-api.md"].loaded == ON_DEMAND and "@mention" in files[RULES + "legacy-api.md"].how
    nested = files["services/brewer/.windsurf/rules/brewer.md"]
    assert nested.loaded == ALWAYS and "services/brewer/" in nested.how
    # Rules are instructions, read by this format; a workflow is not a rule.
    assert field.pages[RULES + "style.md"].dialect == "windsurf"
    assert field.pages[RULES + "style.md"].norm.role == "instructions"
    assert not any(path.startswith(".windsurf/workflows") for path in files)


def test_a_rule_past_six_thousand_characters_is_cut_where_windsurf_stops(tmp_path: Path) -> None:
    root = fx.windsurf_project(tmp_path / "repo")
    agent = loaded_context(open_field(root, FieldOptions())).agent("windsurf")
    assert agent is not None
    files = {f.path: f for f in agent.files}
    long = files[RULES + "long.md"]
    text = (root / RULES / "long.md").read_text(encoding="utf-8")
    used, expected = 0, None
    for number, line in enumerate(text.split("\n")[:-1], start=1):
        if used + len(line) + 1 > RULE_MAX_CHARS:
            expected = number
            break
        used += len(line) + 1
    assert expected is not None and long.cut_at_line == expected
    assert long.loaded_bytes == used  # ASCII: characters are bytes
    assert files[RULES + "style.md"].cut_at_line is None


def test_the_legacy_file_global_rules_and_memories_are_named_never_read(tmp_path: Path, capsys) -> None:
    root = fx.windsurf_project(tmp_path / "repo")
    code, data, _ = run_cli_json(["context", root], capsys)
    assert code == 0
    windsurf = next(a for a in data["agents"] if a["agent"] == "windsurf")
    notes = " | ".join(windsurf["outside"])
    assert ".windsurfrules" in notes and "always on" in notes
    legacy = (root / ".windsurfrules").read_text(encoding="utf-8")
    assert f"({len(legacy):,} characters)" in notes
    assert "global_rules.md" in notes and "~/.codeium/windsurf/memories/" in notes
    assert not any(f["path"] == ".windsurfrules" for f in windsurf["files"])
    code, out, _ = run_cli(["check", root, "--json"], capsys)
    assert '"windsurf"' in out and ".windsurfrules (legacy" in out


def test_a_legacy_file_past_the_cap_is_said_cut_and_a_symlinked_one_is_not_opened(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """Unbounded reads / links out of the field: the legacy file is measured from at most
    64 KiB of a regular file inside the field; a symlink is named, never followed."""
    root = fx.windsurf_project(tmp_path / "repo")
    (root / ".windsurfrules").write_text("x" * 7_000 + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # a relative field path, as a user types it
    _, data, _ = run_cli_json(["context", "repo"], capsys)
    notes = " | ".join(next(a for a in data["agents"] if a["agent"] == "windsurf")["outside"])
    assert "7,001 bytes, past 6,000 characters: Windsurf cuts it" in notes
    secret = tmp_path / "secret.txt"
    secret.write_text("y" * 123 + "\n", encoding="utf-8")
    (root / ".windsurfrules").unlink()
    (root / ".windsurfrules").symlink_to(secret)
    _, data, _ = run_cli_json(["context", root], capsys)
    notes = " | ".join(next(a for a in data["agents"] if a["agent"] == "windsurf")["outside"])
    assert ".windsurfrules at the root of this field:" in notes and "124" not in notes


def test_a_glob_rule_without_globs_is_not_claimed_either_way(tmp_path: Path) -> None:
    """Windsurf's docs do not say what a glob rule naming no files does: memtui says so, and
    makes no finding of it (real rules write ``glob:`` for ``globs:``)."""
    field = open_field(fx.windsurf_project(tmp_path / "repo"), FieldOptions())
    assert not [f for f in run_checks(field) if f.path.startswith(RULES) and f.rule == "never-loaded"]
    agent = loaded_context(field).agent("windsurf")
    assert agent is not None
    orphan = next(f for f in agent.files if f.path == RULES + "orphan.md")
    assert orphan.loaded == UNKNOWN and orphan.pattern is None and "do not say" in orphan.how


def test_no_rules_no_windsurf(tmp_path: Path) -> None:
    root = make_field(tmp_path / "notes", {"a.md": "# A\n", "docs/.windsurf/notes.md": "# not a rule\n"})
    report = loaded_context(open_field(root, FieldOptions()))
    assert report.agent("windsurf") is None


def test_hostile_globs_are_shown_bounded_and_inert(tmp_path: Path, capsys) -> None:
    """Text that acts / unbounded reads: a glob from the field is text, cut short, never compiled,
    and its escape sequences never reach the terminal."""
    hostile = "\x1b]52;c;cGF5bG9hZA==\x07" + "(a+)+" * 200
    root = make_field(
        tmp_path / "repo",
        {RULES + "evil.md": f"---\ntrigger: glob\nglobs: {hostile!r}\n---\n\n# Evil\n"},
    )
    shown = pattern_text(hostile)
    assert shown is not None and len(shown) <= 200
    assert pattern_text({"a": 1}) is None and pattern_text(["**/*.py", 3, ""]) == "**/*.py"
    agent = loaded_context(open_field(root, FieldOptions())).agent("windsurf")
    assert agent is not None and agent.files[0].loaded == ON_MATCH
    assert agent.files[0].pattern is not None and len(agent.files[0].pattern) <= 200
    code, out, _ = run_cli(["context", root], capsys)
    assert code == 0 and "\x1b" not in out and "\x07" not in out
