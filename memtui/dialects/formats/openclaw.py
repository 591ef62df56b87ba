"""OpenClaw workspaces: the agent's bootstrap files, a curated MEMORY.md, dated daily logs.

From OpenClaw's documentation (agent workspace): a workspace (default
``~/.openclaw/workspace``) holds ``AGENTS.md`` (operating instructions),
``SOUL.md`` (persona and boundaries), ``USER.md`` (who the user is),
``IDENTITY.md`` (name, vibe), ``TOOLS.md`` (local tool notes), ``HEARTBEAT.md``
(periodic checks), ``BOOTSTRAP.md`` (first run), ``MEMORY.md`` (curated
long-term memory, capped at 15,000 characters), ``memory/YYYY-MM-DD.md`` (daily
running logs: a timeline whose dates are record dates) and ``skills/``
(instructions for the agent, not memory facts). The bootstrap files are loaded
into every session. Instructions often name files by template
(``memory/YYYY-MM-DD.md``): such a pointer is a pattern, not a broken link.

The format claims only the files carrying its marks (``claims``): the bootstrap
files, ``MEMORY.md``, ``memory/`` and ``skills/``. Two bootstrap names side by
side (``USER.md`` beside memtui's ``IDENTITY.md``) add that knowledge; every
other page of the folder is read as the field's other formats read it.
"""

from __future__ import annotations

import re
from pathlib import Path

from memtui.dialects.base import Applied, DetectContext, Dialect
from memtui.dialects.loading import ALWAYS, INSTRUCTIONS, MEMORY, ON_DEMAND, Cap, LoadedFile, Outside
from memtui.field.field import FieldView
from memtui.field.page import PageInfo

BOOTSTRAP = ("AGENTS.md", "SOUL.md", "USER.md", "IDENTITY.md", "TOOLS.md", "HEARTBEAT.md", "BOOTSTRAP.md")
INSTRUCTION_FILES = {"AGENTS.md", "SOUL.md", "TOOLS.md", "HEARTBEAT.md", "BOOTSTRAP.md", "IDENTITY.md"}
MEMORY_CAP_CHARS = 15_000
BOOTSTRAP_MAX_CHARS = 20_000  # agents.defaults.bootstrapMaxChars, OpenClaw's documented default
BOOTSTRAP_CAP = Cap(
    f"{BOOTSTRAP_MAX_CHARS:,} characters (agents.defaults.bootstrapMaxChars in ~/.openclaw/openclaw.json; "
    "a longer file is injected truncated)",
    chars=BOOTSTRAP_MAX_CHARS,
)
MEMORY_CAP = Cap(f"{MEMORY_CAP_CHARS:,} characters", chars=MEMORY_CAP_CHARS)
# What OpenClaw injects at the start of every session, in its order (BOOTSTRAP.md on the first run only).
INJECTED = ("AGENTS.md", "SOUL.md", "TOOLS.md", "IDENTITY.md", "USER.md", "HEARTBEAT.md", "BOOTSTRAP.md", "MEMORY.md")
_DAILY_RE = re.compile(r"^memory/(\d{4}-\d{2}-\d{2})(?:[-_ ].*)?\.md$")


AGENT = "openclaw"


class OpenClaw(Dialect):
    name = "openclaw"
    title = "OpenClaw workspace"

    def scope_paths(self, root: Path, names: set[str]) -> list[str]:
        return [".openclaw/workspace/"] if ".openclaw" in names else []

    def claims(self, applied: Applied, path: str) -> bool:
        """The workspace's own files only (see the module): never a page it has no word for."""
        if not applied.covers(path):
            return False
        local = applied.local(path)
        return local in BOOTSTRAP or local == "MEMORY.md" or local.startswith(("memory/", "skills/"))

    def detect(self, ctx: DetectContext) -> list[Applied]:
        found = []
        for folder, names in sorted(ctx.folders().items()):
            if folder.count("/") > 2:
                continue
            present = [n for n in BOOTSTRAP if n in names]
            state = ctx.exists((folder + "/" if folder else "") + ".openclaw/workspace-state.json")
            if len(present) >= 2 or (present and state):
                evidence = present + ([".openclaw/workspace-state.json"] if state else [])
                daily = sum(1 for p in ctx.pages if p.startswith((folder + "/" if folder else "") + "memory/"))
                if daily:
                    evidence.append(f"memory/ ({daily} pages)")
                found.append(Applied(self.name, folder, evidence))
        return found

    def context(
        self, applied: Applied, field: FieldView, *, all_files: bool = True
    ) -> tuple[list[LoadedFile], list[Outside]]:
        prefix = applied.root + "/" if applied.root else ""
        files: list[LoadedFile] = []
        for position, name in enumerate(INJECTED):
            path = prefix + name
            if path not in field.pages:
                continue
            if name == "MEMORY.md":
                how = "curated long-term memory, injected in the main private session (not in group chats)"
                files.append(LoadedFile(AGENT, path, ALWAYS, MEMORY, how, cap=MEMORY_CAP, order=(0, position)))
            else:
                how = "a bootstrap file, injected every session" + (
                    " (first run only)" if name == "BOOTSTRAP.md" else ""
                )
                kind = MEMORY if name == "USER.md" else INSTRUCTIONS
                files.append(LoadedFile(AGENT, path, ALWAYS, kind, how, cap=BOOTSTRAP_CAP, order=(0, position)))
        injected = {f.path for f in files}
        for path, info in sorted(field.pages.items()) if all_files else ():
            if info.dialect != self.name or not applied.covers(path) or path in injected:
                continue
            local = applied.local(path)
            if _DAILY_RE.match(local):
                how = "a daily log: its AGENTS.md template has the agent read today's and yesterday's"
                files.append(LoadedFile(AGENT, path, ON_DEMAND, MEMORY, how, order=(1, local)))
            elif local.startswith("skills/"):
                how = "a skill: its name and description are listed, the file is read when needed"
                files.append(LoadedFile(AGENT, path, ON_DEMAND, INSTRUCTIONS, how, order=(2, local)))
            else:
                files.append(
                    LoadedFile(AGENT, path, ON_DEMAND, MEMORY, "read when the agent decides to", order=(3, local))
                )
        outside = [
            Outside(
                AGENT,
                "OpenClaw's settings, ~/.openclaw/openclaw.json: they may change the caps and the workspace",
            )
        ]
        return files, outside

    def read(self, applied: Applied, info: PageInfo, root: Path, text: str) -> None:
        info.dialect = self.name
        norm = info.writable_norm()
        local = applied.local(info.path)
        # [[reply_to_current]] / [[reply_to:<id>]] in transcripts address the chat, not a page.
        info.links = [link for link in info.links if not link[0].startswith("reply_to")]
        if local in INSTRUCTION_FILES:
            norm.role = "instructions"
            norm.kind = local[:-3].lower()
        elif local == "USER.md":
            norm.role = "memory"
            norm.kind = "user"
        elif local == "MEMORY.md":
            norm.role = "index"
            norm.kind = "long-term memory"
            norm.cap_chars = MEMORY_CAP_CHARS
        elif local.startswith("skills/"):
            norm.role = "instructions"
            norm.kind = "skill"
        else:
            daily = _DAILY_RE.match(local)
            if daily:
                norm.role = "log"
                norm.kind = "episodic"
                if not info.meta.get("created"):
                    norm.created = daily.group(1)  # a daily log's date is when it was written
                if not (info.meta.get("title") or info.heading_title):
                    norm.title = daily.group(1)
