"""Which dialects a field holds, with the evidence, and what memtui leaves out of scope.

``detect(root)`` first looks at the top of the field for hidden folders a format
keeps memory in (``.claude/``, ``.memory/``, ``.openclaw/``): those paths are
read too (the *scope*). Then it scans, asks every dialect what it sees, and
lists every hidden folder it still skips, with the Markdown files in it and the
command that opens it: nothing is silently out of scope.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.dialects.base import Applied, DetectContext, Dialect, Skipped
from memtui.dialects.basic_memory import BasicMemory
from memtui.dialects.claude_code import ClaudeCode
from memtui.dialects.markdown import Markdown
from memtui.dialects.memtui_format import MemtuiFormat
from memtui.dialects.obsidian import Obsidian
from memtui.dialects.openclaw import OpenClaw
from memtui.dialects.serena import Serena
from memtui.dialects.sidecar_store import SidecarStore
from memtui.errors import MemtuiError
from memtui.field.field import ScanResult, Scope, scan_field

OBSIDIAN = Obsidian()
# Most specific first: a page goes to the first instance that claims it (memtui's own format last).
DIALECTS: tuple[Dialect, ...] = (
    SidecarStore(),
    Serena(),
    ClaudeCode(),
    OpenClaw(),
    BasicMemory(),
    OBSIDIAN,
    MemtuiFormat(),
    Markdown(),
)
BY_NAME = {dialect.name: dialect for dialect in DIALECTS}
MEMTUI = BY_NAME["memtui"]
MARKDOWN = BY_NAME["markdown"]
COUNT_LIMIT = 5000  # entries looked at per skipped folder when counting its Markdown files
# Hidden folders that agents and editors keep instructions or memory in.
AGENT_FOLDERS = {
    ".cursor",
    ".codex",
    ".agents",
    ".windsurf",
    ".continue",
    ".roo",
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
    ctx = DetectContext(root, scanned)
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
    return Detection(applied, scope, _skipped(root, scanned, scope), force), scanned


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
    for name in scanned.skipped_dirs:
        count, more = _count_pages(root / name)
        if not count and name not in AGENT_FOLDERS:
            what = "hidden folder, no Markdown files"
        else:
            files = f"{count}{'+' if more else ''} Markdown file{'s' if count != 1 or more else ''}"
            what = ("agent folder" if name in AGENT_FOLDERS else "hidden folder") + f" with {files}"
        out.append(Skipped(name, what, f"memtui {_quoted(root / name)}"))
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
