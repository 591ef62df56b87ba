"""Cursor rules (issue 41): ``.mdc`` files read as pages, rule types, frontmatter that is not YAML.

The project is written by ``tests/fixtures_rules.py`` in the layout Cursor documents
(``.cursor/rules/**/*.mdc``, ``description`` / ``globs`` / ``alwaysApply``, the legacy
``.cursorrules``); nothing in it is copied from a real project.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from memtui.dialects.detect import scope_of
from memtui.dialects.formats.cursor import frontmatter_lines, globs_text, rule_reading
from memtui.dialects.loading import ALWAYS, ON_DEMAND, ON_MATCH
from memtui.field.checks import run_checks
from memtui.field.field import Scope, is_page_path, scan_field
from memtui.index.watcher import relevant
from memtui.session.loaded import loaded_context
from memtui.session.opening import FieldOptions, open_field
from tests.fixtures_rules import CURSOR_RULES, cursor_project
from tests.helpers import write_page
from tests.helpers_field import make_field, run_cli, run_cli_json

R = CURSOR_RULES


def _cursor(root: Path):
    report = loaded_context(open_field(root, FieldOptions()))
    agent = report.agent("cursor")
    assert agent is not None, [a.agent for a in report.agents]
    return report, agent, {f.path: f for f in agent.files}


def test_mdc_rules_and_the_legacy_file_are_pages(tmp_path: Path, capsys) -> None:
    root = cursor_project(tmp_path / "repo")
    field = open_field(root, FieldOptions())
    on_disk = sorted(p.relative_to(root).as_posix() for p in (root / ".cursor/rules").rglob("*") if p.is_file())
    assert [p for p in sorted(field.pages) if p.startswith(R)] == on_disk
    assert field.pages[".cursorrules"].dialect == "cursor" and field.pages[".cursorrules"].role == "instructions"
    assert field.pages[R + "frontend/components.mdc"].description == "React components"
    assert ".cursor/mcp.json" not in field.pages  # only rules are pages
    code, data, _err = run_cli_json(["check", root], capsys)
    cursor = [d for d in data["summary"]["dialects"] if d["name"] == "cursor"]
    mdc = sum(1 for p in on_disk if p.endswith(".mdc"))
    assert f".cursor/rules/ ({len(on_disk)} rules: {mdc} .mdc, {len(on_disk) - mdc} .md)" in cursor[0]["evidence"]
    code, out, _err = run_cli(["check", root], capsys)
    assert "0 Markdown files" not in out  # the folder of .mdc rules is read, not skipped
    assert "not read: .cursor/commands/ (Cursor commands" in out
    assert code in (0, 1)


def test_every_rule_type_with_its_globs(tmp_path: Path) -> None:
    _report, agent, files = _cursor(cursor_project(tmp_path / "repo"))
    modes = {path: (f.loaded, f.pattern) for path, f in files.items()}
    assert modes == {
        ".cursorrules": (ALWAYS, None),
        R + "house-style.mdc": (ALWAYS, None),
        R + "quoted.mdc": (ALWAYS, None),
        R + "frontend/components.mdc": (ON_MATCH, "*.tsx, src/components/**/*.{ts,tsx}"),  # not YAML
        R + "api.mdc": (ON_MATCH, "app/api/**, server/**/*.ts"),  # a YAML list
        R + "migrations.mdc": (ON_DEMAND, None),  # a description only: the agent decides
        R + "release.mdc": (ON_DEMAND, None),  # nothing: @release
        R + "notes.md": (ON_DEMAND, None),  # a plain .md rule
    }
    assert files[R + "migrations.mdc"].how.startswith("Apply Intelligently")
    assert "@release" in files[R + "release.mdc"].how
    assert "quoted string" in files[R + "quoted.mdc"].how  # counted as always, and said so
    assert agent.total_bytes == sum(
        (tmp_path / "repo" / p).stat().st_size for p, f in files.items() if f.loaded == ALWAYS
    )
    assert any("User Rules" in line for line in agent.outside)


def test_frontmatter_is_read_line_by_line_as_cursor_does() -> None:
    keys = frontmatter_lines("description: A: colon inside\nglobs: *.ts,**/*.{js,jsx}\nalwaysApply: false # off\n")
    assert keys["description"][0] == "A: colon inside"
    assert globs_text(*keys["globs"]) == "*.ts, **/*.{js,jsx}"
    assert globs_text('"a/**,b/**"', []) == "a/**, b/**"
    assert globs_text("[ 'x/**', \"y/*.md\" ]", []) == "x/**, y/*.md"
    assert globs_text("", []) is None
    assert rule_reading("---\nalwaysApply: false # off\n---\nx\n")[0] == "manual"
    assert rule_reading("---\nalwaysApply: True\n---\nx\n")[0] == "always"
    assert rule_reading("---\ndescription: >\n  folded words\n---\nx\n")[2] == "folded words"
    assert rule_reading("no frontmatter\n")[0] == "manual"


def test_references_leaving_the_field_are_reported(tmp_path: Path) -> None:
    root = cursor_project(tmp_path / "repo")
    findings = [(f.rule, f.path, f.line) for f in run_checks(open_field(root, FieldOptions()))]
    refs = [f for f in findings if f[0].startswith("import-")]
    # @service-template.ts, @docs/release.md and the @/lib alias stay in the project: no finding.
    assert refs == [("import-outside", R + "release.mdc", 9), ("import-credential", R + "release.mdc", 10)]
    _report, agent, _files = _cursor(root)
    assert any("@~/.ssh/id_ed25519" in line for line in agent.outside)


def test_scope_makes_pages_of_mdc_under_the_rules_folder_only(tmp_path: Path) -> None:
    root = cursor_project(tmp_path / "repo")
    write_page(root, ".cursor/plans/plan.mdc", "# not a rule\n")
    write_page(root, "docs/elsewhere.mdc", "# an .mdc outside .cursor/rules\n")
    write_page(root, R + ".#lock.mdc", "editor lock\n")
    scope = scope_of(root)
    paths = {entry.path for entry in scan_field(root, scope).entries}
    assert R + "api.mdc" in paths and ".cursorrules" in paths
    assert not {".cursor/plans/plan.mdc", "docs/elsewhere.mdc", R + ".#lock.mdc"} & paths
    # The index and the watcher use the same definition.
    assert is_page_path(R + "frontend/components.mdc", scope) and is_page_path(".cursorrules", scope)
    assert not is_page_path("docs/elsewhere.mdc", scope) and not is_page_path(".cursorrules", Scope())
    assert relevant(R + "api.mdc", False, scope) and relevant(".cursorrules", False, scope)
    assert not relevant(".cursor/plans/plan.mdc", False, scope)


def test_a_field_without_cursor_files_is_unchanged(tmp_path: Path) -> None:
    root = make_field(tmp_path / "notes", {"a.md": "# A\n", "b.mdc": "not a page\n", "rules/c.mdc": "# x\n"})
    scope = scope_of(root)
    assert not scope.names_pages
    assert {e.path for e in scan_field(root, scope).entries} == {"a.md"}


def test_search_finds_text_in_an_mdc_rule(tmp_path: Path, capsys) -> None:
    root = cursor_project(tmp_path / "repo")
    code, data, _err = run_cli_json(["search", root, "interface", "--index-dir", tmp_path / "index"], capsys)
    hits = [hit["path"] for hit in data["results"]] if isinstance(data, dict) else [hit["path"] for hit in data]
    assert R + "frontend/components.mdc" in hits


def test_unbounded_reads_a_fifo_named_like_a_rule_is_never_opened(tmp_path: Path) -> None:
    """Unbounded reads: a FIFO named ``.cursorrules`` or ``x.mdc`` would block a reader for ever;
    the scan takes regular files only, so opening the field returns."""
    root = cursor_project(tmp_path / "repo")
    os.remove(root / ".cursorrules")
    os.mkfifo(root / ".cursorrules")
    os.mkfifo(root / R / "pipe.mdc")
    done: list[object] = []
    worker = threading.Thread(target=lambda: done.append(open_field(root, FieldOptions())), daemon=True)
    worker.start()
    worker.join(30)
    assert done, "opening the field blocked on a FIFO"
    field = done[0]
    assert ".cursorrules" not in field.pages and R + "pipe.mdc" not in field.pages  # type: ignore[attr-defined]


def test_links_out_of_the_field_a_symlinked_rule_is_not_followed(tmp_path: Path) -> None:
    """Links out of the field: a rule that is a symlink to a file outside is never read."""
    root = cursor_project(tmp_path / "repo")
    outside = write_page(
        tmp_path / "elsewhere", "keys.mdc", "---\nalwaysApply: true\n---\nThe root password: Zq8-9911\n"
    )
    os.symlink(outside, root / R / "linked.mdc")
    field = open_field(root, FieldOptions())
    assert R + "linked.mdc" not in field.pages
    assert ("symlink-outside", R + "linked.mdc") in {(f.rule, f.path) for f in run_checks(field)}


def test_text_that_acts_hostile_frontmatter_is_shown_inert(tmp_path: Path, capsys) -> None:
    """Text that acts: escapes and bidi characters in a rule's globs reach no terminal raw."""
    root = cursor_project(tmp_path / "repo")
    write_page(
        root, R + "evil.mdc", "---\nglobs: \x1b[2J\x1b]0;pwned\x07src/**,\u202etxt.exe\nalwaysApply: false\n---\nx\n"
    )
    _report, _agent, files = _cursor(root)
    assert files[R + "evil.mdc"].loaded == ON_MATCH
    code, out, _err = run_cli(["context", root], capsys)
    assert "evil.mdc" in out and "\x1b" not in out and "\u202e" not in out and "\x07" not in out


