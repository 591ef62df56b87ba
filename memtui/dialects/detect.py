"""Which dialects a field holds, with the evidence, and what memtui leaves out of scope.

``detect(root)`` first looks at the top of the field for hidden folders a format
keeps memory in (``.claude/``, ``.memory/``, ``.openclaw/``): those paths are
read too (the *scope*). Then it scans, asks every dialect what it sees, and
lists every hidden folder it still skips, with the Markdown files in it and the
command that opens it: nothing is silently out of scope.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.dialects.base import SAMPLE_BYTES, Applied, DetectContext, Dialect, Skipped
from memtui.dialects.formats.agents_md import AgentsMd
from memtui.dialects.formats.basic_memory import BasicMemory
from memtui.dialects.formats.claude_code import ClaudeCode
from memtui.dialects.formats.copilot import Copilot
from memtui.dialects.formats.cursor import Cursor
from memtui.dialects.formats.kiro import Kiro
from memtui.dialects.formats.markdown import Markdown
from memtui.dialects.formats.memory_bank import MemoryBank
from memtui.dialects.formats.memtui_format import MemtuiFormat
from memtui.dialects.formats.obsidian import Obsidian
from memtui.dialects.formats.openclaw import OpenClaw
from memtui.dialects.formats.serena import Serena
from memtui.dialects.formats.sidecar_store import SidecarStore
from memtui.dialects.formats.windsurf import Windsurf
from memtui.errors import MemtuiError
from memtui.field.field import ScanEntry, ScanResult, Scope, scan_field

OBSIDIAN = Obsidian()
# Most specific first: a page goes to the first instance that claims it (memtui's own format last).
DIALECTS: tuple[Dialect, ...] = (
    SidecarStore(),
    Serena(),
    MemoryBank(),  # memory-bank/ and Cline / Roo Code rules by their fixed places
    ClaudeCode(),
    OpenClaw(),
    Windsurf(),  # instruction files by their fixed place: before the note formats, as ClaudeCode
    Copilot(),
    Kiro(),  # .kiro/steering/ and Cursor's rules: instructions by their fixed places
    Cursor(),
    BasicMemory(),
    OBSIDIAN,
    MemtuiFormat(),
    AgentsMd(),  # after every format that may read an AGENTS.md (OpenClaw's bootstrap file)
    Markdown(),
)
BY_NAME = {dialect.name: dialect for dialect in DIALECTS}
MEMTUI = BY_NAME["memtui"]
MARKDOWN = BY_NAME["markdown"]
COUNT_LIMIT = 5000  # entries looked at per skipped folder when counting its Markdown files
COUNT_FOLDERS = 20  # skipped folders of one kind counted (the rest: "+")
# What a folder skipped anywhere in the field is (``locations.SKIPPED_DIRS``).
SKIPPED_KINDS = {
    "node_modules": "dependency folder (JavaScript packages)",
    ".obsidian": "Obsidian's settings",
    ".trash": "Obsidian's trash",
}
# Hidden folders that agents and editors keep instructions or memory in.
AGENT_FOLDERS = {
    ".cursor",
    ".codex",
    ".agents",
    ".windsurf",
    ".continue",
    ".roo",
    ".clinerules",
    ".cline",
    ".github",
    ".gemini",
    ".aider",
    ".kiro",
    ".claude",
    ".memory",
    ".aictx",
    ".openclaw",
    ".serena",
}


@dataclass(slots=True)
class Detection:
    """The dialects applied to a field, how its pages are scoped, and what is left out."""

    applied: list[Applied]
    scope: Scope
    skipped: list[Skipped] = field(default_factory=list)
    forced: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "applied": [a.to_json() for a in self.applied],
            "scope": list(self.scope.include),
            "forced": self.forced,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Detection:
        return cls(
            [Applied.from_json(a) for a in data["applied"]],
            Scope(tuple(str(item) for item in data["scope"])),
            forced=data.get("forced"),
        )


def dialect_names() -> list[str]:
    return [dialect.name for dialect in DIALECTS]


def _hidden_names(root: Path) -> set[str]:
    try:
        return {name for name in os.listdir(root) if name.startswith(".")}
    except OSError:
        return set()


def scope_of(root: Path, force: str | None = None) -> Scope:
    names = _hidden_names(root)
    dialects = DIALECTS if force is None else (BY_NAME[force],)
    include: list[str] = []
    for dialect in dialects:
        include.extend(dialect.scope_paths(root, names))
    return Scope(tuple(dict.fromkeys(include)))


def detect(root: Path, *, force: str | None = None, scanned: ScanResult | None = None) -> tuple[Detection, ScanResult]:
    """The dialects of the field at ``root`` (``force``: only that one), and the scan made with its scope."""
    root = Path(root)
    if force is not None and force not in BY_NAME:
        raise MemtuiError(f"unknown dialect {force!r}", "one of: " + ", ".join(dialect_names()))
    scope = scope_of(root, force)
    if scanned is None:
        scanned = scan_field(root, scope)
    detection = _detect_in(DetectContext(root, scanned), scope, force)
    detection.skipped = _skipped(root, scanned, scope)
    return detection, scanned


def _detect_in(ctx: DetectContext, scope: Scope, force: str | None) -> Detection:
    """The dialects ``ctx`` shows (``force``: only that one), without the skipped folders."""
    applied: list[Applied] = []
    if force is not None:
        dialect = BY_NAME[force]
        found = dialect.detect(ctx) or [Applied(force, "", [])]
        for instance in found:
            instance.evidence.insert(0, "forced with --dialect")
        applied.extend(found)
    else:
        for dialect in DIALECTS:
            applied.extend(dialect.detect(ctx))
        names = {a.name for a in applied}
        if "obsidian" not in names and MEMTUI.name not in names:
            applied.extend(OBSIDIAN.detect_by_links(ctx))
    if force is None and not any(a.name in (MEMTUI.name, MARKDOWN.name) and not a.root for a in applied):
        # Pages no format claims are plain notes: memtui's own rules are not imposed on them.
        applied.append(Applied(MARKDOWN.name, "", ["the pages no other format claims (no marks of memtui's format)"]))
    return Detection(applied, scope, [], force)


class _ChangedContext(DetectContext):
    """What detection sees of the field as a set of page writes would leave it (a proposal):
    the written pages from their bytes (None: deleted), every other file from disk."""

    def __init__(self, root: Path, scanned: ScanResult, changes: Mapping[str, bytes | None]) -> None:
        super().__init__(root, scanned)
        self.changes = changes

    def head(self, rel: str, size: int = SAMPLE_BYTES) -> str:
        if rel in self.changes:
            data = self.changes[rel]
            return data[:size].decode("utf-8", "replace") if data is not None else ""
        return super().head(rel, size)

    def exists(self, rel: str) -> bool:
        if rel in self.changes:
            return self.changes[rel] is not None
        return super().exists(rel)


def detect_after(
    root: Path, scanned: ScanResult, changes: Mapping[str, bytes | None], *, force: str | None = None
) -> Detection:
    """The detection of the field at ``root`` (scanned as ``scanned``) after ``changes`` (page ->
    its new bytes, None: deleted): how a proposal's result would be read (never written to disk)."""
    entries = {entry.path: entry for entry in scanned.entries}
    for path, data in changes.items():
        if data is None:
            entries.pop(path, None)
        else:
            entries[path] = ScanEntry(path, len(data), 0)
    folders: dict[str, list[str]] = {}
    for path in sorted(entries):
        folder, _, name = path.rpartition("/")
        folders.setdefault(folder, []).append(name)
    after = ScanResult(
        [entries[path] for path in sorted(entries)],
        list(scanned.problems),
        set(scanned.files),
        list(scanned.skipped_dirs),
        folders,
    )
    return _detect_in(_ChangedContext(Path(root), after, changes), scope_of(Path(root), force), force)


