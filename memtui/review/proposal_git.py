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

A listing reads at most ``MAX_BRANCHES`` branches (the rest are counted in its
problems, each still readable by id), all of them together in a fixed number of git
commands (``load_branches``), at most ``MAX_PAGES_PER_BRANCH`` files per branch and
``MAX_LISTING_BYTES`` of page versions in all.

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
from memtui.textsafety import one_line, plural

JOB_TRAILER_RE = re.compile(r"^(?:Dream-Job|Job):[ \t]*(\S+)[ \t]*$", re.IGNORECASE | re.MULTILINE)
EVIDENCE_TRAILER_RE = re.compile(r"^(?:Dream-Evidence|Evidence):[ \t]*(.+?)[ \t]*$", re.IGNORECASE | re.MULTILINE)
ID_JOB_RE = re.compile(r"^\d{4}-\d{2}-\d{2}-([a-z][a-z_]*)-\d+$")
_REGULAR = (gitrepo.MODE_FILE, gitrepo.MODE_EXEC)
_MODE_NAMES = {gitrepo.MODE_SYMLINK: "a symlink", gitrepo.MODE_SUBMODULE: "a submodule", gitrepo.MODE_TREE: "a folder"}


MAX_BRANCHES = 200  # branches a listing reads; the rest are counted and named, each readable alone
COMMITS_PER_BRANCH = 200  # commit messages read per branch (its newest)
MAX_PAGES_PER_BRANCH = 1000  # files a branch may change
MAX_LISTING_BYTES = 256 * 1024 * 1024  # page versions read for one listing, every branch together


def load_git(
    root: Path, *, also: str | None = None, max_branches: int = MAX_BRANCHES
) -> tuple[list[Proposal], list[str]]:
    """Every ``dream/<id>`` branch as a proposal (none when the field is not a repository), at
    most ``max_branches`` of them (by name) plus ``also`` (a branch asked for by id).

    Why (issue 40, hazard 19): 1,500 branches took 35-55 s to list, about ten git commands per
    branch and page. Branches beyond the cap are reported in the problems (how many, the first
    names, how to read one); those read are read together in a fixed number of git commands
    (``load_branches``), whatever their number or the number of files they change.
    """
    root = Path(root)
    if not gitrepo.is_field_repo(root):
        return [], []
    try:
        branches = gitrepo.dream_branches(root)
        head = gitrepo.head(root)
    except MemtuiError as exc:
        return [], [exc.message]
    chosen = branches[: max(max_branches, 0)]
    rest = branches[len(chosen) :]
    problems = []
    if rest:
        named = ", ".join(one_line(name, 60) for name, _ in rest[:3])
        problems.append(
            f"{plural(len(rest), 'more dream branch', 'more dream branches')} not read "
            f"(a listing reads {max_branches:,}; the first: {named}); "
            "read one with: memtui proposals show FIELD ID"
        )
        chosen += [item for item in rest if item[0] == also]
    return load_branches(root, chosen, head), problems


def load_branches(root: Path, branches: list[tuple[str, str]], head: str | None) -> list[Proposal]:
    """The proposals of several branches, read together: one ``rev-list`` for every branch's commits
    (its merge base is the parent where its own commits end), one ``cat-file --batch`` for their
    messages, one ``diff-tree --stdin`` for their changes, one ``--batch-check`` and one ``--batch``
    for the page versions. A branch whose history does not fit that (more commits than the walk
    reads, a base that is not one commit) is read alone (``load_branch``)."""
    if not branches:
        return []
    if head is None:
        return [load_branch(root, proposal_id, tip, head) for proposal_id, tip in branches]
    try:
        return _load_together(root, branches, head)
    except MemtuiError:
        return [load_branch(root, proposal_id, tip, head) for proposal_id, tip in branches]


