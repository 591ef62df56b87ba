"""What an agent is told at the start of a session: the files it loads, in order, and where each is cut.

Each dialect says, for the folders it applied to, which files its agent loads and how
(``Dialect.context``): ``always`` (every session, from the start), ``on-match`` (when
the agent works on files matching a pattern), ``on-demand`` (the agent reads it when it
decides to: a topic file, a memory by name), ``never`` (the agent's own settings keep it
out), or ``unknown`` (the format leaves it to instructions memtui cannot see). A format's
caps (Claude Code's 200 lines or 25 KB of MEMORY.md, OpenClaw's characters per bootstrap
file) say where the agent stops reading: ``cut_at_line`` is the first line that does not
reach it whole. ``context_report`` puts the agents together with their totals and the
findings that sit in what they load. What lies outside the field (a user's own
``~/.claude/CLAUDE.md``) is never read: the agent's notes name it with the command that
opens it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from memtui.field.checks import Finding
from memtui.field.page import PageInfo

ALWAYS = "always"
ON_MATCH = "on-match"
ON_DEMAND = "on-demand"
NEVER = "never"
UNKNOWN = "unknown"
LOAD_MODES = (ALWAYS, ON_MATCH, ON_DEMAND, NEVER, UNKNOWN)
MEMORY = "memory"
INSTRUCTIONS = "instructions"
# Loaded into a session without the agent choosing to: what must never hold a secret or untrusted text.
AUTOMATIC = (ALWAYS, ON_MATCH)


@dataclass(frozen=True, slots=True)
class Cap:
    """Where an agent stops reading a file: after ``lines`` lines, ``bytes`` bytes (UTF-8) or
    ``chars`` characters, whichever comes first; ``words`` says it as the format's docs do."""

    words: str
    lines: int | None = None
    bytes: int | None = None
    chars: int | None = None

    def cut(self, text: str) -> tuple[int | None, int]:
        """The first line that does not reach the agent whole (None: all of it does), and the
        bytes that do."""
        used_bytes = used_chars = 0
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        for number, line in enumerate(lines, start=1):
            size = len(line.encode("utf-8", "surrogateescape")) + 1
            over = (
                (self.lines is not None and number > self.lines)
                or (self.bytes is not None and used_bytes + size > self.bytes)
                or (self.chars is not None and used_chars + len(line) + 1 > self.chars)
            )
            if over:
                return number, used_bytes
            used_bytes += size
            used_chars += len(line) + 1
        return None, used_bytes


@dataclass(slots=True)
class LoadedFile:
    """One file an agent may load: how, why, and (once measured) how much of it."""

    agent: str
    path: str  # relative to the field root
    loaded: str  # one of LOAD_MODES
    kind: str  # MEMORY or INSTRUCTIONS
    how: str  # in words: "project instructions", "imported by CLAUDE.md:3"
    pattern: str | None = None  # on-match: the files that bring it in
    cap: Cap | None = None
    order: tuple[Any, ...] = ()  # the agent's load order (sorted within the agent)
    via: str | None = None  # the file (and line) that imports it
    bytes: int = 0
    lines: int = 0
    cut_at_line: int | None = None
    loaded_bytes: int = 0  # what reaches the agent of it (all of it, or up to the cut)
    exists: bool = True
    trust: str | None = None  # the page's trust state, for the context view
    findings: list[Finding] = field(default_factory=list)  # findings on this file that the agent would load

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "loaded": self.loaded,
            "pattern": self.pattern,
            "bytes": self.bytes,
            "lines": self.lines,
            "cut_at_line": self.cut_at_line,
            "loaded_bytes": self.loaded_bytes,
            "cap": self.cap.words if self.cap else None,
            "kind": self.kind,
            "how": self.how,
            "via": self.via,
            "exists": self.exists,
            "trust": self.trust,
        }


@dataclass(frozen=True, slots=True)
class Outside:
    """A source the agent loads that is not in the field: named, never read."""

    agent: str
    what: str  # "your user instructions, ~/.claude/CLAUDE.md"
    command: str | None = None  # the command that opens it


