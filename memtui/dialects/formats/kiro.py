"""Kiro: the steering files of a workspace, ``.kiro/steering/`` (instructions, not memory).

From Kiro's documentation (Steering, https://kiro.dev/docs/steering/): steering files are
Markdown files in ``.kiro/steering/`` (subfolders too); Kiro generates ``product.md``,
``tech.md`` and ``structure.md`` and any other file may be added. A file's frontmatter
``inclusion`` says when Kiro puts it in the agent's context: ``always`` (every
interaction; also the default when there is no ``inclusion``), ``fileMatch`` (when the
agent works with files matching ``fileMatchPattern``, one glob or a list of them),
``manual`` (when the user types ``#name`` in chat) or ``auto`` (its ``name`` and
``description`` are offered, and Kiro includes it when a request matches). A steering
file pulls a file of the workspace into the context with ``#[[file:<relative_file_name>]]``
(relative to the workspace root): such a reference is read like an import, and one
leaving the field is reported, never followed. Global steering, ``~/.kiro/steering/``,
applies in every workspace: named, never read.

Kiro documents no cap on a steering file's size, so none is applied, and no order among
steering files: they are listed by path, each followed by the files it references. The
steering of a workspace inside the field (``tools/x/.kiro/steering/``) is read as steering,
its loading "unknown": Kiro loads it only when that folder is opened as a workspace. No field here says a
human reviewed a steering file: trust stays "no review record".
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from memtui.dialects.base import Applied, DetectContext, Dialect
from memtui.dialects.formats.claude_code import _CREDENTIAL_RE as CREDENTIAL_RE
from memtui.dialects.formats.cursor import MAX_PATTERN_CHARS, MAX_PATTERNS, frontmatter_lines, globs_text
from memtui.dialects.loading import ALWAYS, INSTRUCTIONS, ON_DEMAND, ON_MATCH, UNKNOWN, LoadedFile, Outside
from memtui.field.checks import Finding, make_finding
from memtui.field.field import FieldView
from memtui.field.frontmatter import locate
from memtui.field.page import PageInfo

AGENT = "kiro"
STEERING = ".kiro/steering"
MODES = ("always", "fileMatch", "manual", "auto")
MAX_REFS = 200  # file references read per steering file
MAX_NESTED = 100  # steering folders of workspaces inside the field, read as such
_REF_RE = re.compile(r"#\[\[file:([^\]\n]{1,1000})\]\]")
# A reference to one of these is an example file, not the secret itself.
_EXAMPLE_SUFFIXES = (".example", ".sample", ".template", ".dist", ".tmpl")
# The other folders of ``.kiro/`` (kiro.dev docs: Specs, Custom agents, Agent Skills): not steering.
_KIRO_FOLDERS = {
    ".kiro/specs": "Kiro specs (a feature's requirements, design and tasks; not steering)",
    ".kiro/agents": "Kiro custom agents (a prompt used when that agent runs; not steering)",
    ".kiro/skills": "Kiro skills (read when the agent uses a skill; not steering)",
}
# Kept with the page (the page cache stores it): what ``read`` found, for ``context``.
INCLUSION_KEY = "kiro_inclusion"
PATTERN_KEY = "kiro_pattern"


def _pattern(value: Any) -> str | None:
    """``fileMatchPattern`` (one glob, or a list) as one bounded line to show: never compiled, never matched."""
    if isinstance(value, str):
        return globs_text("", [value]) if value.strip() else None
    if isinstance(value, list):
        items = [item for item in value[:MAX_PATTERNS] if isinstance(item, str)]
        return globs_text("", items)
    return None


def _unquoted(value: str) -> str:
    value = value.strip()
    return value[1:-1] if len(value) > 1 and value[0] == value[-1] and value[0] in "'\"" else value


def steering_name(path: str) -> str:
    """What the user types after ``#`` to include a manual steering file: its name without ``.md``."""
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def references(text: str) -> list[tuple[str, int]]:
    """``#[[file:path]]`` references, as (path, line). Kiro's docs exempt no part of a steering
    file (a reference written in code is still the syntax Kiro resolves): every one counts."""
    found: list[tuple[str, int]] = []
    if "#[[file:" not in text:
        return found
    for number, line in enumerate(text.split("\n"), start=1):
        for match in _REF_RE.finditer(line):
            target = match.group(1).strip()
            if target and len(found) < MAX_REFS:
                found.append((target, number))
    return found


def reference_target(applied: Applied, target: str) -> str | None:
    """The field path a reference names (relative to the workspace root); None: outside the field."""
    if target.startswith("~") or os.path.isabs(target) or re.match(r"^[A-Za-z]:[\\/]", target):
        return None
    workspace = applied.params.get("workspace", "")
    joined = os.path.normpath(os.path.join(workspace, target.replace("\\", "/"))).replace(os.sep, "/")
    return None if joined == ".." or joined.startswith("../") else joined


