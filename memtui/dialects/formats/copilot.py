"""GitHub Copilot: the repository's custom instructions and prompt files (instructions, not memory).

From GitHub's and VS Code's documentation (Copilot, "custom instructions"):
``.github/copilot-instructions.md`` holds repository-wide instructions, added to every
request made in the context of the repository. Path-specific instructions are
``NAME.instructions.md`` files in or below ``.github/instructions/``; their frontmatter's
``applyTo`` names the files they apply to (comma-separated globs; ``**`` is every file);
one without ``applyTo`` is not applied automatically (it is attached by hand).
``excludeAgent`` (``code-review`` or ``coding-agent``) keeps one of Copilot's agents from
using the file. Prompt files, ``.github/prompts/*.prompt.md``, are run when the user
invokes them. User-level instructions (``~/.copilot/``, the editor's own settings) and an
organisation's instructions live outside the repository: named, never read. ``AGENTS.md``,
which Copilot's coding agent reads too, is ``memtui.dialects.formats.agents_md``'s.

No field here says a human reviewed an instruction: trust stays "no review record".
"""

from __future__ import annotations

from pathlib import Path

from memtui.dialects.base import Applied, DetectContext, Dialect
from memtui.dialects.formats.windsurf import pattern_text
from memtui.dialects.loading import ALWAYS, INSTRUCTIONS, ON_DEMAND, ON_MATCH, LoadedFile, Outside
from memtui.field.field import FieldView
from memtui.field.page import PageInfo

AGENT = "copilot"
REPOSITORY_WIDE = ".github/copilot-instructions.md"
INSTRUCTIONS_DIR = ".github/instructions/"
PROMPTS_DIR = ".github/prompts/"
EVERY_FILE = frozenset({"**", "**/*", "*"})


def kind_of(path: str) -> str | None:
    """Which of Copilot's files ``path`` is (None: none of them). Only the repository's own
    ``.github/`` at the root of the field: Copilot reads no other."""
    if path == REPOSITORY_WIDE:
        return "repository"
    if path.startswith(INSTRUCTIONS_DIR) and path.endswith(".instructions.md"):
        return "path"
    if path.startswith(PROMPTS_DIR) and path.endswith(".prompt.md") and path.count("/") == 2:
        return "prompt"
    return None


class Copilot(Dialect):
    name = "copilot"
    title = "GitHub Copilot instructions"

    def scope_paths(self, root: Path, names: set[str]) -> list[str]:
        if ".github" not in names:
            return []
        # Only what is there: a repository's .github/ of workflows alone is not Copilot's.
        return [item for item in (REPOSITORY_WIDE, INSTRUCTIONS_DIR, PROMPTS_DIR) if (root / item).exists()]

    def skipped_label(self, rel: str) -> str | None:
        if rel == ".github/agents":
            return "Copilot custom agents (instructions, used when chosen)"
        if rel == ".github/chatmodes":
            return "Copilot chat modes (instructions, used when chosen)"
        return None

    def detect(self, ctx: DetectContext) -> list[Applied]:
        found = [path for path in ctx.pages if kind_of(path) is not None]
        if not found:
            return []
        counts = {kind: sum(1 for p in found if kind_of(p) == kind) for kind in ("repository", "path", "prompt")}
        evidence = [REPOSITORY_WIDE] if counts["repository"] else []
        if counts["path"]:
            evidence.append(f"{INSTRUCTIONS_DIR} ({counts['path']} *.instructions.md)")
        if counts["prompt"]:
            evidence.append(f"{PROMPTS_DIR} ({counts['prompt']} *.prompt.md)")
        return [Applied(self.name, "", evidence)]

    def claims(self, applied: Applied, path: str) -> bool:
        return kind_of(path) is not None

    def read(self, applied: Applied, info: PageInfo, root: Path, text: str) -> None:
        info.dialect = self.name
        norm = info.writable_norm()
        norm.role = "instructions"
        norm.kind = {"repository": "instructions", "path": "path instructions", "prompt": "prompt"}.get(
            kind_of(info.path) or "", "instructions"
        )
        description = info.meta.get("description")
        if isinstance(description, str) and description.strip():
            norm.description = description.strip()

    def context(
        self, applied: Applied, field: FieldView, *, all_files: bool = True
    ) -> tuple[list[LoadedFile], list[Outside]]:
        files: list[LoadedFile] = []
        for path, info in sorted(field.pages.items()):
            kind = kind_of(path)  # by where it is, whichever format read the page
            if kind is None:
                continue
            entry = _entry(path, kind, info)
            if all_files or entry.loaded in (ALWAYS, ON_MATCH):
                files.append(entry)
        outside = [
            Outside(
                AGENT,
                "your user-level instructions (~/.copilot/copilot-instructions.md, ~/.copilot/instructions/, "
                "the editor's own instruction and prompt files) and your organisation's instructions on GitHub",
            )
        ]
        return files, outside


def _entry(path: str, kind: str, info: PageInfo) -> LoadedFile:
    """How Copilot loads one of its files: by where it is and, for path instructions, ``applyTo``."""
    if kind == "repository":
        how = "repository-wide instructions, added to every request"
        return LoadedFile(AGENT, path, ALWAYS, INSTRUCTIONS, how + _excluded(info), order=(0, path))
    if kind == "prompt":
        how = "a prompt file, run when the user invokes it"
        return LoadedFile(AGENT, path, ON_DEMAND, INSTRUCTIONS, how, order=(2, path))
    pattern = pattern_text(info.meta.get("applyTo"))
    if pattern is None:
        how = "path instructions without applyTo: not applied automatically, only when attached"
        return LoadedFile(AGENT, path, ON_DEMAND, INSTRUCTIONS, how + _excluded(info), order=(1, path))
    if all(glob.strip() in EVERY_FILE for glob in pattern.split(",")):
        how = f"path instructions for every file (applyTo {pattern})"
        return LoadedFile(AGENT, path, ALWAYS, INSTRUCTIONS, how + _excluded(info), order=(1, path))
    how = "path instructions, added when the request involves matching files"
    return LoadedFile(AGENT, path, ON_MATCH, INSTRUCTIONS, how + _excluded(info), pattern=pattern, order=(1, path))


def _excluded(info: PageInfo) -> str:
    """``excludeAgent``: the Copilot agents that do not use the file, said in the file's reason."""
    agents = pattern_text(info.meta.get("excludeAgent"))
    return f"; not used by Copilot's {agents}" if agents else ""
