"""JSON-sidecar stores (aictx and its kind): a Markdown body plus a JSON file that says what it is.

From aictx's reference (storage schema v5): a store is a folder (``.memory/``
in a repository) with ``config.json`` (``version``, ``project``), ``schema/``,
``memory/**/<slug>.md`` bodies each beside a ``<slug>.json`` sidecar holding
``id`` (``kind.slug``), ``type`` (project, feature, decision, gotcha,
question), ``status`` (active, stale, superseded; questions open/closed),
``superseded_by``, ``title``, ``tags``, ``source`` ``{kind: agent|user|cli|mcp|
system}``, ``origin`` (external provenance), ``evidence``, ``content_hash`` of
the body, ``created_at``/``updated_at``; ``relations/*.json`` edges
(``predicate`` affects, depends_on, supersedes, related_to) and an append-only
``events.jsonl`` (memory.created, memory.updated, memory.marked_stale,
memory.superseded, ...).

Everything memtui says about such a page comes from its sidecar: status, chain,
title, kind, dates and origin. Links ``[[kind.slug]]`` name objects by id. A body
that no longer matches the sidecar's ``content_hash`` was edited behind the
store's back. The store has no review field: trust stays "no review record".
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from memtui.dialects.base import (
    MAX_SIDE_FILE_BYTES,
    Applied,
    DetectContext,
    Dialect,
)
from memtui.field.checks import Finding, make_finding
from memtui.field.field import FieldView
from memtui.field.page import PageInfo, side_stamp
from memtui.store.files import MB, FileTooLarge, LineFile, open_regular, read_bytes, size_text

MAX_EVENTS_BYTES = 64 * MB  # events.jsonl is read a line at a time; a bigger log is not read at all
MAX_EVENT_LINE_BYTES = 64 * 1024  # one event; a longer line is skipped
MAX_RELATION_FILES = 5000
STORE_FOLDERS = (".memory", ".aictx")  # aictx's store, under its current and its older name
ORIGIN_OF_SOURCE = {"agent": "agent", "user": "user", "system": "job", "mcp": "agent"}


class SidecarStore(Dialect):
    name = "sidecar-store"
    title = "JSON-sidecar store (aictx)"
    reads_sidecars = True

    def scope_paths(self, root: Path, names: set[str]) -> list[str]:
        return [
            f"{store}/memory/" for store in STORE_FOLDERS if store in names and (root / store / "config.json").is_file()
        ]

    def detect(self, ctx: DetectContext) -> list[Applied]:
        found = []
        for store, (pages, sidecars) in sorted(_candidate_stores(ctx).items()):
            prefix = store + "/" if store else ""
            config, problem = (
                _read_json(ctx.root, prefix + "config.json", "an aictx config.json")
                if ctx.exists(prefix + "config.json")
                else (None, None)
            )
            if not isinstance(config, dict):
                # Without its config.json, a folder is a store only at the field root or under a store's own name.
                if store and store.rsplit("/", 1)[-1] not in STORE_FOLDERS or sidecars < max(1, pages // 2):
                    continue
            evidence = []
            if isinstance(config, dict):
                project = config.get("project")
                if not isinstance(project, dict):
                    project = {}
                evidence.append(
                    f"{prefix}config.json (version {config.get('version', '?')}, project {project.get('name', '?')})"
                )
            if problem:
                evidence.append(f"{prefix}config.json not read: {problem}")
            evidence.append(f"{sidecars} of {pages} pages under {prefix}memory/ have a JSON sidecar")
            supersedes, skipped = _supersede_relations(ctx.root, prefix + "relations")
            evidence.extend(skipped)
            params: dict[str, Any] = {"supersedes": supersedes}
            if ctx.exists(prefix + "events.jsonl"):
                events_problem = _events_problem(ctx.root, prefix + "events.jsonl")
                evidence.append(f"{prefix}events.jsonl" + (f" (not read: {events_problem})" if events_problem else ""))
                params["events"] = prefix + "events.jsonl"
            found.append(Applied(self.name, store, evidence, params))
        return found

    def claims(self, applied: Applied, path: str) -> bool:
        return applied.local(path).startswith("memory/") and applied.covers(path)

    def read(self, applied: Applied, info: PageInfo, root: Path, text: str) -> None:
        info.dialect = self.name
        norm = info.writable_norm()
        side_rel = info.path[:-3] + ".json"
        try:
            result = read_bytes(side_rel, under=root, max_bytes=MAX_SIDE_FILE_BYTES, kind="a JSON sidecar")
        except FileTooLarge as exc:
            info.side = [side_rel, *side_stamp(exc.stat)]
            norm.sidecar_problem = f"the JSON sidecar is {exc.strerror}"
            return
        except OSError as exc:
            try:
                seen = os.lstat(os.path.join(root, *side_rel.split("/")))
                info.side = [side_rel, *side_stamp(seen)]
            except OSError:
                info.side = ["", 0, 0]
            norm.sidecar_problem = f"the JSON sidecar cannot be read: {_why(exc)}"
            return
        if result is None:
            info.side = ["", 0, 0]  # looked, not there
            norm.sidecar_problem = "no JSON sidecar beside the page"
            return
        data, st = result
        # Its size, mtime and what the writer cannot set back (change time, inode, device): the
        # status, title and trust read here are reused only while all of them are unchanged.
        info.side = [side_rel, *side_stamp(st)]
        try:
            sidecar = json.loads(data.decode("utf-8"))
        except (ValueError, RecursionError):
            sidecar = None
        if not isinstance(sidecar, dict):
            norm.sidecar_problem = "the JSON sidecar does not parse as an object"
            return
        norm.role = "memory"
        ident = sidecar.get("id")
        if isinstance(ident, str) and ident:
            norm.id = ident
        title, kind, status = (sidecar.get(key) for key in ("title", "type", "status"))
        if isinstance(title, str) and title.strip():
            norm.title = title.strip()
        if isinstance(kind, str) and kind.strip():
            norm.kind = kind.strip()
        if isinstance(status, str) and status.strip():
            norm.status = status.strip()
        successor = sidecar.get("superseded_by")
        if isinstance(successor, str) and successor:
            norm.superseded_by = [successor]
        replaced = applied.params.get("supersedes", {}).get(ident) if isinstance(ident, str) else None
        if replaced:
            norm.supersedes = list(replaced)
        created, updated = sidecar.get("created_at"), sidecar.get("updated_at")
        if isinstance(created, str) and created:
            norm.created = created
        if isinstance(updated, str) and updated:
            norm.updated = updated
        tags = sidecar.get("tags")
        if isinstance(tags, list):
            norm.tags = [t for t in tags if isinstance(t, str)]
        source = sidecar.get("source")
        if isinstance(source, dict) and isinstance(source.get("kind"), str):
            norm.origin = ORIGIN_OF_SOURCE.get(source["kind"])
            norm.written_by = source["kind"] + (f" ({source['task']})" if isinstance(source.get("task"), str) else "")
        sources: list[str] = []
        origin = sidecar.get("origin")
        if isinstance(origin, dict):
            if origin.get("kind") in ("url", "external"):
                norm.tainted = True  # captured from outside content and never reviewed
            if isinstance(origin.get("locator"), str):
                sources.append(origin["locator"])
        evidence = sidecar.get("evidence")
        if isinstance(evidence, list):
            sources.extend(str(e.get("id")) for e in evidence if isinstance(e, dict) and isinstance(e.get("id"), str))
        if sources:
            norm.sources = sources
        recorded = sidecar.get("content_hash")
        if isinstance(recorded, str) and recorded.startswith("sha256:") and recorded != content_hash(sidecar, text):
            norm.sidecar_problem = "the body or its sidecar changed since the store recorded its content hash"

    def page_checks(self, applied: Applied, field: FieldView, info: PageInfo) -> list[Finding]:
        problem = info.norm.sidecar_problem
        if not problem:
            return []
        rule = "sidecar-hash-mismatch" if "content hash" in problem else "sidecar-invalid"
        return [make_finding(rule, info.path, None, problem)]

    def events(self, applied: Applied, root: Path, ident: str) -> list[dict[str, Any]]:
        """The store's timeline for one object: its ``events.jsonl`` lines, oldest first."""
        rel = applied.params.get("events")
        if not rel or not ident:
            return []
        try:
            opened = open_regular(rel, under=root)
        except OSError as exc:
            return [{"event": f"{rel} not read", "reason": _why(exc)}]
        if opened is None:
            return []
        fd, st = opened
        if st.st_size > MAX_EVENTS_BYTES:
            os.close(fd)
            return [{"event": f"{rel} not read", "reason": _too_big(st.st_size, MAX_EVENTS_BYTES, "an events log")}]
        out: list[dict[str, Any]] = []
        read = 0
        with LineFile(fd, max_line=MAX_EVENT_LINE_BYTES) as lines:  # a line at a time
            for line in lines:
                read += line.size + 1
                if read > MAX_EVENTS_BYTES + 1:  # it grew while being read
                    out.append(
                        {
                            "event": f"{rel} not read past here",
                            "reason": _too_big(read, MAX_EVENTS_BYTES, "an events log"),
                        }
                    )
                    break
                if line.data is None or not line.data.strip():
                    continue
                try:
                    event = json.loads(line.data.decode("utf-8", "replace"))
                except (ValueError, RecursionError):
                    continue
                if isinstance(event, dict) and event.get("id") == ident:
                    out.append({k: event.get(k) for k in ("timestamp", "event", "actor", "reason") if k in event})
        return out


