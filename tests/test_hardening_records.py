"""Issue 12, item 9: a forged or malformed journal, and lines added to the ledger by someone else.

A journal in ``.memtui/journal/`` used to crash every review command (type
errors) or be replayed into the ledger as an approval nobody made; a line
appended to the ledger silently decided a proposal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.review import apply_journal, ledger
from memtui.store import signing
from tests.helpers_field import run_cli, run_cli_json
from tests.helpers_review import approve_proposal, proposal_queue

DEDUPE = "2026-11-27-dedupe-01"
TXN = "2026-12-01T101500Z-0badc0de"


pytestmark = pytest.mark.usefixtures("reviewer_maya")


def forged_decision(action: str = ledger.PROPOSAL_REJECT, target: str = DEDUPE) -> dict:
    return {
        "ts": "2026-12-01T10:15:00Z",
        "who": "maya",
        "action": action,
        "target": target,
        "job": "dedupe",
        "carrier": "staging",
        "pages": [],
        "reason": "forged",
        "commit": None,
    }


def plant_journal(root: Path, body: dict | str | bytes, *, name: str = f"{TXN}.json", sign: bool = False) -> Path:
    folder = root / ".memtui" / "journal"
    folder.mkdir(parents=True, exist_ok=True)
    if isinstance(body, dict) and sign:
        body = dict(body, mac=signing.sign_json(body))
    data = body if isinstance(body, bytes) else (body if isinstance(body, str) else json.dumps(body)).encode()
    (folder / name).write_bytes(data)
    return folder / name


def committed_journal(**changes) -> dict:
    journal = {
        "version": 1,
        "txn": TXN,
        "label": f"approve {DEDUPE}",
        "phase": "committed",
        "git": False,
        "git_head": None,
        "git_staging": False,
        "pages": [{"path": "notes/q3-digest.md", "before": "a" * 64, "after": "b" * 64}],
        "ledger": dict(
            forged_decision(ledger.PROPOSAL_APPROVE),
            pages=[{"path": "notes/q3-digest.md", "before": "a" * 64, "after": "b" * 64}],
        ),
    }
    journal.update(changes)
    return journal


MALFORMED = {
    "not json": b'{"version": 1, "pages": [',
    "a list": [1, 2, 3],
    "pages of numbers": dict(committed_journal(), pages=[1, 2]),
    "pages not a list": dict(committed_journal(), pages="notes/q3-digest.md"),
    "ledger of the wrong type": dict(committed_journal(), ledger=["approve"]),
    "no ledger": {key: value for key, value in committed_journal().items() if key != "ledger"},
    "path outside the field": dict(
        committed_journal(phase="applying"), pages=[{"path": "../../etc/passwd.md", "before": None, "after": "b" * 64}]
    ),
    "retired outside the archive": dict(
        committed_journal(phase="applying"),
        pages=[{"path": "notes/q3-digest.md", "before": "a" * 64, "after": None, "moved_to": "notes/elsewhere.md"}],
    ),
    "hash of the wrong type": dict(
        committed_journal(phase="applying"), pages=[{"path": "notes/q3-digest.md", "before": 12, "after": None}]
    ),
    "ledger about other pages": dict(committed_journal(), ledger=forged_decision(ledger.PROPOSAL_APPROVE)),
}


def review_commands(root: Path) -> list[list[str]]:
    return [
        ["proposals", "list", os.fspath(root)],
        ["quarantine", "list", os.fspath(root)],
        ["proposals", "stats", os.fspath(root)],
        ["proposals", "show", os.fspath(root), DEDUPE],
    ]


# Each command in turn, in one real interpreter (not this test process): exit code and stderr of each.
_RUN_EACH = """
import contextlib, io, json, sys, traceback
from memtui.cli import main, output
results = []
for argv in json.loads(sys.argv[1]):
    output._console = output._error_console = None  # each command's consoles on its own streams
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
        except BaseException:
            traceback.print_exc()
            code = -1
    results.append([code, err.getvalue()])