def _credential(target: str) -> bool:
    name = target.replace("\\", "/")
    return CREDENTIAL_RE.search(name) is not None and not name.lower().endswith(_EXAMPLE_SUFFIXES)


class Kiro(Dialect):
    name = "kiro"
    title = "Kiro steering"

    def scope_paths(self, root: Path, names: set[str]) -> list[str]:
        return [STEERING + "/"] if ".kiro" in names else []

    def skipped_label(self, rel: str) -> str | None:
        return _KIRO_FOLDERS.get(rel)

    def detect(self, ctx: DetectContext) -> list[Applied]:
        # The workspace's .kiro/steering/, or the field opened at .kiro/ or at its steering/ itself.
        resolved = ctx.root.resolve()
        name, parent = resolved.name, resolved.parent.name
        for steering, workspace in ((STEERING, ""), ("steering", ".."), ("", "../..")):
            if steering == "steering" and name != ".kiro":
                continue
            if steering == "" and not (name == "steering" and parent == ".kiro"):
                continue
            prefix = steering + "/" if steering else ""
            count = sum(1 for path in ctx.pages if path.startswith(prefix))
            if not count:
                continue
            where = prefix or "this folder (a .kiro/steering/ folder)"
            evidence = [f"{where} ({count} steering files)"]
            if workspace:
                evidence.append("the workspace is above the field: its #[[file:]] references are outside it")
            return [Applied(self.name, steering, evidence, {"workspace": workspace}), *self._nested(ctx)]
        return self._nested(ctx)

    def _nested(self, ctx: DetectContext) -> list[Applied]:
        """The steering of workspaces inside this one (``tools/x/.kiro/steering/``): read as steering
        (their references are no wikilinks), loaded only when that folder is opened in Kiro."""
        roots: dict[str, int] = {}
        marker = "/" + STEERING
        for folder, names in ctx.folders().items():
            at = ("/" + folder + "/").find(marker + "/")  # 0: the field's own .kiro/steering/
            if at <= 0:
                continue
            root = folder[: at - 1 + len(marker)]
            roots[root] = roots.get(root, 0) + len(names)
        found = []
        for root, count in sorted(roots.items())[:MAX_NESTED]:
            workspace = root[: -len(marker)]
            evidence = [f"{root}/ ({count} steering files of the workspace {workspace}/)"]
            found.append(Applied(self.name, root, evidence, {"workspace": workspace, "nested": True}))
        return found

    def read(self, applied: Applied, info: PageInfo, root: Path, text: str) -> None:
        info.dialect = self.name
        norm = info.writable_norm()
        norm.role = "instructions"
        norm.kind = "steering"
        meta = info.meta
        if info.fm_present and info.fm_error:
            # Frontmatter YAML cannot read: its lines as a line-based reader sees them.
            keys = frontmatter_lines(locate(text).raw)
            meta = {key: (items if items and not value else _unquoted(value)) for key, (value, items) in keys.items()}
        said: dict[str, str] = {}
        inclusion = meta.get("inclusion")
        if inclusion is not None:
            said[INCLUSION_KEY] = str(inclusion)[:MAX_PATTERN_CHARS] if not isinstance(inclusion, str) else inclusion
        pattern = _pattern(meta.get("fileMatchPattern"))
        if pattern:
            said[PATTERN_KEY] = pattern
        if said:
            norm.recovered = {**(norm.recovered or {}), **said}
        for key in ("description", "name"):
            value = meta.get(key)
            if isinstance(value, str) and value.strip():
                if key == "description":
                    norm.description = value.strip()[:2000]
                elif not (meta.get("title") or info.heading_title):
                    norm.title = value.strip()[:200]
        refs = references(text)
        if refs:
            norm.imports = refs
            # ``[[file:x]]`` inside ``#[[file:x]]`` is no wikilink: not a link to a page named "file:x".
            info.links = [link for link in info.links if not link[0].startswith("file:")]

    def context(
        self, applied: Applied, field: FieldView, *, all_files: bool = True
    ) -> tuple[list[LoadedFile], list[Outside]]:
        files: list[LoadedFile] = []
        outside: list[Outside] = []
        nested = applied.params.get("nested")
        for path, info in sorted(field.pages.items()):
            if info.dialect != self.name or not applied.covers(path) or (nested and not all_files):
                continue
            if nested:
                how = f"steering of {applied.params.get('workspace')}/: loaded when that folder is a Kiro workspace"
                files.append(LoadedFile(AGENT, path, UNKNOWN, INSTRUCTIONS, how, order=(2, path)))
                continue
            entry = _steering_entry(path, info)
            if not (all_files or entry.loaded in (ALWAYS, ON_MATCH)):
                continue
            files.append(entry)
            files.extend(_referenced(applied, field, entry, info, outside))
        if nested:
            return files, outside
        outside.append(
            Outside(
                AGENT,
                "global steering, ~/.kiro/steering/ (its files apply in every workspace, before these)",
                "memtui ~/.kiro/steering",
            )
        )
        return files, outside

    def page_checks(self, applied: Applied, field: FieldView, info: PageInfo) -> list[Finding]:
        out: list[Finding] = []
        for target, line in info.norm.imports or []:
            path = reference_target(applied, target)
            if path is None:
                if _credential(target):
                    message = f"#[[file:{target}]] pulls a key or credential file into the agent's context"
                    out.append(make_finding("import-credential", info.path, line, message))
                else:
                    message = (
                        f"#[[file:{target}]] leaves the field: Kiro pulls a file memtui cannot show you "
                        "into the context with this steering file"
                    )
                    out.append(make_finding("import-outside", info.path, line, message))
            elif _credential(path):
                message = f"#[[file:{target}]] pulls a key or credential file into the agent's context"
                out.append(make_finding("import-credential", info.path, line, message))
            elif not os.path.lexists(os.path.join(field.content_root, *path.split("/"))):
                out.append(make_finding("import-broken", info.path, line, f"#[[file:{target}]]: no such file"))
        return out