def _skipped(root: Path, scanned: ScanResult, scope: Scope) -> list[Skipped]:
    out = []
    # Inside a hidden folder that is read in part (.claude/): the parts that are not.
    for top in sorted({item.split("/", 1)[0] for item in scope.include}):
        try:
            children = sorted(os.scandir(root / top), key=lambda e: e.name)
        except OSError:
            continue
        for child in children:
            rel = f"{top}/{child.name}"
            if not child.is_dir(follow_symlinks=False) or scope.admits_dir(rel):
                continue
            count, more = _count_pages(Path(child.path))
            if count:
                files = f"{count}{'+' if more else ''} Markdown file{'s' if count != 1 or more else ''}"
                # Only a format that knows the folder says what it is; else only what was not found in it.
                label = next(filter(None, (d.skipped_label(rel) for d in DIALECTS)), None)
                what = f"{label} with {files}" if label else f"{files}, no memory format recognised in it"
                out.append(Skipped(rel, what, f"memtui {_quoted(root / rel)}"))
    grouped: dict[str, list[str]] = {}  # node_modules in forty packages is one line, not forty
    for name in scanned.skipped_dirs:
        if "/" in name or not name.startswith("."):
            grouped.setdefault(name.rsplit("/", 1)[-1], []).append(name)
            continue
        count, more = _count_pages(root / name)
        if not count and name not in AGENT_FOLDERS:
            what = "hidden folder, no Markdown files"
        else:
            files = f"{count}{'+' if more else ''} Markdown file{'s' if count != 1 or more else ''}"
            what = ("agent folder" if name in AGENT_FOLDERS else "hidden folder") + f" with {files}"
        out.append(Skipped(name, what, f"memtui {_quoted(root / name)}"))
    for base, places in sorted(grouped.items()):
        count, more = 0, False
        for place in places[:COUNT_FOLDERS]:
            found, cut = _count_pages(root / place)
            count, more = count + found, more or cut
        more = more or len(places) > COUNT_FOLDERS
        files = f"{count}{'+' if more else ''} Markdown file{'s' if count != 1 or more else ''}"
        kind = SKIPPED_KINDS.get(base, "folder memtui skips")
        where = f"{len(places)} {base} folders, the first" if len(places) > 1 else kind
        out.append(Skipped(places[0], f"{where}: {kind} with {files} in all", f"memtui {_quoted(root / places[0])}"))
    unread, examples = scanned.unread_markdown
    if unread:
        shown = ", ".join(examples) + (" ..." if unread > len(examples) else "")
        out.append(
            Skipped(
                examples[0],
                f"{unread} Markdown-like file{'s' if unread != 1 else ''} that {'are' if unread != 1 else 'is'} "
                f"not a *.md page ({shown}): memtui reads *.md only; copy one to a .md name to review it",
                "",  # no command opens them
            )
        )
    return out