def _why(exc: OSError) -> str:
    if isinstance(exc, FileTooLarge):
        return exc.strerror or str(exc)
    if exc.errno == errno.ELOOP:
        return "it is a symlink (or a folder on the way is), which memtui does not follow"
    return exc.strerror or str(exc)


def _too_big(size: int, limit: int, kind: str) -> str:
    return f"{size_text(size)} ({size:,} bytes), over memtui's cap of {size_text(limit)} for {kind}"


def _read_json(root: Path, rel: str, kind: str) -> tuple[Any, str | None]:
    """A small JSON file of the store and None, or None and why it was not read (too large, a
    symlink, not a regular file); (None, None) when it is missing or does not parse."""
    try:
        result = read_bytes(rel, under=root, max_bytes=MAX_SIDE_FILE_BYTES, kind=kind)
    except OSError as exc:
        return None, _why(exc)
    if result is None:
        return None, None
    try:
        return json.loads(result[0].decode("utf-8")), None
    except (ValueError, RecursionError):
        return None, None


def _events_problem(root: Path, rel: str) -> str | None:
    """Why the store's events log will not be read (None: it will)."""
    try:
        st = os.stat(os.path.join(root, *rel.split("/")), follow_symlinks=False)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return "it is a symlink or not a regular file"
    return _too_big(st.st_size, MAX_EVENTS_BYTES, "an events log") if st.st_size > MAX_EVENTS_BYTES else None


