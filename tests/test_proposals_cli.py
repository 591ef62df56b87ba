"""``memtui proposals list|show|approve|reject|revert|stats``: JSON shapes, refusals, inert output."""

from __future__ import annotations

import pytest

from memtui.review import ledger
from memtui.store.archive import export_field
from tests.helpers_field import run_cli, run_cli_json
from tests.helpers_review import snapshot

CONSOLIDATE = "2026-11-19-consolidate-01"
CONTRADICTION = "2026-11-27-contradiction-01"
DEDUPE = "2026-11-27-dedupe-01"
EXPIRE = "2026-11-27-expire-01"
ENTRY_KEYS = {
    "id",
    "carrier",
    "location",
    "job",
    "created",
    "age_days",
    "state",
    "flags",
    "conflicts_with",
    "pages",
    "validation",
    "decision",
}


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    monkeypatch.setenv("MEMTUI_REVIEWER", "maya")


def test_list_json_on_the_sample_field(sample_field, capsys):
    code, data, err = run_cli_json(["proposals", "list", sample_field], capsys)
    assert code == 0 and err == ""
    assert set(data) == {"proposals", "problems", "ledger_bad_lines"}
    rows = {p["id"]: p for p in data["proposals"]}
    assert {k: (v["state"], v["flags"]) for k, v in rows.items()} == {
        CONSOLIDATE: ("stale", ["stale", "conflicting"]),
        CONTRADICTION: ("conflicting", ["conflicting"]),
        DEDUPE: ("ready", []),
        EXPIRE: ("ready", []),
    }
    for row in rows.values():
        assert set(row) == ENTRY_KEYS
        assert set(row["validation"]) == {"ok", "errors", "warnings", "new_findings", "resolved_findings"}
        assert all(set(p) == {"path", "action", "stale", "problem"} for p in row["pages"])
    assert rows[CONSOLIDATE]["conflicts_with"] == [CONTRADICTION]


def test_list_text_names_every_state(sample_field, capsys):
    code, out, _ = run_cli(["proposals", "list", sample_field], capsys)
    assert code == 0
    lines = {line.split()[1]: line for line in out.splitlines() if line.startswith("│ 2026")}
    assert "◐ stale + ⇄ conflicting" in lines[CONSOLIDATE]
    assert "conflicting" in lines[CONTRADICTION] and "stale" not in lines[CONTRADICTION]
    assert "ready" in lines[DEDUPE] and "ready" in lines[EXPIRE]


def test_show_json_has_diffs_three_way_and_checks(sample_field, capsys):
    code, data, _ = run_cli_json(["proposals", "show", sample_field, CONSOLIDATE], capsys)
    assert code == 0
    assert set(data) == ENTRY_KEYS | {
        "rationale",
        "evidence",
        "fingerprint",
        "diffs",
        "three_way",
        "checks",
        "tag_changes",
    }
    assert data["tag_changes"] == []  # the consolidation rewrites claims, keeps no claim with another tag
    assert data["rationale"].startswith("Maya's meeting-time preference")
    assert [t["path"] for t in data["three_way"]] == ["notes/meeting-times-mornings.md"]
    diff = next(d for d in data["diffs"] if d["path"] == "people/maya-okafor.md")
    assert set(diff) == {"path", "action", "added", "removed", "notes", "unified", "side_by_side"}
    assert {line["kind"] for line in diff["unified"]} >= {"hunk", "add", "remove", "context"}
    assert any(row["kind"] == "replace" and row["new_spans"] for row in diff["side_by_side"])
    assert {f["rule"] for f in data["checks"]["resolved"]} == {"contradiction"}


def test_show_text_prints_diffs_and_the_stale_warning(sample_field, capsys):
    code, out, _ = run_cli(["proposals", "show", sample_field, CONSOLIDATE, "--side-by-side"], capsys)
    assert code == 0
    assert "stale: notes/meeting-times-mornings.md" in out
    assert "fingerprint " in out and "Rationale" in out


def test_approve_json_and_stats(sample_field, capsys):
    code, data, _ = run_cli_json(["proposals", "approve", sample_field, EXPIRE, "--yes"], capsys)
    assert code == 0
    decision = data["decision"]
    assert set(decision) == {"ts", "who", "action", "target", "job", "carrier", "pages", "reason", "commit"}
    assert (decision["action"], decision["target"], decision["who"]) == ("proposal-approve", EXPIRE, "maya")
    code, data, _ = run_cli_json(
        ["proposals", "revert", sample_field, EXPIRE, "--reason", "not over yet", "--yes"], capsys
    )
    assert code == 0 and data["decision"]["action"] == "proposal-revert"
    code, data, _ = run_cli_json(["proposals", "stats", sample_field], capsys)
    assert data["jobs"]["expire"] == {"job": "expire", "approved": 1, "rejected": 0, "reverted": 1, "regret_rate": 1.0}
    assert data["total"]["regret_rate"] == 1.0 and data["pending"] == 3
    code, out, _ = run_cli(["proposals", "stats", sample_field], capsys)
    assert "100%" in out


def test_stale_approve_is_refused_with_a_hint(sample_field, capsys):
    before = snapshot(sample_field)
    code, out, err = run_cli(["proposals", "approve", sample_field, CONSOLIDATE, "--yes"], capsys)
    assert code == 1
    assert "stale" in err and "--accept-stale" in err
    assert "Traceback" not in err
    assert snapshot(sample_field) == before


