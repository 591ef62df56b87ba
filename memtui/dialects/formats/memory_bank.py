"""The Cline / Roo Code memory bank, and the rules that tell the agent to read it.

From Cline's documentation (Memory Bank; Rules) and Roo Code's (custom instructions):
a memory bank is a ``memory-bank/`` folder of plain Markdown at the project root. Its
core files each have a role (``CORE``): ``projectbrief.md`` (the foundation: scope,
requirements), ``productContext.md`` (why the project exists), ``systemPatterns.md``
(architecture), ``techContext.md`` (technologies, setup), ``activeContext.md`` (current
focus, recent changes, next steps: the most volatile) and ``progress.md`` (what works,
what is left, known issues); the instructions call them required. Extra files and
folders (features, integrations, API docs, testing) are allowed. Roo Code's memory
bank variants add ``decisionLog.md``.

Nothing in the tool reads the bank by itself: a *custom instruction* does ("read ALL
memory bank files at the start of EVERY task"). It sits in the project's rules, which
the agent puts in the system prompt of every task:

- Cline: a ``.clinerules`` file, or a ``.clinerules/`` folder whose Markdown files are
  all loaded (``workflows/``, ``hooks/`` and ``skills/`` excepted: a workflow is read
  when invoked); a rule with ``paths:`` frontmatter only when the task touches matching
  files; each rule can be switched off in Cline's Rules panel, a switch kept in the
  editor's state, outside the folder. ``.cline/rules/`` is the newer spelling.
- Roo Code: ``.roo/rules/`` (read recursively, alphabetical order), else ``.roorules``;
  ``.roo/rules-{mode}/`` (else ``.roorules-{mode}``, formerly ``.clinerules-{mode}``)
  only in that mode; ``.roomodes`` holds the custom modes' instructions.

So a bank is loaded at the start of every task only when such an instruction is in the
field (evidence); without one, the instruction may be in the user's global custom
instructions, which memtui cannot see: the load mode is *unknown*, never "always". A
memory bank has no status, date or supersede field: its pages keep whatever status
their own frontmatter says, nothing more.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from memtui.dialects.base import Applied, DetectContext, Dialect
from memtui.dialects.loading import (
    ALWAYS,
    AUTOMATIC,
    INSTRUCTIONS,
    MEMORY,
    ON_DEMAND,
    ON_MATCH,
    UNKNOWN,
    LoadedFile,
    Outside,
)
from memtui.field.field import FieldView
from memtui.field.page import PageInfo
from memtui.textsafety import one_line

BANK = "memory-bank"
CLINE = "cline"
ROO = "roo"
UNSEEN = "memory-bank"  # the agent of a bank no instruction in the field names
# The core files, in the order of the documented hierarchy: (kind, role).
CORE: dict[str, tuple[str, str]] = {
    "projectbrief.md": ("project brief", "the foundation: core requirements, goals and scope"),
    "productcontext.md": ("product context", "why the project exists, the problems it solves, how it should work"),
    "systempatterns.md": ("system patterns", "architecture, key technical decisions, design patterns"),
    "techcontext.md": ("tech context", "technologies, development setup, constraints, dependencies"),
    "activecontext.md": ("active context", "current focus, recent changes and next steps (the most volatile)"),
    "progress.md": ("progress", "what works, what is left, known issues"),
}
CORE_NAMES = (
    "projectbrief.md",
    "productContext.md",
    "systemPatterns.md",
    "techContext.md",
    "activeContext.md",
    "progress.md",
)
VARIANTS: dict[str, tuple[str, str]] = {
    "decisionlog.md": ("decision log", "decisions and the reasons for them (Roo Code memory bank variants)"),
}
EXTRA = ("extra file", "an extra file of the memory bank (the format gives it no role)")
MAX_INSTRUCTION_BYTES = 64 * 1024  # of one instruction file, read for a memory-bank instruction
MAX_INSTRUCTION_FILES = 200
# Cline's rules folder: what it reads as rules, and its folders that are not rules.
CLINE_FOLDERS = (".clinerules", ".cline/rules")
CLINE_NOT_RULES = {
    "workflows": ("workflow", "a workflow, read when invoked as a slash command"),
    "skills": ("skill", "a skill: its name and description are listed, the rest read when used"),
    "hooks": ("hook", "a hook script's notes: not loaded as a rule"),
}
_MODE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$")  # a mode slug memtui will name
_MENTION_RE = re.compile(r"memory[-_ ]?bank", re.IGNORECASE)
_READ_RE = re.compile(r"\bread(?:s|ing)?(?:\b|_)", re.IGNORECASE)  # not "README"
_ALL_RE = re.compile(r"\ball\b[^\n]{0,40}memory[-_ ]?bank", re.IGNORECASE)
_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,80}\.md")
CUSTOM_MODES = "*"  # the mode of .roomodes' instructions: the custom modes it defines
AGENT_WORDS = {CLINE: "Cline", ROO: "Roo Code"}
# Named, never read: what each agent loads from outside the field.
OUTSIDE = (
    (CLINE, "your global Cline rules, ~/Documents/Cline/Rules/ (loaded in every task)"),
    (CLINE, "which rules are switched on: kept in Cline's editor state, outside this folder"),
    (ROO, "your global Roo Code rules, ~/.roo/rules/ and ~/.roo/rules-{mode}/"),
    (ROO, "the custom instructions in Roo Code's settings (for all modes and per mode)"),
    (
        UNSEEN,
        "the custom instructions that may tell the agent to read memory-bank/: Cline's settings or "
        "~/Documents/Cline/Rules/, Roo Code's settings or ~/.roo/rules/",
    ),
)


def _lower(name: str) -> str:
    return name.rsplit("/", 1)[-1].lower()


def role_of(name: str) -> tuple[str, str]:
    """The (kind, role) of a memory-bank file by its name, case-folded (any other file: an extra file)."""
    low = _lower(name)
    return CORE.get(low) or VARIANTS.get(low) or EXTRA


def _read_instruction(text: str) -> dict[str, Any] | None:
    """Does this instruction tell the agent to read the memory bank? The line that says so,
    whether it says *all* of it, and the file names it names; None when it does not."""
    first: int | None = None
    every = False
    for number, line in enumerate(text.splitlines(), start=1):
        if _MENTION_RE.search(line) and _READ_RE.search(line):
            first = number if first is None else first
            every = every or _ALL_RE.search(line) is not None
    if first is None:
        return None
    names = sorted({match.group(0).lower() for match in _NAME_RE.finditer(text)})[:100]
    return {"line": first, "all": every, "names": names}


def _conditional(text: str) -> bool:
    """Does a Cline rule open with frontmatter naming ``paths:`` (loaded only on matching files)?"""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return False
    for line in lines[1:200]:
        if line.strip() == "---":
            return False
        if line.startswith("paths:"):
            return True
    return False


def _mode_of(name: str, prefix: str) -> str | None:
    """The mode slug after ``prefix`` in a rule file or folder name, when memtui may name it."""
    mode = name[len(prefix) :] if name.startswith(prefix) else ""
    return mode if _MODE_RE.match(mode) else None


def _instruction_files(ctx: DetectContext) -> list[tuple[str, str, str | None]]:
    """The rule files in the field that Cline or Roo Code put in every task: (path, agent, mode).

    ``mode`` is the Roo Code mode a file is for (``CUSTOM_MODES``: the modes ``.roomodes``
    defines), None for every mode. A workflow, a skill or a Cline rule with ``paths:`` does
    not reach every task, so it never makes the bank load by itself."""
    found: list[tuple[str, str, str | None]] = []
    for folder in CLINE_FOLDERS:
        if ctx.is_dir(folder):
            found += [
                (p, CLINE, None) for p in ctx.pages if p.startswith(folder + "/") and "/" not in p[len(folder) + 1 :]
            ]
    if ctx.exists(".clinerules") and not ctx.is_dir(".clinerules"):
        found.append((".clinerules", CLINE, None))
    for path in ctx.pages:
        top, _, rest = path.partition("/")
        if top != ".roo" or "/" not in rest:
            continue
        folder = rest.split("/", 1)[0]
        if folder == "rules":
            found.append((path, ROO, None))
        elif (mode := _mode_of(folder, "rules-")) is not None:
            found.append((path, ROO, mode))
    for name in _hidden_files(ctx.root):
        if name == ".roorules":
            found.append((name, ROO, None))
        elif name == ".roomodes":
            found.append((name, ROO, CUSTOM_MODES))
        else:
            mode = _mode_of(name, ".roorules-") or _mode_of(name, ".clinerules-")
            if mode is not None:
                found.append((name, ROO, mode))
    return found[:MAX_INSTRUCTION_FILES]


def _hidden_files(root: Path) -> list[str]:
    """The names of the regular hidden files at the top of the field (never following a link)."""
    try:
        return sorted(e.name for e in root.iterdir() if e.name.startswith(".") and e.is_file() and not e.is_symlink())
    except OSError:
        return []


def _bank_folders(ctx: DetectContext) -> list[str]:
    """The memory banks memtui reads: ``memory-bank/`` at the root, inside Cline's or Roo's
    rules folders, or the field itself when it is a memory bank. A bank holds a core file."""
    found = []
    for folder, names in sorted(ctx.folders().items()):
        at_root = folder == BANK
        in_rules = folder.endswith("/" + BANK) and folder.startswith((".roo/rules", ".clinerules/", ".cline/rules/"))
        itself = folder == "" and ctx.root.name == BANK
        if (at_root or in_rules or itself) and any(n.lower() in CORE for n in names):
            found.append(folder)
    return found


def _files(count: int) -> str:
    return f"{count} file" + ("" if count == 1 else "s")


def mode_words(mode: str) -> str:
    """A Roo Code mode, as a sentence names it."""
    return "the custom modes .roomodes defines" if mode == CUSTOM_MODES else f"the {mode} mode"


class MemoryBank(Dialect):
    name = "memory-bank"
    title = "Cline / Roo Code rules and memory bank"

    def scope_paths(self, root: Path, names: set[str]) -> list[str]:
        found = []
        if ".clinerules" in names and (root / ".clinerules").is_dir() and not (root / ".clinerules").is_symlink():
            found.append(".clinerules/")
        rules = root / ".cline" / "rules"
        if ".cline" in names and rules.is_dir() and not rules.is_symlink() and not (root / ".cline").is_symlink():
            found.append(".cline/rules/")
        if ".roo" in names:
            try:
                children = sorted(e.name for e in (root / ".roo").iterdir() if e.is_dir() and not e.is_symlink())
            except OSError:
                children = []
            found += [f".roo/{c}/" for c in children if c == "rules" or _mode_of(c, "rules-") is not None]
        return found

    def detect(self, ctx: DetectContext) -> list[Applied]:
        found: list[Applied] = []
        readers: list[dict[str, Any]] = []
        instruction_files = _instruction_files(ctx)
        for path, agent, mode in instruction_files:
            text = ctx.head(path, MAX_INSTRUCTION_BYTES)
            if agent == CLINE and _conditional(text):
                continue
            said = _read_instruction(text)
            if said is not None:
                # The path is the field's (a rule file's name): shown inert wherever it is said.
                readers.append({"path": path, "shown": one_line(path, 120), "agent": agent, "mode": mode, **said})
        for folder in _bank_folders(ctx):
            prefix = folder + "/" if folder else ""
            count = sum(1 for p in ctx.pages if p.startswith(prefix))
            names = {n.lower() for n in ctx.folders().get(folder, [])}
            where = prefix or "this folder"
            evidence = [f"{where} ({count} pages, {sum(1 for n in CORE if n in names)} of the 6 core files)"]
            missing = [n for n in CORE_NAMES if n.lower() not in names]
            if missing:
                whose = "core files Cline's memory-bank instructions call required"
                if "decisionlog.md" in names:
                    whose += "; with decisionLog.md it looks like a Roo Code variant, which may do without some"
                evidence.append(f"{where} lacks {', '.join(missing)} ({whose})")
            if folder.startswith(".roo/rules"):
                evidence.append(f"{prefix} is inside Roo Code's rules: loaded as rules")
            elif readers and folder:
                evidence += [f"{r['shown']}:{r['line']} tells {AGENT_WORDS[r['agent']]} to read it" for r in readers]
            else:
                evidence.append(
                    "no instruction to read it in this folder: it may be in the user's global custom instructions"
                )
            found.append(Applied(self.name, folder, evidence, {"kind": "bank", "readers": readers}))
        for folder in CLINE_FOLDERS:
            if ctx.is_dir(folder) and ctx.holds_folder(folder):
                count = sum(1 for p in ctx.pages if p.startswith(folder + "/"))
                found.append(
                    Applied(self.name, folder, [f"{folder}/ ({_files(count)} of Cline's rules)"], {"kind": "cline"})
                )
        if ctx.holds_folder(".roo"):
            count = sum(1 for p in ctx.pages if p.startswith(".roo/"))
            found.append(
                Applied(
                    self.name, ".roo", [f".roo/rules*/ ({_files(count)} in Roo Code's rules folders)"], {"kind": "roo"}
                )
            )
        files = [path for path, _, _ in instruction_files if path not in ctx.page_set]
        if files and not found:
            evidence = [
                f"{', '.join(files[:4])} (rules memtui names but does not read: not Markdown pages)"
            ]  # fixed names
            found.append(Applied(self.name, "", evidence, {"kind": "rules-only"}))
        if found:
            # What lies outside the field is named once, by the first instance, for the agents in view.
            agents = {agent for _, agent, _ in instruction_files} | {
                {"cline": CLINE, "roo": ROO}[a.params["kind"]] for a in found if a.params["kind"] in ("cline", "roo")
            }
            unseen = [a for a in found if a.params["kind"] == "bank" and not a.root.startswith(".roo/rules")]
            if any(not readers or not a.root for a in unseen):
                agents.add(UNSEEN)
            found[0].params["outside"] = sorted(agents)
            found[0].params["files"] = files
        return found

    def claims(self, applied: Applied, path: str) -> bool:
        return applied.params.get("kind") != "rules-only" and applied.covers(path)

    def read(self, applied: Applied, info: PageInfo, root: Path, text: str) -> None:
        info.dialect = self.name
        norm = info.writable_norm()
        if applied.params.get("kind") not in ("cline", "roo"):  # a bank (or a folder forced as one)
            norm.role = "memory"
            norm.kind = role_of(info.path)[0]
            return
        norm.role = "instructions"
        norm.kind = _rule_kind(applied, info.path)[0]

    def context(
        self, applied: Applied, field: FieldView, *, all_files: bool = True
    ) -> tuple[list[LoadedFile], list[Outside]]:
        kind = applied.params.get("kind")
        files: list[LoadedFile] = []
        if kind in ("bank", None):  # None: forced with --dialect, read as a bank
            files = _bank_context(self.name, applied, field)
        elif kind in ("cline", "roo"):
            for path, info in sorted(field.pages.items()):
                if info.dialect == self.name and applied.covers(path) and info.norm.role == "instructions":
                    files.append(_rule_file(applied, info))
        if not all_files:
            files = [f for f in files if f.loaded in AUTOMATIC]
        return files, _outside(applied)


def _bank_context(dialect: str, applied: Applied, field: FieldView) -> list[LoadedFile]:
    """How each agent in view loads each file of a bank, with the file's role and the evidence."""
    readers: list[dict[str, Any]] = [r for r in applied.params.get("readers", []) if isinstance(r, dict)]
    out: list[LoadedFile] = []
    for path, info in sorted(field.pages.items()):
        if info.dialect != dialect or not applied.covers(path):
            continue
        name = path.rsplit("/", 1)[-1]
        core = list(CORE)
        order: tuple[Any, ...] = (5, core.index(name.lower()) if name.lower() in core else len(core), path)
        where = f"{one_line(name, 80)}: {role_of(path)[1]}"
        if applied.root.startswith(".roo/rules"):
            mode = _mode_of(applied.root.split("/", 2)[1], "rules-")
            how = f"{where}; inside Roo Code's rules folder, so put in the system prompt of every task"
            order = (1, path)  # with the other rules: alphabetical
            if mode is not None:
                how += f" in {mode_words(mode)}"
                out.append(LoadedFile(ROO, path, ON_MATCH, MEMORY, how, f"{mode} mode", order=order))
            else:
                out.append(LoadedFile(ROO, path, ALWAYS, MEMORY, how, order=order))
            continue
        if not readers or not applied.root:
            how = (
                f"{where}; the instruction that makes the agent read memory-bank/ is not in this folder: "
                "it may be in the user's global custom instructions"
            )
            out.append(LoadedFile(UNSEEN, path, UNKNOWN, MEMORY, how, order=order))
            continue
        for reader in readers:
            agent, mode = str(reader.get("agent")), reader.get("mode")
            said = f"{reader.get('shown')}:{reader.get('line')}"
            if not (reader.get("all") or name.lower() in reader.get("names", ())):
                how = f"{where}; in the memory bank, not named by {said}: read when the agent decides to"
                out.append(LoadedFile(agent, path, ON_DEMAND, MEMORY, how, order=order))
            elif isinstance(mode, str):
                how = f"{where}; read at the start of every task in {mode_words(mode)}, as {said} tells the agent"
                pattern = "custom modes" if mode == CUSTOM_MODES else f"{mode} mode"
                out.append(LoadedFile(agent, path, ON_MATCH, MEMORY, how, pattern, order=order))
            else:
                how = f"{where}; read at the start of every task, as {said} tells the agent"
                out.append(LoadedFile(agent, path, ALWAYS, MEMORY, how, order=order))
    # One entry per agent and file: the strongest mode (every task beats one mode beats on demand).
    rank = {ALWAYS: 0, ON_MATCH: 1, ON_DEMAND: 2, UNKNOWN: 3}
    best: dict[tuple[str, str], LoadedFile] = {}
    for entry in out:
        key = (entry.agent, entry.path)
        if key not in best or rank[entry.loaded] < rank[best[key].loaded]:
            best[key] = entry
    return list(best.values())


