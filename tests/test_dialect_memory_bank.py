"""The Cline / Roo Code memory bank: roles, load modes from the evidence, and attacks on it.

The folders are written by ``tests/fixtures_memory_bank.py`` in the documented layout;
nothing in them is copied from a real memory bank.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from memtui.dialects.formats.memory_bank import role_of
from memtui.dialects.loading import ALWAYS, INSTRUCTIONS, MEMORY, ON_DEMAND, ON_MATCH, UNKNOWN
from memtui.session.loaded import loaded_context
from memtui.session.opening import FieldOptions, open_field
from tests import fixtures_memory_bank as fx
from tests.helpers_field import make_field, run_cli, run_cli_json

CORE = (
    "projectbrief.md",
    "productContext.md",
    "systemPatterns.md",
    "techContext.md",
    "activeContext.md",
    "progress.md",
)


def _files(root: Path, agent: str) -> dict[str, object]:
    report = loaded_context(open_field(root, FieldOptions()))
    found = report.agent(agent)
    assert found is not None, [a.agent for a in report.agents]
    return {f.path: f for f in found.files}


def test_cline_rules_make_every_bank_file_load_at_every_task(tmp_path: Path, capsys) -> None:
    root = fx.cline_project(tmp_path / "repo")
    files = _files(root, "cline")
    bank = [p for p in files if p.startswith("memory-bank/")]
    assert sorted(bank) == sorted(["memory-bank/" + n for n in CORE] + ["memory-bank/features/alerts.md"])
    for path in bank:
        entry = files[path]
        assert (entry.loaded, entry.kind) == (ALWAYS, MEMORY), path
        assert ".clinerules/memory-bank.md:3" in entry.how  # the line that says so
    # Core files first, in the hierarchy's order; the extra file after them.
    assert bank[:6] == ["memory-bank/" + n for n in CORE] and bank[6] == "memory-bank/features/alerts.md"
    active = files["memory-bank/activeContext.md"]
    assert "current focus" in active.how and "most volatile" in active.how
    rule = files[".clinerules/memory-bank.md"]
    assert (rule.loaded, rule.kind) == (ALWAYS, INSTRUCTIONS) and "switched off" in rule.how
    style = files[".clinerules/python-style.md"]
    assert (style.loaded, style.pattern) == (ON_MATCH, "src/**/*.py")
    assert files[".clinerules/workflows/release.md"].loaded == ON_DEMAND  # a workflow, not a rule

    code, data, _ = run_cli_json(["check", str(root)], capsys)
    bank_evidence = next(
        d["evidence"] for d in data["summary"]["dialects"] if d["name"] == "memory-bank" and d["root"] == "memory-bank"
    )
    joined = " | ".join(bank_evidence)
    assert "memory-bank/ (7 pages, 6 of the 6 core files)" in joined
    assert ".clinerules/memory-bank.md:3 tells Cline to read it" in joined and "lacks" not in joined
    assert code in (0, 1)


def test_a_bank_without_its_instruction_is_unknown_never_always(tmp_path: Path, capsys) -> None:
    root = fx.bare_bank(tmp_path / "repo")
    report = loaded_context(open_field(root, FieldOptions()))
    assert report.agent("cline") is None and report.agent("roo") is None  # no Cline claimed without evidence
    agent = report.agent("memory-bank")
    assert agent is not None and agent.total_bytes == 0
    assert {f.loaded for f in agent.files} == {UNKNOWN}
    assert all("may be in the user's global custom instructions" in f.how for f in agent.files)
    assert any("read memory-bank/" in line for line in agent.outside)
    code, data, _ = run_cli_json(["check", str(root)], capsys)
    evidence = " | ".join(next(d["evidence"] for d in data["summary"]["dialects"] if d["name"] == "memory-bank"))
    # Cline's instructions call the core files required: the two missing are named.
    assert "memory-bank/ lacks techContext.md, progress.md" in evidence
    assert "no instruction to read it in this folder" in evidence


def test_a_mention_is_not_an_instruction_to_read(tmp_path: Path) -> None:
    root = fx.bare_bank(tmp_path / "repo")
    make_field(root, {".clinerules/notes.md": "# Notes\n\nThe memory bank layout is in the README.\n"})
    files = _files(root, "memory-bank")
    assert {f.loaded for f in files.values()} == {UNKNOWN}
    assert _files(root, "cline")[".clinerules/notes.md"].loaded == ALWAYS  # the rule itself still loads


def test_a_conditional_rule_does_not_make_the_bank_load_by_itself(tmp_path: Path) -> None:
    root = fx.bare_bank(tmp_path / "repo")
    make_field(root, {".clinerules/bank.md": "---\npaths: ['docs/**']\n---\n" + fx.READ_ALL})
    assert {f.loaded for f in _files(root, "memory-bank").values()} == {UNKNOWN}
    assert _files(root, "cline")[".clinerules/bank.md"].loaded == ON_MATCH


def test_a_single_clinerules_file_is_named_and_its_instruction_counts(tmp_path: Path) -> None:
    root = fx.clinerules_file_project(tmp_path / "repo")
    report = loaded_context(open_field(root, FieldOptions()))
    cline = report.agent("cline")
    assert cline is not None
    assert {f.path: f.loaded for f in cline.files} == {"memory-bank/" + n: ALWAYS for n in CORE}
    assert all(".clinerules:3" in f.how for f in cline.files)
    # Not a Markdown page: named, never shown as a file memtui measured.
    assert any(line.startswith(".clinerules: rules loaded") for line in cline.outside)


def test_roo_loads_what_its_rules_name_and_a_mode_rule_only_in_its_mode(tmp_path: Path) -> None:
    root = fx.roo_project(tmp_path / "repo")
    files = _files(root, "roo")
    assert files["memory-bank/activeContext.md"].loaded == ALWAYS
    assert files["memory-bank/decisionLog.md"].loaded == ALWAYS
    assert "decisions and the reasons" in files["memory-bank/decisionLog.md"].how
    progress = files["memory-bank/progress.md"]  # named by .roorules-code only
    assert (progress.loaded, progress.pattern) == (ON_MATCH, "code mode")
    assert files["memory-bank/productContext.md"].loaded == ON_DEMAND  # in the bank, named by no rule
    assert files[".roo/rules/01-memory.md"].loaded == ALWAYS
    architect = files[".roo/rules-architect/diagrams.md"]
    assert (architect.loaded, architect.pattern) == (ON_MATCH, "architect mode")


def test_a_bank_inside_roo_rules_is_loaded_as_rules(tmp_path: Path) -> None:
    root = fx.roo_rules_bank(tmp_path / "repo")
    files = _files(root, "roo")
    for name in CORE:
        entry = files[".roo/rules/memory-bank/" + name]
        assert (entry.loaded, entry.kind) == (ALWAYS, MEMORY) and "Roo Code's rules folder" in entry.how


def test_a_bank_opened_by_itself_is_unknown(tmp_path: Path) -> None:
    root = fx.cline_project(tmp_path / "repo") / "memory-bank"
    field = open_field(root, FieldOptions())
    assert field.pages["activeContext.md"].kind == "active context"
    assert {f.loaded for f in _files(root, "memory-bank").values()} == {UNKNOWN}


def test_roles_are_the_documented_ones() -> None:
    assert role_of("memory-bank/activeContext.md")[0] == "active context"
    assert role_of("memory-bank/projectbrief.md")[1].startswith("the foundation")
    assert role_of("memory-bank/ACTIVECONTEXT.MD")[0] == "active context"
    assert role_of("memory-bank/notes.md")[0] == "extra file"


def test_a_secret_in_the_bank_reaches_every_task_and_is_reported(tmp_path: Path, capsys) -> None:
    root = fx.cline_project(tmp_path / "repo")
    (root / "memory-bank/techContext.md").write_text("# Tech\n\nThe staging password: Qv7-tide-3381\n")
    code, data, _ = run_cli_json(["context", str(root)], capsys)
    assert code == 1
    assert ("secret", "memory-bank/techContext.md", 3) in [(f["rule"], f["path"], f["line"]) for f in data["findings"]]
    assert "Qv7-tide-3381" not in json.dumps(data)


def test_text_that_acts_in_a_rule_name_is_shown_inert(tmp_path: Path, capsys) -> None:
    """Text that acts: a Roo rule file named with an escape sequence and a bidi override."""
    root = fx.bare_bank(tmp_path / "repo")
    name = ".roo/rules/evil\x1b]0;pwned\x07\u202e.md"
    make_field(root, {name: fx.READ_ALL})
    for argv in (["check", str(root)], ["context", str(root), "--all"]):
        _code, out, _err = run_cli(argv, capsys)
        assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
        assert ".roo/rules/evil" in out  # shown, inert
    _code, out, _err = run_cli(["check", str(root)], capsys)
    assert "tells Roo Code to read it" in out  # and its instruction still counts


def test_an_instruction_file_linked_out_of_the_field_is_never_read(tmp_path: Path) -> None:
    """Links out of the field: a .clinerules symlink to a file outside is never followed."""
    outside = tmp_path / "elsewhere.txt"
    outside.write_text(fx.READ_ALL + "SECRET-OUTSIDE-7731\n")
    root = fx.bare_bank(tmp_path / "repo")
    os.symlink(outside, root / ".clinerules")
    field = open_field(root, FieldOptions())
    assert {f.loaded for f in _files(root, "memory-bank").values()} == {UNKNOWN}  # its text was not read
    assert not any("SECRET-OUTSIDE" in str(info.norm) for info in field.pages.values())


def test_a_fifo_as_clinerules_never_blocks(tmp_path: Path) -> None:
    """Unbounded reads: a FIFO named .clinerules is named, never opened (opening it would block)."""
    root = fx.bare_bank(tmp_path / "repo")
    os.mkfifo(root / ".clinerules")
    assert {f.loaded for f in _files(root, "memory-bank").values()} == {UNKNOWN}


def test_a_folder_forced_as_a_memory_bank_is_memory_loaded_by_unknown_instructions(tmp_path: Path) -> None:
    root = make_field(tmp_path / "notes", {"activeContext.md": fx.CORE_PAGES["activeContext.md"], "misc.md": "# M\n"})
    field = open_field(root, FieldOptions(dialect="memory-bank"))
    assert {(info.role, info.kind) for info in field.pages.values()} == {
        ("memory", "active context"),
        ("memory", "extra file"),
    }
    report = loaded_context(field)
    agent = report.agent("memory-bank")
    assert agent is not None and {f.loaded for f in agent.files} == {UNKNOWN}


async def test_the_context_screen_shows_the_bank_and_why(tmp_path: Path) -> None:
    from memtui.tui.screens.context import ContextScreen
    from tests.helpers_tui import SIZE, make_app, screen_text, wait_ready

    root = fx.bare_bank(tmp_path / "repo")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("7")
        for _ in range(200):
            await pilot.pause(0.02)
            if isinstance(app.screen, ContextScreen) and app.screen.report is not None:
                break
        await app.workers.wait_for_complete()
        await pilot.press("a")
        await pilot.pause()
        text = screen_text(app)
        assert "an agent reading memory-bank/" in text and "memory-bank/activeContext.md" in text
        assert "? unknown" in text and "every session" not in text.split("memory-bank/projectbrief.md")[1]
        assert "the custom instructions that may tell the agent" in text
