"""Obsidian-style vaults (exomem and others): wikilinks everywhere, status in frontmatter.

A vault's root is the nearest folder holding ``.obsidian/`` (the field itself or
a folder above it). Links name pages by file name or by path from the vault
root (``[[Knowledge Base/Notes/x]]``), with ``#Heading``, ``#^block`` and
``|label`` parts; ``![[file.png]]`` embeds any file; ``[[Link]]`` inside code is
an example. Frontmatter carries ``aliases``, ``tags``, ``type`` (the page's
kind), ``status`` (exomem: draft, active, superseded, archived) and the history
as wikilink strings: ``supersedes: "[[Notes/old]]"``, ``superseded_by:
"[[Notes/new]]"``. exomem (an Obsidian-compatible knowledge base) adds
``exomem_id`` and a ``_Schema/`` folder.
"""

from __future__ import annotations

import re
from pathlib import Path

from memtui.dialects.base import Applied, DetectContext, Dialect
from memtui.field.page import PageInfo

_FM_WIKILINK_RE = re.compile(r"^[\w-]+:\s*[\"']\[\[|^\s+-\s*[\"']\[\[", re.MULTILINE)
SAMPLE_PAGES = 60
MAX_LEVELS_UP = 12


def vault_root(root: Path) -> Path | None:
    """The nearest folder at or above ``root`` that holds ``.obsidian/``."""
    here = root.resolve()
    for _ in range(MAX_LEVELS_UP):
        if (here / ".obsidian").is_dir():
            return here
        if here.parent == here:
            return None
        here = here.parent
    return None


class Obsidian(Dialect):
    name = "obsidian"
    title = "Obsidian-style vault"

    def detect(self, ctx: DetectContext) -> list[Applied]:
        evidence: list[str] = []
        prefixes: list[str] = []
        vault = vault_root(ctx.root)
        if vault is not None:
            here = ctx.root.resolve()
            if vault == here:
                evidence.append(".obsidian/ (the field is the vault root)")
            else:
                prefix = here.relative_to(vault).as_posix()
                evidence.append(f".obsidian/ in {vault.name}/, {prefix}/ inside it")
                prefixes.append(prefix + "/")
        if "_Schema/SKILL.md" in ctx.page_set:
            evidence.append("_Schema/SKILL.md (exomem)")
        with_fm_links = exomem_ids = own_prefix = 0
        name_prefix = "[[" + ctx.root.resolve().name + "/"
        for path in ctx.pages[:SAMPLE_PAGES]:
            head = ctx.head(path)
            if head.startswith("---"):
                end = head.find("\n---", 3)
                frontmatter = head[: end if end > 0 else len(head)]
                with_fm_links += bool(_FM_WIKILINK_RE.search(frontmatter))
                exomem_ids += "exomem_id:" in frontmatter
            own_prefix += name_prefix in head
        if with_fm_links:
            evidence.append(f"wikilinks in the frontmatter of {with_fm_links} sampled pages")
        if exomem_ids:
            evidence.append(f"exomem_id in {exomem_ids} sampled pages")
        if own_prefix and name_prefix[2:] not in prefixes:
            evidence.append(f"links from the vault root ({name_prefix}...) in {own_prefix} sampled pages")
            prefixes.append(name_prefix[2:])
        if not evidence:
            return []
        return [Applied(self.name, "", evidence, {"link_prefixes": prefixes})]

    def link_prefixes(self, applied: Applied, root: Path) -> list[str]:
        return list(applied.params.get("link_prefixes", []))

    def read(self, applied: Applied, info: PageInfo, root: Path, text: str) -> None:
        info.dialect = self.name
        meta = info.meta
        norm = info.writable_norm()
        kind = meta.get("type")
        if isinstance(kind, str) and kind.strip() and "kind" not in meta:
            norm.kind = kind.strip()
        ident = meta.get("exomem_id")
        if isinstance(ident, str) and ident:
            norm.ids = [ident]
        if info.path.rsplit("/", 1)[-1] == "index.md" or info.path.startswith("_Schema/"):
            norm.role = "index" if info.path.endswith("index.md") else "instructions"

    def detect_by_links(self, ctx: DetectContext) -> list[Applied]:
        """A vault without its ``.obsidian/`` folder (often not committed): wikilinks and embeds in
        the bodies of many pages, and no marks of memtui's own format (which links the same way)."""
        sampled = ctx.pages[:SAMPLE_PAGES]
        linking = sum(1 for path in sampled if "[[" in ctx.head(path))
        if len(sampled) < 3 or linking < max(3, len(sampled) // 4):
            return []
        return [
            Applied(self.name, "", [f"wikilinks in {linking} of {len(sampled)} sampled pages"], {"link_prefixes": []})
        ]
