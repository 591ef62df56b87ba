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
from memtui.dialects.loading import ALWAYS, INSTRUCTIONS, MEMORY, ON_DEMAND, ON_MATCH, Cap, LoadedFile, Outside
from memtui.field.body import lines_outside_fences, mask_code_spans
from memtui.field.checks import Finding, make_finding
from memtui.field.field import FieldView
from memtui.field.page import PageInfo
from memtui.store.files import read_head

AGENT_VIEW_LINES = 200
AGENT_VIEW_BYTES = 25_000
MAX_IMPORT_HOPS = 5
TOPIC_TYPES = ("user", "feedback", "project", "reference")
_TYPE_RE = re.compile(r"^\s*type:\s*['\"]?(user|feedback|project|reference)['\"]?\s*$", re.MULTILINE)
_IMPORT_RE = re.compile(r"(?:(?<=\s)|^)@((?:~/|\.{1,2}/|/)?[\w.~-][^\s`'\"<>()\[\]]*)")
PROJECT_FILES = ("CLAUDE.md", "CLAUDE.local.md")
# Read when used: a subagent's prompt when it runs, a command when typed, a skill's body when
# the agent picks it (its name and description are listed every session).
ON_USE = {
    "agents": "a subagent's prompt, read when the subagent runs",
    "commands": "a slash command, read when typed",
    "skills": "a skill: its name and description are listed every session, the rest read when used",
}
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
AGENT = "claude-code"
MEMORY_CAP = Cap(
    f"the first {AGENT_VIEW_LINES} lines or {AGENT_VIEW_BYTES:,} bytes, whichever comes first",
    lines=AGENT_VIEW_LINES,
    bytes=AGENT_VIEW_BYTES,
)
# Paths an import must never name: keys, credentials, the system's password files.
_CREDENTIAL_RE = re.compile(
    r"(?:^|/)(?:\.ssh|\.gnupg|\.aws|\.azure|\.kube|\.docker|\.config/gcloud|\.password-store)(?:/|$)"
    r"|(?:^|/)(?:id_rsa|id_dsa|id_ecdsa|id_ed25519|\.netrc|\.git-credentials|\.npmrc|\.pypirc|\.env(?:\.[\w.-]+)?"
    r"|credentials(?:\.json)?|shadow|passwd|sudoers)$"
    r"|\.(?:pem|key|p12|pfx|keystore|jks|kdbx)$",
    re.IGNORECASE,
)


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
            found = read_head(folder / name, 2048)  # no symlink, no FIFO (which would block for ever)
            head = found[0].decode("utf-8", "replace") if found is not None else ""
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
            where = (folder + "/") if folder else "this folder: "
            others = len(names) - ("MEMORY.md" in names)  # counted, not each read: no claim they are topics
            index = "MEMORY.md + " if "MEMORY.md" in names else ""
            counted = f"{others} other Markdown file{'s' if others != 1 else ''}"
            found.append(Applied(self.name, folder, [f"{where}{index}{counted} ({why})"], {"kind": "auto-memory"}))
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

    def context(
        self, applied: Applied, field: FieldView, *, all_files: bool = True
    ) -> tuple[list[LoadedFile], list[Outside]]:
        kind = applied.params.get("kind")
        if kind == "auto-memory":
            return self._memory_context(applied, field, all_files)
        files: list[LoadedFile] = []
        outside: list[Outside] = []
        user = kind == "user"
        for path, info in sorted(field.pages.items()):
            if info.dialect != self.name or not applied.covers(path) or info.norm.role != "instructions":
                continue
            name = path.rsplit("/", 1)[-1]
            top = path.split("/", 1)[0]
            if path in ("CLAUDE.md", ".claude/CLAUDE.md"):
                how = "your user instructions" if user else "project instructions"
                files.append(LoadedFile(AGENT, path, ALWAYS, INSTRUCTIONS, how, order=(2, path)))
            elif path == "CLAUDE.local.md":
                files.append(LoadedFile(AGENT, path, ALWAYS, INSTRUCTIONS, "local project instructions", order=(4,)))
            elif path.startswith(".claude/rules/") or (user and top == "rules"):
                pattern = _rule_paths(info)
                mode, how = (ON_MATCH, "a rule for the files it names") if pattern else (ALWAYS, "a rule")
                files.append(LoadedFile(AGENT, path, mode, INSTRUCTIONS, how, pattern=pattern, order=(3, path)))
            elif name == "CLAUDE.md":
                folder = path.rsplit("/", 1)[0].removesuffix("/.claude")
                how = "instructions of a subfolder, loaded when the agent reads files there"
                files.append(
                    LoadedFile(AGENT, path, ON_MATCH, INSTRUCTIONS, how, pattern=f"{folder}/**", order=(5, path))
                )
            elif (folder := (top if user else path.removeprefix(".claude/").split("/", 1)[0])) in ON_USE and (
                user or path.startswith(".claude/")
            ):
                if all_files:
                    files.append(LoadedFile(AGENT, path, ON_DEMAND, INSTRUCTIONS, ON_USE[folder], order=(7, path)))
        files += _imported(field, files, outside)
        if not user:
            outside += [
                Outside(AGENT, "your user instructions, ~/.claude/CLAUDE.md and ~/.claude/rules/", "memtui ~/.claude"),
                Outside(AGENT, "CLAUDE.md files in the folders above this one (loaded too when they exist)"),
                Outside(
                    AGENT,
                    f"this project's auto memory, ~/.claude/projects/<project>/memory/MEMORY.md ({MEMORY_CAP.words})",
                    "memtui ~/.claude/projects",
                ),
            ]
        return files, outside

    def _memory_context(
        self, applied: Applied, field: FieldView, all_files: bool
    ) -> tuple[list[LoadedFile], list[Outside]]:
        root = applied.root
        prefix = root + "/" if root else ""
        inside = (field.root.resolve().as_posix() + "/" + prefix).rpartition("/.claude/")[2]
        subagent = inside.split("/")[1] if inside.startswith("agent-memory/") and inside.count("/") >= 2 else None
        agent = f"{AGENT}/{subagent}" if subagent else AGENT
        files: list[LoadedFile] = []
        index = field.pages.get(prefix + "MEMORY.md")
        if not all_files:
            found = [index] if index is not None and index.dialect == self.name else []
        else:
            found = [info for path, info in sorted(field.pages.items()) if applied.covers(path)]
        for info in found:
            path = info.path
            if info.dialect != self.name:
                continue
            if path == prefix + "MEMORY.md":
                how = f"the {subagent} subagent's memory index" if subagent else "the auto-memory index"
                files.append(LoadedFile(agent, path, ALWAYS, MEMORY, how, cap=MEMORY_CAP, order=(6, 0)))
            else:
                how = "a topic file, read when the agent decides to"
                files.append(LoadedFile(agent, path, ON_DEMAND, MEMORY, how, order=(8, path)))
        return files, []

    def page_checks(self, applied: Applied, field: FieldView, info: PageInfo) -> list[Finding]:
        out: list[Finding] = []
        if applied.params.get("kind") == "auto-memory":
            out.extend(_unindexed(applied, field, info))
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


