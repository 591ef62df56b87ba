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
from memtui.field.page import PageInfo

# Keys only memtui's format uses (``subject:`` alone is an e-mail header as often as a memory subject).
_MEMTUI_KEYS_RE = re.compile(
    r"^(supersedes|valid_from|valid_to|taint|confidence):|^(origin):\s*(?:agent|user|job|external)\s*$"
    r"|^(kind):\s*(?:episodic|semantic|procedural|preference)\s*$",
    re.MULTILINE,
)
_SOURCE_TAG_RE = re.compile(r"\[(stated|observed|inferred|suggested)\]", re.IGNORECASE)
_DAILY_RE = re.compile(r"^(?:memory/)?daily/(\d{4}-\d{2}-\d{2})[^/]*\.md$|^memory/(\d{4}-\d{2}-\d{2})[^/]*\.md$")
SAMPLE_PAGES = 40
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

    def read(self, applied: Applied, info: PageInfo, root: Path, text: str) -> None:
        """Daily notes (``daily/YYYY-MM-DD.md``) were written that day: their record date, if they state none."""
        match = _DAILY_RE.match(info.path)
        if match is None:
            return
        day = match.group(1) or match.group(2)
        if not info.meta.get("created") and not info.meta.get("updated"):
            info.writable_norm().created = day
        info.writable_norm().role = "log"