def _load_together(root: Path, branches: list[tuple[str, str]], head: str) -> list[Proposal]:
    limit = len(branches) * COMMITS_PER_BRANCH + 1
    listed = gitrepo.rev_list_parents(root, sorted({tip for _, tip in branches}), exclude=head, limit=limit)
    complete = len(listed) < limit  # else some branch has more commits than the walk reads
    parents = dict(listed)
    order = {sha: index for index, (sha, _) in enumerate(listed)}
    out: dict[str, Proposal] = {}
    alone: list[tuple[str, str]] = []
    plans: list[tuple[Proposal, list[str]]] = []
    for proposal_id, tip in branches:
        proposal = _new_proposal(proposal_id, tip)
        out[proposal_id] = proposal
        if tip not in parents:
            if complete or gitrepo.merge_base(root, head, tip) == tip:
                proposal.errors.append("the branch has no commit beyond HEAD (already merged?)")
            else:
                alone.append((proposal_id, tip))
            continue
        own: set[str] = set()
        bases: set[str] = set()
        todo = [tip]
        while todo:
            sha = todo.pop()
            if sha in own:
                continue
            own.add(sha)
            for parent in parents[sha]:
                if parent in parents:
                    todo.append(parent)
                else:
                    bases.add(parent)  # reachable from HEAD: where the branch's own commits end
        if not complete or len(bases) > 1:
            alone.append((proposal_id, tip))
            continue
        if not bases:
            proposal.errors.append(f"branch dream/{proposal_id} shares no history with HEAD")
            continue
        proposal.base_commit = next(iter(bases))
        newest = sorted(own, key=order.__getitem__)[:COMMITS_PER_BRANCH]
        plans.append((proposal, newest[::-1]))
    commits = gitrepo.read_commits(root, sorted({sha for _, shas in plans for sha in shas}))
    ready: list[Proposal] = []
    for proposal, shas in plans:
        _read_messages(proposal, [commits[sha] for sha in shas if sha in commits])
        ready.append(proposal)
    sections = gitrepo.diff_trees(root, [(p.base_commit or "", p.tip or "") for p in ready])
    if len(sections) != len(ready):
        raise gitrepo.GitError("git diff-tree gave another number of results than asked", "")
    changed: list[tuple[Proposal, list[gitrepo.TreeChange]]] = []
    for proposal, section in zip(ready, sections):
        if len(section) > MAX_PAGES_PER_BRANCH:
            proposal.errors.append(
                f"the branch changes {len(section):,} files; a proposal may change at most {MAX_PAGES_PER_BRANCH:,}"
            )
            continue
        changed.append((proposal, section))
    _read_pages(root, changed)
    for proposal in ready:
        if not proposal.changes and not proposal.errors:
            proposal.errors.append("the branch changes no page")
        proposal.changes.sort(key=lambda c: c.path)
        proposal.refresh(root)
    for proposal_id, tip in alone:
        out[proposal_id] = load_branch(root, proposal_id, tip, head)
    return [out[proposal_id] for proposal_id, _ in branches if proposal_id in out]


def _read_pages(root: Path, changed: list[tuple[Proposal, list[gitrepo.TreeChange]]]) -> None:
    """Every branch's page changes, their versions read in two commands within ``MAX_LISTING_BYTES``."""
    wanted: list[str] = []
    for _, section in changed:
        for change in section:
            for blob in (change.old_blob, change.new_blob):
                if blob.strip("0"):
                    wanted.append(blob)
    sizes = gitrepo.object_sizes(root, sorted(set(wanted)))
    budget = MAX_LISTING_BYTES
    read: list[str] = []
    planned: list[tuple[Proposal, list[gitrepo.TreeChange]]] = []
    for proposal, section in changed:
        blobs = {b for c in section for b in (c.old_blob, c.new_blob) if b in sizes and sizes[b][0] == "blob"}
        small = {b for b in blobs if sizes[b][1] <= MAX_PROPOSED_BYTES}
        total = sum(sizes[b][1] for b in small)
        if total > budget:
            proposal.errors.append(
                f"its pages hold {total:,} bytes, more than a listing reads; read it alone with: memtui proposals show"
            )
            continue
        budget -= total
        read.extend(small)
        planned.append((proposal, section))
    data = gitrepo.read_objects(root, sorted(set(read)))
    for proposal, section in planned:
        for change in section:
            proposal.changes.append(_page_change_from(root, change, sizes, data))


