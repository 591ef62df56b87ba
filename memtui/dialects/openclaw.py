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
"""

from __future__ import annotations

import re
from pathlib import Path

from memtui.dialects.base import Applied, DetectContext, Dialect
from memtui.field.page import PageInfo

BOOTSTRAP = ("AGENTS.md", "SOUL.md", "USER.md", "IDENTITY.md", "TOOLS.md", "HEARTBEAT.md", "BOOTSTRAP.md")
INSTRUCTIONS = {"AGENTS.md", "SOUL.md", "TOOLS.md", "HEARTBEAT.md", "BOOTSTRAP.md", "IDENTITY.md"}
MEMORY_CAP_CHARS = 15_000
_DAILY_RE = re.compile(r"^memory/(\d{4}-\d{2}-\d{2})(?:[-_ ].*)?\.md$")


class OpenClaw(Dialect):
    name = "openclaw"
    title = "OpenClaw workspace"

    def scope_paths(self, root: Path, names: set[str]) -> list[str]:
        return [".openclaw/workspace/"] if ".openclaw" in names else []

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

    def read(self, applied: Applied, info: PageInfo, root: Path, text: str) -> None:
        info.dialect = self.name
        norm = info.writable_norm()
        local = applied.local(info.path)
        # [[reply_to_current]] / [[reply_to:<id>]] in transcripts address the chat, not a page.
        info.links = [link for link in info.links if not link[0].startswith("reply_to")]
        if local in INSTRUCTIONS:
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