def test_accept_stale_prints_the_three_way_first(sample_field, capsys):
    code, out, err = run_cli(["proposals", "approve", sample_field, CONSOLIDATE, "--accept-stale", "--yes"], capsys)
    assert code == 0, err
    assert "stale: notes/meeting-times-mornings.md" in out
    assert "disk → proposed" in out
    assert not (sample_field / "notes/meeting-times-afternoons.md").exists()


def test_reject_needs_a_reason(sample_field, capsys):
    with pytest.raises(SystemExit):
        run_cli(["proposals", "reject", sample_field, DEDUPE], capsys)
    code, data, _ = run_cli_json(
        ["proposals", "reject", sample_field, DEDUPE, "--reason", "keep both", "--yes"], capsys
    )
    assert code == 0 and data["decision"]["reason"] == "keep both"
    code, data, _ = run_cli_json(["proposals", "list", sample_field, "--all"], capsys)
    assert {p["id"]: p["state"] for p in data["proposals"]}[DEDUPE] == "rejected"
    assert next(p for p in data["proposals"] if p["id"] == DEDUPE)["decision"]["reason"] == "keep both"


def test_revert_dry_run_and_force(sample_field, capsys):
    run_cli_json(["proposals", "approve", sample_field, EXPIRE, "--yes"], capsys)
    page = sample_field / "notes/trackstream-trial-terms.md"
    page.write_bytes(page.read_bytes() + b"- later edit [stated]\n")
    code, data, _ = run_cli_json(["proposals", "revert", sample_field, EXPIRE, "--dry-run"], capsys)
    assert code == 0 and data["conflicts"] == ["notes/trackstream-trial-terms.md"]
    code, out, err = run_cli(["proposals", "revert", sample_field, EXPIRE, "--yes"], capsys)
    assert code == 1 and "--force" in err
    assert "- later edit [stated]" in out  # the edit that would be lost is shown
    code, out, err = run_cli(["proposals", "revert", sample_field, EXPIRE, "--yes", "--force"], capsys)
    assert code == 0, err
    assert b"later edit" not in page.read_bytes()
    assert [e.action for e in ledger.read(sample_field).entries] == ["proposal-approve", "proposal-revert"]


def test_unknown_id_and_missing_field(sample_field, tmp_path, capsys):
    code, _, err = run_cli(["proposals", "show", sample_field, "nope"], capsys)
    assert code == 1 and "no proposal" in err
    code, _, err = run_cli(["proposals", "list", tmp_path / "missing"], capsys)
    assert code == 2 and "no such folder" in err


def test_output_is_inert(sample_field, capsys):
    hostile = "# Title [bold red]x[/] \x1b]0;pwn\x07 \u202eabc\n"
    folder = sample_field / ".dream/proposals/2026-11-28-dedupe-09"
    (folder / "files/notes").mkdir(parents=True)
    (folder / "files/notes/h.md").write_text(hostile, encoding="utf-8")
    (folder / "proposal.yaml").write_text(
        'id: 2026-11-28-dedupe-09\njob: dedupe\nrationale: "[@click=app.quit]x[/] \\e[2J"\nbase: {notes/h.md: null}\n',
        encoding="utf-8",
    )
    for argv in (["proposals", "list", sample_field], ["proposals", "show", sample_field, "2026-11-28-dedupe-09"]):
        code, out, err = run_cli(argv, capsys)
        assert code == 0, err
        for bad in ("\x1b", "\x07", "\u202e"):
            assert bad not in out
    assert "[@click=app.quit]" in out  # shown literally, not interpreted


def test_readonly_zip_can_be_listed_not_changed(sample_field, tmp_path, capsys):
    export_field(sample_field, tmp_path / "f.memoryfield.zip")
    code, data, _ = run_cli_json(["proposals", "list", tmp_path / "f.memoryfield.zip", "--no-checks"], capsys)
    assert code == 0
    code, _, err = run_cli(["proposals", "approve", tmp_path / "f.memoryfield.zip", EXPIRE, "--yes"], capsys)
    assert code == 1 and "read-only" in err


def test_undo_a_proposal_decision_from_the_command_line(sample_field, capsys):
    code, out, err = run_cli(["proposals", "approve", sample_field, EXPIRE, "--yes"], capsys)
    assert code == 0, err
    assert "1 pages" not in out
    code, out, err = run_cli(["proposals", "undo", sample_field, EXPIRE, "--yes"], capsys)
    assert code == 0, err
    assert out.startswith("undone: approved 2026-11-27-expire-01")
    code, data, _ = run_cli_json(["proposals", "stats", sample_field], capsys)
    assert data["total"]["approved"] == 0 and data["pending"] == 4
    code, _, err = run_cli(["proposals", "undo", sample_field], capsys)
    assert code == 1 and "--yes" in err


def test_piped_tables_are_not_cut_at_80_columns(sample_field, capsys, monkeypatch):
    monkeypatch.delenv("COLUMNS")
    import memtui.cli.output as output

    monkeypatch.setattr(output, "_console", None)
    code, out, _ = run_cli(["proposals", "list", sample_field, "--no-checks"], capsys)
    assert code == 0
    assert any(len(line) > 80 for line in out.splitlines())
    assert any("notes/meeting-times-mornings.md" in line for line in out.splitlines())
