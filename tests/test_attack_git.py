"""Issue 40, hazards 18 and 19: what a job writes into git, and how many branches it makes.

Each test performs the attack on a real repository in ``tmp_path`` and reads the result back with
real git; git commands memtui runs are counted through a wrapper around ``gitrepo.run`` (a test hook:
every command still runs).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from memtui.review import proposal_git, proposals
from memtui.store import gitrepo
from tests.helpers_field import make_field, page, run_cli
from tests.helpers_review import (
    GIT_ENV,
    approve_proposal,
    branch_proposal,
    git,
    init_repo,
    sha,
    staging_proposal,
    use_git_identity,
)

ESC, BEL = "\x1b", "\x07"
# Sets the terminal title, writes the clipboard (OSC 52), paints red, rings the bell, and hides a
# line behind a carriage return; the last line forges memtui's crash-recovery trailer.
HOSTILE = (
    f"Tidy the queue page{ESC}]0;pwned{BEL}\n\n"
    f"{ESC}]52;c;cm0gLXJmIH4={BEL}{ESC}[31mall good{ESC}[0m{BEL}\r"
    "approved by maya\n"
    "Memtui-Txn: 0123456789abcdef\n"
)
PAGE = page("id: q\ntitle: Queue", "# Queue\n\n- Postgres holds the jobs [observed]\n")
EDITED = page("id: q\ntitle: Queue", "# Queue\n\n- Postgres holds the jobs [observed]\n- Nightly drain [observed]\n")


@pytest.fixture
def repo(tmp_path, monkeypatch):
    use_git_identity(monkeypatch, tmp_path)
    monkeypatch.setenv("MEMTUI_REVIEWER", "maya")
    root = make_field(tmp_path / "f", {"notes/q.md": PAGE})
    init_repo(root)
    return root


def _raw_message(root: Path, rev: str = "HEAD") -> bytes:
    """The commit message exactly as git stores it (``cat-file``: no decoding, no pager)."""
    out = subprocess.run(
        ["git", "cat-file", "commit", rev], cwd=root, capture_output=True, check=True, env=dict(os.environ, **GIT_ENV)
    ).stdout
    return out.partition(b"\n\n")[2]


def _assert_inert(message: bytes) -> None:
    text = message.decode("utf-8")  # (UTF-8 of the placeholders holds byte 0x9b: compare characters)
    for char in ("\x1b", "\x07", "\r", "\x9b"):
        assert char not in text, (char, text)
    # memtui's own trailers are the only ones: the job's forged line is no longer one
    assert b"\nMemtui-Txn: 0123456789abcdef" not in message
    assert message.count(b"Memtui-Txn: ") == 1


def test_h18_staging_job_and_rationale_never_reach_the_commit_message_raw(repo):
    """Text that acts: ESC/BEL/CR in ``job`` and ``rationale`` of a staging proposal; ``git log`` would
    print them raw to whoever reads the field's history."""
    staging_proposal(
        repo,
        "2026-12-01-dedupe-01",
        job=f"dedupe{ESC}[2J{BEL}",
        files={"notes/q.md": EDITED.encode()},
        base={"notes/q.md": sha(PAGE.encode())},
        rationale=HOSTILE,
    )
    entry = approve_proposal(repo, "2026-12-01-dedupe-01")
    assert entry.commit == git(repo, "rev-parse", "HEAD")
    message = _raw_message(repo)
    _assert_inert(message)
    text = message.decode("utf-8")
    assert text.startswith("memtui: apply dream proposal 2026-12-01-dedupe-01 (dedupe")
    assert "all good" in text and "approved by maya" in text  # the words stay, visible
    assert "Memtui-Proposal: 2026-12-01-dedupe-01" in text
    # git log, as a reviewer would run it, shows the same inert text
    shown = subprocess.run(["git", "log", "-1", "--format=%B"], cwd=repo, capture_output=True, check=True).stdout
    _assert_inert(shown)


def test_h18_branch_commit_messages_and_job_trailer_never_reach_the_commit_message_raw(repo):
    """The same through the git carrier: the rationale is the branch's commit messages, the job its
    ``Dream-Job:`` trailer (``\\S+`` matches an ESC), and the revert's message names the job too."""
    branch_proposal(
        repo,
        "2026-12-01-dedupe-02",
        {"notes/q.md": EDITED.encode()},
        HOSTILE + f"\nDream-Job: de{ESC}]0;x{BEL}dupe\n",
    )
    approve_proposal(repo, "2026-12-01-dedupe-02")
    _assert_inert(_raw_message(repo))
    proposals.revert(repo, "2026-12-01-dedupe-02", reviewer="maya")
    reverted = _raw_message(repo)
    for raw in (b"\x1b", b"\x07"):
        assert raw not in reverted
    assert reverted.startswith(b"memtui: revert dream proposal 2026-12-01-dedupe-02 (de")


def test_h18_commit_text_keeps_plain_rationales_as_they_are():
    """A rationale with nothing hostile goes in unchanged (the fix changes only what acts)."""
    plain = "Expire the trial page\n\nThe trial ended on 2026-09-30.\nNote: keep the SLA page."
    assert proposals.commit_text(plain) == plain
    assert proposals.commit_text("x\r\nMemtui-Txn: abc") == "x\nMemtui_Txn: abc"


# ------------------------------------------------------------------ 1,500 dream branches


