"""basic-memory: notes of observations and relations that build a knowledge graph.

From basic-memory's note format: frontmatter ``title``, ``type`` (note, Person,
Project ...), ``tags``, ``permalink`` (a stable identifier); *observations*
``- [category] content #tag (context)`` and *relations* ``- relation_type
[[Target]]``, anywhere in the body. A category is the observation's kind
(decision, method, risk ...): not one of memtui's source tags, and nothing to
report; the format has no source tags, so memtui's tag rules do not apply.

The format claims only the notes carrying its mark, a ``permalink:`` in the
frontmatter (``owns``): one agent page with ``permalink:`` and ``- [note] x``
in a field of memtui's format is read as basic-memory, and only that page.
"""

from __future__ import annotations

import re
from pathlib import Path

from memtui.dialects.base import Applied, DetectContext, Dialect
from memtui.field.page import PageInfo

OBSERVATION_RE = re.compile(r"^\s*[-*]\s+\[([^\[\]\n]{1,40})\]\s+\S", re.MULTILINE)
RELATION_RE = re.compile(r"^\s*[-*]\s+([A-Za-z_][\w-]*)\s+\[\[([^\[\]|#\n]+)(?:[#|][^\]\n]*)?\]\]", re.MULTILINE)
# Relation types that are history: this note replaces the target, or the target replaces it.
SUPERSEDES = {"supersedes", "replaces", "obsoletes"}
SUPERSEDED_BY = {"superseded_by", "supersededby", "replaced_by", "obsoleted_by"}
SAMPLE_PAGES = 60
SHOWN_PAGES = 3  # marked pages the evidence names (what made the field read so)


class BasicMemory(Dialect):
    name = "basic-memory"
    title = "basic-memory"

    def detect(self, ctx: DetectContext) -> list[Applied]:
        permalinks = observing = 0
        marked: list[str] = []
        sampled = ctx.pages[:SAMPLE_PAGES]
        for path in sampled:
            head = ctx.head(path)
            if head.startswith("---") and re.search(r"^permalink:", head, re.MULTILINE):
                permalinks += 1
                observing += bool(OBSERVATION_RE.search(head))
                marked.append(path)
        if not permalinks or not observing:
            return []
        named = ", ".join(marked[:SHOWN_PAGES]) + (
            f" and {len(marked) - SHOWN_PAGES} more" if len(marked) > SHOWN_PAGES else ""
        )
        evidence = [
            f"permalink in the frontmatter of {permalinks} of {len(sampled)} sampled pages ({named})",
            f"observations (- [category] ...) in {observing}",
            "read as basic-memory: only the pages with a permalink",
        ]
        return [Applied(self.name, "", evidence)]

    def owns(self, applied: Applied, info: PageInfo) -> bool:
        """A note carries the format's mark: a ``permalink:`` in its frontmatter. Every other page
        is read as the field's other formats read it (a mark is knowledge about one page)."""
        permalink = info.meta.get("permalink")
        return isinstance(permalink, str) and bool(permalink.strip())

    def read(self, applied: Applied, info: PageInfo, root: Path, text: str) -> None:
        info.dialect = self.name
        meta = info.meta
        norm = info.writable_norm()
        permalink = meta.get("permalink")
        if isinstance(permalink, str) and permalink:
            norm.ids = [permalink]
        kind = meta.get("type")
        if isinstance(kind, str) and kind.strip() and "kind" not in meta:
            norm.kind = kind.strip()
        body = text[info.body_offset :]
        categories: dict[str, int] = {}
        for match in OBSERVATION_RE.finditer(body):
            category = match.group(1).strip().lower()
            categories[category] = categories.get(category, 0) + 1
        if categories:
            norm.observations = categories
        older: list[str] = []
        newer: list[str] = []
        for kind, target in RELATION_RE.findall(body):
            relation = kind.lower().replace("-", "_")
            if relation in SUPERSEDES:
                older.append(target.strip())
            elif relation in SUPERSEDED_BY:
                newer.append(target.strip())
        if older and not meta.get("supersedes"):
            norm.supersedes = older
        if newer and not meta.get("superseded_by"):
            norm.superseded_by = newer
        norm.role = "memory"
