"""Carrier (b): git branches ``dream/<id>`` in a field that is a git repository.

A job commits its page edits on a branch ``dream/<id>`` forked from the field's
HEAD; memtui reads it with plumbing only (never a checkout, hooks disabled):

- the *base* is ``git merge-base HEAD dream/<id>``; each changed page's base
  hash is the sha256 of its bytes at the base (a page added on the branch has
  no base);
- the changes are ``git diff-tree -r <base> dream/<id>``: added and modified
  regular files become new versions, deleted files are pages to retire;
- the rationale is the branch's commit messages, oldest first; a trailer
  ``Dream-Job: <kind>`` names the job (else the id's ``YYYY-MM-DD-<job>-NN``
  pattern does), ``Evidence: <ref>`` trailers list the evidence; ``created`` is
  the author date of the branch's first commit.

Refused (the proposal is invalid): paths that are not ``*.md``, anything under
``sessions/``, ``.git`` or memtui's folders, symlinks (mode 120000),
submodules (160000), type changes, and paths that leave the field.
"""

from __future__ import annotations

import re
from pathlib import Path

from memtui.errors import MemtuiError
from memtui.review.proposal_model import (
    CARRIER_GIT,
    CREATE,
    DELETE,
    MAX_PROPOSED_BYTES,
    MODIFY,
    PageChange,
    Proposal,
    id_problem,
    page_path_problem,
)
from memtui.store import gitrepo
from memtui.store.files import sha256_bytes

JOB_TRAILER_RE = re.compile(r"^(?:Dream-Job|Job):[ \t]*(\S+)[ \t]*$", re.IGNORECASE | re.MULTILINE)
EVIDENCE_TRAILER_RE = re.compile(r"^(?:Dream-Evidence|Evidence):[ \t]*(.+?)[ \t]*$", re.IGNORECASE | re.MULTILINE)
ID_JOB_RE = re.compile(r"^\d{4}-\d{2}-\d{2}-([a-z][a-z_]*)-\d+$")
_REGULAR = (gitrepo.MODE_FILE, gitrepo.MODE_EXEC)
_MODE_NAMES = {gitrepo.MODE_SYMLINK: "a symlink", gitrepo.MODE_SUBMODULE: "a submodule", gitrepo.MODE_TREE: "a folder"}


def load_git(root: Path) -> tuple[list[Proposal], list[str]]:
    """Every ``dream/<id>`` branch as a proposal (none when the field is not a repository)."""
    root = Path(root)
    if not gitrepo.is_field_repo(root):
        return [], []
    try:
        branches = gitrepo.dream_branches(root)
        head = gitrepo.head(root)
    except MemtuiError as exc:
        return [], [exc.message]
    return [load_branch(root, proposal_id, tip, head) for proposal_id, tip in branches], []


def load_branch(root: Path, proposal_id: str, tip: str, head: str | None) -> Proposal:
    proposal = Proposal(id=proposal_id, carrier=CARRIER_GIT, location=f"dream/{proposal_id}", tip=tip)
    problem = id_problem(proposal_id)
    if problem:
        proposal.errors.append(problem)
    match = ID_JOB_RE.match(proposal_id)
    if match:
        proposal.job = match.group(1)
    if head is None:
        proposal.errors.append("the repository has no commit on HEAD to compare the branch with")
        return proposal
    try:
        base = gitrepo.merge_base(root, head, tip)
        if base is None:
            proposal.errors.append(f"branch dream/{proposal_id} shares no history with HEAD")
            return proposal
        proposal.base_commit = base
        commits = gitrepo.commits_between(root, base, tip)
        _read_messages(proposal, commits)
        if not commits:
            proposal.errors.append("the branch has no commit beyond HEAD (already merged?)")
            return proposal
        for change in gitrepo.diff_tree(root, base, tip):
            proposal.changes.append(_page_change(root, proposal, base, change))
    except MemtuiError as exc:
        proposal.errors.append(exc.message)
        return proposal
    if not proposal.changes:
        proposal.errors.append("the branch changes no page")
    proposal.changes.sort(key=lambda c: c.path)
    proposal.refresh(root)
    return proposal


def _read_messages(proposal: Proposal, commits: list[gitrepo.Commit]) -> None:
    messages = []
    for commit in commits:
        job = JOB_TRAILER_RE.search(commit.message)
        if job:
            proposal.job = job.group(1)
        proposal.evidence.extend(m.group(1) for m in EVIDENCE_TRAILER_RE.finditer(commit.message))
        text = EVIDENCE_TRAILER_RE.sub("", JOB_TRAILER_RE.sub("", commit.message)).strip()
        if text:
            messages.append(text)
    proposal.rationale = "\n\n".join(messages)
    if commits:
        proposal.created = commits[0].author_date or None
    if proposal.job == "unknown":
        proposal.warnings.append(
            "no job named (add a 'Dream-Job: <kind>' trailer or name the branch YYYY-MM-DD-<job>-NN)"
        )


def _page_change(root: Path, proposal: Proposal, base: str, change: gitrepo.TreeChange) -> PageChange:
    path = change.path
    problem = page_path_problem(root, path)
    old_mode, new_mode = change.old_mode, change.new_mode
    if change.status == "D":
        action = DELETE
    elif change.status == "A":
        action = CREATE
    else:
        action = MODIFY
    if problem is None:
        for mode in (old_mode, new_mode):
            if mode in _MODE_NAMES:
                problem = f"{path}: the branch makes it {_MODE_NAMES[mode]}; only regular files are accepted"
                break
        if problem is None and change.status not in ("A", "M", "D"):
            problem = f"{path}: unsupported change type {change.status} (only add, modify, delete)"
    base_hash = None
    proposed = None
    try:
        if action != CREATE and old_mode in _REGULAR:
            old = gitrepo.blob_at(root, base, path, max_bytes=MAX_PROPOSED_BYTES)
            base_hash = sha256_bytes(old) if old is not None else None
        if action != DELETE and problem is None:
            proposed = gitrepo.cat_blob(root, change.new_blob, max_bytes=MAX_PROPOSED_BYTES)
    except gitrepo.BlobTooLarge as exc:  # the size is asked first: such a blob is never read
        problem = problem or f"{path}: {exc.size:,} bytes, too large for a page"
        proposed = None
    return PageChange(path, action, base_hash, proposed, problem=problem)
