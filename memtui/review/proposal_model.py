"""What a proposal is, whichever carrier brought it.

A *proposal* is a set of page changes a maintenance ("dream") job wants made,
with its reason. Two carriers deliver proposals (see README "Proposals for
agents"): a staging tree under ``.dream/proposals/<id>/`` (read by
``proposal_staging``) and a git branch ``dream/<id>`` (read by
``proposal_git``). Both produce the same ``Proposal``: a list of
``PageChange`` items, each with the hash the job based its edit on (``base``),
the proposed bytes, and the hash the page has on disk now (``current``).

Loading never raises for a bad proposal: what is wrong goes into
``Proposal.errors`` (the proposal cannot be approved) or ``warnings``, and a
page memtui may not write carries a ``PageChange.problem``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.errors import UnsafePathError
from memtui.store import safe_write
from memtui.store.files import sha256_bytes

CARRIER_STAGING = "staging"
CARRIER_GIT = "git"

MODIFY = "modify"
CREATE = "create"
DELETE = "delete"

MAX_PROPOSED_BYTES = 2 * 1024 * 1024
_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_SHA256_RE = re.compile(r"[0-9a-f]{64}")


def id_problem(proposal_id: str) -> str | None:
    """Why a proposal id is unusable (it names a folder, a branch and a journal), or None."""
    if not _ID_RE.fullmatch(proposal_id) or ".." in proposal_id or proposal_id.endswith((".lock", ".")):
        return f"proposal id {proposal_id!r} is not a plain name (letters, digits, '.', '_', '-'; no '/', no '..')"
    return None


def is_sha256(value: Any) -> bool:
    return isinstance(value, str) and _SHA256_RE.fullmatch(value) is not None


def page_path_problem(root: Path, path: str) -> str | None:
    """Why memtui must not write ``path`` in this field, or None when it may.

    Refused: absolute paths, ``..``, anything under ``sessions/``, ``.git``
    (any case) or memtui's own folders, names that are not ``*.md``, a symlinked
    folder that leaves the field, a page that is a symlink or not a regular file.
    """
    if any(part.casefold() == ".git" for part in path.replace("\\", "/").split("/")):
        return f"{path}: refusing to write into .git"
    try:
        clean = safe_write.check_relpath(path)
        if clean != path:
            return f"{path}: not a normalised relative path (did you mean {clean}?)"
        safe_write.resolve_in_field(root, path)
    except UnsafePathError as exc:
        return exc.message
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    return None


@dataclass(slots=True)
class PageChange:
    """One page a proposal changes.

    ``base`` is the sha256 of the version the job started from (None: the page
    did not exist, the proposal creates it). ``current`` is the sha256 on disk
    now (None: absent). ``proposed`` is the new bytes (None for a delete).
    """

    path: str
    action: str  # modify | create | delete
    base: str | None
    proposed: bytes | None
    current: str | None = None
    problem: str | None = None

    @property
    def proposed_hash(self) -> str | None:
        return sha256_bytes(self.proposed) if self.proposed is not None else None

    @property
    def stale(self) -> bool:
        """The page on disk is no longer the version the proposal was based on."""
        return self.current != self.base

    @property
    def noop(self) -> bool:
        """The disk already holds what the proposal wants."""
        return self.current == self.proposed_hash

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "action": self.action,
            "base": self.base,
            "current": self.current,
            "proposed": self.proposed_hash,
            "stale": self.stale,
            "problem": self.problem,
        }


@dataclass(slots=True)
class Proposal:
    """A proposal as read from its carrier, with the disk state at load time."""

    id: str
    carrier: str  # staging | git
    location: str  # ".dream/proposals/<id>" or "dream/<id>"
    job: str = "unknown"
    created: str | None = None
    rationale: str = ""
    evidence: list[str] = field(default_factory=list)
    changes: list[PageChange] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    tip: str | None = None  # git: the branch's commit
    base_commit: str | None = None  # git: merge-base of the branch and HEAD

    @property
    def pages(self) -> list[str]:
        return [change.path for change in self.changes]

    @property
    def stale(self) -> bool:
        return any(change.stale for change in self.changes)

    @property
    def problems(self) -> list[str]:
        """Everything that forbids approving: proposal errors and page problems."""
        return list(self.errors) + [c.problem for c in self.changes if c.problem]

    @property
    def valid(self) -> bool:
        return not self.problems

    def change(self, path: str) -> PageChange | None:
        return next((c for c in self.changes if c.path == path), None)

    def refresh(self, root: Path) -> None:
        """Re-read the hash of every touched page on disk."""
        for change in self.changes:
            if change.problem:
                change.current = None
                continue
            try:
                change.current = safe_write.current_hash(safe_write.resolve_in_field(root, change.path))
            except UnsafePathError as exc:
                change.problem = exc.message
                change.current = None
            except OSError as exc:
                change.problem = f"{change.path}: {exc.strerror or exc}"
                change.current = None

    def fingerprint(self) -> str:
        """A hash of what a reviewer is shown: every page's action, base, disk and proposed hashes.

        Pass it back to ``approve`` to make sure the decision applies to exactly
        that (the proposal or a page changed in between: the approval is refused).
        """
        digest = hashlib.sha256()
        digest.update(f"{self.carrier}\0{self.id}\0{self.tip or ''}\0".encode())
        for change in sorted(self.changes, key=lambda c: c.path):
            digest.update(
                f"{change.path}\0{change.action}\0{change.base}\0{change.current}\0{change.proposed_hash}\0".encode(
                    "utf-8", "surrogateescape"
                )
            )
        return digest.hexdigest()

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "carrier": self.carrier,
            "location": self.location,
            "job": self.job,
            "created": self.created,
            "rationale": self.rationale,
            "evidence": list(self.evidence),
            "pages": [change.to_json() for change in self.changes],
            "errors": self.problems,
            "warnings": list(self.warnings),
            "tip": self.tip,
            "base_commit": self.base_commit,
        }
