"""Carrier (a): staging trees under ``FIELD/.dream/proposals/<id>/``.

Layout written by a job::

    .dream/proposals/<id>/
      proposal.yaml      id, job, created, rationale, evidence, base, delete
      files/<path>       the proposed full new version of each page, mirroring
                         the field's paths (files/notes/a.md -> notes/a.md)

``base`` maps every touched page to the sha256 of the version the job read
(``null`` for a page the proposal creates); ``delete`` lists pages to retire.
Nothing here is followed through a symlink: a symlinked proposal folder, a
symlink inside ``files/`` or a symlinked ``proposal.yaml`` makes the proposal
invalid. The manifest is parsed with the same safe YAML loader as frontmatter
(no aliases, no tags).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from memtui.errors import FrontmatterError
from memtui.field.frontmatter import parse_yaml_mapping
from memtui.review.proposal_model import (
    CARRIER_STAGING,
    CREATE,
    DELETE,
    MAX_PROPOSED_BYTES,
    MODIFY,
    PageChange,
    Proposal,
    id_problem,
    is_sha256,
    page_path_problem,
)
from memtui.store import locations
from memtui.store.files import FileTooLarge, read_bytes
from memtui.textsafety import one_line

PROPOSALS_DIR = "proposals"
MANIFEST = "proposal.yaml"
FILES_DIR = "files"
MAX_MANIFEST_BYTES = 256 * 1024
MAX_FILES = 500
MAX_STAGED = 200  # staging proposals a listing reads; the rest are counted and named, each readable alone


def proposals_dir(root: Path) -> Path:
    return Path(root) / locations.DREAM_DIR_NAME / PROPOSALS_DIR


def load_staging(
    root: Path, *, also: str | None = None, max_proposals: int | None = None
) -> tuple[list[Proposal], list[str]]:
    """The staging proposals of the field, at most ``max_proposals`` of them (by name) plus
    ``also`` (one asked for by id), and problems with the folder itself.

    Why (issue 40, hazard 19, as for branches): a job may leave thousands of folders; a
    listing reads a bounded number, says how many more there are, and any one can still be
    shown and decided by its id."""
    root = Path(root)
    dream = root / locations.DREAM_DIR_NAME
    folder = proposals_dir(root)
    for path in (dream, folder):
        if os.path.islink(path):
            return [], [f"{path.relative_to(root).as_posix()} is a symlink: staging proposals not read"]
    if not folder.is_dir():
        return [], []
    proposals: list[Proposal] = []
    problems: list[str] = []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as exc:
        return [], [f"cannot list .dream/proposals: {exc.strerror or exc}"]
    rest: list[str] = []
    cap = MAX_STAGED if max_proposals is None else max_proposals
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if entry.is_symlink():
            problems.append(f".dream/proposals/{one_line(entry.name, 80)} is a symlink: not read")
            continue
        if not entry.is_dir(follow_symlinks=False):
            continue
        if len(proposals) >= max(cap, 0) and entry.name != also:
            rest.append(entry.name)
            continue
        proposals.append(load_one(root, entry.name))
    if rest:
        named = ", ".join(one_line(name, 60) for name in rest[:3])
        problems.append(
            f"{len(rest):,} more staging proposal{'s' if len(rest) != 1 else ''} not read "
            f"(a listing reads {cap:,}; the first: {named}); read one with: memtui proposals show FIELD ID"
        )
    return proposals, problems


def _text_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [v if isinstance(v, str) else str(v) for v in value if v is not None]
    return [value if isinstance(value, str) else str(value)]


def load_one(root: Path, name: str) -> Proposal:
    """Read ``.dream/proposals/<name>``; never raises for a malformed proposal."""
    folder = proposals_dir(root) / name
    proposal = Proposal(id=name, carrier=CARRIER_STAGING, location=f".dream/proposals/{name}")
    problem = id_problem(name)
    if problem:
        proposal.errors.append(problem)
    manifest = _read_manifest(folder, proposal)
    if manifest is None:
        return proposal
    declared = manifest.get("id")
    if declared is None:
        proposal.warnings.append("proposal.yaml has no id: the folder name is used")
    elif str(declared) != name:
        proposal.errors.append(f"proposal.yaml says id {declared!r} but the folder is {name!r}")
    job = manifest.get("job")
    if isinstance(job, str) and job.strip():
        proposal.job = job.strip()
    else:
        proposal.warnings.append("proposal.yaml has no job")
    created = manifest.get("created")
    proposal.created = str(created) if created is not None else None
    rationale = manifest.get("rationale")
    proposal.rationale = rationale.strip() if isinstance(rationale, str) else ""
    if not proposal.rationale:
        proposal.warnings.append("proposal.yaml gives no rationale")
    proposal.evidence = _text_list(manifest.get("evidence"))

    base_raw = manifest.get("base") or {}
    base: dict[str, str | None] = {}
    if not isinstance(base_raw, dict):
        proposal.errors.append("base must map page paths to sha256 hashes")
    else:
        for path, digest in base_raw.items():
            if digest is not None and not is_sha256(digest):
                proposal.errors.append(f"base hash for {path} is not a sha256 (64 lower-case hex digits)")
                continue
            base[str(path)] = digest
    deletes = manifest.get("delete") or []
    if not isinstance(deletes, list):
        proposal.errors.append("delete must be a list of page paths")
        deletes = []

    files = _read_files(root, folder / FILES_DIR, proposal)
    for path, data in files:
        if path not in base:
            proposal.warnings.append(f"no base hash for {path}: treated as a new page")
        digest = base.get(path)
        action = MODIFY if digest is not None else CREATE
        proposal.changes.append(PageChange(path, action, digest, data, problem=page_path_problem(root, path)))
    touched = {path for path, _ in files}
    for raw in deletes:
        path = str(raw)
        if path in touched:
            proposal.errors.append(f"{path} is both deleted and given a new version")
            continue
        if base.get(path) is None:
            proposal.errors.append(f"delete of {path} needs its base hash")
            continue
        touched.add(path)
        proposal.changes.append(PageChange(path, DELETE, base[path], None, problem=page_path_problem(root, path)))
    for path in base:
        if path not in touched:
            proposal.warnings.append(f"base lists {path}, which the proposal does not change")
    if not proposal.changes and not proposal.errors:
        proposal.errors.append("the proposal changes no page")
    proposal.changes.sort(key=lambda c: c.path)
    proposal.refresh(root)
    return proposal


def _read_manifest(folder: Path, proposal: Proposal) -> dict[str, Any] | None:
    path = folder / MANIFEST
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        proposal.errors.append("no proposal.yaml")
        return None
    except OSError as exc:
        proposal.errors.append(f"cannot read proposal.yaml: {exc.strerror or exc}")
        return None
    if not stat.S_ISREG(st.st_mode):
        proposal.errors.append("proposal.yaml is not a regular file (symlinks are not followed)")
        return None
    if st.st_size > MAX_MANIFEST_BYTES:
        proposal.errors.append(f"proposal.yaml is {st.st_size:,} bytes (limit {MAX_MANIFEST_BYTES // 1024} KB)")
        return None
    try:
        result = read_bytes(path, max_bytes=MAX_MANIFEST_BYTES)
    except FileTooLarge as exc:
        proposal.errors.append(f"proposal.yaml is {exc.size:,} bytes (limit {MAX_MANIFEST_BYTES // 1024} KB)")
        return None
    except OSError as exc:
        proposal.errors.append(f"cannot read proposal.yaml: {exc.strerror or exc}")
        return None
    if result is None:
        proposal.errors.append("proposal.yaml vanished while being read")
        return None
    try:
        return parse_yaml_mapping(result[0].decode("utf-8", "surrogateescape"))
    except FrontmatterError as exc:
        where = f" (line {exc.line})" if exc.line else ""
        proposal.errors.append(f"proposal.yaml: {exc.message}{where}")
        return None


def _read_files(root: Path, files_dir: Path, proposal: Proposal) -> list[tuple[str, bytes]]:
    """Every proposed page under ``files/`` as (field path, bytes); problems go to the proposal."""
    out: list[tuple[str, bytes]] = []
    if os.path.islink(files_dir):
        proposal.errors.append("files/ is a symlink: not followed")
        return out
    if not files_dir.is_dir():
        return out
    stack = [("", files_dir)]
    while stack:
        rel_dir, folder = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            proposal.errors.append(f"cannot list files/{rel_dir}: {exc.strerror or exc}")
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.is_symlink():
                proposal.errors.append(f"files/{rel} is a symlink: proposals carry regular files only")
                continue
            if entry.is_dir(follow_symlinks=False):
                stack.append((rel, Path(entry.path)))
                continue
            if not entry.is_file(follow_symlinks=False):
                proposal.errors.append(f"files/{rel} is not a regular file")
                continue
            if len(out) >= MAX_FILES:
                proposal.errors.append(f"more than {MAX_FILES} files: the rest is not read")
                return out
            try:
                size = entry.stat(follow_symlinks=False).st_size
                if size > MAX_PROPOSED_BYTES:
                    proposal.errors.append(f"files/{rel} is {size:,} bytes: too large for a page")
                    continue
                result = read_bytes(entry.path, max_bytes=MAX_PROPOSED_BYTES)  # it may have grown since
            except FileTooLarge as exc:
                proposal.errors.append(f"files/{rel} is {exc.size:,} bytes: too large for a page")
                continue
            except OSError as exc:
                proposal.errors.append(f"cannot read files/{rel}: {exc.strerror or exc}")
                continue
            if result is None:
                continue
            out.append((rel, result[0]))
    out.sort()
    return out
