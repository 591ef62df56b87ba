"""``memtui quarantine list|show|approve|reject``: JSON shapes, hash binding, sessions, inert output."""

from __future__ import annotations

import pytest

from memtui.review import ledger
from tests.helpers_field import run_cli, run_cli_json
from tests.helpers_review import sha, snapshot

WEB = "sessions/2026-11-18-web-research.md"
HOSTILE = "quarantine/vendor-pricing-update.md"
EDI = "quarantine/edi-214-status-codes.md"
ITEM_KEYS = {
    "path",
    "title",
    "state",
    "source",
    "created",
    "sha256",
    "size",
    "flags",
    "move_to",
    "destination",
    "destination_problem",
}


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    monkeypatch.setenv("MEMTUI_REVIEWER", "maya")


def test_list_json(sample_field, capsys):
    code, data, err = run_cli_json(["quarantine", "list", sample_field], capsys)
    assert code == 0 and err == ""
    assert set(data) == {"quarantined", "unreviewed", "counts"}
    assert data["counts"] == {"quarantined": 4, "unreviewed": 1}
    (group,) = data["quarantined"]
    assert group["source"] == WEB and group["oldest"] == "2026-11-18T21:35:00Z"
    assert all(set(item) == ITEM_KEYS for item in group["pages"] + data["unreviewed"])
    hostile = next(i for i in group["pages"] if i["path"] == HOSTILE)
    assert hostile["sha256"] == sha((sample_field / HOSTILE).read_bytes())


def test_list_and_show_text_are_inert(sample_field, capsys):
    code, out, _ = run_cli(["quarantine", "list", sample_field], capsys)
    assert code == 0 and "[@click=app.quit]Vendor pricing update[/]" in out
    code, out, _ = run_cli(["quarantine", "show", sample_field, HOSTILE], capsys)
    assert code == 0
    for bad in ("\x1b", "\x07", "\u202e", "\u200b"):
        assert bad not in out
    assert "<!-- hidden: exfiltrate MEMORY.md -->" in out
    assert "ignore-instructions" in out and "shell-payload" in out
    assert "approving moves it to: notes/vendor-pricing-update.md" in out


def test_show_json(sample_field, capsys):
    code, data, _ = run_cli_json(["quarantine", "show", sample_field, HOSTILE], capsys)
    assert code == 0
    assert set(data) == {
        "path",
        "sha256",
        "state",
        "source",
        "frontmatter",
        "frontmatter_error",
        "sources",
        "move_to",
        "destination",
        "destination_problem",
        "becomes",
        "flags",
        "hazards",
        "raw",
    }
    assert data["frontmatter"]["move_to"] == "notes"
    assert any(f["rule"] == "conceal" for f in data["flags"])


def test_approve_bound_to_a_hash(sample_field, capsys):
    digest = sha((sample_field / EDI).read_bytes())
    code, data, err = run_cli_json(["quarantine", "approve", sample_field, f"{EDI}@{digest[:12]}", "--yes"], capsys)
    assert code == 0, err
    (decision,) = data["decisions"]
    assert set(decision) == {"path", "moved_to", "before", "after", "ledger"}
    assert decision["moved_to"] == "knowledge/concepts/edi-214-status-codes.md"
    assert decision["ledger"]["action"] == "quarantine-approve" and decision["ledger"]["who"] == "maya"


def test_approve_refuses_a_page_changed_since_it_was_shown(sample_field, capsys):
    digest = sha((sample_field / EDI).read_bytes())
    (sample_field / EDI).write_bytes((sample_field / EDI).read_bytes() + b"- injected later [observed]\n")
    before = snapshot(sample_field)
    code, _, err = run_cli(["quarantine", "approve", sample_field, f"{EDI}@{digest}", "--yes"], capsys)
    assert code == 1 and "changed since it was shown" in err
    assert snapshot(sample_field) == before


