"""Git plumbing for fields that are git repositories.

memtui never checks a branch out and never runs a repository's hooks: every
command runs with ``-c core.hooksPath=/dev/null`` (no hook can be found there)
and ``-c core.fsmonitor=false`` (no fsmonitor program is started). Branches are
read with plumbing only (``for-each-ref``, ``merge-base``, ``diff-tree``,
``ls-tree``, ``cat-file``). The only writes are ``git add`` of the pages memtui
itself just wrote and ``git commit --only`` limited to those pages, so other
staged changes of the user stay staged and out of memtui's commit.

A field counts as a git field only when it *is* the top of the work tree; a
field that is a sub-folder of a larger repository is treated as a plain folder.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from memtui.errors import MemtuiError

SAFE_CONFIG = (
    "-c", "core.hooksPath=/dev/null",
    "-c", "core.fsmonitor=false",
    "-c", "core.pager=cat",
    "-c", "color.ui=false",
)
DREAM_REF_PREFIX = "refs/heads/dream/"
GIT_TIMEOUT = 60
ZERO_SHA = "0" * 40
MODE_FILE = "100644"
MODE_EXEC = "100755"
MODE_SYMLINK = "120000"
MODE_SUBMODULE = "160000"
MODE_TREE = "040000"


class GitError(MemtuiError):
    """A git command failed."""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_OPTIONAL_LOCKS": "0",
            "LC_ALL": "C",
            "GIT_PAGER": "cat",
            "GIT_EDITOR": "true",
        }
    )
    return env


def git_available() -> bool:
    return shutil.which("git") is not None


def run(root: Path, *args: str, input: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``git <SAFE_CONFIG> args`` in ``root``; stdout/stderr are bytes."""
    try:
        result = subprocess.run(
            ["git", *SAFE_CONFIG, *args],
            cwd=os.fspath(root),
            input=input,
            capture_output=True,
            env=_env(),
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except FileNotFoundError:
        raise GitError("git is not installed", "install git to use branch proposals") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took longer than {GIT_TIMEOUT} s", "is the repository locked?") from None
    if check and result.returncode != 0:
        message = result.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(
            f"git {args[0]} failed: {message[-1] if message else 'exit ' + str(result.returncode)}",
            "check the repository with git status",
        )
    return result


def _out(result: subprocess.CompletedProcess) -> str:
    return result.stdout.decode("utf-8", "surrogateescape").strip()


def is_field_repo(root: Path) -> bool:
    """True when ``root`` is the top of a git work tree (and git is installed)."""
    if not git_available() or not Path(root).is_dir():
        return False
    try:
        result = run(root, "rev-parse", "--show-toplevel", check=False)
    except GitError:
        return False
    if result.returncode != 0:
        return False
    top = _out(result)
    return bool(top) and os.path.realpath(top) == os.path.realpath(root)


def head(root: Path) -> str | None:
    """The commit HEAD points at, or None for a repository without commits."""
    result = run(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
    return _out(result) or None if result.returncode == 0 else None


def dream_branches(root: Path) -> list[tuple[str, str]]:
    """``(id, commit)`` for every branch ``dream/<id>``."""
    result = run(root, "for-each-ref", "--format=%(refname)%00%(objectname)", DREAM_REF_PREFIX)
    out = []
    for line in result.stdout.decode("utf-8", "surrogateescape").splitlines():
        if "\x00" not in line:
            continue
        ref, sha = line.split("\x00", 1)
        out.append((ref[len(DREAM_REF_PREFIX):], sha.strip()))
    return sorted(out)


def merge_base(root: Path, a: str, b: str) -> str | None:
    result = run(root, "merge-base", a, b, check=False)
    return _out(result) or None if result.returncode == 0 else None


@dataclass(frozen=True, slots=True)
class TreeChange:
    """One path changed between two commits (``git diff-tree --raw``)."""

    status: str  # A added, M modified, D deleted, T type changed
    old_mode: str
    new_mode: str
    old_blob: str
    new_blob: str
    path: str  # raw path from git, decoded with surrogateescape


def diff_tree(root: Path, old: str, new: str) -> list[TreeChange]:
    """Every path that differs between two commits (recursive, no rename detection)."""
    result = run(root, "diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-commit-id", old, new)
    fields = result.stdout.split(b"\x00")
    changes: list[TreeChange] = []
    index = 0
    while index + 1 < len(fields):
        meta = fields[index].decode("ascii", "replace")
        path = fields[index + 1].decode("utf-8", "surrogateescape")
        index += 2
        if not meta.startswith(":"):
            continue
        parts = meta[1:].split(" ")
        if len(parts) < 5:
            continue
        old_mode, new_mode, old_blob, new_blob, status = parts[:5]
        changes.append(TreeChange(status[:1], old_mode, new_mode, old_blob, new_blob, path))
    return changes


def cat_blob(root: Path, blob: str) -> bytes:
    """The exact bytes of a blob (no filters, no conversion)."""
    return run(root, "cat-file", "blob", blob).stdout


def entry_at(root: Path, commit: str, path: str) -> tuple[str, str] | None:
    """``(mode, blob)`` of ``path`` in ``commit``, or None when it is not there."""
    result = run(root, "ls-tree", "-z", commit, "--", path, check=False)
    if result.returncode != 0:
        return None
    for item in result.stdout.split(b"\x00"):
        if not item:
            continue
        meta, _, name = item.partition(b"\t")
        if name.decode("utf-8", "surrogateescape") != path:
            continue
        mode, kind, sha = meta.decode("ascii", "replace").split(" ")[:3]
        if kind == "blob":
            return mode, sha
    return None


def blob_at(root: Path, commit: str, path: str) -> bytes | None:
    """The bytes of ``path`` in ``commit`` (regular files only), or None."""
    found = entry_at(root, commit, path)
    if found is None or found[0] not in (MODE_FILE, MODE_EXEC):
        return None
    return cat_blob(root, found[1])


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    author: str
    author_date: str  # ISO 8601 UTC
    message: str


def _parse_commit(sha: str, raw: bytes) -> Commit:
    header, _, message = raw.partition(b"\n\n")
    author = ""
    date = ""
    for line in header.decode("utf-8", "replace").split("\n"):
        if line.startswith("author "):
            rest = line[len("author "):]
            name, _, tail = rest.rpartition(" <")
            author = name
            bits = tail.split("> ", 1)[-1].split(" ")
            try:
                stamp = _dt.datetime.fromtimestamp(int(bits[0]), _dt.timezone.utc)
                date = stamp.strftime("%Y-%m-%dT%H:%M:%SZ")
            except (ValueError, IndexError, OverflowError, OSError):
                date = ""
    return Commit(sha, author, date, message.decode("utf-8", "replace"))


def read_commit(root: Path, sha: str) -> Commit:
    return _parse_commit(sha, run(root, "cat-file", "commit", sha).stdout)


def commits_between(root: Path, base: str, tip: str, *, limit: int = 200) -> list[Commit]:
    """Commits reachable from ``tip`` but not ``base``, oldest first (at most ``limit``)."""
    result = run(root, "rev-list", "--reverse", f"--max-count={limit}", tip, f"^{base}")
    return [read_commit(root, sha) for sha in _out(result).split()]


def path_history(root: Path, path: str, *, limit: int = 200) -> list[str]:
    """Commits on HEAD that touched ``path``, newest first (to find an old version by hash)."""
    if head(root) is None:
        return []
    result = run(root, "rev-list", f"--max-count={limit}", "HEAD", "--", path, check=False)
    return _out(result).split() if result.returncode == 0 else []


def tracked(root: Path, paths: list[str]) -> set[str]:
    """Which of ``paths`` git knows (in the index)."""
    if not paths:
        return set()
    result = run(root, "ls-files", "-z", "--cached", "--", *paths)
    return {p.decode("utf-8", "surrogateescape") for p in result.stdout.split(b"\x00") if p}


def ignored(root: Path, paths: list[str]) -> set[str]:
    """Which of ``paths`` .gitignore rules exclude."""
    if not paths:
        return set()
    result = run(root, "check-ignore", "-z", "--", *paths, check=False)
    return {p.decode("utf-8", "surrogateescape") for p in result.stdout.split(b"\x00") if p}


def commit_paths(root: Path, paths: list[str], message: str) -> str | None:
    """Commit exactly ``paths`` as they are in the work tree now; return the new commit.

    Pages that exist are added first (``git add``, never ``-f``: ignored pages are
    left out); deleted pages that git tracks are committed as deletions. Other
    staged changes are not part of the commit. Returns None when nothing among
    ``paths`` differs from HEAD.
    """
    known = tracked(root, paths)
    present = [p for p in paths if os.path.lexists(os.path.join(root, *p.split("/")))]
    skip = ignored(root, present) - known
    to_add = [p for p in present if p not in skip]
    if to_add:
        run(root, "add", "--", *to_add)
    candidates = [p for p in paths if p in known or p in to_add]
    if not candidates:
        return None
    if head(root) is not None:
        diff = run(root, "diff", "--no-ext-diff", "--name-only", "-z", "HEAD", "--", *candidates, check=False)
        if diff.returncode == 0 and not diff.stdout.strip(b"\x00"):
            return None  # the work tree already matches HEAD for these pages
    run(root, "commit", "--only", "--no-verify", "--quiet", "-m", message, "--", *candidates)
    return head(root)


def unstage(root: Path, paths: list[str]) -> None:
    """Reset the index entries of ``paths`` to HEAD (undo a ``git add`` memtui made)."""
    if not paths:
        return
    if head(root) is None:
        run(root, "rm", "--cached", "-q", "--ignore-unmatch", "--", *paths, check=False)
    else:
        run(root, "reset", "-q", "HEAD", "--", *paths, check=False)


def previous_blobs(root: Path, paths: dict[str, object], *, commits: int = 1000) -> dict[str, bytes]:
    """Each path's previous revision: the version before the one on disk.

    When the file on disk differs from HEAD, that is HEAD's version; when it is HEAD's,
    the version before the last commit that changed it. Plumbing only, no filters
    (``hash-object --no-filters``), at most ``commits`` commits looked at; paths git
    does not track, or with no earlier version, are left out.
    """
    if not paths or head(root) is None:
        return {}
    listing = run(root, "ls-tree", "-r", "-z", "HEAD").stdout
    at_head: dict[str, str] = {}
    for item in listing.split(b"\x00"):
        meta, _, name = item.partition(b"\t")
        if not name:
            continue
        mode, kind, sha = meta.decode("ascii", "replace").split(" ")[:3]
        if kind == "blob" and mode in (MODE_FILE, MODE_EXEC):
            at_head[name.decode("utf-8", "surrogateescape")] = sha
    tracked_paths = [p for p in paths if p in at_head]
    if not tracked_paths:
        return {}
    hashed = run(
        root, "hash-object", "--no-filters", "--stdin-paths",
        input="\n".join(tracked_paths).encode("utf-8", "surrogateescape") + b"\n",
    ).stdout.decode("ascii", "replace").split()
    specs: dict[str, str] = {}
    unchanged: list[str] = []
    for path, blob in zip(tracked_paths, hashed):
        if blob != at_head[path]:
            specs[path] = at_head[path]
        else:
            unchanged.append(path)
    if unchanged:
        wanted = set(unchanged)
        log = run(root, "log", f"--max-count={commits}", "--no-renames", "--format=%x00%H", "--name-only", "-z",
                  "HEAD").stdout.decode("utf-8", "surrogateescape")
        commit = ""
        for token in log.split("\x00"):
            token = token.strip("\n")
            if not token:
                continue
            if len(token) == 40 and all(c in "0123456789abcdef" for c in token):
                commit = token
                continue
            if token in wanted and commit:
                specs[token] = f"{commit}^:{token}"
                wanted.discard(token)
            if not wanted:
                break
    if not specs:
        return {}
    order = list(specs)
    request = "\n".join(specs[p] for p in order).encode("utf-8", "surrogateescape") + b"\n"
    output = run(root, "cat-file", "--batch", input=request).stdout
    out: dict[str, bytes] = {}
    pos = 0
    for path in order:
        end = output.find(b"\n", pos)
        if end < 0:
            break
        header = output[pos:end].split(b" ")
        pos = end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue  # "missing": no earlier version
        size = int(header[2])
        out[path] = output[pos : pos + size]
        pos += size + 1
    return out
