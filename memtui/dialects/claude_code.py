"""Claude Code: ``CLAUDE.md`` files and rules (instructions), and the auto-memory folder.

From Claude Code's documentation (memory): project memory is ``./CLAUDE.md`` or
``./.claude/CLAUDE.md`` (plus ``CLAUDE.local.md`` and ``.claude/rules/*.md``),
loaded in full at every session; a ``CLAUDE.md`` can import other files with
``@path/to/file`` (relative to the importing file, ``~/`` for home; not inside
code spans or blocks; up to 5 hops deep). The *auto memory* is a folder
(``~/.claude/projects/<project>/memory/``, and per-subagent
``.claude/agent-memory/<name>/``) holding a ``MEMORY.md`` index, of which only
the first 200 lines or 25,000 bytes (whichever comes first) are loaded at the
start of a session, and topic files read on demand, whose frontmatter has
``name``, ``description`` and ``type`` (``user``, ``feedback``, ``project``,
``reference``; sometimes under ``metadata:``).

No field here says a human reviewed a memory: trust stays "no review record".
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from memtui.dialects.base import Applied, DetectContext, Dialect
from memtui.field.body import FENCE_RE, mask_code_spans
from memtui.field.checks import Finding, make_finding
from memtui.field.field import FieldView
from memtui.field.page import PageInfo

AGENT_VIEW_LINES = 200
AGENT_VIEW_BYTES = 25_000
MAX_IMPORT_HOPS = 5
TOPIC_TYPES = ("user", "feedback", "project", "reference")
_TYPE_RE = re.compile(r"^\s*type:\s*['\"]?(user|feedback|project|reference)['\"]?\s*$", re.MULTILINE)
_IMPORT_RE = re.compile(r"(?:(?<=\s)|^)@((?:~/|\.{1,2}/|/)?[\w.~-][^\s`'\"<>()\[\]]*)")
PROJECT_FILES = ("CLAUDE.md", "CLAUDE.local.md")
# A Claude Code folder's own folders: instructions (rules, subagents, slash commands, skills) and memory.
INSTRUCTION_FOLDERS = ("rules", "agents", "commands", "skills")
INSTRUCTION_WORDS = {
    "rules": "rules",
    "agents": "subagent definitions",
    "commands": "slash commands",
    "skills": "skills",
}
USER_FOLDERS = (*INSTRUCTION_FOLDERS, "projects", "agent-memory")
# Where Claude Code keeps auto memory, relative to a Claude Code folder (``.claude/`` or ``~/.claude``).
_AUTO_PLACE_RE = re.compile(r"^(?:memory|projects/[^/]+/memory|agent-memory/[^/]+)/$")
TOPIC_SAMPLE = 6


def _is_topic_folder(ctx: DetectContext, folder: str, names: list[str]) -> bool:
    prefix = folder + "/" if folder else ""
    for name in [n for n in names if n != "MEMORY.md"][:TOPIC_SAMPLE]:
        if _TYPE_RE.search(ctx.head(prefix + name, 2048)):
            return True
    return False


def holds_memory(folder: Path) -> bool:
    """Does a folder inside ``.claude/`` hold auto memory: a ``MEMORY.md``, or topic files with ``type:``?"""
    if (folder / "MEMORY.md").is_file():
        return True
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".md"))[:TOPIC_SAMPLE]
    except OSError:
        return False
    for name in names:
        try:
            with open(folder / name, "rb") as handle:
                head = handle.read(2048).decode("utf-8", "replace")
        except OSError:
            continue
        if _TYPE_RE.search(head):
            return True
    return False


class ClaudeCode(Dialect):
    name = "claude-code"
    title = "Claude Code"

    def scope_paths(self, root: Path, names: set[str]) -> list[str]:
        if ".claude" not in names:
            return []
        wanted = [
            ".claude/CLAUDE.md",
            ".claude/rules/",
            ".claude/agent-memory/",
            ".claude/projects/",
            ".claude/memory/",
        ]
        found = [item for item in wanted if os.path.lexists(root / item.rstrip("/"))]
        # Any other folder of .claude/ that holds auto memory (an index or typed topic files) is read too.
        try:
            children = sorted(os.scandir(root / ".claude"), key=lambda entry: entry.name)
        except OSError:
            children = []
        for child in children:
            item = f".claude/{child.name}/"
            if item in wanted or child.name in INSTRUCTION_FOLDERS or not child.is_dir(follow_symlinks=False):
                continue
            if holds_memory(Path(child.path)):
                found.append(item)
        return found

    def skipped_label(self, rel: str) -> str | None:
        top, _, name = rel.partition("/")
        if top == ".claude" and name in INSTRUCTION_WORDS:
            return f"Claude Code {INSTRUCTION_WORDS[name]} (instructions)"
        return None

    def detect(self, ctx: DetectContext) -> list[Applied]:
        found: list[Applied] = []
        project: list[str] = []
        for folder, names in ctx.folders().items():
            base = folder + "/" if folder else ""
            if folder == ".claude/rules" or folder.startswith(".claude/rules/"):
                project.extend(base + name for name in names)
            else:
                project.extend(base + name for name in PROJECT_FILES if name in names)
        user_folder = "CLAUDE.md" in ctx.page_set and any(ctx.is_dir(name) for name in USER_FOLDERS)
        if project or user_folder:
            shown = sorted(set(project))
            evidence = shown[:4] + ([f"and {len(shown) - 4} more"] if len(shown) > 4 else [])
            if user_folder:
                # A Claude Code folder itself (~/.claude, or a copy of it): CLAUDE.md beside its own folders.
                present = [name + "/" for name in USER_FOLDERS if ctx.is_dir(name)]
                evidence = ["CLAUDE.md with " + ", ".join(present)] + [e for e in evidence if e != "CLAUDE.md"]
            found.append(Applied(self.name, "", evidence, {"kind": "user" if user_folder else "project"}))
        root_posix = ctx.root.resolve().as_posix() + "/"
        memory_roots: list[str] = []
        for folder, names in sorted(ctx.folders().items()):
            if any(done == "" or folder.startswith(done + "/") for done in memory_roots):
                continue  # inside an auto-memory folder already found
            full = root_posix + (folder + "/" if folder else "")
            inside = full.rpartition("/.claude/")[2] if "/.claude/" in full else None
            by_place = (inside is not None and _AUTO_PLACE_RE.match(inside) is not None) or (
                user_folder and _AUTO_PLACE_RE.match(folder + "/") is not None
            )
            if by_place:
                why = "a Claude Code auto-memory folder"
            elif (
                inside is not None
                and inside.count("/") == 1
                and inside.split("/", 1)[0] not in INSTRUCTION_FOLDERS
                and ("MEMORY.md" in names or _is_topic_folder(ctx, folder, names))
            ):
                why = "a memory index or topic files inside .claude/"
            elif (
                "MEMORY.md" in names
                and folder.rsplit("/", 1)[-1] in ("memory", "")
                and _is_topic_folder(ctx, folder, names)
            ):
                why = "topic files with name/description/type"
            else:
                continue
            where = (folder + "/") if folder else "this folder"
            topics = len(names) - ("MEMORY.md" in names)
            index = "MEMORY.md + " if "MEMORY.md" in names else ""
            found.append(
                Applied(self.name, folder, [f"{where}{index}{topics} topic files ({why})"], {"kind": "auto-memory"})
            )
            memory_roots.append(folder)
        return found

    def claims(self, applied: Applied, path: str) -> bool:
        kind = applied.params.get("kind")
        if kind == "auto-memory":
            return applied.covers(path)
        name = path.rsplit("/", 1)[-1]
        if kind == "user" and path.split("/", 1)[0] in INSTRUCTION_FOLDERS:
            return True
        return name in PROJECT_FILES or path.startswith(".claude/")

    def read(self, applied: Applied, info: PageInfo, root: Path, text: str) -> None:
        info.dialect = self.name
        norm = info.writable_norm()
        local = applied.local(info.path)
        if applied.params.get("kind") == "auto-memory":
            if local == "MEMORY.md":
                norm.role = "index"
                norm.kind = "memory index"
                norm.agent_view = _agent_view(text)
                return
            meta = info.meta
            nested = meta.get("metadata")
            if not isinstance(nested, dict):
                nested = {}
            name = meta.get("name", nested.get("name"))
            if isinstance(name, str) and name.strip():
                norm.title = name.strip()
            description = meta.get("description", nested.get("description"))
            if isinstance(description, str) and description.strip():
                norm.description = description.strip()
            kind = meta.get("type", nested.get("type"))
            if isinstance(kind, str) and kind.strip():
                norm.kind = kind.strip()
            session = meta.get("originSessionId")
            if isinstance(session, str) and session:
                norm.session = session
            norm.role = "memory"
            return
        norm.role = "instructions"
        folder = info.path.rsplit("/", 2)[-2] if "/" in info.path else ""
        norm.kind = {"rules": "rules", "agents": "subagent", "commands": "command", "skills": "skill"}.get(
            folder, "instructions"
        )
        imports = _imports(text, info.body_line - 1 if info.fm_present else 0)
        if imports:
            # Lists, as this reading has always made them (NormalPage.from_dict makes tuples): typing only.
            norm.imports = imports

    def page_checks(self, applied: Applied, field: FieldView, info: PageInfo) -> list[Finding]:
        out: list[Finding] = []
        view = info.norm.agent_view
        if isinstance(view, dict) and view.get("ends_at"):
            out.append(
                make_finding(
                    "claude-memory-truncated",
                    info.path,
                    view["ends_at"] + 1,
                    f"Claude Code loads only the first {AGENT_VIEW_LINES} lines or {AGENT_VIEW_BYTES:,} bytes "
                    f"of MEMORY.md: lines {view['ends_at'] + 1}-{view['lines']} "
                    f"({view['lines'] - view['ends_at']} of {view['lines']}) never reach a session",
                )
            )
        for target, line in info.norm.imports or []:
            out.extend(_import_findings(field, info, target, line))
        return out


def _agent_view(text: str) -> dict[str, Any]:
    """How much of an auto-memory MEMORY.md Claude Code loads: the line it stops after, if it stops."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    total_bytes = 0
    ends_at = None
    for number, line in enumerate(lines, start=1):
        total_bytes += len(line.encode("utf-8", "surrogateescape")) + 1
        if number > AGENT_VIEW_LINES or total_bytes > AGENT_VIEW_BYTES:
            ends_at = number - 1
            break
    return {"lines": len(lines), "ends_at": ends_at}