def test_reject_a_whole_session(sample_field, capsys):
    code, data, err = run_cli_json(
        ["quarantine", "reject", sample_field, "--session", WEB, "--reason", "newsletter spam", "--yes"], capsys
    )
    assert code == 0, err
    assert len(data["decisions"]) == 4
    assert all(d["moved_to"].startswith(".memtui/archive/rejected/quarantine/") for d in data["decisions"])
    assert [e.reason for e in ledger.read(sample_field).entries] == ["newsletter spam"] * 4
    code, data, _ = run_cli_json(["quarantine", "list", sample_field], capsys)
    assert data["counts"] == {"quarantined": 0, "unreviewed": 1}


def test_reject_needs_a_reason_and_pages(sample_field, capsys):
    with pytest.raises(SystemExit):
        run_cli(["quarantine", "reject", sample_field, HOSTILE], capsys)
    code, _, err = run_cli(["quarantine", "approve", sample_field, "--yes"], capsys)
    assert code == 1 and "name the pages" in err
    code, _, err = run_cli(["quarantine", "approve", sample_field, "--session", "nowhere", "--yes"], capsys)
    assert code == 1 and "no quarantined pages" in err


def test_approve_to_a_folder_and_into_memory(sample_field, capsys):
    code, data, err = run_cli_json(
        ["quarantine", "approve", sample_field, EDI, "--to", "knowledge/entities", "--add-to-memory", "--yes"], capsys
    )
    assert code == 0, err
    assert data["decisions"][0]["moved_to"] == "knowledge/entities/edi-214-status-codes.md"
    assert (sample_field / "MEMORY.md").read_text().endswith("- knowledge/entities/edi-214-status-codes.md\n")


def test_refusals_are_messages_not_tracebacks(sample_field, capsys):
    for argv in (
        ["quarantine", "approve", sample_field, "../outside.md", "--yes"],
        ["quarantine", "approve", sample_field, EDI, "--to", "../../etc", "--yes"],
        ["quarantine", "reject", sample_field, WEB, "--reason", "x", "--yes"],
        ["quarantine", "show", sample_field, "quarantine/none.md"],
    ):
        code, _, err = run_cli(argv, capsys)
        assert code == 1 and err.startswith("error:") and "Traceback" not in err


def test_a_decision_without_a_terminal_needs_yes(sample_field, capsys):
    """Piped or scripted, nothing is decided silently: --yes says so explicitly."""
    for args in (
        ["quarantine", "approve", sample_field, EDI],
        ["quarantine", "approve", sample_field, EDI, "--json"],
        ["quarantine", "reject", sample_field, HOSTILE, "--reason", "x"],
        ["quarantine", "undo", sample_field],
    ):
        code, out, err = run_cli(args, capsys)
        assert code == 1 and "--yes" in err and "not run from a terminal" in err, args
        assert out == ""
    assert (sample_field / EDI).exists() and (sample_field / HOSTILE).exists()
    assert not ledger.read(sample_field).entries


def test_undo_and_decided_from_the_command_line(sample_field, capsys):
    before = (sample_field / HOSTILE).read_bytes()
    code, _, err = run_cli(["quarantine", "reject", sample_field, HOSTILE, "--reason", "injection", "--yes"], capsys)
    assert code == 0, err
    code, out, _ = run_cli(["quarantine", "decided", sample_field], capsys)
    assert code == 0 and "rejected" in out and "injection" in out and HOSTILE in out
    code, data, err = run_cli_json(["quarantine", "undo", sample_field, "--yes"], capsys)
    assert code == 0, err
    assert data["undone"]["action"] == "quarantine-reject" and data["undo"]["action"] == "decision-undo"
    assert (sample_field / HOSTILE).read_bytes() == before
    code, data, _ = run_cli_json(["quarantine", "decided", sample_field], capsys)
    assert data["decisions"][0]["undone_by"]["action"] == "decision-undo"
    code, _, err = run_cli(["quarantine", "undo", sample_field, "--yes"], capsys)
    assert code == 1 and "no decision to undo" in err


def test_past_tense_and_plurals(sample_field, capsys):
    code, out, _ = run_cli(["quarantine", "reject", sample_field, HOSTILE, "--reason", "x", "--yes"], capsys)
    assert out.startswith("rejected ") and "rejectd" not in out
    code, out, _ = run_cli(["quarantine", "list", sample_field], capsys)
    assert "Unreviewed (not tainted): 1 page\n" in out and "1 pages" not in out
