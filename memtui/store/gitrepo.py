"""Git plumbing for fields that are git repositories.

A field's ``.git/config`` is as hostile as its pages: it can name programs
(``filter.<x>.clean``/``process`` activated by a ``.gitattributes``,
``gpg.program`` with ``commit.gpgSign``, ``core.fsmonitor``, hooks, external
diff and textconv drivers). memtui therefore runs only git commands that start
none of them:

- every command runs with ``-c core.hooksPath=/dev/null`` (no hook can be found
  there), ``-c core.fsmonitor=false`` and signing turned off;
- branches are read with plumbing only (``for-each-ref``, ``merge-base``,
  ``diff-tree``, ``ls-tree``, ``cat-file``), which never reads the work tree;
- a commit is built with plumbing too (``commit_paths``): memtui reads each
  page's bytes itself, stores them with ``hash-object --no-filters`` into a
  temporary index started from HEAD, then ``write-tree``, ``commit-tree
  --no-gpg-sign`` and ``update-ref`` (refused if HEAD moved meanwhile). No
  command of these reads the work tree, so no filter runs and nothing signs.
  The user's other staged changes stay staged and out of memtui's commit.

A field counts as a git field only when ``FIELD/.git`` is a real folder (not a
symlink, not a ``gitdir:`` file pointing at another repository, not sharing
another repository's data through ``commondir``) holding a repository; every
command is pinned to it with ``GIT_DIR`` and ``GIT_WORK_TREE``, so neither
discovery nor ``core.worktree`` can lead git elsewhere. A field that is a
sub-folder of a larger repository is treated as a plain folder.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memtui.errors import MemtuiError
from memtui.store.files import read_bytes

SAFE_CONFIG = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.pager=cat",
    "-c",
    "color.ui=false",
    "-c",
    "commit.gpgSign=false",
    "-c",
    "tag.gpgSign=false",
)
# Variables that would point git at another repository, index or object store.
_LOCATION_VARS = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
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


class BlobTooLarge(GitError):
    """A blob is larger than the caller is willing to read."""

    def __init__(self, message: str, hint: str = "", *, size: int = 0) -> None:
        super().__init__(message, hint)
        self.size = size


def _env(root: Path | None, extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in _LOCATION_VARS}
    if root is not None:
        env["GIT_DIR"] = os.path.join(os.path.abspath(root), ".git")
        env["GIT_WORK_TREE"] = os.path.abspath(root)
    env.update(extra or {})
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


def run(
    root: Path,
    *args: str,
    input: bytes | None = None,
    check: bool = True,
    env: dict[str, str] | None = None,
    repository: bool = True,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git <SAFE_CONFIG> args`` in ``root``; stdout/stderr are bytes.

    The command is pinned to ``root/.git`` (``repository=False``: to no
    repository at all, for reading the user's own configuration).
    """
    try:
        result = subprocess.run(
            ["git", *SAFE_CONFIG, *args],
            cwd=os.fspath(root),
            input=input,
            capture_output=True,
            env=_env(root if repository else None, env),
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


def _out(result: subprocess.CompletedProcess[bytes]) -> str:
    return result.stdout.decode("utf-8", "surrogateescape").strip()


def git_dir_problem(root: Path) -> str | None:
    """Why ``root/.git`` is not a repository memtui may use, or None when it is a real folder.

    A ``.git`` file (``gitdir: /elsewhere``), a symlink, or a folder whose
    ``commondir`` shares another repository's refs and objects would make memtui
    read that repository's branches and commit into it.
    """
    path = os.path.join(os.fspath(root), ".git")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "the field has no .git folder"
    except OSError as exc:
        return f"cannot read .git: {exc.strerror or exc}"
    if stat.S_ISLNK(st.st_mode):
        return ".git is a symlink (to another repository?): not used"
    if not stat.S_ISDIR(st.st_mode):
        return ".git is a file pointing at another repository (gitdir:): not used"
    if os.path.lexists(os.path.join(path, "commondir")):
        return ".git shares another repository's data (commondir): not used"
    return None


def is_field_repo(root: Path) -> bool:
    """True when ``root/.git`` is a real repository folder (and git is installed).

    A field inside a larger repository (no ``.git`` of its own) is not a git field.
    """
    if not git_available() or not Path(root).is_dir() or git_dir_problem(root) is not None:
        return False
    try:
        result = run(root, "rev-parse", "--git-dir", check=False)
    except GitError:
        return False
    return result.returncode == 0


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
        out.append((ref[len(DREAM_REF_PREFIX) :], sha.strip()))
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


def blob_size(root: Path, blob: str) -> int:
    """The size of a blob in bytes, without reading it."""
    try:
        return int(_out(run(root, "cat-file", "-s", blob)))
    except ValueError:
        raise GitError(f"git cat-file gave no size for {blob[:12]}", "check the repository with git fsck") from None


def cat_blob(root: Path, blob: str, *, max_bytes: int | None = None) -> bytes:
    """The exact bytes of a blob (no filters, no conversion).

    With ``max_bytes`` the size is asked first and a bigger blob is never read
    (a 3 GB blob on a branch must not be loaded to find out it is too big).
    """
    if max_bytes is not None:
        size = blob_size(root, blob)
        if size > max_bytes:
            raise BlobTooLarge(
                f"{size:,} bytes, too large for a page", f"pages over {max_bytes:,} bytes are not read", size=size
            )
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


def blob_at(root: Path, commit: str, path: str, *, max_bytes: int | None = None) -> bytes | None:
    """The bytes of ``path`` in ``commit`` (regular files only), or None.

    ``max_bytes``: see ``cat_blob`` (raises ``BlobTooLarge``).
    """
    found = entry_at(root, commit, path)
    if found is None or found[0] not in (MODE_FILE, MODE_EXEC):
        return None
    return cat_blob(root, found[1], max_bytes=max_bytes)


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
            rest = line[len("author ") :]
            name, _, tail = rest.rpartition(" <")
            author = name
            bits = tail.split("> ", 1)[-1].split(" ")
            try:
                stamp = _dt.datetime.fromtimestamp(int(bits[0]), _dt.UTC)
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


def user_name(root: Path | None) -> str | None:
    """``user.name`` as git would use it in the field ``root`` (its own setting counts), or None."""
    repository = root is not None and is_field_repo(root)
    folder = root if repository and root is not None else Path(os.path.abspath(os.sep))
    try:
        result = run(folder, "config", "user.name", check=False, repository=repository)
    except GitError:
        return None
    name = result.stdout.decode("utf-8", "replace").strip()
    return name if result.returncode == 0 and name else None


def _page_blob(root: Path, path: str) -> tuple[str, str] | None:
    """``(mode, blob)`` for the page's bytes as they are on disk now, stored with no filter; None if absent.

    memtui reads the file itself (never following a symlink) and hands git the
    bytes, so no clean filter or end-of-line conversion of the repository runs:
    the commit holds exactly the bytes memtui wrote.
    """
    try:
        result = read_bytes(os.path.join(os.fspath(root), *path.split("/")))
    except OSError:
        return None  # a symlink, a folder, unreadable: not a page memtui commits
    if result is None:
        return None
    data, st = result
    blob = _out(run(root, "hash-object", "-w", "--no-filters", "--stdin", input=data))
    return (MODE_EXEC if st.st_mode & stat.S_IXUSR else MODE_FILE), blob


def _index_info(entries: dict[str, tuple[str, str] | None]) -> bytes:
    """``update-index -z --index-info`` input: set each path to (mode, blob), or remove it (None)."""
    out = bytearray()
    for path, entry in entries.items():
        mode, blob = entry if entry is not None else ("0", ZERO_SHA)
        out += f"{mode} {blob}\t".encode("ascii") + path.encode("utf-8", "surrogateescape") + b"\x00"
    return bytes(out)


def _tree_of(root: Path, commit: str) -> str:
    return _out(run(root, "rev-parse", "--verify", "--quiet", f"{commit}^{{tree}}"))


def commit_paths(root: Path, paths: list[str], message: str) -> str | None:
    """Commit exactly ``paths`` as they are in the work tree now; return the new commit.

    Built with plumbing that runs nothing from the repository's configuration
    (see the module docstring). Pages that exist are committed with their
    exact bytes (pages ignored by ``.gitignore`` and not tracked are left out);
    pages that no longer exist are committed as deletions. Other staged changes
    are not part of the commit. Returns None when nothing among ``paths``
    differs from HEAD. The real index is then updated for ``paths`` only, so
    ``git status`` shows them as committed.
    """
    root = Path(root)
    parent = head(root)
    known = tracked(root, paths)
    present = [p for p in paths if os.path.lexists(os.path.join(root, *p.split("/")))]
    skip = ignored(root, present) - known
    entries: dict[str, tuple[str, str] | None] = {}
    for path in paths:
        if path in skip:
            continue
        found = _page_blob(root, path)
        if found is not None:
            entries[path] = found
        elif path in known or (parent is not None and entry_at(root, parent, path) is not None):
            entries[path] = None
    if not entries:
        return None
    with tempfile.TemporaryDirectory(prefix="memtui-git-") as tmp:
        private = {"GIT_INDEX_FILE": os.path.join(tmp, "index")}
        if parent is not None:
            run(root, "read-tree", parent, env=private)
        run(root, "update-index", "-z", "--index-info", input=_index_info(entries), env=private)
        tree = _out(run(root, "write-tree", env=private))
    if parent is not None and tree == _tree_of(root, parent):
        return None  # the pages already match HEAD
    args = ["commit-tree", tree, "--no-gpg-sign", "-F", "-"]
    if parent is not None:
        args[2:2] = ["-p", parent]
    commit = _out(run(root, *args, input=message.encode("utf-8")))
    # Moves the branch HEAD names (or creates it), only if HEAD is still where we started.
    run(root, "update-ref", "-m", "memtui: commit", "HEAD", commit, parent or ZERO_SHA)
    with contextlib.suppress(GitError):  # the commit is made; a stale index entry only confuses git status
        sync_index(root, list(entries))
    return commit


def sync_index(root: Path, paths: list[str]) -> None:
    """Make the real index hold HEAD's version of ``paths`` (removed where HEAD has none).

    Used after memtui's own commit, and to undo what an interrupted change
    left in the index. Writing an index makes git re-check "racily clean"
    entries through the repository's filters, so the write runs against a
    stand-in repository folder (``_index_writer_env``) that has none of the
    field's configuration; only the index file and the objects are the real ones.
    """
    if not paths:
        return
    now = head(root)
    entries = {path: (entry_at(root, now, path) if now is not None else None) for path in paths}
    info = _index_info(entries)
    object_format = _out(run(root, "rev-parse", "--show-object-format", check=False)) or "sha1"
    with tempfile.TemporaryDirectory(prefix="memtui-gitdir-") as stand_in:
        run(
            root, "update-index", "-z", "--index-info", input=info, env=_index_writer_env(root, stand_in, object_format)
        )


def _index_writer_env(root: Path, stand_in: str, object_format: str) -> dict[str, str]:
    """Environment that lets git write ``root``'s index without reading ``root/.git/config``.

    ``stand_in`` becomes ``GIT_DIR``: an empty repository with a config of
    memtui's own (so no filter driver, fsmonitor or hook of the field is
    known); ``GIT_INDEX_FILE`` and ``GIT_OBJECT_DIRECTORY`` point at the real
    index and objects.
    """
    real = os.path.join(os.path.abspath(root), ".git")
    os.makedirs(os.path.join(stand_in, "refs"), exist_ok=True)
    os.makedirs(os.path.join(stand_in, "info"), exist_ok=True)
    with open(os.path.join(stand_in, "HEAD"), "w", encoding="ascii") as handle:
        handle.write("ref: refs/heads/memtui-index-only\n")
    config = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n"
    if object_format != "sha1":
        config = (
            f"[core]\n\trepositoryformatversion = 1\n\tbare = false\n[extensions]\n\tobjectformat = {object_format}\n"
        )
    with open(os.path.join(stand_in, "config"), "w", encoding="ascii") as handle:
        handle.write(config)
    return {
        "GIT_DIR": stand_in,
        "GIT_INDEX_FILE": os.path.join(real, "index"),
        "GIT_OBJECT_DIRECTORY": os.path.join(real, "objects"),
    }


def unstage(root: Path, paths: list[str]) -> None:
    """Reset the index entries of ``paths`` to HEAD (undo what an interrupted change staged)."""
    sync_index(root, paths)


def previous_blobs(root: Path, paths: Mapping[str, object], *, commits: int = 1000) -> dict[str, bytes]:
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
    hashed = (
        run(
            root,
            "hash-object",
            "--no-filters",
            "--stdin-paths",
            input="\n".join(tracked_paths).encode("utf-8", "surrogateescape") + b"\n",
        )
        .stdout.decode("ascii", "replace")
        .split()
    )
    specs: dict[str, str] = {}
    unchanged: list[str] = []
    for path, blob in zip(tracked_paths, hashed):
        if blob != at_head[path]:
            specs[path] = at_head[path]
        else:
            unchanged.append(path)
    if unchanged:
        wanted = set(unchanged)
        log = run(
            root, "log", f"--max-count={commits}", "--no-renames", "--format=%x00%H", "--name-only", "-z", "HEAD"
        ).stdout.decode("utf-8", "surrogateescape")
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


def recent_page_blobs(
    root: Path, *, commits: int = 200, max_blobs: int = 2000, max_bytes: int = 2 * 1024 * 1024
) -> list[tuple[str, bytes]]:
    """``(path, bytes)`` of every version of a ``*.md`` page on either side of the last ``commits``
    commits on HEAD (each blob once, regular files only), newest commit first.

    Why: the claims lens asks what tag a claim *ever* had. Looking at a page's previous
    revision only, one more commit (or an uncommitted edit) after ``[suggested]`` became
    ``[stated]`` hid the promotion, and a claim moved to another page in a commit was never
    seen. Three git commands whatever the history holds (``log --raw``, ``cat-file
    --batch-check``, ``cat-file --batch``), at most ``max_blobs`` versions of at most
    ``max_bytes`` each: bounded on a repository of a million commits.
    """
    if head(root) is None:
        return []
    log = run(
        root, "log", f"--max-count={commits}", "--no-renames", "--raw", "--no-abbrev", "-z", "--format=", "HEAD"
    ).stdout
    wanted: dict[str, str] = {}  # blob -> a path it had
    tokens = log.split(b"\x00")
    index = 0
    while index < len(tokens) and len(wanted) < max_blobs:
        meta = tokens[index].lstrip(b"\n").decode("ascii", "replace")
        index += 1
        if not meta.startswith(":"):
            continue
        path = tokens[index].decode("utf-8", "surrogateescape") if index < len(tokens) else ""
        index += 1
        parts = meta[1:].split(" ")
        if len(parts) < 5 or not path.endswith(".md"):
            continue
        for mode, blob in ((parts[0], parts[2]), (parts[1], parts[3])):
            if mode in (MODE_FILE, MODE_EXEC) and blob != ZERO_SHA and blob.strip("0") and len(wanted) < max_blobs:
                wanted.setdefault(blob, path)
    if not wanted:
        return []
    order = list(wanted)
    checked = run(root, "cat-file", "--batch-check", input="\n".join(order).encode("ascii") + b"\n").stdout
    small = []
    for blob, line in zip(order, checked.decode("ascii", "replace").splitlines()):
        bits = line.split(" ")
        if len(bits) == 3 and bits[1] == "blob" and bits[2].isdigit() and int(bits[2]) <= max_bytes:
            small.append(blob)
    if not small:
        return []
    output = run(root, "cat-file", "--batch", input="\n".join(small).encode("ascii") + b"\n").stdout
    out: list[tuple[str, bytes]] = []
    pos = 0
    for blob in small:
        end = output.find(b"\n", pos)
        if end < 0:
            break
        header = output[pos:end].split(b" ")
        pos = end + 1
        if len(header) < 3 or header[1] != b"blob":
            continue
        size = int(header[2])
        out.append((wanted[blob], output[pos : pos + size]))
        pos += size + 1
    return out


# ---------------------------------------------------------------- batched reads (many branches at once)


def rev_list_parents(root: Path, tips: list[str], *, exclude: str, limit: int) -> list[tuple[str, list[str]]]:
    """``(commit, parents)`` of every commit reachable from ``tips`` and not from ``exclude``,
    children before parents (``--topo-order``), at most ``limit`` of them: one command for any
    number of branches (the revisions go on stdin, never on the command line)."""
    if not tips:
        return []
    request = "\n".join([*tips, f"^{exclude}"]).encode("ascii") + b"\n"
    result = run(root, "rev-list", "--parents", "--topo-order", f"--max-count={limit}", "--stdin", input=request)
    out = []
    for line in _out(result).splitlines():
        shas = line.split()
        if shas:
            out.append((shas[0], shas[1:]))
    return out


def _batch(root: Path, mode: str, names: list[str]) -> bytes:
    return run(root, "cat-file", mode, input="\n".join(names).encode("ascii") + b"\n").stdout


def object_sizes(root: Path, names: list[str]) -> dict[str, tuple[str, int]]:
    """``name -> (type, size)`` of each object that exists, in one ``cat-file --batch-check``."""
    if not names:
        return {}
    out: dict[str, tuple[str, int]] = {}
    for name, line in zip(names, _batch(root, "--batch-check", names).decode("ascii", "replace").splitlines()):
        bits = line.split(" ")
        if len(bits) == 3 and bits[2].isdigit():
            out[name] = (bits[1], int(bits[2]))
    return out


def read_objects(root: Path, names: list[str]) -> dict[str, tuple[str, bytes]]:
    """``name -> (type, bytes)`` of each object that exists, in one ``cat-file --batch`` (the caller
    asks ``object_sizes`` first when the objects may be large)."""
    if not names:
        return {}
    output = _batch(root, "--batch", names)
    out: dict[str, tuple[str, bytes]] = {}
    pos = 0
    for name in names:
        end = output.find(b"\n", pos)
        if end < 0:
            break
        header = output[pos:end].split(b" ")
        pos = end + 1
        if len(header) < 3 or not header[2].isdigit():
            continue  # "<name> missing"
        size = int(header[2])
        out[name] = (header[1].decode("ascii", "replace"), output[pos : pos + size])
        pos += size + 1
    return out


def read_commits(root: Path, shas: list[str]) -> dict[str, Commit]:
    """Several commits read in one command."""
    return {sha: _parse_commit(sha, raw) for sha, (kind, raw) in read_objects(root, shas).items() if kind == "commit"}


def diff_trees(root: Path, pairs: list[tuple[str, str]]) -> list[list[TreeChange]]:
    """``diff_tree(old, new)`` for every pair, in one ``diff-tree --stdin`` (each line ``new old``
    compares the commit ``new`` with ``old`` as its parent; ``--always`` gives every line its header)."""
    if not pairs:
        return []
    request = "".join(f"{new} {old}\n" for old, new in pairs).encode("ascii")
    result = run(root, "diff-tree", "--stdin", "--always", "-r", "-z", "--raw", "--no-renames", input=request)
    fields = result.stdout.split(b"\x00")
    sections: list[list[TreeChange]] = []
    index = 0
    while index < len(fields):
        meta = fields[index].strip(b"\n").decode("ascii", "replace")
        index += 1
        if not meta:
            continue
        if not meta.startswith(":"):
            sections.append([])  # the header of the next pair
            continue
        path = fields[index].decode("utf-8", "surrogateescape") if index < len(fields) else ""
        index += 1
        parts = meta[1:].split(" ")
        if len(parts) >= 5 and sections:
            old_mode, new_mode, old_blob, new_blob, status = parts[:5]
            sections[-1].append(TreeChange(status[:1], old_mode, new_mode, old_blob, new_blob, path))
    return sections
