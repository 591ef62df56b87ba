"""The command table: every subcommand listed without importing it, only the one run is loaded."""

from __future__ import annotations

import argparse
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.cli import COMMAND_MODULES, COMMANDS, build_parser


def test_the_command_table_matches_what_each_module_registers() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    registered: dict[str, str] = {}
    for module_name in COMMAND_MODULES:
        for name in importlib.import_module(module_name).register(sub):
            registered[name] = module_name
    assert registered == {name: module for name, (module, _help) in COMMANDS.items()}
    helps = {action.dest: action.help for action in sub._choices_actions}
    assert helps == {name: help_text for name, (_module, help_text) in COMMANDS.items()}


def _loaded_after(argv: list[str], cwd: Path) -> tuple[int, list[str], str]:
    code = (
        "import json, sys\n"
        "from memtui.cli import main\n"
        "try:\n"
        f"    code = main({argv!r})\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "sys.stderr.write('\\nLOADED ' + json.dumps(sorted(m for m in sys.modules if m.startswith('memtui.cli.'))))\n"
        "sys.exit(code)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=120)
    loaded = json.loads(result.stderr.rsplit("LOADED ", 1)[1])
    return result.returncode, loaded, result.stdout + result.stderr


@pytest.mark.parametrize("flag", ["--version", "-V", "--help"])
def test_version_and_help_import_no_subcommand(flag: str, tmp_path: Path) -> None:
    code, loaded, out = _loaded_after([flag], tmp_path)
    assert code == 0
    assert not set(loaded) & set(COMMAND_MODULES), loaded
    if flag == "--help":
        assert all(name in out for name in COMMANDS)  # every command listed, none imported


def test_a_subcommand_imports_only_its_own_module(sample_field: Path, tmp_path: Path) -> None:
    code, loaded, _out = _loaded_after(["check", str(sample_field), "--json"], tmp_path)
    assert code in (0, 1)
    assert set(loaded) & set(COMMAND_MODULES) == {"memtui.cli.check"}


def test_a_misspelt_command_is_a_usage_error_with_a_suggestion(tmp_path: Path) -> None:
    code, _loaded, out = _loaded_after(["chek", "notes"], tmp_path)
    assert code == 2
    assert "unknown command 'chek': did you mean 'check'?" in out


def test_a_folder_named_like_a_command_typo_still_opens_as_a_field(tmp_path: Path) -> None:
    (tmp_path / "chek").mkdir()
    parser, _names = build_parser("open")
    assert parser.parse_args(["open", "chek"]).command == "open"
    import os

    from memtui.cli import _unknown_command

    before = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert _unknown_command("chek") is None  # an existing path is a field, not a typo
    finally:
        os.chdir(before)