_POINTER_RE = re.compile(r"\]\(<?([^)<>\s]+\.md)>?(?:#[^)]*)?\)|\[\[([^\[\]|#\n]+)")


def _agent_view(text: str) -> dict[str, Any]:
    """How much of an auto-memory MEMORY.md Claude Code loads (the line it stops after, if it
    stops), and the topic files it points at: (target, line), Markdown links and wikilinks."""
    cut, _ = MEMORY_CAP.cut(text)
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    pointers: list[list[Any]] = []
    for number, line in lines_outside_fences(text):
        if "](" not in line and "[[" not in line:
            continue
        for match in _POINTER_RE.finditer(mask_code_spans(line) if "`" in line else line):
            target = (match.group(1) or match.group(2) or "").strip()
            if target and "://" not in target:
                pointers.append([target, number])
    return {"lines": len(lines), "ends_at": None if cut is None else cut - 1, "pointers": pointers}


def _imports(text: str, skip_lines: int) -> list[tuple[str, int]]:
    """``@path`` imports outside code, as ``(target, line)``."""
    found: list[tuple[str, int]] = []
    for number, line in lines_outside_fences(text):
        if number <= skip_lines or "@" not in line:
            continue
        for match in _IMPORT_RE.finditer(mask_code_spans(line) if "`" in line else line):
            target = match.group(1).rstrip(".,;:!?")
            if target:
                found.append((target, number))
    return found


