"""AGENTS.md: the open convention of instructions for coding agents (Codex, Cursor, Copilot,
Windsurf, Jules, Amp and others).

From agents.md and the agents' documentation: the ``AGENTS.md`` at the root of a
repository is loaded into every session; one in a subfolder applies when the agent works in
that folder (Windsurf: a glob rule on ``<folder>/**``), and the nearest file wins where
they disagree. Codex (developers.openai.com/codex, "AGENTS.md") reads one file per folder
from the project root down to where it works, ``AGENTS.override.md`` instead of
``AGENTS.md`` where both are, and stops at ``project_doc_max_bytes`` (32 KiB by default)
for the whole chain together: a file that would go past it is cut to what is left, and
nothing is read after that (openai/codex ``agents_md.rs``: one ``remaining`` counter for
the chain). The other agents document no cap. ``~/.codex/AGENTS.md`` and the files in the
folders above the field live outside it: named, never read.

An OpenClaw workspace keeps its own ``AGENTS.md`` as a bootstrap file, and memtui's own
format and other note formats may hold one: this format never takes such a page from the
format that reads it (it comes after them in ``detect.DIALECTS``); the agents that read
AGENTS.md are listed for it all the same, since they load it too.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from memtui.dialects.base import Applied, DetectContext, Dialect
from memtui.dialects.loading import ALWAYS, INSTRUCTIONS, ON_MATCH, Cap, LoadedFile, Outside
from memtui.field.field import FieldView
from memtui.field.page import PageInfo

AGENT = "agents-md"
NAME = "AGENTS.md"
OVERRIDE = "AGENTS.override.md"  # Codex only: read instead of AGENTS.md in the same folder
NAMES = (NAME, OVERRIDE)
# Codex's project_doc_max_bytes default (codex-rs config: DEFAULT_PROJECT_DOC_MAX_BYTES = 32 * 1024),
# one budget for the whole chain of files from the project root down.
CODEX_MAX_BYTES = 32 * 1024


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _ancestors(folder: str) -> list[str]:
    """The folders from the field root down to ``folder``'s parent (``""`` the root)."""
    if not folder:
        return []
    parts = folder.split("/")
    return [""] + ["/".join(parts[:n]) for n in range(1, len(parts))]


def _codex_file(pages: Mapping[str, PageInfo], folder: str) -> PageInfo | None:
    """The file Codex reads in ``folder``: the override when it is there and not empty, else AGENTS.md."""
    prefix = folder + "/" if folder else ""
    override = pages.get(prefix + OVERRIDE)
    if override is not None and override.size > 0:
        return override
    return pages.get(prefix + NAME)


class AgentsMd(Dialect):
    name = "agents-md"
    title = "AGENTS.md instructions"

    def scope_paths(self, root: Path, names: set[str]) -> list[str]:
        """An AGENTS.md directly in a hidden folder at the top (``.github/AGENTS.md``): the agents
        load it when they work there, so it is read too (deeper ones are named as skipped)."""
        return sorted(
            f"{name}/{NAME}" for name in names if name not in (".git", ".") and (root / name / NAME).is_file()
        )

    def detect(self, ctx: DetectContext) -> list[Applied]:
        found = sorted(path for path in ctx.pages if path.rsplit("/", 1)[-1] in NAMES)
        if not found:
            return []
        evidence = found[:4] + ([f"and {len(found) - 4} more"] if len(found) > 4 else [])
        return [Applied(self.name, "", evidence)]

    def claims(self, applied: Applied, path: str) -> bool:
        return path.rsplit("/", 1)[-1] in NAMES

    def read(self, applied: Applied, info: PageInfo, root: Path, text: str) -> None:
        info.dialect = self.name
        norm = info.writable_norm()
        norm.role = "instructions"
        norm.kind = "agents.md"

    def context(
        self, applied: Applied, field: FieldView, *, all_files: bool = True
    ) -> tuple[list[LoadedFile], list[Outside]]:
        """Every AGENTS.md of the field, whichever format read the page (an OpenClaw workspace's
        is read by OpenClaw, and loaded by these agents too), with Codex's budget on each."""
        pages = field.pages
        files: list[LoadedFile] = []
        for path in sorted(pages):
            name = path.rsplit("/", 1)[-1]
            if name not in NAMES:
                continue
            folder = _folder(path)
            cap: Cap | None = _codex_cap(pages, folder)
            if name == OVERRIDE:
                how = "Codex's override, read by Codex instead of AGENTS.md in this folder (not by the others)"
            elif (override := pages.get((folder + "/" if folder else "") + OVERRIDE)) is not None and override.size:
                how = "instructions (Codex reads AGENTS.override.md here instead)"
                cap = None  # Codex does not read this one: the others document no cap
            else:
                how = "the project's instructions" if not folder else "instructions of a subfolder"
            order = (path.count("/"), folder, name != OVERRIDE)
            if not folder:
                files.append(LoadedFile(AGENT, path, ALWAYS, INSTRUCTIONS, how, cap=cap, order=order))
            else:
                how += ", loaded when the agent works there (the nearest AGENTS.md wins)"
                files.append(
                    LoadedFile(AGENT, path, ON_MATCH, INSTRUCTIONS, how, pattern=f"{folder}/**", cap=cap, order=order)
                )
        outside = [
            Outside(AGENT, "Codex's global instructions, ~/.codex/AGENTS.md (or AGENTS.override.md), read first"),
            Outside(AGENT, "AGENTS.md files in the folders above this one, up to the repository root (loaded too)"),
        ]
        return files, outside


def _codex_cap(pages: Mapping[str, PageInfo], folder: str) -> Cap:
    """Where Codex stops reading this file: what is left of its 32 KiB once the files it reads in
    the folders above (from the root down) are counted."""
    used = 0
    for above in _ancestors(folder):
        found = _codex_file(pages, above)
        if found is not None:
            used += found.size
    left = max(CODEX_MAX_BYTES - used, 0)
    if not folder:
        words = f"Codex: {CODEX_MAX_BYTES // 1024} KiB for all AGENTS.md files together (project_doc_max_bytes)"
    else:
        words = (
            f"Codex: {left:,} bytes left of its {CODEX_MAX_BYTES // 1024} KiB for all AGENTS.md files "
            f"(project_doc_max_bytes) after the {used:,} bytes of those above; the other agents document no cap"
        )
    return Cap(words, bytes=left)
