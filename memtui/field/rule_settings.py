"""Per-field rule settings: ``memtui.toml`` at the field root switches rules off, changes severities, ignores paths.

    # memtui.toml
    ignore = ["templates/**"]          # no findings on these pages

    [rules]
    page-size = "off"                  # a human docs vault does not want it
    link-broken = "info"               # a severity: error, warning, info
    untagged-claim = { severity = "off", paths = ["drafts/**"] }   # only under these paths

An agent can write this file as easily as a page, so every surface that shows
findings also says what the file changed ("3 rules changed by memtui.toml", and
how many findings it hid). What rules apply is the reviewer's, not the field's:
the safety rules (``SAFETY_RULES``: hidden or terminal-active characters,
conflict markers, YAML aliases and duplicate keys, routing to untrusted pages,
tag promotion) are never switched off, lowered or ignored by this file; a line
that tries is refused and reported. A file that does not parse, or names an
unknown rule or severity, changes nothing it cannot state clearly and is itself
reported (``settings-invalid``).
"""

from __future__ import annotations

import fnmatch
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from memtui.store.files import read_bytes

SETTINGS_FILE = "memtui.toml"
MAX_SETTINGS_BYTES = 64 * 1024
OFF = "off"
# Rules the field's own file cannot switch off, lower or ignore: each guards the reviewer
# against the text an agent wrote (what it hides, what it routes to, what it launders).
SAFETY_RULES = frozenset(
    {
        "control-chars",
        "bidi-override",
        "zero-width",
        "conflict-markers",
        "yaml-alias",
        "frontmatter-duplicate-key",
        "memory-untrusted-target",
        "loaded-untrusted",
        "tag-promoted",
        "lookalike-tag",
        "settings-invalid",
    }
)
STRONGEST = "error"  # the one change the file may make to a safety rule: raise it to an error


class RuleFinding(Protocol):
    """What the settings read of a finding (``checks.Finding``; ``checks`` imports this module),
    and how they make it again with another severity."""

    def __init__(self, rule: str, severity: str, path: str, line: int | None, message: str) -> None: ...

    @property
    def rule(self) -> str: ...

    @property
    def severity(self) -> str: ...

    @property
    def path(self) -> str: ...

    @property
    def line(self) -> int | None: ...

    @property
    def message(self) -> str: ...


F = TypeVar("F", bound=RuleFinding)


@dataclass(slots=True)
class RuleChange:
    rule: str
    severity: str  # a severity, or "off"
    paths: tuple[str, ...] = ()  # only findings on these pages (globs); empty = everywhere

    def describe(self) -> str:
        where = f" under {', '.join(self.paths)}" if self.paths else ""
        return f"{self.rule}: {'off' if self.severity == OFF else self.severity}{where}"


@dataclass(slots=True)
class RuleSettings:
    changes: list[RuleChange] = field(default_factory=list)
    ignore: tuple[str, ...] = ()
    problems: list[str] = field(default_factory=list)
    present: bool = False

    @property
    def summary(self) -> str:
        """One line for every surface: what ``memtui.toml`` changed ('' when nothing)."""
        parts = []
        rules = {change.rule for change in self.changes}
        if rules:
            parts.append(f"{len(rules)} rule{'s' if len(rules) != 1 else ''} changed by {SETTINGS_FILE}")
        if self.ignore:
            parts.append(f"{len(self.ignore)} path pattern{'s' if len(self.ignore) != 1 else ''} ignored")
        return "; ".join(parts)

    @staticmethod
    def hidden_note(hidden: int) -> str:
        """What every count of findings adds when the file hid some ('' when none)."""
        return f"{hidden:,} hidden by {SETTINGS_FILE}" if hidden else ""

    def describe(self) -> list[str]:
        lines = [change.describe() for change in self.changes]
        lines.extend(f"ignored: {pattern} (the safety rules still apply there)" for pattern in self.ignore)
        return lines

    def apply(self, findings: list[F], severities: dict[str, str]) -> list[F]:
        """The findings as the settings want them (``severities``: each rule's default)."""
        if not self.changes and not self.ignore:
            return findings
        return [f for f in map(self.adjust, findings) if f is not None]

    def adjust(self, finding: F) -> F | None:
        """The finding as the settings want it: its severity changed, or None when switched off or
        ignored. A safety rule's finding is never ignored (``load`` kept no change lowering one)."""
        if not self.changes and not self.ignore:
            return finding
        safety = finding.rule in SAFETY_RULES
        if self.ignore and not safety and _matches(finding.path, self.ignore):
            return None
        severity = finding.severity
        for change in self.changes:
            if change.rule == finding.rule and (not change.paths or _matches(finding.path, change.paths)):
                severity = change.severity
        if severity == OFF:
            return None
        if severity != finding.severity:
            finding = type(finding)(finding.rule, severity, finding.path, finding.line, finding.message)
        return finding

    def to_json(self) -> dict[str, Any]:
        return {
            "file": SETTINGS_FILE if self.present else None,
            "changes": [c.describe() for c in self.changes],
            "ignore": list(self.ignore),
            "problems": list(self.problems),
        }


def _matches(path: str, patterns: tuple[str, ...]) -> bool:
    return any(
        fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(path, pattern.rstrip("/") + "/*")
        for pattern in patterns
    )


def load(root: Path, known_rules: set[str], severities: tuple[str, ...]) -> RuleSettings:
    """Read ``memtui.toml`` (never raises: what cannot be understood is a problem, and changes nothing)."""
    settings = RuleSettings()
    path = os.path.join(root, SETTINGS_FILE)
    try:
        result = read_bytes(path)
    except OSError as exc:
        settings.present = True
        settings.problems.append(f"cannot read {SETTINGS_FILE}: {exc.strerror or exc}")
        return settings
    if result is None:
        return settings
    settings.present = True
    data_bytes = result[0]
    if len(data_bytes) > MAX_SETTINGS_BYTES:
        settings.problems.append(f"{SETTINGS_FILE} is over {MAX_SETTINGS_BYTES // 1024} KB: not read")
        return settings
    try:
        data = tomllib.loads(data_bytes.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:
        settings.problems.append(f"{SETTINGS_FILE} does not parse: {exc}")
        return settings
    ignore = data.get("ignore", [])
    if isinstance(ignore, str):
        ignore = [ignore]
    if not isinstance(ignore, list) or not all(isinstance(p, str) for p in ignore):
        settings.problems.append("ignore must be a list of path patterns")
    else:
        settings.ignore = tuple(ignore)
    rules = data.get("rules", {})
    if not isinstance(rules, dict):
        settings.problems.append("[rules] must be a table of rule = severity")
        return settings
    allowed = (*severities, OFF)
    for rule, value in rules.items():
        if rule not in known_rules:
            settings.problems.append(f"unknown rule {rule!r} (memtui check --rules lists them)")
            continue
        paths: list[str] = []
        if isinstance(value, dict):
            paths = value.get("paths", [])
            value = value.get("severity")
            if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
                settings.problems.append(f"{rule}: paths must be a list of path patterns")
                continue
        if not isinstance(value, str) or value.lower() not in allowed:
            settings.problems.append(f"{rule}: {value!r} is not one of {', '.join(allowed)}")
            continue
        if rule in SAFETY_RULES and value.lower() != STRONGEST:
            settings.problems.append(
                f"{rule} = {value!r} refused: a safety rule is not switched off or lowered by the field's own file"
            )
            continue
        settings.changes.append(RuleChange(rule, value.lower(), tuple(paths)))
    return settings
