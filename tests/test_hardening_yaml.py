"""Issue 12, items 12 and 14: hostile YAML is a finding, never a crash or a hang.

Item 12: YAML nested 500-999 levels deep (in a page, ``proposal.yaml``,
``golden.yaml`` and a proposed page) used to crash every command with
``RecursionError`` and hang the TUI. Item 14: a key given twice
(``reviewed: false`` then ``reviewed: true``) was silently last-one-wins.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memtui.field.checks import run_checks
from memtui.field.field import Field
from memtui.review import proposals
from tests.helpers import write_page
from tests.helpers_review import review_proposal, sha, staging_proposal
from tests.helpers_tui import SIZE, make_app, rendered_text, wait_ready

DEPTH = 999


def deep_values() -> dict[str, str]:
    """Three ways to nest 999 (or, in block style, 500) levels, each within the frontmatter size cap."""
    return {
        "flow-list": "[" * DEPTH + "]" * DEPTH,
        "flow-map": "{a: " * DEPTH + "x" + "}" * DEPTH,
        "block-list": "\n" + "- " * 500 + "x",
    }


def deep_page(value: str, title: str = "Deep") -> str:
    return f"---\ntitle: {title}\nreviewed: false\ntaint: external\nnest: {value}\n---\n- a fact [stated]\n"


@pytest.fixture
def deep_field(sample_field: Path) -> Path:
    """The sample field with deep YAML everywhere memtui reads YAML it did not write."""
    for name, value in deep_values().items():
        write_page(sample_field, f"quarantine/deep-{name}.md", deep_page(value, f"Deep {name}"))
    (sample_field / "golden.yaml").write_text("questions: " + "[" * DEPTH + "]" * DEPTH + "\n")
    target = "notes/q3-digest.md"
    old = (sample_field / target).read_bytes()
    staging_proposal(
        sample_field,
        "2026-12-01-dedupe-01",
        files={target: deep_page(deep_values()["flow-map"]).encode()},
        base={target: sha(old)},
    )
    manifest = sample_field / ".dream/proposals/2026-12-01-dedupe-02/proposal.yaml"
    manifest.parent.mkdir(parents=True)
    manifest.write_text("id: 2026-12-01-dedupe-02\njob: dedupe\nbase: " + "{a: " * DEPTH + "x" + "}" * DEPTH + "\n")
    return sample_field


def cli(field: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, MEMTUI_REVIEWER="maya")
    return subprocess.run(
        [sys.executable, "-c", "import sys; from memtui.cli import main; sys.exit(main())", *args],
        cwd=field,
        env=env,
        capture_output=True,
        timeout=timeout,
    )


def test_deep_yaml_is_a_finding_in_every_command(deep_field: Path) -> None:
    started = time.monotonic()
    checked = cli(deep_field, "check", ".", "--json")
    assert checked.returncode == 1, checked.stderr.decode()
    found = {(f["rule"], f["path"]) for f in json.loads(checked.stdout)["findings"]}
    for name in deep_values():
        assert ("yaml-too-deep", f"quarantine/deep-{name}.md") in found
    for args in (
        ("quarantine", "list", ".", "--json"),
        ("quarantine", "show", ".", "quarantine/deep-flow-list.md", "--json"),
        ("proposals", "list", ".", "--json"),
        ("proposals", "show", ".", "2026-12-01-dedupe-01", "--json"),
        ("index", ".", "--json"),
        ("search", ".", "deep", "--json"),
        ("history", ".", "quarantine/deep-flow-map.md", "--json"),
    ):
        result = cli(deep_field, *args)
        assert result.returncode == 0, (args, result.stderr.decode()[-2000:])
        assert b"Traceback" not in result.stderr and b"RecursionError" not in result.stderr
    listed = json.loads(cli(deep_field, "proposals", "list", ".", "--json").stdout)
    bad = next(p for p in listed["proposals"] if p["id"] == "2026-12-01-dedupe-02")
    assert bad["state"] == "invalid" and "nested more than" in " ".join(bad["validation"]["errors"])
    recall = cli(deep_field, "recall-test", ".")
    assert recall.returncode != 0 and b"nested more than" in recall.stderr and b"Traceback" not in recall.stderr
    assert time.monotonic() - started < 90


def test_a_deep_proposed_page_is_reported_on_the_result(deep_field: Path) -> None:
    review = review_proposal(deep_field, "2026-12-01-dedupe-01")
    assert "yaml-too-deep" in {f.rule for f in review.entry.validation.new_findings}


async def test_the_tui_opens_a_deep_field_and_stays_responsive(deep_field: Path) -> None:
    app = make_app(deep_field)
    started = time.monotonic()
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        assert time.monotonic() - started < 30
        app.open_page("quarantine/deep-flow-list.md")
        await pilot.pause()
        assert "nested more than" in rendered_text(app.screen.query_one("#page-findings"), width=300)
        await pilot.press("escape", "4")
        await pilot.pause()
        await pilot.press("5")
        await pilot.pause()
        await app.workers.wait_for_complete()
        assert app.is_running


# --------------------------------------------------------------------------- item 14


def test_a_key_given_twice_is_a_finding(tmp_path: Path) -> None:
    root = tmp_path / "field"
    write_page(
        root,
        "quarantine/twice.md",
        "---\ntitle: Twice\nreviewed: false\ntaint: external\nreviewed: true\n---\n- a fact [stated]\n",
    )
    write_page(root, "notes/nested.md", "---\ntitle: Nested\nmeta:\n  a: 1\n  a: 2\n---\n- a fact [stated]\n")
    findings = [f for f in run_checks(Field.load(root, use_cache=False)) if f.rule == "frontmatter-duplicate-key"]
    assert [(f.path, f.line, f.severity) for f in findings] == [
        ("notes/nested.md", 5, "error"),
        ("quarantine/twice.md", 5, "error"),
    ]
    assert "'reviewed'" in findings[1].message


def test_a_manifest_key_given_twice_makes_the_proposal_invalid(sample_field: Path) -> None:
    page = "notes/q3-digest.md"
    old = (sample_field / page).read_bytes()
    folder = staging_proposal(
        sample_field, "2026-12-01-dedupe-03", files={page: old + b"x [stated]\n"}, base={page: sha(old)}
    )
    manifest = folder / "proposal.yaml"
    manifest.write_text(manifest.read_text() + "job: expire\n")
    proposal = proposals.get_proposal(sample_field, "2026-12-01-dedupe-03")
    assert not proposal.valid
    assert any("'job' appears more than once" in problem for problem in proposal.problems)