def _new_proposal(proposal_id: str, tip: str) -> Proposal:
    proposal = Proposal(id=proposal_id, carrier=CARRIER_GIT, location=f"dream/{proposal_id}", tip=tip)
    problem = id_problem(proposal_id)
    if problem:
        proposal.errors.append(problem)
    match = ID_JOB_RE.match(proposal_id)
    if match:
        proposal.job = match.group(1)
    return proposal


def load_branch(root: Path, proposal_id: str, tip: str, head: str | None) -> Proposal:
    """One branch read on its own (about ten git commands per page: the path for a branch whose
    history the batched walk cannot settle)."""
    proposal = _new_proposal(proposal_id, tip)
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


def _page_problem(root: Path, change: gitrepo.TreeChange) -> tuple[str, str | None]:
    """The action of a changed path and why memtui refuses it (None: accepted)."""
    path = change.path
    problem = page_path_problem(root, path)
    if change.status == "D":
        action = DELETE
    elif change.status == "A":
        action = CREATE
    else:
        action = MODIFY
    if problem is None:
        for mode in (change.old_mode, change.new_mode):
            if mode in _MODE_NAMES:
                problem = f"{path}: the branch makes it {_MODE_NAMES[mode]}; only regular files are accepted"
                break
        if problem is None and change.status not in ("A", "M", "D"):
            problem = f"{path}: unsupported change type {change.status} (only add, modify, delete)"
    return action, problem


def _page_change(root: Path, proposal: Proposal, base: str, change: gitrepo.TreeChange) -> PageChange:
    path = change.path
    action, problem = _page_problem(root, change)
    base_hash = None
    proposed = None
    try:
        if action != CREATE and change.old_mode in _REGULAR:
            old = gitrepo.blob_at(root, base, path, max_bytes=MAX_PROPOSED_BYTES)
            base_hash = sha256_bytes(old) if old is not None else None
        if action != DELETE and problem is None:
            proposed = gitrepo.cat_blob(root, change.new_blob, max_bytes=MAX_PROPOSED_BYTES)
    except gitrepo.BlobTooLarge as exc:  # the size is asked first: such a blob is never read
        problem = problem or f"{path}: {exc.size:,} bytes, too large for a page"
        proposed = None
    return PageChange(path, action, base_hash, proposed, problem=problem)


def _page_change_from(
    root: Path,
    change: gitrepo.TreeChange,
    sizes: dict[str, tuple[str, int]],
    data: dict[str, tuple[str, bytes]],
) -> PageChange:
    """``_page_change`` from versions read in a batch (``_read_pages``): the same actions, problems
    and hashes, no git command of its own."""
    path = change.path
    action, problem = _page_problem(root, change)
    base_hash = None
    proposed = None

    def version(blob: str) -> bytes | None:
        nonlocal problem
        size = sizes.get(blob, ("", 0))[1]
        if size > MAX_PROPOSED_BYTES:  # the size was asked first: such a blob is never read
            problem = problem or f"{path}: {size:,} bytes, too large for a page"
            return None
        found = data.get(blob)
        return found[1] if found is not None and found[0] == "blob" else None

    if action != CREATE and change.old_mode in _REGULAR:
        old = version(change.old_blob)
        base_hash = sha256_bytes(old) if old is not None else None
    if action != DELETE and problem is None:
        proposed = version(change.new_blob)
        if proposed is None and problem is None:
            problem = f"{path}: git has no blob {change.new_blob[:12]}"
    if problem is not None:
        proposed = None
    return PageChange(path, action, base_hash, proposed, problem=problem)
