"""Kiro steering (issue 41): inclusion modes, nested steering, file references, global steering.

The workspace is written by ``tests/fixtures_rules.py`` in the layout Kiro documents
(``.kiro/steering/``, ``inclusion``, ``fileMatchPattern``, ``#[[file:...]]``); nothing in
it is copied from a real project.
"""

from __future__ import annotations

import os
from pathlib import Path

from memtui.dialects.loading import ALWAYS, INSTRUCTIONS, ON_DEMAND, ON_MATCH
from memtui.field.checks import run_checks
from memtui.session.loaded import loaded_context
from memtui.session.opening import FieldOptions, open_field
from tests.fixtures_rules import KIRO_STEERING, kiro_workspace
from tests.helpers import write_page
from tests.helpers_field import run_cli, run_cli_json

S = KIRO_STEERING


def _kiro(root: Path):
    report = loaded_context(open_field(root, FieldOptions()))
    agent = report.agent("kiro")
    assert agent is not None, [a.agent for a in report.agents]
    return report, agent, {f.path: f for f in agent.files}


def test_steering_files_are_read_as_kiro_instructions_with_evidence(tmp_path: Path, capsys) -> None:
    root = kiro_workspace(tmp_path / "repo")
    code, data, _err = run_cli_json(["check", root], capsys)
    kiro = [d for d in data["summary"]["dialects"] if d["name"] == "kiro"]
    assert [d["root"] for d in kiro] == [".kiro/steering"]
    steering = [p for p in (root / ".kiro/steering").rglob("*.md")]
    assert f"{S} ({len(steering)} steering files)" in kiro[0]["evidence"]
    field = open_field(root, FieldOptions())
    for path in steering:
        info = field.pages[path.relative_to(root).as_posix()]
        assert (info.dialect, info.role, info.kind) == ("kiro", "instructions", "steering")
    assert field.pages[S + "db-migrations.md"].description == "Writing and reviewing database migrations"
    # Specs are not steering: left out, and said what they are.
    assert not any(p.startswith(".kiro/specs/") for p in field.pages)
    code, out, _err = run_cli(["check", root], capsys)
    assert "not read: .kiro/specs/ (Kiro specs" in out
    assert code in (0, 1)


def test_every_inclusion_mode_with_its_pattern(tmp_path: Path) -> None:
    _report, agent, files = _kiro(kiro_workspace(tmp_path / "repo"))
    modes = {path: (f.loaded, f.pattern) for path, f in files.items() if path.startswith(S)}
    assert modes == {
        S + "product.md": (ALWAYS, None),  # no frontmatter: Kiro's default
        S + "tech.md": (ALWAYS, None),
        S + "structure.md": (ALWAYS, None),
        S + "api/rest.md": (ON_MATCH, "app/api/**/*.ts"),  # nested folders are steering too
        S + "testing.md": (ON_MATCH, "**/*.test.ts, **/*.spec.ts"),  # a list of globs
        S + "release-checklist.md": (ON_DEMAND, None),
        S + "db-migrations.md": (ON_DEMAND, None),
        S + "shared.md": (ON_DEMAND, None),
    }
    assert all(f.kind == INSTRUCTIONS for f in agent.files)
    assert "#release-checklist" in files[S + "release-checklist.md"].how  # what the user types
    assert "description" in files[S + "db-migrations.md"].how
    assert agent.total_bytes == sum(
        (Path(tmp_path / "repo") / p).stat().st_size for p, f in files.items() if f.loaded == ALWAYS and f.exists
    )


