"""Helpers for the quarantine, proposal and ledger tests: real git repositories, staging trees."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import yaml

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def git(root: Path, *args: str, input: bytes | None = None, env: dict[str, str] | None = None) -> str:
    """Run git in ``root`` with a test identity; return stdout (stripped)."""
    full_env = dict(os.environ)
    full_env.update(GIT_ENV)
    full_env["HOME"] = str(root.parent)  # never the real ~/.gitconfig
    if env:
        full_env.update(env)
    result = subprocess.run(["git", *args], cwd=root, input=input, capture_output=True, env=full_env, check=True)
    return result.stdout.decode("utf-8", "surrogateescape").strip()


def init_repo(root: Path) -> None:
    """Make ``root`` a git repository with everything in it committed."""
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text(".memtui/\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial field")


def hash_blob(root: Path, data: bytes) -> str:
    return git(root, "hash-object", "-w", "--stdin", input=data)


def branch_proposal(
    root: Path,
    proposal_id: str,
    changes: dict[str, bytes | None],
    message: str,
    *,
    modes: dict[str, str] | None = None,
    parent: str = "HEAD",
) -> str:
    """Commit ``changes`` (path -> bytes, None = delete) on ``dream/<id>`` without a checkout.

    Uses a private index file, so the work tree and the real index are untouched.
    ``modes`` can give a path another mode (120000 symlink, 160000 submodule).
    """
    index = root.parent / f"index-{proposal_id}"
    env = {"GIT_INDEX_FILE": str(index)}
    git(root, "read-tree", parent, env=env)
    for path, data in changes.items():
        if data is None:
            git(root, "update-index", "--force-remove", "--", path, env=env)
            continue
        mode = (modes or {}).get(path, "100644")
        blob = hash_blob(root, data) if mode != "160000" else data.decode().strip()
        git(root, "update-index", "--add", "--cacheinfo", f"{mode},{blob},{path}", env=env)
    tree = git(root, "write-tree", env=env)
    commit = git(root, "commit-tree", tree, "-p", parent, "-m", message)
    git(root, "update-ref", f"refs/heads/dream/{proposal_id}", commit)
    index.unlink()
    return commit


def tree_with_extra_entry(root: Path, parent: str, name: str, path_in: list[str], data: bytes) -> str:
    """A tree like ``parent``'s plus ``name/<path_in...>`` built with mktree (bypasses path checks)."""
    blob = hash_blob(root, data)
    entry = f"100755 blob {blob}\t{path_in[-1]}\n"
    tree = git(root, "mktree", input=entry.encode())
    for folder in reversed(path_in[:-1]):
        tree = git(root, "mktree", input=f"040000 tree {tree}\t{folder}\n".encode())
    listing = git(root, "ls-tree", parent)
    lines = [line for line in listing.splitlines() if line]
    lines.append(f"040000 tree {tree}\t{name}")
    return git(root, "mktree", input=("\n".join(lines) + "\n").encode())


def staging_proposal(
    root: Path,
    proposal_id: str,
    *,
    job: str = "dedupe",
    files: dict[str, bytes] | None = None,
    base: dict[str, str | None] | None = None,
    delete: list[str] | None = None,
    rationale: str = "test rationale",
    created: str = "2026-11-27T03:00:00Z",
) -> Path:
    """Write ``.dream/proposals/<id>/`` with proposal.yaml and files/."""
    folder = root / ".dream" / "proposals" / proposal_id
    (folder / "files").mkdir(parents=True, exist_ok=True)
    manifest = {
        "id": proposal_id,
        "job": job,
        "created": created,
        "rationale": rationale,
        "evidence": ["sessions/2026-01-14-kickoff.md#L3"],
        "base": base or {},
        "delete": delete or [],
    }
    (folder / "proposal.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    for path, data in (files or {}).items():
        target = folder / "files" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return folder


def snapshot(root: Path, *, skip: tuple[str, ...] = (".memtui", ".git")) -> dict[str, bytes]:
    """Every file under ``root`` (by relative path) and its bytes, skipping memtui/git state."""
    out = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel.split("/")[0] in skip or not path.is_file() or path.is_symlink():
            continue
        out[rel] = path.read_bytes()
    return out


def use_git_identity(monkeypatch, home: Path) -> None:
    """Give memtui's own git commands a test identity and keep ~/.gitconfig out."""
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("MEMTUI_REVIEWER", raising=False)


# ---------------------------------------------------------------- the review workflows, as a session reads the field


def opened(root: Path):  # noqa: ANN201 - a Field
    """The field as a reviewer's session reads it (dialects, approvals): what the checks run on."""
    from memtui.session.opening import open_field

    return open_field(root)


def approve_proposal(root: Path, proposal_id: str, **kwargs):  # noqa: ANN003, ANN201
    """``proposals.approve`` with the field read as the CLI and the TUI read it."""
    from memtui.review import proposals

    return proposals.approve(root, proposal_id, field=kwargs.pop("field", None) or opened(root), **kwargs)


def review_proposal(root: Path, proposal_id: str, **kwargs):  # noqa: ANN003, ANN201
    from memtui.review import proposals

    return proposals.review_proposal(root, proposal_id, field=kwargs.pop("field", None) or opened(root), **kwargs)


def proposal_queue(root: Path, **kwargs):  # noqa: ANN003, ANN201
    from memtui.review import proposals

    return proposals.proposal_queue(root, field=kwargs.pop("field", None) or opened(root), **kwargs)