def _steering_entry(path: str, info: PageInfo) -> LoadedFile:
    """How Kiro includes one steering file, in words, from its ``inclusion``.

    A value Kiro does not document (or ``fileMatch`` with no pattern) is counted as always
    included, Kiro's default, and said so: a file whose loading memtui cannot tell is never
    left out of the checks of what loads by itself."""
    inclusion = info.text_of(INCLUSION_KEY)
    name = steering_name(path)
    order = (1, path)
    if inclusion is None:
        how = "steering, every interaction (no inclusion: the default)"
        return LoadedFile(AGENT, path, ALWAYS, INSTRUCTIONS, how, order=order)
    if inclusion == "always":
        return LoadedFile(AGENT, path, ALWAYS, INSTRUCTIONS, "steering, every interaction", order=order)
    if inclusion == "fileMatch":
        pattern = info.text_of(PATTERN_KEY)
        if pattern:
            how = "steering, on files matching"
            return LoadedFile(AGENT, path, ON_MATCH, INSTRUCTIONS, how, pattern=pattern, order=order)
        how = "fileMatch with no fileMatchPattern: unknown, counted as always"
        return LoadedFile(AGENT, path, ALWAYS, INSTRUCTIONS, how, order=order)
    if inclusion == "manual":
        how = f"steering, when #{name} is typed in chat"
        return LoadedFile(AGENT, path, ON_DEMAND, INSTRUCTIONS, how, order=order)
    if inclusion == "auto":
        if info.norm.description:
            how = "steering, when a request matches its description"
        else:
            how = "inclusion auto with no description to match"
        return LoadedFile(AGENT, path, ON_DEMAND, INSTRUCTIONS, how, order=order)
    how = f"inclusion {inclusion[:30]!r} is no Kiro mode: counted as always"
    return LoadedFile(AGENT, path, ALWAYS, INSTRUCTIONS, how, order=order)


def _referenced(
    applied: Applied, field: FieldView, entry: LoadedFile, info: PageInfo, outside: list[Outside]
) -> list[LoadedFile]:
    """The files a steering file pulls in with ``#[[file:]]``, loaded as it is (one hop: Kiro's
    docs do not say a referenced file's own references are followed). A page of the field is
    listed; a file that is no page is named (never read); one leaving the field is named."""
    found: list[LoadedFile] = []
    seen: set[str] = set()
    for target, line in info.norm.imports or []:
        path = reference_target(applied, target)
        where = f"{entry.path}:{line}"
        if path is None:
            outside.append(Outside(AGENT, f"#[[file:{target}]], pulled in by {where} (outside the field)"))
            continue
        if path in seen or path == entry.path:
            continue
        seen.add(path)
        absolute = os.path.join(field.content_root, *path.split("/"))
        if path not in field.pages and os.path.lexists(absolute):
            outside.append(
                Outside(AGENT, f"{path}, pulled in by {where} (in the field, not a page: memtui does not read it)")
            )
            continue
        how = f"pulled in by #[[file:]] on {where}"
        found.append(
            LoadedFile(
                AGENT,
                path,
                entry.loaded,
                INSTRUCTIONS,
                how,
                pattern=entry.pattern,
                order=(*entry.order, line),
                via=where,
            )
        )
    return found
