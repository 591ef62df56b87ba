"""The README's first steps work as written: the set-up line puts memtui on PATH, every example runs."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from memtui.cli import main
from tests.conftest import REPO, SAMPLE_FIELD

README = (REPO / "README.md").read_text("utf-8")


def code_blocks(section: str) -> list[str]:
    start = README.index(section)
    end = README.find("\n## ", start + len(section))
    part = README[start : end if end > 0 else None]
    return re.findall(r"```sh\n(.*?)```", part, flags=re.S)


def test_the_set_up_line_activates_the_virtual_environment() -> None:
    setup = code_blocks("## Set up")[0].strip()
    assert ". .venv/bin/activate" in setup and "pip install -e ." in setup
    # after it, the examples call memtui by name (on PATH in the activated environment)
    assert "memtui demo" in code_blocks("## Set up")[1]


def test_the_benchmark_uses_the_bench_extra_and_the_projects_python() -> None:
    bench = "\n".join(code_blocks("## Set up"))
    assert "pip install -e '.[bench]'" in bench and "python bench/bench.py" in bench


def test_gitignore_advice_comes_with_the_first_steps() -> None:
    section = README[README.index("## Your own agent's memory") : README.index("## Using it")]
    assert ".memtui/" in section and ".gitignore" in section
    assert "~/.claude/projects/" in section and "~/.openclaw/workspace" in section
    assert "nothing in the memory folder" in section.lower().replace("**", "")


def _examples() -> list[str]:
    block = README[README.index("Examples on the sample field:") :]
    commands = re.search(r"```sh\n(.*?)```", block, flags=re.S).group(1)
    return [line.split("  #")[0].strip() for line in commands.splitlines() if line.strip()]


@pytest.mark.parametrize("command", _examples())
def test_every_example_runs_as_written(command: str, tmp_path: Path, monkeypatch, capsys) -> None:
    # From "the repository folder": a copy of it, so nothing is written into sample-field/.
    shutil.copytree(SAMPLE_FIELD, tmp_path / "sample-field", ignore=shutil.ignore_patterns(".memtui"))
    monkeypatch.chdir(tmp_path)
    argv = shlex.split(command)
    assert argv[0] == "memtui"
    code = main(argv[1:])
    out = capsys.readouterr()
    assert code in (0, 1), out.err  # check exits 1 on the sample field: it has errors on purpose
    assert out.out.strip(), command
    assert "error:" not in out.err