def test_file_references_load_with_their_steering_file_and_leaving_ones_are_reported(tmp_path: Path) -> None:
    root = kiro_workspace(tmp_path / "repo")
    _report, agent, files = _kiro(root)
    # A page referenced by an always-included file is loaded every interaction, after it.
    conventions = files["docs/conventions.md"]
    assert (conventions.loaded, conventions.via) == (ALWAYS, S + "tech.md:9")
    paths = [f.path for f in agent.files]
    assert paths.index("docs/conventions.md") == paths.index(S + "tech.md") + 1
    # A file that is no page is named, never read; a missing one is listed as missing.
    assert any(line.startswith("docs/api.yaml, pulled in by " + S + "tech.md:8") for line in agent.outside)
    assert files["docs/retired.md"].exists is False
    assert any("#[[file:../team/style.md]]" in line and "outside the field" in line for line in agent.outside)
    findings = [(f.rule, f.path, f.line) for f in run_checks(open_field(root, FieldOptions()))]
    assert ("import-outside", S + "shared.md", 6) in findings
    assert ("import-credential", S + "shared.md", 7) in findings  # ~/.aws/credentials
    assert ("import-broken", S + "shared.md", 8) in findings
    assert not any(rule == "import-credential" and line == 9 for rule, _p, line in findings)  # .env.example
    # ``[[file:x]]`` inside a reference is no wikilink to a page named "file:x".
    assert not [f for f in findings if f[0] == "link-broken"]


