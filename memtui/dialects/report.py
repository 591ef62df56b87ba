"""What memtui did with a field, in words every surface shows the same way.

Which dialects it applied (with the evidence and how many pages each read),
which folders it left out (and the command that opens them), what
``memtui.toml`` changed, and how many pages carry no review record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from memtui.dialects.base import Applied, Skipped
from memtui.dialects.detect import BY_NAME, Detection
from memtui.dialects.reader import DialectReader
from memtui.field.checks import rule_settings
from memtui.field.field import Field
from memtui.field.rule_settings import RuleSettings


@dataclass(slots=True)
class FieldReport:
    dialects: list[tuple[Applied, int]]
    skipped: list[Skipped]
    settings: RuleSettings
    forced: str | None = None
    scope: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "dialects": [
                {
                    "name": applied.name,
                    "title": BY_NAME[applied.name].title,
                    "root": applied.root or ".",
                    "pages": pages,
                    "evidence": list(applied.evidence),
                }
                for applied, pages in self.dialects
            ],
            "forced": self.forced,
            "included_hidden": self.scope,
            "skipped": [s.to_json() for s in self.skipped],
            "settings": self.settings.to_json(),
        }

    def lines(self) -> list[str]:
        """The report as plain lines (the CLI prints them; the TUI overview shows them)."""
        out = []
        for applied, pages in self.dialects:
            where = f" in {applied.root}/" if applied.root else ""
            evidence = "; ".join(applied.evidence) or "no evidence"
            out.append(
                f"read as {BY_NAME[applied.name].title}{where}: {pages} page{'s' if pages != 1 else ''} ({evidence})"
            )
        if self.scope:
            out.append("hidden paths read too: " + ", ".join(self.scope))
        for skipped in self.skipped:
            out.append(f"not read: {skipped.path}/ ({skipped.what}); open it with: {skipped.command}")
        if self.settings.summary:
            out.append(self.settings.summary + ": " + "; ".join(self.settings.describe()))
        return out


def merged(counts: list[tuple[Applied, int]]) -> list[tuple[Applied, int]]:
    """One entry per dialect and root: the instances a format applies at one folder, with their pages summed."""
    out: dict[tuple[str, str], tuple[Applied, int]] = {}
    for applied, pages in counts:
        key = (applied.name, applied.root)
        if key not in out:
            out[key] = (Applied(applied.name, applied.root, list(applied.evidence), dict(applied.params)), pages)
            continue
        first, total = out[key]
        first.evidence.extend(e for e in applied.evidence if e not in first.evidence)
        out[key] = (first, total + pages)
    return list(out.values())


def field_report(field: Field) -> FieldReport:
    """The report of a field opened through ``memtui.dialects.open``."""
    reader = field.reader
    detection: Detection | None = getattr(reader, "detection", None)
    if detection is None:
        return FieldReport([], [], rule_settings(field))
    return FieldReport(
        merged(cast(DialectReader, reader).counts(field.pages.keys())),  # the reader with a detection
        list(detection.skipped),
        rule_settings(field),
        detection.forced,
        list(detection.scope.include),
    )