def _import_findings(field: FieldView, info: PageInfo, target: str, line: int) -> list[Finding]:
    """An import that names a path (a ``/`` or a file extension) must exist, inside the field.

    One leaving the field (``~/``, an absolute path, ``..`` past the root) loads a file memtui
    cannot see into every session: a finding, and an error when it names a key or credential."""
    if "/" not in target and "." not in target:
        return []  # "@alice" is a mention as often as a file
    folder = info.path.rsplit("/", 1)[0] if "/" in info.path else ""
    outside = target.startswith("~") or os.path.isabs(target)
    joined = target if outside else os.path.normpath(os.path.join(folder, target)).replace(os.sep, "/")
    if outside or joined == ".." or joined.startswith("../"):
        if _CREDENTIAL_RE.search(target.replace("\\", "/")):
            message = f"@{target} imports a key or credential file into every session that loads this file"
            return [make_finding("import-credential", info.path, line, message)]
        message = f"@{target} leaves the field: the agent loads a file memtui cannot show you"
        return [make_finding("import-outside", info.path, line, message)]
    absolute = os.path.join(field.content_root, *joined.split("/"))
    if os.path.lexists(absolute):
        return []
    return [make_finding("import-broken", info.path, line, f"@{target}: no such file")]


def import_target(info_path: str, target: str) -> str | None:
    """The field path an import names (None: it leaves the field)."""
    if target.startswith("~") or os.path.isabs(target):
        return None
    folder = info_path.rsplit("/", 1)[0] if "/" in info_path else ""
    joined = os.path.normpath(os.path.join(folder, target)).replace(os.sep, "/")
    return None if joined == ".." or joined.startswith("../") else joined


def _rule_paths(info: PageInfo) -> str | None:
    """A rule's ``paths`` (one glob or a list), as one pattern; None: it applies always."""
    value = info.meta.get("paths")
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, list):
        globs = [str(item).strip() for item in value if str(item).strip()]
        return ", ".join(globs) if globs else None
    return None


def _imported(field: FieldView, loaded: list[LoadedFile], outside: list[Outside]) -> list[LoadedFile]:
    """The files the loaded instruction files import (``@path``), up to five hops, each loaded as
    its importer is; imports leaving the field are named, never read."""
    found: list[LoadedFile] = []
    seen = {entry.path for entry in loaded}
    frontier = [(entry, 0) for entry in loaded]
    while frontier:
        entry, hops = frontier.pop(0)
        info = field.pages.get(entry.path)
        if info is None or hops >= MAX_IMPORT_HOPS:
            continue
        for target, line in info.norm.imports or []:
            if "/" not in target and "." not in target:
                continue
            path = import_target(entry.path, target)
            if path is None:
                outside.append(Outside(AGENT, f"@{target}, imported by {entry.path}:{line} (outside the field)"))
                continue
            if path in seen:
                continue
            seen.add(path)
            how = f"imported by {entry.path}:{line}" + (f" ({hops + 1} hops)" if hops else "")
            child = LoadedFile(
                AGENT,
                path,
                entry.loaded,
                INSTRUCTIONS,
                how,
                pattern=entry.pattern,
                order=(*entry.order, line),
                via=f"{entry.path}:{line}",
            )
            found.append(child)
            frontier.append((child, hops + 1))
    return found


def _unindexed(applied: Applied, field: FieldView, info: PageInfo) -> list[Finding]:
    """A topic file MEMORY.md never points at (or points at only past where the agent stops
    reading): the agent does not know it exists."""
    prefix = applied.root + "/" if applied.root else ""
    index = field.pages.get(prefix + "MEMORY.md")
    if index is None or info.path == index.path:
        return []
    view = index.norm.agent_view if isinstance(index.norm.agent_view, dict) else {}
    ends_at = view.get("ends_at")
    local = applied.local(info.path)
    stem = local[:-3] if local.endswith(".md") else local
    lines = [
        int(line)
        for target, line in view.get("pointers", ())
        if isinstance(target, str) and os.path.normpath(target).replace(os.sep, "/").removesuffix(".md") in (stem,)
    ]
    if not lines:
        message = f"{index.path} never points at this topic file: the agent does not know it exists"
        return [make_finding("topic-unindexed", info.path, None, message)]
    if ends_at is not None and min(lines) > ends_at:
        message = (
            f"{index.path} points at it only on line {min(lines)}, past line {ends_at}, where the agent "
            "stops reading: the agent does not know it exists"
        )
        return [make_finding("topic-unindexed", info.path, None, message)]
    return []