def _outside(applied: Applied) -> list[Outside]:
    """What Cline and Roo Code load from outside the field, and the rule files in it that are not
    Markdown pages (named, never shown): said by the first instance only."""
    forced = applied.params.get("kind") is None  # read as a bank with --dialect: nothing else in view
    agents = applied.params.get("outside") or ([UNSEEN] if forced else [])
    out = [Outside(agent, what) for agent, what in OUTSIDE if agent in agents]
    for path in applied.params.get("files") or []:
        agent = CLINE if path == ".clinerules" else ROO
        what = f"{path}: rules loaded into tasks (not a Markdown page: memtui names it, never shows or checks it)"
        out.append(Outside(agent, what))
    return out


def _rule_kind(applied: Applied, path: str) -> tuple[str, str]:
    """A rule file's kind and how its agent loads it, in words."""
    local = applied.local(path)
    if applied.params.get("kind") == "roo":
        mode = _mode_of(local.split("/", 1)[0], "rules-")
        if mode is not None:
            return "rules", f"Roo Code's rules for {mode_words(mode)}: in the system prompt of every task in it"
        return "rules", "Roo Code's rules: in the system prompt of every task (in alphabetical order)"
    folder = local.split("/", 1)[0] if "/" in local else ""
    if folder in CLINE_NOT_RULES:
        return CLINE_NOT_RULES[folder]
    if folder:
        return "rules", "in a subfolder of Cline's rules: older Cline versions load it, newer ones only the top level"
    return "rules", "Cline's rules: in the system prompt of every task, unless switched off in the Rules panel"


