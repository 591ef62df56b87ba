"""Serena: project memories an MCP coding agent writes and reads by name.

From Serena's source and documentation (``MemoriesManager``): a project keeps its
memories in ``.serena/memories/`` as Markdown files, one per memory, named by their
path there without ``.md`` (a subfolder is a topic: ``modules/frontend``). Global
memories (``global/<name>``) live in ``~/.serena/memories/``, outside any project:
a reference to one is not a broken link. At activation the agent is given the *list*
of memory names; it reads a memory's text when it decides to (``read_memory``), so
every memory is loaded on demand. Memories refer to each other as ``mem:<name>``.
``.serena/project.yml`` may set ``ignored_memory_patterns`` (regular expressions on
the name: such a memory is never listed nor read by the agent) and
``read_only_memory_patterns`` (the agent's tools cannot write it). A memory may open
with Serena's own frontmatter (``serena_frontmatter_version: 1``, ``type``, further
string fields). Serena records no status and no review: nothing here is "current" or
"reviewed" by the format's word.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from memtui.dialects.base import MAX_SIDE_FILE_BYTES, Applied, DetectContext, Dialect
from memtui.dialects.loading import INSTRUCTIONS, MEMORY, NEVER, ON_DEMAND, LoadedFile, Outside
from memtui.errors import MemtuiError
from memtui.field.checks import Finding, make_finding
from memtui.field.field import FieldView
from memtui.field.frontmatter import parse_yaml_mapping
from memtui.field.page import PageInfo
from memtui.store.files import read_bytes

MEMORIES = "memories"
PROJECT_FILE = "project.yml"
MAINTENANCE = "memory_maintenance"  # Serena seeds it: how the agent should keep its memories
_REF_RE = re.compile(r"(?<![A-Za-z0-9_\-/])mem:([A-Za-z0-9_\-/]+)")
# A pattern from the field is evaluated only when it cannot backtrack for long on a name.
MAX_PATTERN_CHARS = 200
MAX_UNBOUNDED = 2
_QUANTIFIED_GROUP_RE = re.compile(r"\)[*+?{]")
_UNBOUNDED_RE = re.compile(r"(?<!\\)(?:[*+]|\{\d*,\})")


def safe_pattern(pattern: Any) -> re.Pattern[str] | None:
    """``pattern`` compiled, when it is a string memtui may run on names without a backtracking
    blow-up (short, no quantified group, at most two unbounded repeats); else None."""
    if not isinstance(pattern, str) or len(pattern) > MAX_PATTERN_CHARS:
        return None
    if _QUANTIFIED_GROUP_RE.search(pattern) or len(_UNBOUNDED_RE.findall(pattern)) > MAX_UNBOUNDED:
        return None
    try:
        return re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return None


def _project_settings(ctx: DetectContext, serena: str) -> tuple[dict[str, Any], list[str]]:
    """The memory patterns of ``project.yml`` (as params) and evidence lines saying what was read."""
    rel = (serena + "/" if serena else "") + PROJECT_FILE
    if not ctx.exists(rel):
        return {}, []
    try:
        result = read_bytes(ctx.root / rel, max_bytes=MAX_SIDE_FILE_BYTES)
        data = parse_yaml_mapping(result[0].decode("utf-8", "surrogateescape"), what=PROJECT_FILE) if result else {}
    except (OSError, MemtuiError, UnicodeError):
        return {}, [f"{rel} (cannot be read: its memory patterns are unknown)"]
    params: dict[str, Any] = {}
    evidence = [rel]
    for key in ("ignored_memory_patterns", "read_only_memory_patterns"):
        value = data.get(key)
        patterns = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        kept = [p for p in patterns if safe_pattern(p) is not None]
        unsafe = [str(p)[:60] for p in patterns if safe_pattern(p) is None]
        if kept:
            params[key] = kept
            evidence.append(f"{key}: {len(kept)}")
        if unsafe:
            params[key + "_unread"] = unsafe
            evidence.append(f"{key}: {len(unsafe)} not evaluated (too complex or invalid)")
    return params, evidence


def memory_name(applied: Applied, path: str) -> str:
    """The name Serena gives the memory at ``path``: its path under ``memories/``, without ``.md``."""
    local = applied.local(path)
    return local[:-3] if local.endswith(".md") else local


def matching(applied: Applied, key: str, name: str) -> str | None:
    """The first pattern of ``project.yml``'s ``key`` that matches the whole name, or None."""
    for pattern in applied.params.get(key, ()):
        compiled = safe_pattern(pattern)
        if compiled is not None and compiled.fullmatch(name):
            return str(pattern)
    return None


