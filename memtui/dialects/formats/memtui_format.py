"""memtui's own format (the design documents): frontmatter, source tags, inline history.

It needs no mapping: ``PageInfo`` reads memtui's keys directly. It is the reading
of every page no other dialect claims, and it is *detected* (with evidence) when
the field carries its marks: a routing ``MEMORY.md`` with ``IDENTITY.md``,
``sessions/``, ``quarantine/``, ``golden.yaml``, maintenance proposals, or pages
whose frontmatter uses memtui's keys (``supersedes``, ``taint``, ``valid_from``,
its ``kind`` and ``origin`` words ...) and whose lines carry source tags.
"""

from __future__ import annotations

import re
from pathlib import Path

from memtui.dialects.base import Applied, DetectContext, Dialect
from memtui.dialects.loading import ALWAYS, INSTRUCTIONS, MEMORY, NEVER, ON_DEMAND, Cap, LoadedFile, Outside
from memtui.field.field import FieldView
from memtui.field.page import PageInfo
from memtui.field.trust import QUARANTINE_FOLDER

# Keys only memtui's format uses (``subject:`` alone is an e-mail header as often as a memory subject).
_MEMTUI_KEYS_RE = re.compile(
    r"^(supersedes|valid_from|valid_to|taint|confidence):|^(origin):\s*(?:agent|user|job|external)\s*$"
    r"|^(kind):\s*(?:episodic|semantic|procedural|preference)\s*$",
    re.MULTILINE,
)
_SOURCE_TAG_RE = re.compile(r"\[(stated|observed|inferred|suggested)\]", re.IGNORECASE | re.ASCII)
_DAILY_RE = re.compile(r"^(?:memory/)?daily/(\d{4}-\d{2}-\d{2})[^/]*\.md$|^memory/(\d{4}-\d{2}-\d{2})[^/]*\.md$")
SAMPLE_PAGES = 40
INDEX_CAP = Cap("15,000 characters (the format's hard cap)", chars=15_000)
MIN_SHARE = 5  # marks in at least 1 of 5 sampled pages, or:
DISTINCT_KEYS = 3  # 3 different memtui keys, in any pages


def _enough(marked: int, sampled: int) -> bool:
    return marked > 0 and marked * MIN_SHARE >= sampled


class MemtuiFormat(Dialect):
    name = "memtui"
    title = "memtui's own format"

    def detect(self, ctx: DetectContext) -> list[Applied]:
        evidence: list[str] = []
        if "MEMORY.md" in ctx.page_set and "IDENTITY.md" in ctx.page_set:
            evidence.append("MEMORY.md with IDENTITY.md")
        for folder in ("sessions", "quarantine"):
            if ctx.holds_folder(folder):
                evidence.append(f"{folder}/")
        if ctx.exists("golden.yaml"):
            evidence.append("golden.yaml")
        if ctx.is_dir(".dream"):
            evidence.append(".dream/ (maintenance proposals)")
        keyed = tagged = 0
        keys: set[str] = set()
        for path in ctx.pages[:SAMPLE_PAGES]:
            head = ctx.head(path)
            found = (
                {m.group(m.lastindex or 0) for m in _MEMTUI_KEYS_RE.finditer(head)} if head.startswith("---") else set()
            )
            keyed += bool(found)
            keys |= found
            tagged += bool(_SOURCE_TAG_RE.search(head))
        sampled = min(SAMPLE_PAGES, len(ctx.pages))
        # One key in one page is a coincidence (a design document's ``supersedes:``), not a format.
        if _enough(keyed, sampled) or len(keys) >= DISTINCT_KEYS:
            shown = ", ".join(sorted(keys))
            evidence.append(f"memtui frontmatter keys ({shown}) in {keyed} of the first {sampled} pages")
        if _enough(tagged, sampled):
            evidence.append(f"source tags in {tagged} of the first {sampled} pages")
        return [Applied(self.name, "", evidence)] if evidence else []

    def context(
        self, applied: Applied, field: FieldView, *, all_files: bool = True
    ) -> tuple[list[LoadedFile], list[Outside]]:
        """The format's own loading rule: IDENTITY.md and the routing index MEMORY.md every session,
        the pages it points at when the agent follows them, quarantine and raw sessions never."""
        if not applied.evidence:
            return [], []
        files: list[LoadedFile] = []
        pages = field.pages
        if "IDENTITY.md" in pages and pages["IDENTITY.md"].dialect == self.name:
            how = "the identity layer, loaded every session"
            files.append(LoadedFile(self.name, "IDENTITY.md", ALWAYS, INSTRUCTIONS, how, order=(0, 0)))
        if "MEMORY.md" in pages and pages["MEMORY.md"].dialect == self.name:
            how = "the routing index, loaded every session"
            files.append(LoadedFile(self.name, "MEMORY.md", ALWAYS, MEMORY, how, cap=INDEX_CAP, order=(0, 1)))
        if not all_files:
            return files, []
        for path, info in sorted(pages.items()):
            if info.dialect != self.name or path in ("IDENTITY.md", "MEMORY.md"):
                continue
            if path.startswith(("sessions/", QUARANTINE_FOLDER + "/")):
                how = (
                    "raw session evidence, never loaded" if path.startswith("sessions/") else "quarantine, never loaded"
                )
                files.append(LoadedFile(self.name, path, NEVER, MEMORY, how, order=(2, path)))
            else:
                how = "a page, read when the agent follows a pointer or searches"
                files.append(LoadedFile(self.name, path, ON_DEMAND, MEMORY, how, order=(1, path)))
        return files, []

    def read(self, applied: Applied, info: PageInfo, root: Path, text: str) -> None:
        """Daily notes (``daily/YYYY-MM-DD.md``) were written that day: their record date, if they state none."""
        match = _DAILY_RE.match(info.path)
        if match is None:
            return
        day = match.group(1) or match.group(2)
        if not info.meta.get("created") and not info.meta.get("updated"):
            info.writable_norm().created = day
        info.writable_norm().role = "log"