def _rule_file(applied: Applied, info: PageInfo) -> LoadedFile:
    """How Cline or Roo Code loads one of its rule files."""
    path = info.path
    _, how = _rule_kind(applied, path)
    local = applied.local(path)
    if applied.params.get("kind") == "roo":
        mode = _mode_of(local.split("/", 1)[0], "rules-")
        if mode is not None:
            return LoadedFile(ROO, path, ON_MATCH, INSTRUCTIONS, how, f"{mode} mode", order=(2, path))
        return LoadedFile(ROO, path, ALWAYS, INSTRUCTIONS, how, order=(1, path))
    folder = local.split("/", 1)[0] if "/" in local else ""
    if folder in CLINE_NOT_RULES:
        return LoadedFile(CLINE, path, ON_DEMAND, INSTRUCTIONS, how, order=(3, path))
    if folder:
        return LoadedFile(CLINE, path, UNKNOWN, INSTRUCTIONS, how, order=(3, path))
    paths = info.meta.get("paths")
    globs = (
        [paths]
        if isinstance(paths, str)
        else [p for p in paths if isinstance(p, str)]
        if isinstance(paths, list)
        else []
    )
    if globs:
        how = "a conditional Cline rule, loaded when the task touches the files it names"
        return LoadedFile(CLINE, path, ON_MATCH, INSTRUCTIONS, how, ", ".join(globs)[:200], order=(1, path))
    return LoadedFile(CLINE, path, ALWAYS, INSTRUCTIONS, how, order=(1, path))