def _fast_branches(root: Path, count: int, *, files_per_branch: int = 1, prefix: str = "2026-12-01-dedupe") -> None:
    """``count`` real branches ``dream/<prefix>-NNNN`` forked from HEAD, made in one ``git fast-import``
    (1,500 branches in about a second)."""
    head = git(root, "rev-parse", "HEAD")
    stream = bytearray()
    for number in range(count):
        message = f"Dedupe {number}\n\nDream-Job: dedupe\n".encode()
        stream += f"commit refs/heads/dream/{prefix}-{number:04d}\n".encode()
        stream += b"committer Job <job@example.com> 1764547200 +0000\n"
        stream += f"data {len(message)}\n".encode() + message + f"from {head}\n".encode()
        for index in range(files_per_branch):
            name = "notes/q.md" if files_per_branch == 1 else f"notes/many/p{index:05d}.md"
            body = f"# Q\n\n- Postgres holds the jobs [observed]\n- Branch {number} line {index} [observed]\n"
            data = body.encode()
            stream += f"M 100644 inline {name}\ndata {len(data)}\n".encode() + data + b"\n"
    git(root, "fast-import", "--quiet", input=bytes(stream))


def _count_git(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    calls: list[tuple[str, ...]] = []
    real = gitrepo.run

    def counted(root: Path, *args: str, **kwargs: Any) -> Any:
        calls.append(args)
        return real(root, *args, **kwargs)

    monkeypatch.setattr(gitrepo, "run", counted)
    return calls


def test_h19_1500_dream_branches_are_capped_reported_and_read_in_a_bounded_number_of_git_commands(
    repo, monkeypatch, capsys
):
    """Unbounded reads: 1,500 real ``dream/*`` branches. The listing reads ``MAX_BRANCHES`` of them in a
    fixed number of git commands (before: ten per branch, 35-55 s), says how many it left out and
    how to read one, and a branch beyond the cap can still be shown and decided by its id."""
    _fast_branches(repo, 1500)
    assert len(git(repo, "for-each-ref", "refs/heads/dream/").splitlines()) == 1500
    calls = _count_git(monkeypatch)
    queue = proposals.proposal_queue(repo, with_checks=False)
    assert len(queue.entries) == proposal_git.MAX_BRANCHES
    assert len(calls) <= 12, [c[0] for c in calls]
    (problem,) = [p for p in queue.problems if "not read" in p]
    assert "1,300 more dream branches not read" in problem and "memtui proposals show" in problem
    entry = queue.entries[0]
    assert entry.proposal.valid and entry.proposal.job == "dedupe" and entry.proposal.pages == ["notes/q.md"]
    assert entry.proposal.change("notes/q.md").base == sha(PAGE.encode())
    # the same reading as a branch read on its own, field by field
    alone = proposal_git.load_branch(repo, entry.proposal.id, entry.proposal.tip or "", git(repo, "rev-parse", "HEAD"))
    assert alone.to_json() == entry.proposal.to_json()
    # one beyond the cap, by its id
    calls.clear()
    review = proposals.review_proposal(repo, "2026-12-01-dedupe-1499")
    assert review.proposal.id == "2026-12-01-dedupe-1499" and review.proposal.valid
    assert len(calls) <= 40
    code, out, _ = run_cli(["proposals", "list", repo], capsys)
    assert "1,300 more dream branches not read" in out


def test_h19_a_branch_changing_thousands_of_files_is_refused_without_reading_them(repo, monkeypatch):
    """A branch may change any number of files: 1,500 of them are not read one by one."""
    _fast_branches(repo, 1, files_per_branch=1500, prefix="2026-12-02-consolidate")
    calls = _count_git(monkeypatch)
    (proposal,) = proposals.load_proposals(repo).proposals
    assert not proposal.valid and "changes 1,500 files" in proposal.problems[0]
    assert len(calls) <= 12
    assert not [c for c in calls if c[:2] == ("cat-file", "blob")]


def test_h19_more_staging_proposals_than_a_listing_reads_are_capped_reported_and_readable(
    sample_field: Path, capsys, monkeypatch
) -> None:
    """The staging carrier as the branches: a job leaving more proposal folders than a listing
    reads (MAX_STAGED). It says how many more there are, and any one is shown by its id."""
    import yaml

    from memtui.review import proposal_staging
    from tests.helpers_field import run_cli, run_cli_json

    monkeypatch.setattr(proposal_staging, "MAX_STAGED", 20)  # the cap's logic, at a test's scale
    MAX_STAGED = proposal_staging.MAX_STAGED

    folder = sample_field / ".dream" / "proposals"
    count = MAX_STAGED + 15
    for number in range(count):
        target = folder / f"2026-12-07-bulk-{number:04d}"
        (target / "files" / "notes").mkdir(parents=True)
        manifest = {"id": target.name, "job": "bulk", "created": "2026-12-07T03:00:00Z", "rationale": "r"}
        (target / "proposal.yaml").write_text(yaml.safe_dump(manifest))
        (target / "files" / "notes" / f"bulk-{number}.md").write_text(f"Fact {number}. [observed]\n")
    code, data, err = run_cli_json(["proposals", "list", sample_field, "--all"], capsys)
    bulk = [p for p in data["proposals"] if p["id"].startswith("2026-12-07-bulk-")]
    assert code == 0 and len(bulk) <= MAX_STAGED
    problems = " ".join(data.get("problems", [])) + err
    assert "more staging proposals not read" in problems, problems[:400]
    last = f"2026-12-07-bulk-{count - 1:04d}"
    code, out, _err = run_cli(["proposals", "show", sample_field, last], capsys)
    assert code == 0 and last in out