def test_global_steering_is_named_never_read(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "home"
    write_page(home, ".kiro/steering/personal.md", "# Personal\n\nThe home steering.\n")
    monkeypatch.setenv("HOME", str(home))
    report, agent, files = _kiro(kiro_workspace(tmp_path / "repo"))
    assert any("~/.kiro/steering/" in line and "memtui ~/.kiro/steering" in line for line in agent.outside)
    assert not any("personal" in path for path in files)


def test_a_field_opened_at_the_kiro_folder_sees_references_leave_it(tmp_path: Path) -> None:
    root = kiro_workspace(tmp_path / "repo") / ".kiro"
    _report, agent, files = _kiro(root)
    assert files["steering/tech.md"].loaded == ALWAYS
    assert "docs/conventions.md" not in files  # the workspace root is above this field
    assert any("#[[file:docs/conventions.md]]" in line and "outside the field" in line for line in agent.outside)


def test_modes_survive_the_page_cache(tmp_path: Path) -> None:
    """What ``read`` found in a steering file is kept with the page: a warm open says the same."""
    root = kiro_workspace(tmp_path / "repo")
    cold = {f.path: (f.loaded, f.pattern) for f in _kiro(root)[1].files}
    field = open_field(root, FieldOptions())
    assert field.cache_dir is not None and any(field.cache_dir.iterdir())
    warm = {f.path: (f.loaded, f.pattern) for f in _kiro(root)[1].files}
    assert warm == cold and cold[S + "testing.md"] == (ON_MATCH, "**/*.test.ts, **/*.spec.ts")


def test_rules_chosen_by_the_field_an_unknown_inclusion_never_hides_a_file(tmp_path: Path) -> None:
    """Rules chosen by the field: a steering file whose ``inclusion`` is no Kiro mode (or a list,
    or fileMatch without a pattern) is counted as always included, so a secret in it is still
    one that reaches every session; ``inclusion: manual`` keeps it out of the context but never
    out of ``memtui check``."""
    root = kiro_workspace(tmp_path / "repo")
    write_page(root, S + "odd.md", "---\ninclusion: sometimes\n---\n# Odd\n\nThe staging password: hunter2-Blue7\n")
    write_page(root, S + "listed.md", "---\ninclusion: [always, manual]\n---\n# Listed\n\nText.\n")
    write_page(root, S + "nopattern.md", "---\ninclusion: fileMatch\nglobs: ['src/**']\n---\n# No pattern\n")
    write_page(root, S + "hidden.md", "---\ninclusion: manual\n---\n# Hidden\n\nThe prod password: Zq8-pass-9911\n")
    report, _agent, files = _kiro(root)
    assert files[S + "odd.md"].loaded == ALWAYS and "counted as always" in files[S + "odd.md"].how
    assert files[S + "listed.md"].loaded == ALWAYS
    assert files[S + "nopattern.md"].loaded == ALWAYS and "no fileMatchPattern" in files[S + "nopattern.md"].how
    assert [(f.rule, f.path) for f in report.findings] == [("secret", S + "odd.md")]
    checked = {(f.rule, f.path) for f in run_checks(open_field(root, FieldOptions()))}
    assert ("secret", S + "hidden.md") in checked


def test_text_that_acts_a_hostile_pattern_is_bounded_and_shown_inert(tmp_path: Path, capsys) -> None:
    """Text that acts: a fileMatchPattern with a terminal escape, bidi override and a huge
    length is shown cut and inert, never compiled (a pattern from the field is text)."""
    root = kiro_workspace(tmp_path / "repo")
    hostile = "\x1b]52;c;aGk=\x07" + "\u202e" + "(a+)+$" * 400
    write_page(root, S + "hostile.md", f'---\ninclusion: fileMatch\nfileMatchPattern: "{hostile}"\n---\n# H\n')
    _report, _agent, files = _kiro(root)
    pattern = files[S + "hostile.md"].pattern
    assert pattern is not None and len(pattern) <= 200
    code, out, _err = run_cli(["context", root], capsys)
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert "hostile.md" in out
    code, out, _err = run_cli(["context", root, "--json"], capsys)
    assert "\x1b" not in out and "\u202e" not in out  # JSON escapes them: inert in a terminal


def test_links_out_of_the_field_a_symlinked_steering_file_is_not_followed(tmp_path: Path) -> None:
    """Links out of the field: a steering file that is a symlink to a file outside is never read."""
    root = kiro_workspace(tmp_path / "repo")
    secret = write_page(tmp_path / "elsewhere", "keys.md", "# Keys\n\nThe root password: Zq8-pass-9911\n")
    os.symlink(secret, root / ".kiro/steering/linked.md")
    field = open_field(root, FieldOptions())
    assert S + "linked.md" not in field.pages
    assert ("symlink-outside", S + "linked.md") in {(f.rule, f.path) for f in run_checks(field)}


def test_steering_of_a_workspace_inside_the_field_is_read_but_not_claimed_loaded(tmp_path: Path) -> None:
    """A copy of a workspace in a subfolder (``tools/starter/.kiro/steering/``): its references are
    references (no "[[file:...]] matches no page"), resolved from that workspace, and memtui does
    not claim Kiro loads it here: that needs the folder opened as a workspace."""
    root = kiro_workspace(tmp_path / "repo")
    nested = "tools/starter/.kiro/steering/"
    write_page(root, nested + "tech.md", "---\ninclusion: always\n---\n# Tech\n\nSee #[[file:docs/stack.md]]\n")
    write_page(root, "tools/starter/docs/stack.md", "# Stack\n")
    field = open_field(root, FieldOptions())
    assert field.pages[nested + "tech.md"].dialect == "kiro"
    findings = {(f.rule, f.path) for f in run_checks(field)}
    assert not {rule for rule, path in findings if path.startswith("tools/")} & {"link-broken", "import-broken"}
    _report, agent, files = _kiro(root)
    assert files[nested + "tech.md"].loaded == "unknown" and "tools/starter/" in files[nested + "tech.md"].how
    automatic = loaded_context(open_field(root, FieldOptions()), all_files=False).agent("kiro")
    assert automatic is not None and not any(f.path.startswith("tools/") for f in automatic.files)


def test_frontmatter_yaml_cannot_read_is_read_line_by_line(tmp_path: Path) -> None:
    root = kiro_workspace(tmp_path / "repo")
    write_page(root, S + "broken.md", "---\ninclusion: 'fileMatch'\nfileMatchPattern: [src/**\n---\n# Broken\n")
    write_page(root, S + "colon.md", "---\ninclusion: manual\ndescription: Note: a colon\n---\n# Colon\n")
    _report, _agent, files = _kiro(root)
    assert (files[S + "broken.md"].loaded, files[S + "broken.md"].pattern) == (ON_MATCH, "[src/**")
    assert files[S + "colon.md"].loaded == ON_DEMAND