def _count_pages(folder: Path) -> tuple[int, bool]:
    """How many ``*.md`` files a folder holds (not following symlinks; bounded)."""
    count = seen = 0
    stack = [folder]
    while stack:
        try:
            with os.scandir(stack.pop()) as entries:
                for entry in entries:
                    seen += 1
                    if seen > COUNT_LIMIT:
                        return count, True
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
                    elif entry.name.endswith(".md") and entry.is_file(follow_symlinks=False):
                        count += 1
        except OSError:
            continue
    return count, False


def _quoted(path: Path) -> str:
    text = os.fspath(path)
    return text if all(c.isalnum() or c in "/._-~" for c in text) else "'" + text.replace("'", "'\\''") + "'"


# --------------------------------------------------------------------------- instruction paths
# The paths agents load as instructions: one list, so no surface can forget one. A page written
# by an agent must never choose to become one of these files: a quarantined note whose own
# ``move_to:`` installs it as ``CLAUDE.md`` or under ``.claude/rules/`` would be loaded, as the
# user's own instructions, into every session of that agent. ``instruction_path(path)`` says what
# a path becomes ("CLAUDE.md: loaded by Claude Code every session"), or None for a plain page.
# The match is made on every folder level (a repository's subfolder has its own ``CLAUDE.md`` and
# ``AGENTS.md``), case-folded and NFC-normalised (on a case-insensitive disk ``claude.md`` *is*
# ``CLAUDE.md``): a list that errs towards asking the reviewer is the safe one.