def _candidate_stores(ctx: DetectContext) -> dict[str, tuple[int, int]]:
    """Every folder of the field that could be a store: it holds pages under its ``memory/``.

    Store folder -> (pages under its ``memory/``, how many have a JSON sidecar); one pass over the
    scan, which already knows each page's sidecar (no file is opened here). A folder whose pages
    have no sidecar is a candidate only at the field root or under a store's own name (``.memory``).
    """
    tally: dict[str, list[int]] = {}
    if not any(folder == "memory" or folder.startswith("memory/") or "/memory" in folder for folder in ctx.folders()):
        return {}  # no folder named memory holds pages
    for entry in ctx.scanned.entries:
        path = entry.path
        if "memory/" not in path:
            continue
        parts = path.split("/")
        for index in range(len(parts) - 1):
            if parts[index] == "memory":
                counts = tally.setdefault("/".join(parts[:index]), [0, 0])
                counts[0] += 1
                counts[1] += entry.side is not None
    return {
        store: (pages, sidecars)
        for store, (pages, sidecars) in tally.items()
        if sidecars or store.rsplit("/", 1)[-1] in ("", *STORE_FOLDERS)
    }


def content_hash(sidecar: dict[str, Any], markdown: str) -> str | None:
    """aictx's ``content_hash``: SHA-256 of the canonical sidecar JSON (without the hash) + body."""
    rest = {key: value for key, value in sidecar.items() if key != "content_hash"}
    try:
        canonical = json.dumps(rest, ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return None
    body = markdown.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    data = (canonical + "\n" + body).encode("utf-8", "surrogateescape")
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _supersede_relations(root: Path, rel: str) -> tuple[dict[str, list[str]], list[str]]:
    """``relations/*.json`` edges with predicate ``supersedes``: id -> the ids it supersedes; and
    the relation files that were not read, and why (too large, a symlink, not a regular file)."""
    out: dict[str, list[str]] = {}
    skipped: list[str] = []
    try:
        names = sorted(os.listdir(os.path.join(root, *rel.split("/"))))[:MAX_RELATION_FILES]
    except OSError:
        return out, skipped
    for name in names:
        if not name.endswith(".json"):
            continue
        relation, problem = _read_json(root, f"{rel}/{name}", "an aictx relation")
        if problem:
            skipped.append(f"{rel}/{name} not read: {problem}")
            continue
        if (
            isinstance(relation, dict)
            and relation.get("predicate") == "supersedes"
            and relation.get("status", "active") == "active"
            and isinstance(relation.get("from"), str)
            and isinstance(relation.get("to"), str)
        ):
            out.setdefault(relation["from"], []).append(relation["to"])
    return out, skipped