def _imports(text: str, skip_lines: int) -> list[tuple[str, int]]:
    """``@path`` imports outside code, as ``(target, line)``."""
    found: list[tuple[str, int]] = []
    fence = ""
    for number, line in enumerate(text.split("\n"), start=1):
        if number <= skip_lines:
            continue
        marker = FENCE_RE.match(line)
        if marker:
            mark = marker.group(1)
            if not fence:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence):
                fence = ""
            continue
        if fence or "@" not in line:
            continue
        for match in _IMPORT_RE.finditer(mask_code_spans(line) if "`" in line else line):
            target = match.group(1).rstrip(".,;:!?")
            if target:
                found.append((target, number))
    return found


def _import_findings(field: FieldView, info: PageInfo, target: str, line: int) -> list[Finding]:
    """An import that names a path (a ``/`` or a file extension) must exist; ``~/`` is outside the field."""
    if target.startswith("~/") or os.path.isabs(target):
        return []
    if "/" not in target and "." not in target:
        return []  # "@alice" is a mention as often as a file
    folder = info.path.rsplit("/", 1)[0] if "/" in info.path else ""
    joined = os.path.normpath(os.path.join(folder, target)).replace(os.sep, "/")
    if joined.startswith(".."):
        return [make_finding("import-broken", info.path, line, f"@{target} points outside the field")]
    absolute = os.path.join(field.content_root, *joined.split("/"))
    if os.path.lexists(absolute):
        return []
    return [make_finding("import-broken", info.path, line, f"@{target}: no such file")]
