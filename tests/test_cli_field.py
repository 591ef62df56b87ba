"""The CLI over the memory model: ``memtui check``, ``export`` and ``demo`` (``history`` is in
test_history.py). Output is inert text, exit codes are 0 clean / 1 errors / 2 bad usage."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtui import __version__
from memtui.cli import open as open_cmd
from memtui.field.checks import RULES, run_checks
from memtui.field.field import Field
from memtui.resources import sample_field_dir
from memtui.store.locations import default_cache_dir
from tests.helpers_field import make_field, page, run_cli, run_cli_json, tree_hashes

FINDING_KEYS = {"rule", "severity", "path", "line", "message"}


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")


# --------------------------------------------------------------------------- check


def test_check_json_on_the_sample_field(sample_field, capsys):
    code, data, err = run_cli_json(["check", sample_field], capsys)
    assert code == 1 and err == ""
    assert set(data) == {"findings", "summary"}
    assert all(set(f) == FINDING_KEYS for f in data["findings"])
    api = run_checks(Field.load(sample_field, use_cache=False))
    assert data["findings"] == [f.to_json() for f in api]
    summary = data["summary"]
    assert summary["pages"] == 73
    assert summary["errors"] == sum(1 for f in api if f.severity == "error") > 0
    assert summary["warnings"] == sum(1 for f in api if f.severity == "warning")
    assert sum(summary["by_rule"].values()) == len(api)


def test_check_output_is_inert(sample_field, capsys):
    code, out, err = run_cli(["check", sample_field], capsys)
    assert code == 1
    for hostile in ("\x1b", "\x07", "\u202e", "\u200b"):
        assert hostile not in out
    assert "␛" in out and "⟨RLO⟩" in out  # shown as visible placeholders
    assert "73 pages, " in out and " errors, " in out
    code, raw, _ = run_cli(["check", sample_field, "--json"], capsys)
    assert raw.isascii()


def test_check_groups_findings_by_rule_and_all_prints_every_one(tmp_path, capsys):
    """The human output prints each rule's count and its first few findings (a 10k-page
    field has 40,000); ``--all`` prints every one on its own line; ``--rule`` narrows."""
    pages = {
        f"notes/n{i:02}.md": page(
            "kind: semantic\nreviewed: true", f"- Fact {i} is untagged here and long enough to count\n"
        )
        for i in range(25)
    }
    pages["notes/links.md"] = "See [[Nowhere At All]]. [observed]\n"
    root = make_field(tmp_path / "f", pages)
    code, data, _ = run_cli_json(["check", root], capsys)
    untagged = [f for f in data["findings"] if f["rule"] == "untagged-claim"]
    assert len(untagged) == 25
    code, out, _ = run_cli(["check", root], capsys)
    assert "untagged-claim  25" in out
    assert sum(1 for line in out.splitlines() if line.startswith("    notes/n")) == 10
    assert "… 15 more: memtui check FIELD --rule untagged-claim --all" in out
    assert "link-broken  1" in out and "notes/links.md:1" in out
    code, out, _ = run_cli(["check", root, "--all"], capsys)
    lines = [line for line in out.splitlines() if "  untagged-claim  " in line]
    assert len(lines) == 25 and all(line.startswith("▲ warning  untagged-claim  notes/n") for line in lines)
    code, out, _ = run_cli(["check", root, "--all", "--rule", "link-broken"], capsys)
    assert "untagged-claim" not in out.split("pages, ")[0] and "link-broken  notes/links.md:1" in out
    code, out, _ = run_cli(["check", root, "--per-rule", "2"], capsys)
    assert "… 23 more" in out


def test_check_exit_codes(tmp_path, capsys):
    clean = make_field(tmp_path / "clean", {"notes/a.md": "A fact with a source tag here. [observed]\n"})
    code, out, _ = run_cli(["check", clean], capsys)
    assert code == 0 and "1 page, 0 errors, 0 warnings, 0 notes" in out

    warnings_only = make_field(
        tmp_path / "warn", {"notes/a.md": page("kind: opinion", "Tagged fact line here. [stated]\n")}
    )
    code, data, _ = run_cli_json(["check", warnings_only], capsys)
    assert code == 0 and data["summary"]["warnings"] == 1 and data["summary"]["errors"] == 0

    errors = make_field(tmp_path / "err", {"notes/a.md": page("confidence: 2", "Tagged fact line here. [stated]\n")})
    code, data, _ = run_cli_json(["check", errors], capsys)
    assert code == 1 and data["findings"][0]["rule"] == "confidence-range"

    empty = make_field(tmp_path / "empty", {})
    code, data, _ = run_cli_json(["check", empty], capsys)
    assert code == 0 and data == {"findings": [], "summary": {**data["summary"], "pages": 0}}


@pytest.mark.parametrize("make_target", ["missing", "file"])
def test_check_on_a_missing_folder_or_a_plain_file_is_bad_usage(tmp_path, capsys, make_target):
    target = tmp_path / "nothing-here"
    if make_target == "file":
        target = tmp_path / "notes.txt"
        target.write_text("x")
    code, out, err = run_cli(["check", target, "--json"], capsys)
    assert code == 2 and out == ""
    assert err.startswith("error: ") and "hint: " in err and "Traceback" not in err


@pytest.mark.parametrize("argv", [["check"], ["check", ".", "--bogus"], ["history", "."], ["export", "."]])
def test_bad_arguments_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as info:
        run_cli(argv, capsys)
    assert info.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_check_rules_lists_every_rule(capsys):
    code, out, _ = run_cli(["check", "--rules"], capsys)
    assert code == 0
    for rule in RULES:
        assert rule in out


def test_version(capsys):
    with pytest.raises(SystemExit) as info:
        run_cli(["--version"], capsys)
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"memtui {__version__}"


def test_check_in_a_subprocess_exit_codes(tmp_path, sample_field):
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    missing = subprocess.run(
        [sys.executable, "-m", "memtui", "check", str(tmp_path / "missing")],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert missing.returncode == 2 and "Traceback" not in missing.stderr and "no such folder" in missing.stderr
    sample = subprocess.run(
        [sys.executable, "-m", "memtui", "check", str(sample_field), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert sample.returncode == 1
    assert len(json.loads(sample.stdout)["findings"]) > 0


def test_a_closed_pipe_is_not_a_traceback(tmp_path):
    # `memtui check FIELD --json | head -1`: the reader leaves long before the output ends.
    # memtui's format (source tags), so each page's unknown kind is a finding: a long output.
    root = make_field(
        tmp_path / "f", {f"notes/p{n}.md": page(f"kind: odd{n}", "A fact. [stated]\n") for n in range(1500)}
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "memtui", "check", str(root), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout.read(10).startswith(b"{")
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipe" not in err
    assert proc.returncode == 1


# --------------------------------------------------------------------------- export


def test_export_then_check_the_archive(sample_field, tmp_path, capsys):
    out = tmp_path / "sample.memoryfield.zip"
    code, text, err = run_cli(["export", sample_field, out], capsys)
    assert code == 0 and err == ""
    assert text.startswith("wrote ") and out.is_file()
    code, from_zip, _ = run_cli_json(["check", out], capsys)
    code_dir, from_dir, _ = run_cli_json(["check", sample_field], capsys)
    assert code == code_dir == 1
    assert from_zip["findings"] == from_dir["findings"]
    code, history, _ = run_cli_json(["history", out, "decision/public-api"], capsys)
    assert code == 0 and [e["status"] for e in history] == ["superseded", "superseded", "current"]


def test_export_errors_are_clear(tmp_path, capsys):
    root = make_field(tmp_path / "f", {"a.md": "# A\n"})
    code, out, err = run_cli(["export", root, tmp_path / "wrong.zip"], capsys)
    assert code == 1 and "must end with .memoryfield.zip" in err
    code, out, err = run_cli(["export", tmp_path / "missing", tmp_path / "x.memoryfield.zip"], capsys)
    assert code == 2 and "not a folder" in err
    bad = tmp_path / "bad.memoryfield.zip"
    bad.write_bytes(b"not a zip")
    code, out, err = run_cli(["check", bad], capsys)
    assert code == 1 and "cannot open bad.memoryfield.zip" in err and "Traceback" not in err


# --------------------------------------------------------------------------- demo


def _without_state(hashes: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in hashes.items() if not k.startswith(".memtui/")}


def test_copy_sample_field_is_byte_identical_and_leaves_the_original_alone(tmp_path):
    original = sample_field_dir()
    before = tree_hashes(original)
    copy = open_cmd.copy_sample_field(tmp_path)
    assert copy.parent.parent == tmp_path and copy.name == "sample-field"
    assert tree_hashes(copy) == _without_state(before)
    Field.load(copy)  # using the copy writes nothing into the original
    write = copy / "notes" / "q3-digest.md"
    write.write_text("changed in the copy")
    assert tree_hashes(original) == before
    assert (default_cache_dir(copy) / "pages.bin").is_file()


@pytest.mark.parametrize("keep", [False, True])
def test_demo_opens_a_copy_and_cleans_up_unless_kept(monkeypatch, capsys, keep):
    original = sample_field_dir()
    before = tree_hashes(original)
    seen: list[Path] = []

    def fake_launch(path: Path, args) -> int:  # stands in for the TUI
        seen.append(path)
        assert path != original and (path / "MEMORY.md").is_file()
        return 0

    monkeypatch.setattr(open_cmd, "_launch", fake_launch)
    code, out, _ = run_cli(["demo", *(["--keep"] if keep else [])], capsys)
    (copy,) = seen
    try:
        assert code == 0
        assert copy.exists() is keep
        assert (str(copy) in out.replace("\n", "")) is keep
    finally:
        if copy.exists():
            import shutil

            shutil.rmtree(copy.parent)
    assert tree_hashes(original) == before


def test_open_a_missing_field_is_bad_usage(tmp_path, capsys):
    code, out, err = run_cli([tmp_path / "missing"], capsys)
    assert code == 2 and "no such folder" in err


def test_check_rules_shows_bracketed_text_and_honours_json(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run_cli(["check", "--rules"], capsys)
    assert code == 0
    assert "[[wikilink]]" in out and "[cite:N]" in out and "[inferred]" in out
    code, data, _ = run_cli_json(["check", "--rules", "--json"], capsys)
    assert code == 0
    ids = {rule["id"] for rule in data["rules"]}
    assert {"link-broken", "cite-broken", "untagged-claim"} <= ids
    assert all(set(rule) == {"id", "severity", "explanation"} for rule in data["rules"])


def test_index_dir_help_says_where_the_index_lives(capsys):
    for command in (["open", "--help"], ["index", "--help"]):
        with pytest.raises(SystemExit):
            run_cli(command, capsys)
        out = capsys.readouterr().out
        assert "user cache folder" in out and ".memtui/cache" not in out


def test_demo_keep_says_where_the_sample_field_is(capsys, monkeypatch, tmp_path):
    """Wheel users have no sample-field/ folder: demo --keep tells them where the copy is."""
    launched = []
    monkeypatch.setattr(open_cmd, "_launch", lambda path, args: launched.append(path) or 0)
    monkeypatch.setattr(
        open_cmd,
        "copy_sample_field",
        lambda: (tmp_path / "d" / "sample-field").mkdir(parents=True) or tmp_path / "d" / "sample-field",
    )
    code, out, _ = run_cli(["demo", "--keep"], capsys)
    assert code == 0 and launched
    assert f"the sample field is kept at {launched[0]}" in out and f"memtui check {launched[0]}" in out
    assert launched[0].exists()


def test_every_subcommand_that_reads_a_field_takes_the_field_options():
    """One way to open a field (memtui.session.opening): every subcommand that reads one takes
    --dialect, and those that keep a search index --index-dir too."""
    import argparse

    from memtui.cli import build_parser

    parser, _ = build_parser()

    def leaves(p: argparse.ArgumentParser, name: str = ""):
        subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            yield name, p
        for sub in subs:
            for child_name, child in sub.choices.items():
                yield from leaves(child, f"{name} {child_name}".strip())

    reading = {}
    for name, sub in leaves(parser):
        options = {option for action in sub._actions for option in action.option_strings}
        positionals = {action.dest for action in sub._actions if not action.option_strings}
        if "field" in positionals or name == "demo":
            reading[name] = options
    assert len(reading) >= 15, sorted(reading)
    missing = sorted(name for name, options in reading.items() if "--dialect" not in options and name != "export")
    assert missing == []
    for name in ("open", "demo", "index", "search", "recall-test"):
        assert "--index-dir" in reading[name], name