# File names loaded wherever they are: (name, what a file of that name is).
_NAMES: dict[str, str] = {
    "claude.md": "loaded by Claude Code every session",
    "claude.local.md": "loaded by Claude Code every session (personal instructions)",
    "agents.md": "loaded by Codex, OpenClaw and other agents every session",
    "soul.md": "an OpenClaw bootstrap file (at a workspace's top), injected every session",
    "tools.md": "an OpenClaw bootstrap file (at a workspace's top), injected every session",
    "heartbeat.md": "an OpenClaw bootstrap file (at a workspace's top), injected every session",
    "identity.md": "an identity file (OpenClaw, memtui's format), loaded every session",
    "user.md": "an OpenClaw bootstrap file (at a workspace's top), injected every session",
    "bootstrap.md": "an OpenClaw bootstrap file (at a workspace's top), injected on the first run",
    "memory.md": "a routing index (memtui's format, OpenClaw, Claude Code), loaded every session",
    ".cursorrules": "Cursor's rules, loaded every session",
    ".windsurfrules": "Windsurf's rules, loaded every session",
    ".clinerules": "Cline's rules, loaded every session",
}
# Folder paths (as consecutive path parts) whose every file an agent loads as instructions.
_FOLDERS: tuple[tuple[tuple[str, ...], str], ...] = (
    ((".claude",), "Claude Code's instructions, rules, skills and agents"),
    ((".cursor", "rules"), "Cursor's rules, loaded by the agent"),
    ((".windsurf", "rules"), "Windsurf's rules, loaded by the agent"),
    ((".github", "instructions"), "GitHub Copilot's instructions"),
    ((".kiro", "steering"), "Kiro's steering files, loaded by the agent"),
    ((".clinerules",), "Cline's rules, loaded every session"),
    (("memory-bank",), "Cline's memory bank, read at the start of every task"),
    ((".serena", "memories"), "Serena's memories, offered to the agent every session"),
)
_EXACT: dict[tuple[str, ...], str] = {
    (".github", "copilot-instructions.md"): "GitHub Copilot's instructions, loaded every session",
}


def _parts(path: str) -> list[str]:
    normal = unicodedata.normalize("NFC", path.replace("\\", "/")).casefold()
    return [part for part in normal.split("/") if part not in ("", ".")]


def instruction_path(path: str) -> str | None:
    """What the field-relative ``path`` is to an agent, when an agent loads it as instructions
    (``"CLAUDE.md: loaded by Claude Code every session"``); None for a plain memory page."""
    parts = _parts(path)
    if not parts:
        return None
    shown = path.replace("\\", "/").strip("/")
    name = parts[-1]
    if name in _NAMES:
        return f"{shown}: {_NAMES[name]}"
    for start in range(len(parts)):
        for folder, what in _FOLDERS:
            end = start + len(folder)
            if end < len(parts) and tuple(parts[start:end]) == folder:  # a file inside the folder
                return f"{shown}: {what}"
        for exact, what in _EXACT.items():
            if tuple(parts[start:]) == exact:
                return f"{shown}: {what}"
    if name == "skill.md" and "skills" in parts[:-1]:
        return f"{shown}: a skill, its instructions loaded when the agent uses it"
    return None