print(json.dumps(results))
"""


def run_in_one_process(commands: list[list[str]]) -> list[tuple[int, str]]:
    """Run memtui commands one after another in a fresh interpreter (imports paid once)."""
    result = subprocess.run(
        [sys.executable, "-c", _RUN_EACH, json.dumps(commands)],
        capture_output=True,
        timeout=120,
        env=dict(os.environ),
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return [tuple(item) for item in json.loads(result.stdout.strip().splitlines()[-1])]


def test_a_forged_committed_journal_is_not_replayed_into_the_ledger(sample_field: Path, capsys) -> None:
    plant_journal(sample_field, committed_journal(ledger=dict(forged_decision(), pages=committed_journal()["pages"])))
    for argv in review_commands(sample_field):
        code, _, err = run_cli(argv, capsys)
        assert code == 0, err
        assert "needs attention" in err and "not written by memtui" in err
    assert ledger.read(sample_field).entries == []
    assert proposal_queue(sample_field, with_checks=False).get(DEDUPE).state != ledger.REJECTED
    assert len(apply_journal.pending_journals(sample_field)) == 1  # left for a human to look at


@pytest.mark.parametrize("sign", [False, True], ids=["unsigned", "signed"])
@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_a_malformed_journal_is_reported_and_never_crashes_a_review_command(
    sample_field: Path, kind: str, sign: bool
) -> None:
    # "signed": as if memtui itself had a bug; validation still refuses it.
    plant_journal(sample_field, MALFORMED[kind], sign=sign)
    page = (sample_field / "notes/q3-digest.md").read_bytes()
    for code, stderr in run_in_one_process(review_commands(sample_field)):
        assert code == 0, stderr
        assert "Traceback" not in stderr and "needs attention" in stderr
    (recovery,) = apply_journal.recover_interrupted(sample_field)
    assert recovery.outcome == "needs-attention" and recovery.problems
    assert ledger.read(sample_field).entries == []
    assert (sample_field / "notes/q3-digest.md").read_bytes() == page
    approve_proposal(sample_field, DEDUPE)  # work goes on beside it
    assert [e.action for e in ledger.read(sample_field).entries] == [ledger.PROPOSAL_APPROVE]


def test_a_real_interrupted_change_still_recovers(sample_field: Path) -> None:
    from tests.test_proposals_crash import crash_apply

    before = (sample_field / "notes/q3-digest.md").read_bytes()
    assert crash_apply(sample_field, DEDUPE, "after-page-1").returncode == apply_journal.CRASH_EXIT_CODE
    (recovery,) = apply_journal.recover_interrupted(sample_field)
    assert recovery.outcome == "rolled-back"
    assert (sample_field / "notes/q3-digest.md").read_bytes() == before


# --------------------------------------------------------------------------- the ledger


def test_a_line_appended_by_someone_else_does_not_decide_a_proposal(sample_field: Path, capsys) -> None:
    path = ledger.ledger_path(sample_field)
    path.parent.mkdir(parents=True, exist_ok=True)
    ledger.append(
        sample_field,
        ledger.LedgerEntry(
            "2026-12-01T09:00:00Z", "maya", ledger.PROPOSAL_REJECT, "2026-11-19-consolidate-01", reason="real"
        ),
    )
    last = path.read_bytes().splitlines()[-1]
    forged = forged_decision()
    import hashlib

    forged["prev"] = hashlib.sha256(last).hexdigest()  # a correct chain link: only the key is missing
    forged["mac"] = "0" * 64
    with open(path, "ab") as handle:
        handle.write(json.dumps(forged).encode() + b"\n")
        handle.write(json.dumps(forged_decision(target="2026-11-28-expire-01")).encode() + b"\n")  # no mac at all
    read = ledger.read(sample_field)
    assert [e.target for e in read.entries] == ["2026-11-19-consolidate-01"]
    assert read.bad_lines == [2, 3]
    assert "ledger line 2 is ignored" in read.problems[0] and "not signed" in read.problems[1]
    code, data, _ = run_cli_json(["proposals", "list", sample_field], capsys)
    assert DEDUPE in [p["id"] for p in data["proposals"]]  # still waiting for review
    assert any("ledger line 2 is ignored" in problem for problem in data["problems"])
    code, out, _ = run_cli(["proposals", "list", sample_field], capsys)
    assert "ledger line 2 is ignored" in out


def test_a_removed_line_breaks_the_chain_visibly(sample_field: Path) -> None:
    for target in ("p-one", "p-two", "p-three"):
        ledger.append(sample_field, ledger.LedgerEntry("2026-12-01T09:00:00Z", "maya", ledger.PROPOSAL_REJECT, target))
    path = ledger.ledger_path(sample_field)
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + lines[2])  # someone deleted the second decision
    read = ledger.read(sample_field)
    assert [e.target for e in read.entries] == ["p-one", "p-three"]
    assert read.problems == ["ledger line 2: the line before it was changed or removed"]


def test_ledger_lines_written_before_signing_count_only_once_adopted(sample_field: Path) -> None:
    """Issue 40, item 5: an unsigned line (an older memtui's, or planted) decides nothing until a
    reviewer adopts it, re-signing it; it is reported meanwhile, never silently dropped."""
    path = ledger.ledger_path(sample_field)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(forged_decision(target="old-decision")) + "\n")  # an older memtui's line
    ledger.append(sample_field, ledger.LedgerEntry("2026-12-01T09:00:00Z", "maya", ledger.PROPOSAL_REJECT, "new"))
    read = ledger.read(sample_field)
    assert [e.target for e in read.entries] == ["new"]
    assert any("not signed" in problem for problem in read.problems), read.problems
    ledger.adopt(sample_field, [1])
    assert [e.target for e in ledger.read(sample_field).entries] == ["old-decision", "new"]


async def test_the_tui_says_a_forged_journal_needs_attention(sample_field: Path) -> None:
    from tests.helpers_tui import SIZE, make_app, wait_ready

    plant_journal(sample_field, committed_journal())
    app = make_app(sample_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        messages = [n.message for n in app._notifications]
    assert any("needs attention" in m and "not written by memtui" in m for m in messages), messages
    assert not any("rolled back" in m for m in messages)
    assert ledger.read(sample_field).entries == []
