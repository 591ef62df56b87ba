"""Issue 41, item 4: evidence, not defaults. Currency and review are claimed only on evidence.

A page whose format keeps no status (Claude Code, OpenClaw, Serena, a memory bank, plain
notes) is "no status recorded", never "current", and its age is shown from the best evidence
there is, named as such. An empty review queue says what is true.
"""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path

from memtui.dialects.open import open_field
from memtui.field.history import CURRENT, SUPERSEDED, UNRECORDED, age_evidence
from memtui.field.trust import nothing_waiting
from tests.fixtures_dialects import claude_auto_memory, openclaw_workspace
from tests.helpers_field import make_field, run_cli, run_cli_json


def test_formats_without_a_status_record_say_so_and_never_current(tmp_path: Path) -> None:
    for root in (claude_auto_memory(tmp_path / "claude"), openclaw_workspace(tmp_path / "claw")):
        field = open_field(root)
        statuses = {field.history.status[path] for path in field.pages}
        assert CURRENT not in statuses, (root.name, statuses)
        assert UNRECORDED in statuses


def test_a_page_that_records_its_own_status_is_read_by_it(tmp_path: Path) -> None:
    root = claude_auto_memory(tmp_path / "claude")
    (root / "memory" / "staging.md").write_text(
        "---\nname: Staging quirks\ndescription: old\nstatus: superseded\n---\nOld.\n"
    )
    field = open_field(root)
    assert field.history.status["memory/staging.md"] == SUPERSEDED


def test_memtuis_own_format_records_currency(sample_field: Path) -> None:
    field = open_field(sample_field)
    assert field.history.status["decisions/public-api-trpc.md"] == CURRENT


def test_age_comes_from_the_page_first_then_the_file_named_as_such(tmp_path: Path) -> None:
    root = make_field(
        tmp_path / "f",
        {"dated.md": "---\nupdated: 2026-03-01\n---\nA.\n", "bare.md": "B.\n"},
    )
    stamp = _dt.datetime(2026, 1, 5, tzinfo=_dt.UTC).timestamp()
    os.utime(root / "bare.md", (stamp, stamp))
    field = open_field(root)
    now = _dt.datetime(2026, 12, 7, tzinfo=_dt.UTC)
    assert age_evidence(field.pages["dated.md"], now) == ("9 months old", "updated: 2026-03-01 in the page")
    assert age_evidence(field.pages["bare.md"], now) == ("11 months old", "file time 2026-01-05")


def test_claims_and_search_never_call_an_unrecorded_page_current(tmp_path: Path, capsys) -> None:
    root = claude_auto_memory(tmp_path / "claude")
    (root / "memory" / "staging.md").write_text(
        "---\nname: Staging quirks\ndescription: what breaks\ntype: project\n---\nMigrations need the lock. [stated]\n"
    )
    code, claims, _err = run_cli_json(["claims", root], capsys)
    assert code == 0 and claims and {c["page_status"] for c in claims} == {"unrecorded"}
    code, out, _err = run_cli(["search", root, "migrations", "--index-dir", tmp_path / "ix"], capsys)
    assert code == 0 and "no status recorded" in out and "● current" not in out


def test_an_empty_queue_says_what_is_true() -> None:
    assert nothing_waiting({"unknown": 14}) == "nothing has ever been reviewed here: 14 pages have no review record"
    assert nothing_waiting({"reviewed": 3, "unknown": 2}) == (
        "nothing waits for review: 3 pages reviewed; 2 pages have no review record"
    )


def test_quarantine_list_on_a_never_reviewed_field(tmp_path: Path, capsys) -> None:
    root = claude_auto_memory(tmp_path / "claude")
    code, out, _err = run_cli(["quarantine", "list", root], capsys)
    assert code == 0
    assert "nothing has ever been reviewed here: 4 pages have no review record" in out