def test_rules_chosen_by_the_field_a_secret_in_an_always_rule_reaches_the_session(tmp_path: Path, capsys) -> None:
    """Rules chosen by the field: ``memtui.toml`` cannot switch off what an always-applied rule carries."""
    root = cursor_project(tmp_path / "repo")
    write_page(root, R + "ops.mdc", "---\nalwaysApply: true\n---\nThe staging password: hunter2-Blue7\n")
    write_page(root, "memtui.toml", '[rules]\nsecret = "off"\n')
    code, data, _err = run_cli_json(["context", root], capsys)
    assert code == 1
    assert [(f["rule"], f["path"]) for f in data["findings"]] == [("secret", R + "ops.mdc")]
    assert "hunter2" not in str(data)


async def test_the_context_screen_lists_an_mdc_rule_and_opens_it(tmp_path: Path) -> None:
    from memtui.tui.screens.context import ContextScreen
    from memtui.tui.screens.page import PageScreen
    from tests.helpers_tui import SIZE, make_app, screen_text, wait_ready

    root = cursor_project(tmp_path / "repo")
    app = make_app(root)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("7")
        for _ in range(200):
            await pilot.pause(0.02)
            if isinstance(app.screen, ContextScreen) and app.screen.report is not None:
                break
        screen = app.screen
        assert isinstance(screen, ContextScreen)
        await app.workers.wait_for_complete()
        await pilot.pause()
        text = screen_text(app)
        assert "Cursor" in text and R + "house-style.mdc" in text and ".cursorrules" in text
        listing = screen.query_one("#context-list")
        listing.focus()
        listing.highlighted = listing.get_option_index("file:0:" + R + "house-style.mdc")  # type: ignore[attr-defined]
        await pilot.press("enter")
        for _ in range(200):
            await pilot.pause(0.02)
            if isinstance(app.screen, PageScreen):
                break
        assert isinstance(app.screen, PageScreen) and app.screen.path == R + "house-style.mdc"
        assert "Short functions, early returns." in screen_text(app)
