"""basic-memory: notes of observations and relations that build a knowledge graph.

From basic-memory's note format: frontmatter ``title``, ``type`` (note, Person,
Project ...), ``tags``, ``permalink`` (a stable identifier); *observations*
``- [category] content #tag (context)`` and *relations* ``- relation_type
[[Target]]``, anywhere in the body. A category is the observation's kind
(decision, method, risk ...): not one of memtui's source tags, and nothing to
report; the format has no source tags, so memtui's tag rules do not apply.
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


class BasicMemory(Dialect):
    name = "basic-memory"
    title = "basic-memory"

    def detect(self, ctx: DetectContext) -> list[Applied]:
        permalinks = observing = 0
        sampled = ctx.pages[:SAMPLE_PAGES]
        for path in sampled:
            head = ctx.head(path)
            if head.startswith("---") and re.search(r"^permalink:", head, re.MULTILINE):
                permalinks += 1
                observing += bool(OBSERVATION_RE.search(head))
        if not permalinks or not observing:
            return []
        evidence = [
            f"permalink in the frontmatter of {permalinks} of {len(sampled)} sampled pages",
            f"observations (- [category] ...) in {observing}",
        ]
        return [Applied(self.name, "", evidence)]

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
