"""Serena memories: names, topics, mem: references, project.yml's memory patterns.

The folder is written by ``tests/fixtures_dialects.py`` in Serena's documented
layout (``.serena/memories/``, ``project.yml``); nothing in it is copied from a
real project's memory.
"""

from __future__ import annotations

import json

from memtui.cli import main
from memtui.dialects.formats.serena import safe_pattern
from memtui.dialects.open import open_field
from memtui.field.checks import run_checks
from tests import fixtures_dialects as fx

MEMORIES = ".serena/memories/"


def test_serena_memories_are_read_with_their_names_and_evidence(tmp_path, capsys):
    root = fx.serena_project(tmp_path / "repo")
    code = main(["check", str(root), "--json"])
    out = json.loads(capsys.readouterr().out)
    serena = [d for d in out["summary"]["dialects"] if d["name"] == "serena"]
    assert [d["root"] for d in serena] == [".serena/memories"]
    evidence = " | ".join(serena[0]["evidence"])
    assert ".serena/memories/ (6 memories)" in evidence and ".serena/project.yml" in evidence
    # The catastrophic pattern is never run on a name, and the evidence says so.
    assert "ignored_memory_patterns: 1 not evaluated" in evidence
    assert code in (0, 1)

    field = open_field(root)
    topic = field.pages[MEMORIES + "modules/worker_pool.md"]
    assert (topic.dialect, topic.role) == ("serena", "memory")
    assert "modules/worker_pool" in topic.ids
    assert field.pages[MEMORIES + "suggested_commands.md"].kind == "Serena Memory"
    assert field.pages[MEMORIES + "memory_maintenance.md"].role == "instructions"
    assert field.resolve("mem:project_overview") is field.pages[MEMORIES + "project_overview.md"]
    # Serena's cache is not memory, and not read.
    assert not any(path.startswith(".serena/cache") for path in field.pages)


def test_mem_references_are_links_and_global_ones_leave_the_field(tmp_path):
    field = open_field(fx.serena_project(tmp_path / "repo"))
    findings = run_checks(field)
    broken = [(f.path, f.line, f.message) for f in findings if f.rule == "link-broken"]
    # mem:code_style names no memory; mem:global/team_habits lives in ~/.serena, not here.
    assert len(broken) == 1
    path, line, message = broken[0]
    assert path == MEMORIES + "project_overview.md" and line == 4 and message == "mem:code_style matches no page"
    overview = field.pages[MEMORIES + "project_overview.md"]
    assert all("global" not in target for target, _ in overview.links)


def test_an_ignored_memory_is_one_the_agent_never_sees(tmp_path):
    field = open_field(fx.serena_project(tmp_path / "repo"))
    never = [f for f in run_checks(field) if f.rule == "never-loaded"]
    assert [f.path for f in never] == [MEMORIES + "scratch/draft_idea.md"]
    assert "'scratch/.*'" in never[0].message and never[0].severity == "info"


def test_a_serena_folder_opened_directly(tmp_path):
    root = fx.serena_project(tmp_path / "repo") / ".serena"
    field = open_field(root)
    assert field.pages["memories/project_overview.md"].dialect == "serena"
    assert "project_overview" in field.pages["memories/project_overview.md"].ids


def test_only_patterns_that_cannot_blow_up_are_evaluated():
    assert safe_pattern("scratch/.*") is not None
    assert safe_pattern("session_[0-9]+_.*") is not None
    for hostile in ("(a+)+$", "(x|xx)*y", ".*.*.*z", "a" * 300, "[unclosed", 42, None):
        assert safe_pattern(hostile) is None
