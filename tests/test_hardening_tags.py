"""Issue 40, items 8 and 13: look-alike tags and imports that leave the field.

Item 8: ``[ſtated]`` (long s), ``[ınferred]`` (dotless i) and ``[İnferred]`` (dotted
capital I) case-fold to real tags under a Unicode-insensitive match and crashed every
command, the TUI and the live index with a ``KeyError``. Tags match ASCII only; a
look-alike is a finding of its own (``lookalike-tag``), never an exception, and never
counts as the tag it imitates.

Item 13: an instruction file importing ``@~/.ssh/id_rsa`` or ``@/etc/passwd`` got no
finding. Every import that leaves the field is reported (``import-outside``); a path
that looks like a credential is an error (``import-credential``); nothing outside the
field is ever read to follow it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from memtui.field.body import lookalike_tag
from tests.helpers import write_page
from tests.helpers_field import findings, run_cli, run_cli_json
from tests.helpers_index import open_service, search_paths
from tests.helpers_tui import SIZE, make_app, screen_text, wait_ready

LOOKALIKES = {
    "notes/long-s.md": "Maya chose Postgres. [\u017ftated]\n",
    "notes/dotless.md": "The queue drains nightly. [\u0131nferred]\n",
    "notes/dotted.md": "Deploys wait for QA. [\u0130nferred]\n",
    "notes/cyrillic.md": "Budget is capped. [\u0455tated]\n",  # Cyrillic dze
}


@pytest.fixture
def lookalike_field(tmp_path: Path) -> Path:
    root = tmp_path / "field"
    for rel, body in LOOKALIKES.items():
        write_page(root, rel, f"---\ntitle: {Path(rel).stem}\n---\n{body}")
    write_page(root, "notes/plain.md", "---\ntitle: plain\n---\nNothing odd here. [observed]\n")
    return root


@pytest.mark.parametrize(
    ("token", "imitates"),
    [("\u017ftated", "stated"), ("\u0131nferred", "inferred"), ("\u0130nferred", "inferred"), ("STATED", None)],
)
def test_a_lookalike_names_the_tag_it_imitates(token: str, imitates: str | None) -> None:
    assert lookalike_tag(token) == imitates


def test_check_reports_every_lookalike_and_counts_none_as_a_tag(lookalike_field: Path, capsys) -> None:
    found = findings(lookalike_field)
    hits = {f.path for f in found if f.rule == "lookalike-tag"}
    assert hits == set(LOOKALIKES)
    code, data, _err = run_cli_json(["check", lookalike_field], capsys)
    assert code in (0, 1)
    assert {f["path"] for f in data["findings"] if f["rule"] == "lookalike-tag"} == set(LOOKALIKES)


def test_claims_and_search_answer_on_a_field_of_lookalikes(lookalike_field: Path, capsys) -> None:
    code, claims, _err = run_cli_json(["claims", lookalike_field], capsys)
    assert code == 0
    assert {c["path"] for c in claims} == {"notes/plain.md"}  # a look-alike is no source tag
    code, out, err = run_cli(["search", lookalike_field, "Postgres"], capsys)
    assert code == 0, err
    assert "notes/long-s.md" in out


def test_the_live_index_takes_a_lookalike_page(lookalike_field: Path) -> None:
    svc = open_service(lookalike_field)
    try:
        assert "notes/dotless.md" in search_paths(svc, "queue")
    finally:
        svc.close()


async def test_the_tui_opens_and_shows_a_lookalike_page(lookalike_field: Path) -> None:
    app = make_app(lookalike_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        app.open_page("notes/long-s.md")
        await pilot.pause()
        assert "Postgres" in screen_text(app)
        assert app.is_running


IMPORTS = (
    "# Project\n"
    "Keys: @~/.ssh/id_rsa\n"
    "Users: @/etc/passwd\n"
    "Cloud: @~/.aws/credentials\n"
    "Shared: @~/notes/team-style.md\n"
    "Up: @../../outside.md\n"
    "Here: @docs/guide.md\n"
)


def test_every_import_leaving_the_field_is_reported(tmp_path: Path, capsys) -> None:
    root = tmp_path / "field"
    write_page(root, "CLAUDE.md", IMPORTS)
    write_page(root, "docs/guide.md", "# Guide\n")
    code, data, _err = run_cli_json(["check", root], capsys)
    assert code == 1  # errors
    by_rule: dict[str, set[int]] = {}
    for finding in data["findings"]:
        by_rule.setdefault(finding["rule"], set()).add(finding["line"])
    assert by_rule["import-credential"] == {2, 3, 4}
    assert by_rule["import-outside"] == {5, 6}
    severities = {f["severity"] for f in data["findings"] if f["rule"] == "import-credential"}
    assert severities == {"error"}