@dataclass(slots=True)
class AgentContext:
    agent: str
    title: str
    files: list[LoadedFile]
    outside: list[str] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        """What reaches the agent at the start of every session: its always-loaded files, as cut."""
        return sum(f.loaded_bytes for f in self.files if f.loaded == ALWAYS)

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "title": self.title,
            "files": [f.to_json() for f in self.files],
            "total_bytes": self.total_bytes,
            "outside": list(self.outside),
        }


@dataclass(slots=True)
class ContextReport:
    agents: list[AgentContext]
    findings: list[Finding]
    # What memtui cannot tell, and why: formats no agent is known to load by itself, a field
    # where no agent's own files were found.
    unknown: list[str] = field(default_factory=list)

    def agent(self, name: str) -> AgentContext | None:
        return next((a for a in self.agents if a.agent == name), None)

    def to_json(self) -> dict[str, Any]:
        return {
            "agents": [a.to_json() for a in self.agents],
            "findings": [f.to_json() for f in self.findings],
            "unknown": list(self.unknown),
        }


AGENT_TITLES = {
    "claude-code": "Claude Code",
    "openclaw": "OpenClaw",
    "serena": "Serena",
    "windsurf": "Windsurf (Cascade)",
    "copilot": "GitHub Copilot",
    "kiro": "Kiro",
    "cursor": "Cursor",
    "agents-md": "agents reading AGENTS.md (Codex, Cursor, Copilot, Windsurf ...)",
    "cline": "Cline",
    "roo": "Roo Code",
    "memory-bank": "an agent reading memory-bank/ (Cline, Roo Code ...)",
    "memtui": "an agent keeping memtui's format",
}


def measure(loaded: LoadedFile, info: PageInfo | None, text: Callable[[str], str | None]) -> None:
    """Fill a file's size, lines and cut. Files the agent loads by itself are read (``text``)
    to find the cut; others are measured from the page's summary."""
    if info is None:
        loaded.exists = False
        return
    loaded.bytes = info.size
    loaded.lines = info.line_count
    loaded.loaded_bytes = info.size
    if loaded.cap is not None and loaded.loaded in AUTOMATIC:
        body = text(loaded.path)
        if body is not None:
            loaded.cut_at_line, loaded.loaded_bytes = loaded.cap.cut(body)


def context_report(
    entries: Iterable[LoadedFile],
    outside: Iterable[Outside],
    pages: Mapping[str, PageInfo],
    findings: Iterable[Finding],
    text: Callable[[str], str | None],
    trust: Callable[[PageInfo], str],
    dangerous: frozenset[str],
) -> ContextReport:
    """The agents' contexts from what the dialects said: files measured and ordered, the
    findings of ``dangerous`` rules on files an agent loads by itself attached to them."""
    by_agent: dict[str, list[LoadedFile]] = {}
    seen: set[tuple[str, str]] = set()
    for entry in entries:
        key = (entry.agent, entry.path)
        if key in seen:
            continue  # imported twice: loaded once
        seen.add(key)
        by_agent.setdefault(entry.agent, []).append(entry)
    notes: dict[str, list[str]] = {}
    for item in outside:
        line = item.what + (f" (open it with `{item.command}`)" if item.command else "")
        notes.setdefault(item.agent, []).append(line)
        by_agent.setdefault(item.agent, [])
    per_path: dict[str, list[Finding]] = {}
    for finding in findings:
        if finding.rule in dangerous:
            per_path.setdefault(finding.path, []).append(finding)
    agents: list[AgentContext] = []
    attached: list[Finding] = []
    for agent, files in by_agent.items():
        files.sort(key=lambda f: f.order)
        for loaded in files:
            info = pages.get(loaded.path)
            measure(loaded, info, text)
            if info is not None:
                loaded.trust = trust(info)
            if loaded.loaded in AUTOMATIC:
                loaded.findings = [
                    f
                    for f in per_path.get(loaded.path, [])
                    if loaded.cut_at_line is None or f.line is None or f.line < loaded.cut_at_line
                ]
                attached.extend(f for f in loaded.findings if f not in attached)
        agents.append(AgentContext(agent, AGENT_TITLES.get(agent, agent), files, notes.get(agent, [])))
    agents.sort(key=lambda a: (-len([f for f in a.files if f.loaded == ALWAYS]), a.agent))
    return ContextReport(agents, attached)


def with_mode(entry: LoadedFile, **changes: Any) -> LoadedFile:
    return dataclasses.replace(entry, **changes)
