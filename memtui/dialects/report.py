"""What memtui did with a field, in words every surface shows the same way.

Which dialects it applied (with the evidence and how many pages each read),
which folders it left out (and the command that opens them), what
``memtui.toml`` changed, and how many pages carry no review record.

One agent-written file can change how a field is read (``USER.md`` beside
``IDENTITY.md`` adds an OpenClaw reading), so the report also says what changed
in the reading since the last run, with the evidence that changed it
(``reading_changes``; the last reading is kept in the user cache, never in the field).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from memtui.dialects.base import Applied, Skipped
from memtui.dialects.detect import BY_NAME, Detection, detect_after
from memtui.dialects.reader import DialectReader
from memtui.field.checks import rule_settings
from memtui.field.field import Field, ScanEntry, ScanResult
from memtui.field.rule_settings import RuleSettings
from memtui.store import locations, safe_write
from memtui.store.files import read_bytes

READING_FILE = "reading.json"  # beside the field's page cache, in the user cache
MAX_READING_BYTES = 256 * 1024
_SEEN_LOCK = threading.Lock()
# Per reading file: (the reading this process saw, what changed since the run before): every
# surface of one run shows the same changes, however often it asks.
_SEEN: dict[str, tuple[str, list[str]]] = {}


@dataclass(slots=True)
class FieldReport:
    dialects: list[tuple[Applied, int]]
    skipped: list[Skipped]
    settings: RuleSettings
    forced: str | None = None
    scope: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # what changed in the reading since the last run

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
            "reading_changed": list(self.changed),
        }

    def lines(self) -> list[str]:
        """The report as plain lines (the CLI prints them; the TUI overview shows them)."""
        out = [f"the reading changed since the last run: {change}" for change in self.changed]
        for applied, pages in self.dialects:
            where = f" in {applied.root}/" if applied.root else ""
            evidence = "; ".join(applied.evidence) or "no evidence"
            out.append(
                f"read as {BY_NAME[applied.name].title}{where}: {pages} page{'s' if pages != 1 else ''} ({evidence})"
            )
        if self.scope:
            out.append("hidden paths read too: " + ", ".join(self.scope))
        for skipped in self.skipped:
            out.append(f"not read: {skipped.words()}")
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
        merged(cast(DialectReader, reader).counts(field.pages.keys(), field.pages)),  # the reader with a detection
        list(detection.skipped),
        rule_settings(field),
        detection.forced,
        list(detection.scope.include),
        reading_changes(field, detection),
    )


def _where(root: str) -> str:
    return f" in {root}/" if root else ""


def _reading(detection: Detection) -> dict[str, Any]:
    """What the reading of a field is (the formats and where, what is read), without the
    evidence, which counts pages and changes with them; and the evidence, to say why."""
    return {
        "applied": sorted({(a.name, a.root) for a in detection.applied}),
        "forced": detection.forced,
        "scope": list(detection.scope.include),
        "evidence": {f"{a.name}@{a.root}": list(a.evidence) for a in detection.applied},
    }


def compare_readings(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """In words, how the reading ``after`` differs from ``before`` and what changed it."""
    out: list[str] = []
    old = {tuple(item) for item in before.get("applied", ())}
    new = {tuple(item) for item in after.get("applied", ())}
    evidence = after.get("evidence", {})
    for name, root in sorted(new - old):
        title = BY_NAME[name].title if name in BY_NAME else name
        why = "; ".join(str(e) for e in evidence.get(f"{name}@{root}", ())) or "no evidence"
        out.append(f"now also read as {title}{_where(root)}, because of: {why}")
    for name, root in sorted(old - new):
        title = BY_NAME[name].title if name in BY_NAME else str(name)
        out.append(f"no longer read as {title}{_where(str(root))}")
    if before.get("forced") != after.get("forced"):
        out.append(f"--dialect was {before.get('forced') or 'not given'}, now {after.get('forced') or 'not given'}")
    if list(before.get("scope", ())) != list(after.get("scope", ())):
        out.append("hidden paths read: " + (", ".join(after.get("scope", ())) or "none"))
    return out


def reading_file(field: Field) -> Path:
    """Where the field's last reading is kept: the user cache, beside its page cache."""
    cache = field.cache_dir or locations.default_cache_dir(field.root, readonly=field.readonly, source=field.source)
    return Path(cache).parent / READING_FILE


def reading_changes(field: Field, detection: Detection) -> list[str]:
    """What changed in how the field is read since the last run (the first call of a run
    compares with the reading kept in the user cache and keeps this one; later calls in the
    same run give the same answer). Nothing on the first run, or when the cache is unwritable."""
    path = reading_file(field)
    now = _reading(detection)
    key = json.dumps({k: v for k, v in now.items() if k != "evidence"}, sort_keys=True)
    with _SEEN_LOCK:
        seen = _SEEN.get(str(path))
        if seen is not None and seen[0] == key:
            return list(seen[1])
        before = _read_reading(path)
        changes = compare_readings(before, now) if before is not None else []
        if before is None or changes:
            try:
                safe_write.write_internal_file(path, json.dumps(now, sort_keys=True).encode("utf-8"))
            except OSError:
                pass  # a read-only cache: the change is shown this run, and again on the next
        _SEEN[str(path)] = (key, changes)
        return list(changes)


def _read_reading(path: Path) -> dict[str, Any] | None:
    try:
        found = read_bytes(path, max_bytes=MAX_READING_BYTES)
    except OSError:
        return None
    if found is None:
        return None
    try:
        data = json.loads(found[0].decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def reading_after(field: Field, changes: Mapping[str, bytes | None]) -> list[str]:
    """How the field would be read differently after ``changes`` (page -> new bytes, None:
    deleted), what a proposal's review shows: both readings are detected the same way, from
    the pages the field holds now, so only the changes can make them differ."""
    detection: Detection | None = getattr(field.reader, "detection", None)
    if detection is None:
        return []
    entries = [ScanEntry(path, info.size, info.mtime_ns) for path, info in sorted(field.pages.items())]
    folders: dict[str, list[str]] = {}
    for entry in entries:
        folder, _, name = entry.path.rpartition("/")
        folders.setdefault(folder, []).append(name)
    scanned = ScanResult(entries, [], set(field.files), [], folders)
    root = Path(field.content_root)
    before = detect_after(root, scanned, {}, force=detection.forced)
    after = detect_after(root, scanned, changes, force=detection.forced)
    return compare_readings(_reading(before), _reading(after))