class Serena(Dialect):
    name = "serena"
    title = "Serena memories"

    def scope_paths(self, root: Path, names: set[str]) -> list[str]:
        return [".serena/memories/"] if ".serena" in names else []

    def skipped_label(self, rel: str) -> str | None:
        return "Serena's cache and settings (not memory)" if rel.startswith(".serena/") else None

    def detect(self, ctx: DetectContext) -> list[Applied]:
        found = []
        # The project's .serena/ at the field root, or the field opened at a .serena folder itself.
        for serena in (".serena", ""):
            memories = (serena + "/" if serena else "") + MEMORIES
            if not ctx.holds_folder(memories) or (not serena and not ctx.exists(PROJECT_FILE)):
                continue
            count = sum(1 for p in ctx.pages if p.startswith(memories + "/"))
            params, evidence = _project_settings(ctx, serena)
            found.append(Applied(self.name, memories, [f"{memories}/ ({count} memories)", *evidence], params))
            break
        return found

    def read(self, applied: Applied, info: PageInfo, root: Path, text: str) -> None:
        info.dialect = self.name
        norm = info.writable_norm()
        name = memory_name(applied, info.path)
        norm.role = "instructions" if name == MAINTENANCE else "memory"
        norm.ids = [name, "mem:" + name]
        kind = info.meta.get("type")
        if isinstance(kind, str) and kind.strip():
            norm.kind = kind.strip()
        if not (info.meta.get("title") or info.heading_title):
            norm.title = name
        # mem:<name> names another memory; global/ ones live in ~/.serena, outside any field.
        body = text[info.body_offset :]
        first = info.body_line
        for number, line in enumerate(body.splitlines(), start=first):
            if "mem:" not in line:
                continue
            for match in _REF_RE.finditer(line):
                target = match.group(1).rstrip("/").removesuffix(".md")
                if target and target != "global" and not target.startswith("global/"):
                    info.links.append(("mem:" + target, number))

    def context(
        self, applied: Applied, field: FieldView, *, all_files: bool = True
    ) -> tuple[list[LoadedFile], list[Outside]]:
        files: list[LoadedFile] = []
        for path, info in sorted(field.pages.items()) if all_files else ():
            if info.dialect != self.name or not applied.covers(path):
                continue
            name = memory_name(applied, path)
            kind = INSTRUCTIONS if info.norm.role == "instructions" else MEMORY
            ignored = matching(applied, "ignored_memory_patterns", name)
            if ignored is not None:
                how = f"ignored by project.yml ({ignored!r}): never listed nor read"
                files.append(LoadedFile(self.name, path, NEVER, kind, how, order=(2, name)))
                continue
            how = f"listed by name ({name}) when the project is activated; read when the agent decides to"
            if matching(applied, "read_only_memory_patterns", name) is not None:
                how += "; read-only to the agent's tools"
            files.append(LoadedFile(self.name, path, ON_DEMAND, kind, how, order=(1, name)))
        outside = [
            Outside(self.name, "global memories, ~/.serena/memories/global/, listed in every project"),
            Outside(self.name, "project.yml's initial_prompt and Serena's own system prompt, given at activation"),
        ]
        return files, outside

    def page_checks(self, applied: Applied, field: FieldView, info: PageInfo) -> list[Finding]:
        name = memory_name(applied, info.path)
        ignored = matching(applied, "ignored_memory_patterns", name)
        if ignored is None:
            return []
        message = (
            f"Serena never lists nor reads the memory {name!r}: project.yml's ignored_memory_patterns "
            f"{ignored!r} matches it"
        )
        return [make_finding("never-loaded", info.path, None, message)]
