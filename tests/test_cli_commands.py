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


def test_check_rule_counts_that_rule_only_and_an_unknown_rule_is_a_usage_error(sample_field: Path, capsys) -> None:
    from tests.helpers_field import run_cli, run_cli_json

    code, data, _err = run_cli_json(["check", sample_field], capsys)
    assert code == 1 and data["summary"]["errors"] > 0  # the field has errors
    code, data, _err = run_cli_json(["check", sample_field, "--rule", "zero-width"], capsys)
    assert {f["rule"] for f in data["findings"]} == {"zero-width"}
    assert data["summary"]["errors"] == 0 and code == 0  # a gate on a warning-only rule passes
    with pytest.raises(SystemExit) as exited:
        run_cli(["check", sample_field, "--rule", "zero-widht"], capsys)
    assert exited.value.code == 2
    assert "no rule 'zero-widht'" in capsys.readouterr().err


def test_search_says_when_limit_cut_the_hits(sample_field: Path, capsys, tmp_path: Path) -> None:
    from tests.helpers_field import run_cli

    index = ["--index-dir", str(tmp_path / "ix")]
    code, out, _err = run_cli(["search", sample_field, "decision", "--limit", "2", *index], capsys)
    assert code == 0 and "only the first 2 are shown" in out
    code, out, err = run_cli(["search", sample_field, "decision", "--limit", "2", "--json", *index], capsys)
    assert len(json.loads(out)) == 2 and "only the first 2 are shown" in err
    code, out, _err = run_cli(["search", sample_field, "decision", "--limit", "500", *index], capsys)
    assert "only the first" not in out


def test_export_never_replaces_a_file_unasked(sample_field: Path, tmp_path: Path, capsys) -> None:
    from tests.helpers_field import run_cli

    out = tmp_path / "f.memoryfield.zip"
    out.write_bytes(b"my own file")
    code, _out, err = run_cli(["export", sample_field, out], capsys)  # no terminal here, no --yes
    assert code != 0 and "nothing was changed" in " ".join(err.split())
    assert out.read_bytes() == b"my own file"
    code, _out, _err = run_cli(["export", sample_field, out, "--yes"], capsys)
    assert code == 0 and out.read_bytes()[:2] == b"PK"


def test_a_page_given_as_a_field_is_a_usage_error_naming_its_folder(sample_field: Path, capsys) -> None:
    from tests.helpers_field import run_cli

    code, _out, err = run_cli([sample_field / "MEMORY.md"], capsys)
    flat = "".join(err.split())  # the console may wrap the long path anywhere
    assert code == 2 and "isonepage" in flat and f"openthefolderitisin:memtui{sample_field}" in flat


def test_check_on_a_folder_with_no_pages_says_so_and_how_to_try_memtui(tmp_path: Path, capsys) -> None:
    from tests.helpers_field import run_cli

    (tmp_path / "empty").mkdir()
    code, out, _err = run_cli(["check", tmp_path / "empty"], capsys)
    assert code == 0 and "no pages here" in out and "memtui demo" in out


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_help_ends_with_examples_that_parse(name: str, capsys) -> None:
    """Issue 42 (#15): examples in every --help, and each one is a command line memtui accepts."""
    import shlex

    parser, _names = build_parser(name)
    with pytest.raises(SystemExit):
        parser.parse_args([name, "--help"])
    out = capsys.readouterr().out
    assert "examples:\n" in out
    for line in out.split("examples:\n", 1)[1].splitlines():
        words = shlex.split(line.split("#", 1)[0].split("|", 1)[0])
        assert words[0] == "memtui"
        argv = words[1:] if words[1] in COMMANDS else ["open", *words[1:]]
        build_parser(argv[0])[0].parse_args(argv)  # parses (exits 2 if not)
