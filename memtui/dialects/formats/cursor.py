"""Cursor: project rules in ``.cursor/rules/`` and the legacy ``.cursorrules`` (instructions, not memory).

From Cursor's documentation (Context > Rules, https://cursor.com/docs/context/rules):
project rules live in ``.cursor/rules/`` as Markdown files, ``.mdc`` (with frontmatter)
or ``.md``, in subfolders too. The frontmatter's ``description``, ``globs`` and
``alwaysApply`` choose how a rule is applied: *Always Apply* (``alwaysApply: true``,
every chat session), *Apply to Specific Files* (``globs``: when a file matching them is
in context), *Apply Intelligently* (a ``description`` only: the agent reads it and
decides) and *Apply Manually* (none of them: when the user @-mentions the rule,
``@rule-name``). ``globs`` is written as a comma-separated list or a YAML list, often
unquoted (``globs: *.ts,src/**``), which is not valid YAML: the frontmatter is read here
line by line, as Cursor reads it, never through a YAML parser alone. A rule may pull a
file into its context with ``@filename``. The legacy ``.cursorrules`` at the project
root "is still supported" and applies to every session. User Rules (Cursor Settings)
and Team Rules (the Cursor dashboard) are not in the project: named, never read.

Cursor documents no cap on a rule's size (only the advice to keep rules under 500
lines), so no cap is applied, and no order among project rules: they are listed
``.cursorrules`` first, then by type (always, by files, by description, by hand), each
by path. Nested ``.cursor/rules/`` folders of subfolders are not read as Cursor rules yet. No field here says a human reviewed a rule: trust stays
"no review record".
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from memtui.dialects.base import Applied, DetectContext, Dialect
from memtui.dialects.formats.claude_code import _CREDENTIAL_RE as CREDENTIAL_RE
from memtui.dialects.loading import ALWAYS, INSTRUCTIONS, ON_DEMAND, ON_MATCH, LoadedFile, Outside
from memtui.field.body import lines_outside_fences, mask_code_spans
from memtui.field.checks import Finding, make_finding
from memtui.field.field import FieldView
from memtui.field.frontmatter import locate
from memtui.field.page import PageInfo

AGENT = "cursor"
RULES = ".cursor/rules"
LEGACY = ".cursorrules"
RULE_SUFFIXES = (".mdc", ".md")
MAX_PATTERN_CHARS = 200  # a pattern from the field is shown, never compiled nor matched: cut to this
MAX_PATTERNS = 50
MAX_VALUE_CHARS = 2000  # a frontmatter value read line by line is kept up to this many characters
MAX_REFS = 200  # @file references read per rule
# The other folders of ``.cursor/`` that hold instructions (cursor.com docs: Commands, Agent Skills).
_CURSOR_FOLDERS = {
    ".cursor/commands": "Cursor commands (instructions, read when typed as /name)",
    ".cursor/skills": "Cursor skills (instructions, read when the agent decides a skill is relevant)",
}
# Set in ``read`` (kept with the page in the page cache), read back in ``context``.
MODE_KEY = "cursor_rule_mode"  # always | files | intelligent | manual | legacy
GLOBS_KEY = "cursor_rule_globs"
NOTE_KEY = "cursor_rule_note"
_KEY_RE = re.compile(r"^([A-Za-z_][\w-]*)[ \t]*:(?:[ \t]+(.*?)|)[ \t]*$")
_ITEM_RE = re.compile(r"^[ \t]+-[ \t]*(.*?)[ \t]*$")
_REF_RE = re.compile(r"(?:(?<=\s)|^)@((?:~/|\.{1,2}/|/)?[\w.~-][^\s`'\"<>()\[\]]*)")
# An absolute ``@/path`` is a file outside the project only under a system or home folder; ``@/lib/x``
# is as often a bundler alias (``@/`` = the project's src) written in prose.
_SYSTEM_ROOT_RE = re.compile(r"^/(?:etc|home|Users|root|var|tmp|usr|opt|proc|dev|mnt|srv|private|Volumes|[A-Za-z]:)/")


def _unquoted(value: str) -> tuple[str, bool]:
    """``value`` without one pair of matching quotes around it, and whether it had them."""
    if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1], True
    return value, False


def frontmatter_lines(raw: str) -> dict[str, tuple[str, list[str]]]:
    """Top-level ``key: value`` lines of a frontmatter block as a lenient, line-based reader sees
    them (Cursor's ``globs: *.ts`` is no YAML): key -> (the value on its line, the ``- item``
    or indented lines under it). The first occurrence of a key counts; values are bounded, never
    evaluated."""
    found: dict[str, tuple[str, list[str]]] = {}
    current: list[str] | None = None
    for line in raw.split("\n"):
        line = line.rstrip("\r")
        match = _KEY_RE.match(line)
        if match:
            key, value = match.group(1), (match.group(2) or "")[:MAX_VALUE_CHARS]
            if key in found:
                current = None
                continue
            current = []
            found[key] = (value, current)
            continue
        if current is not None and line[:1].isspace() and line.strip():
            # Under a key: ``- item`` lines of a list, or the lines of a folded value.
            if len(current) < MAX_PATTERNS:
                item = _ITEM_RE.match(line)
                current.append((item.group(1) if item else line.strip())[:MAX_VALUE_CHARS])
        elif line.strip():
            current = None
    return found


def _split_globs(text: str) -> list[str]:
    """Comma-separated globs, a comma inside ``{a,b}`` kept (``**/*.{ts,tsx}`` is one glob)."""
    items: list[str] = []
    depth = 0
    start = 0
    for index, char in enumerate(text):
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(depth - 1, 0)
        elif char == "," and depth == 0:
            items.append(text[start:index])
            start = index + 1
    items.append(text[start:])
    return items


def globs_text(value: str, items: list[str]) -> str | None:
    """The globs of a rule as one bounded line to show (a list, ``[a, b]``, or ``a,b``); None: none."""
    text = _unquoted(value.strip())[0].strip()  # "a,b" quoted as a whole, then each item
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    parts = _split_globs(text) if text else []
    parts += items
    globs = [_unquoted(part.strip())[0].strip() for part in parts[:MAX_PATTERNS]]
    globs = [glob for glob in globs if glob]
    if not globs:
        return None
    shown = ", ".join(globs)
    return shown if len(shown) <= MAX_PATTERN_CHARS else shown[: MAX_PATTERN_CHARS - 1] + "…"


def rule_reading(text: str) -> tuple[str, str | None, str | None, str | None]:
    """How Cursor applies a rule, from its frontmatter: (mode, globs, description, note).

    ``alwaysApply: "true"`` (a quoted string): Cursor's docs define ``alwaysApply`` as a boolean
    ("If alwaysApply is true, the rule will be applied to every chat session") and say nothing
    of a string; Cursor's frontmatter reader is not a strict YAML reader (it takes unquoted
    ``*`` globs), so it may well read the word. memtui counts such a rule as always applied,
    the reading under which nothing it holds escapes the checks of what loads by itself, and
    says so in the note."""
    fm = locate(text)
    keys = frontmatter_lines(fm.raw) if fm.present else {}
    note = None
    always_value, _ = keys.get("alwaysApply", ("", []))
    word, quoted = _unquoted(always_value.split(" #", 1)[0].strip())
    always = word.lower() == "true"
    if always and quoted:
        note = (
            f"alwaysApply is the quoted string {always_value.strip()}, not the boolean Cursor's docs define: "
            "counted as always"
        )
    value, items = keys.get("globs", ("", []))
    globs = globs_text(value, items)
    description_value, description_items = keys.get("description", ("", []))
    description = _unquoted(description_value.strip())[0].strip()
    if description in ("|", ">", "|-", ">-", "|+", ">+") or (not description and description_items):
        description = " ".join(description_items).strip()  # (a folded block read as its lines)
    if always:
        mode = "always"
    elif globs:
        mode = "files"
    elif description:
        mode = "intelligent"
    else:
        mode = "manual"
    return mode, globs, description or None, note


def is_rule(path: str) -> bool:
    """A project rule: ``*.mdc`` or ``*.md`` anywhere below ``.cursor/rules/`` at the field root."""
    return path.startswith(RULES + "/") and path.endswith(RULE_SUFFIXES)


def rule_name(path: str) -> str:
    """What the user types after ``@`` to apply a rule by hand: its file name without the suffix."""
    name = path.rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0]


def references(text: str, skip_lines: int) -> list[tuple[str, int]]:
    """``@file`` references of a rule's body, outside code, as (target, line)."""
    found: list[tuple[str, int]] = []
    for number, line in lines_outside_fences(text):
        if number <= skip_lines or "@" not in line:
            continue
        for match in _REF_RE.finditer(mask_code_spans(line) if "`" in line else line):
            target = match.group(1).rstrip(".,;:!?")
            if target and ("/" in target or "." in target) and len(found) < MAX_REFS:
                found.append((target, number))
    return found


def leaves_field(target: str) -> bool:
    """Does an ``@file`` reference name a file outside the project (home, a system folder, ``..``)?"""
    if target.startswith("~"):
        return True
    if target.startswith("/"):
        return _SYSTEM_ROOT_RE.match(target) is not None
    joined = os.path.normpath(target).replace(os.sep, "/")
    return joined == ".." or joined.startswith("../")


class Cursor(Dialect):
    name = "cursor"
    title = "Cursor rules"

    def scope_paths(self, root: Path, names: set[str]) -> list[str]:
        found = []
        if ".cursor" in names:
            found += [RULES + "/", RULES + "/**/*.mdc"]  # .md rules, and .mdc rules (not Markdown by name)
        if LEGACY in names:
            found.append(LEGACY)  # a page though hidden and not *.md (the scan reads regular files only)
        return found

    def skipped_label(self, rel: str) -> str | None:
        return _CURSOR_FOLDERS.get(rel)

    def detect(self, ctx: DetectContext) -> list[Applied]:
        rules = [path for path in ctx.pages if is_rule(path)]
        legacy = LEGACY in ctx.page_set
        if not rules and not legacy:
            return []
        evidence = []
        if rules:
            mdc = sum(1 for path in rules if path.endswith(".mdc"))
            evidence.append(f"{RULES}/ ({len(rules)} rules: {mdc} .mdc, {len(rules) - mdc} .md)")
        if legacy:
            evidence.append(f"{LEGACY} (legacy rules at the root, applied to every session)")
        return [Applied(self.name, "", evidence)]

    def claims(self, applied: Applied, path: str) -> bool:
        return path == LEGACY or is_rule(path)

    def read(self, applied: Applied, info: PageInfo, root: Path, text: str) -> None:
        info.dialect = self.name
        norm = info.writable_norm()
        norm.role = "instructions"
        said: dict[str, str] = {}
        if info.path == LEGACY:
            norm.kind = "legacy rules"
            said[MODE_KEY] = "legacy"
        else:
            norm.kind = "rule"
            mode, globs, description, note = rule_reading(text)
            said[MODE_KEY] = mode
            if globs:
                said[GLOBS_KEY] = globs
            if note:
                said[NOTE_KEY] = note
            if description:
                norm.description = description
        norm.recovered = {**(norm.recovered or {}), **said}
        refs = references(text, info.body_line - 1 if info.fm_present else 0)
        if refs:
            norm.imports = refs

    def context(
        self, applied: Applied, field: FieldView, *, all_files: bool = True
    ) -> tuple[list[LoadedFile], list[Outside]]:
        files: list[LoadedFile] = []
        outside: list[Outside] = []
        for path, info in sorted(field.pages.items()):
            if info.dialect != self.name or not self.claims(applied, path):
                continue
            entry = _rule_entry(path, info)
            if all_files or entry.loaded in (ALWAYS, ON_MATCH):
                files.append(entry)
            for target, line in info.norm.imports or []:
                if leaves_field(target) and (all_files or entry.loaded in (ALWAYS, ON_MATCH)):
                    outside.append(
                        Outside(AGENT, f"@{target}, pulled into context by {path}:{line} (outside the field)")
                    )
        outside += [
            Outside(AGENT, "your User Rules (Cursor Settings > Rules), given to Agent in every chat"),
            Outside(AGENT, "Team Rules from the Cursor dashboard (Team and Enterprise plans), applied before these"),
        ]
        return files, outside

    def page_checks(self, applied: Applied, field: FieldView, info: PageInfo) -> list[Finding]:
        out: list[Finding] = []
        for target, line in info.norm.imports or []:
            if not leaves_field(target):
                continue  # Cursor finds @name by name in the project: only a path leaving it is certain
            if CREDENTIAL_RE.search(target.replace("\\", "/")):
                message = f"@{target} pulls a key or credential file into the agent's context with this rule"
                out.append(make_finding("import-credential", info.path, line, message))
            else:
                message = f"@{target} leaves the field: Cursor pulls a file memtui cannot show you into the context"
                out.append(make_finding("import-outside", info.path, line, message))
        return out


def _rule_entry(path: str, info: PageInfo) -> LoadedFile:
    """How Cursor applies one rule file, in words, from what ``read`` found in its frontmatter."""
    mode = info.text_of(MODE_KEY)
    if mode == "legacy":
        how = "legacy .cursorrules, every session"
        return LoadedFile(AGENT, path, ALWAYS, INSTRUCTIONS, how, order=(1, path))
    name = rule_name(path)
    note = info.text_of(NOTE_KEY)
    if mode == "always":
        how = "Always Apply, every session" + (f" ({note})" if note else "")
        return LoadedFile(AGENT, path, ALWAYS, INSTRUCTIONS, how, order=(2, path))
    if mode == "files":
        how = "Apply to Specific Files"
        return LoadedFile(AGENT, path, ON_MATCH, INSTRUCTIONS, how, pattern=info.text_of(GLOBS_KEY), order=(3, path))
    if mode == "intelligent":
        how = f"Apply Intelligently: by its description, or @{name}"
        return LoadedFile(AGENT, path, ON_DEMAND, INSTRUCTIONS, how, order=(4, path))
    how = f"Apply Manually: when @{name} is typed"
    return LoadedFile(AGENT, path, ON_DEMAND, INSTRUCTIONS, how, order=(5, path))
