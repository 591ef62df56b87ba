"""Windsurf: the workspace rules Cascade follows (instructions, not memory).

From Windsurf's documentation (Cascade, "Memories & Rules"): workspace rules are Markdown
files in ``.windsurf/rules/``, found in the workspace and in its subfolders. Each opens with
frontmatter whose ``trigger`` says when Cascade applies it: ``always_on`` (every message),
``model_decision`` (its ``description`` is shown and Cascade applies the rule when it
decides to), ``glob`` (when Cascade works on files matching ``globs``) or ``manual``
(only when the user @mentions it). The legacy ``.windsurfrules`` file at the root of the
workspace is always on. Rule files are limited to 6,000 characters each: content beyond
is truncated and Cascade never sees it; global and workspace rules together are limited
to 12,000 characters, the global rules first
(https://docs.windsurf.com/plugins/cascade/memories, "Rules files are limited to 6000
characters each"). Global rules (``~/.codeium/windsurf/memories/global_rules.md``) and
the memories Cascade writes by itself (``~/.codeium/windsurf/memories/``) live outside
the repository: named, never read. ``AGENTS.md`` files, which Windsurf reads too, are
``memtui.dialects.formats.agents_md``'s.

No field here says a human reviewed a rule: trust stays "no review record".
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from memtui.dialects.base import Applied, DetectContext, Dialect
from memtui.dialects.loading import (
    ALWAYS,
    INSTRUCTIONS,
    ON_DEMAND,
    ON_MATCH,
    UNKNOWN,
    Cap,
    LoadedFile,
    Outside,
)
from memtui.field.field import FieldView
from memtui.field.page import PageInfo
from memtui.store.files import read_head

AGENT = "windsurf"
RULES = ".windsurf/rules"
LEGACY = ".windsurfrules"
RULE_MAX_CHARS = 6_000  # docs.windsurf.com, Cascade > Memories & Rules: "limited to 6000 characters each"
TOTAL_MAX_CHARS = 12_000  # global + workspace rules together, the global rules first
RULE_CAP = Cap(
    f"{RULE_MAX_CHARS:,} characters per rule file (Windsurf truncates the rest; global and workspace "
    f"rules share {TOTAL_MAX_CHARS:,}, global first)",
    chars=RULE_MAX_CHARS,
)
TRIGGERS = ("always_on", "model_decision", "glob", "manual")
MAX_PATTERN_CHARS = 200  # a pattern from a field is shown, never compiled: cut to this many characters
MAX_PATTERNS = 50
LEGACY_READ_BYTES = 64 * 1024  # enough to count 6,000 characters of any UTF-8


def pattern_text(value: Any) -> str | None:
    """A frontmatter glob (one string, comma-separated globs, or a list of them) as one
    bounded line to show: never compiled, never matched (a field's pattern is text)."""
    if isinstance(value, str):
        items = _top_level_split(value[: MAX_PATTERN_CHARS * 4])
    elif isinstance(value, list):
        items = [item for item in value[:MAX_PATTERNS] if isinstance(item, str)]
    else:
        return None
    globs = [item.strip() for item in items if item.strip()]
    if not globs:
        return None
    text = ", ".join(globs)
    return text if len(text) <= MAX_PATTERN_CHARS else text[: MAX_PATTERN_CHARS - 1] + "…"


def _top_level_split(text: str) -> list[str]:
    """``text`` split at the commas between globs, not those of a ``{a,b}`` alternative inside one."""
    items: list[str] = []
    depth = start = 0
    for index, char in enumerate(text):
        if char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
        elif char == "," and not depth:
            items.append(text[start:index])
            start = index + 1
    items.append(text[start:])
    return items


def is_rule(path: str) -> bool:
    """A workspace rule: ``*.md`` directly or below a ``.windsurf/rules/`` folder, at the root or in a subfolder."""
    return path.endswith(".md") and (path.startswith(RULES + "/") or "/" + RULES + "/" in path)


def _trigger(info: PageInfo) -> str | None:
    value = info.meta.get("trigger")
    return value.strip() if isinstance(value, str) and value.strip() else None


class Windsurf(Dialect):
    name = "windsurf"
    title = "Windsurf rules"

    def scope_paths(self, root: Path, names: set[str]) -> list[str]:
        return [RULES + "/"] if ".windsurf" in names and (root / RULES).is_dir() else []

    def skipped_label(self, rel: str) -> str | None:
        if rel == ".windsurf/workflows":
            return "Windsurf workflows (instructions run when typed as /name)"
        return None

    def detect(self, ctx: DetectContext) -> list[Applied]:
        rules = [path for path in ctx.pages if is_rule(path)]
        legacy = ctx.exists(LEGACY) and not ctx.is_dir(LEGACY)
        if not rules and not legacy:
            return []
        folders = sorted({path.split(RULES + "/", 1)[0] + RULES + "/" for path in rules})
        evidence = [f"{folder} ({sum(1 for p in rules if p.startswith(folder))} rules)" for folder in folders[:4]]
        if len(folders) > 4:
            evidence.append(f"and {len(folders) - 4} more rule folders")
        if legacy:
            evidence.append(f"{LEGACY} (legacy rules at the root: not a Markdown page, not read)")
        return [Applied(self.name, "", evidence, {"legacy": legacy})]

    def claims(self, applied: Applied, path: str) -> bool:
        return is_rule(path)

    def read(self, applied: Applied, info: PageInfo, root: Path, text: str) -> None:
        info.dialect = self.name
        norm = info.writable_norm()
        norm.role = "instructions"
        norm.kind = "rule"
        description = info.meta.get("description")
        if isinstance(description, str) and description.strip():
            norm.description = description.strip()

    def context(
        self, applied: Applied, field: FieldView, *, all_files: bool = True
    ) -> tuple[list[LoadedFile], list[Outside]]:
        files: list[LoadedFile] = []
        for path, info in sorted(field.pages.items()):
            if not is_rule(path):
                continue  # read by another format or not: a rule is loaded by where it is, not by who read it
            entry = _rule_entry(path, info)
            if all_files or entry.loaded in (ALWAYS, ON_MATCH):
                files.append(entry)
        outside = [
            Outside(
                AGENT,
                "your global rules, ~/.codeium/windsurf/memories/global_rules.md: loaded first, "
                f"they share {TOTAL_MAX_CHARS:,} characters with the workspace rules",
                "memtui ~/.codeium/windsurf/memories",
            ),
            Outside(
                AGENT,
                "the memories Cascade generates by itself, in ~/.codeium/windsurf/memories/ on this "
                "machine, never in the repository: retrieved when Cascade finds them relevant",
            ),
        ]
        if applied.params.get("legacy"):
            outside.insert(
                0,
                Outside(
                    AGENT,
                    f"{LEGACY} at the root of this field{_legacy_size(field.root)}: legacy rules, always on "
                    f"(the first {RULE_MAX_CHARS:,} characters); not a Markdown page, so memtui neither shows "
                    "nor checks it",
                ),
            )
        return files, outside


def _legacy_size(root: Path) -> str:
    """`` (8,896 characters: Windsurf cuts it after 6,000)``: the legacy file measured, never shown.
    Only a regular file inside the field is opened (no symlink, no FIFO), and only its first
    ``LEGACY_READ_BYTES``."""
    base = os.path.abspath(root)  # read_head's ``under`` must be absolute: a relative one finds nothing
    try:
        found = read_head(os.path.join(base, LEGACY), LEGACY_READ_BYTES, under=base)
    except OSError:
        return ""
    if found is None:
        return ""
    data, st = found
    chars = len(data.decode("utf-8", "replace"))
    if st.st_size > len(data) or chars > RULE_MAX_CHARS:
        return f" ({st.st_size:,} bytes, past {RULE_MAX_CHARS:,} characters: Windsurf cuts it)"
    return f" ({chars:,} characters)"


def _rule_entry(path: str, info: PageInfo) -> LoadedFile:
    """How Cascade loads one rule file, from its ``trigger`` (and ``globs``)."""
    trigger = _trigger(info)
    where = "" if path.startswith(RULES + "/") else f" (found in {path.split('/' + RULES + '/', 1)[0]}/)"
    order = (0 if path.startswith(RULES + "/") else 1, path)
    pattern = None
    if trigger == "always_on":
        mode, how = ALWAYS, "a rule, always on"
    elif trigger == "glob":
        pattern = pattern_text(info.meta.get("globs"))
        if pattern:
            mode, how = ON_MATCH, "a glob rule"
        else:
            mode, how = UNKNOWN, "a glob rule naming no globs: Windsurf's docs do not say when it applies"
    elif trigger == "model_decision":
        mode, how = ON_DEMAND, "a rule Cascade applies when it decides to, from its description"
    elif trigger == "manual":
        mode, how = ON_DEMAND, "a manual rule, applied only when @mentioned"
    elif trigger is None:
        mode, how = UNKNOWN, "a rule with no trigger: Windsurf's docs do not say when it applies"
    else:
        mode, how = UNKNOWN, "a rule whose trigger Windsurf does not document"
    return LoadedFile(AGENT, path, mode, INSTRUCTIONS, how + where, pattern=pattern, cap=RULE_CAP, order=order)
