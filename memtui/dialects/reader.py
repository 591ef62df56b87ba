"""Reading every page of a field through the dialect that claims it.

``DialectReader`` is the field's ``PageReader`` (``memtui.field.field``): the
field, the index (also in its build helpers, rebuilt from ``spec``) and the
review screens read pages through it, so all of them see the same status,
title, trust and links. Its ``signature`` changes when the detection does, and
a page cache written under another reading is not used.

A format detected from a few pages claims only the pages carrying its marks
(``owns``: a basic-memory note has its ``permalink:``): one agent-written page
never changes how every other page of the field is read. A page the first
claiming format does not own goes to the next one that claims it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, cast

from memtui.dialects.base import Applied, Dialect
from memtui.dialects.detect import BY_NAME, DIALECTS, Detection
from memtui.dialects.loading import AUTOMATIC, ContextReport, LoadedFile, Outside, context_report
from memtui.field import page as page_mod
from memtui.field.checks import Finding, make_finding
from memtui.field.field import FieldView, Scope
from memtui.field.page import PageInfo, decode
from memtui.field.trust import QUARANTINED, UNREVIEWED
from memtui.store.schema import schema_version

INSTANCE_MEMO = 1_000_000  # paths whose dialect instance_for keeps (then it starts again)

_PRIORITY = {dialect.name: number for number, dialect in enumerate(DIALECTS)}


class DialectReader:
    def __init__(self, detection: Detection) -> None:
        self.detection = detection
        # Deeper roots first (a store inside the field beats the field), then the more specific format.
        self.instances: list[tuple[Applied, Dialect]] = sorted(
            ((applied, BY_NAME[applied.name]) for applied in detection.applied),
            key=lambda pair: (-pair[0].root.count("/") - bool(pair[0].root), _PRIORITY[pair[0].name]),
        )
        self.scope: Scope = detection.scope
        self._instance_of: dict[str, tuple[Applied, Dialect] | None] = {}  # instance_for, per path
        # counts: the paths last counted, and the pages of each applied instance among them
        self._counted: tuple[set[str], dict[int, int]] = (set(), {id(applied): 0 for applied, _ in self.instances})
        prefixes: list[str] = []
        for applied, dialect in self.instances:
            prefixes.extend(dialect.link_prefixes(applied, Path(".")))
        self.link_prefixes: tuple[str, ...] = tuple(dict.fromkeys(prefixes))
        # Does a format here own pages by their marks (``owns``), not by their path alone?
        self.by_marks = any(hasattr(dialect, "owns") for _, dialect in self.instances)
        # What the reading depends on (not the evidence, which counts pages and changes with them).
        reading = [(a.name, a.root, a.params) for a in detection.applied], list(detection.scope.include)
        digest = hashlib.sha256(json.dumps(reading, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
        self.signature = f"dialects/{schema_version(code=('memtui.dialects',))[:8]}:{digest[:16]}"

    # ------------------------------------------------------------------ the PageReader protocol
    def read(self, root: Path, path: str) -> PageInfo | None:
        found = page_mod.read_page_bytes(root, path)
        if found is None:
            return None
        info, data = found
        return self._through_dialect(root, info, data)

    def from_bytes(self, root: Path, path: str, data: bytes, mtime_ns: int) -> PageInfo:
        return self._through_dialect(root, page_mod.info_from_bytes(path, data, len(data), mtime_ns), data)

    def checks(self, field: FieldView) -> list[Finding]:
        out = self._loaded_untrusted(field)
        if all(type(dialect).page_checks is Dialect.page_checks for _, dialect in self.instances):
            return out  # no format here makes findings of its own: no pass over the pages
        for info in field.pages.values():
            instance = self.instance_of(info)
            if instance is not None and instance[1].name == info.dialect:
                out.extend(instance[1].page_checks(instance[0], field, info))
        return out

    # ------------------------------------------------------------------ what agents load
    def loads(self, field: FieldView, *, all_files: bool = True) -> tuple[list[LoadedFile], list[Outside]]:
        """Every file an agent loads from this field, as each format says, and what it loads from
        outside (``dialects.loading``); ``all_files=False``: only what it loads by itself."""
        files: list[LoadedFile] = []
        outside: list[Outside] = []
        for applied, dialect in self.instances:
            found, beyond = dialect.context(applied, field, all_files=all_files)
            files.extend(found)
            outside.extend(beyond)
        return files, outside

    def context(
        self,
        field: FieldView,
        findings: Iterable[Finding],
        dangerous: frozenset[str],
        *,
        all_files: bool = True,
        loads: tuple[list[LoadedFile], list[Outside]] | None = None,
    ) -> ContextReport:
        """What each agent is told at the start of a session, measured, with the findings of
        ``dangerous`` rules in what it loads by itself (``loads``: ``self.loads``, when known)."""
        files, outside = loads if loads is not None else self.loads(field, all_files=all_files)

        def text(path: str) -> str | None:
            found = page_mod.read_page_bytes(field.root, path)
            if found is None or found[1] is None:
                return None
            return decode(found[1])[0]

        return context_report(
            files, outside, field.pages, findings, text, lambda info: field.trust(info.path), dangerous
        )

    def _loaded_untrusted(self, field: FieldView) -> list[Finding]:
        """A quarantined or unreviewed page an agent loads by itself: the rule memtui's own format
        keeps for MEMORY.md (never route to untrusted text), for every format's loaded files."""
        if len(field.pages) <= 1:
            return []  # one page alone (check_page): what loads it is not in view
        out: list[Finding] = []
        seen: set[str] = set()
        for loaded in self.loads(field, all_files=False)[0]:
            if loaded.loaded not in AUTOMATIC or loaded.path in seen or loaded.path not in field.pages:
                continue
            seen.add(loaded.path)
            state = field.trust(loaded.path)
            if state in (QUARANTINED, UNREVIEWED):
                when = "every session" if loaded.loaded == "always" else f"when the agent works on {loaded.pattern}"
                message = f"{state} text that {loaded.agent} loads by itself ({loaded.how}), {when}"
                out.append(make_finding("loaded-untrusted", loaded.path, None, message))
        return out

    # ------------------------------------------------------------------ helpers
    def instance_for(self, path: str) -> tuple[Applied, Dialect] | None:
        """The dialect that reads the page at ``path`` (depends on the path alone: kept)."""
        known = self._instance_of.get(path, self)
        if known is not self:
            return cast("tuple[Applied, Dialect] | None", known)  # ``self`` only marks a path not looked up
        found = None
        for applied, dialect in self.instances:
            if applied.covers(path) and dialect.claims(applied, path):
                found = (applied, dialect)
                break
        if len(self._instance_of) >= INSTANCE_MEMO:
            self._instance_of.clear()
        self._instance_of[path] = found
        return found

    def instance_of(self, info: PageInfo) -> tuple[Applied, Dialect] | None:
        """The dialect that reads this page: the first that claims its path (``instance_for``) if it
        owns the page (carries its marks), else the next claiming one that does."""
        first = self.instance_for(info.path)
        if first is None or _owns(first[1], first[0], info):
            return first
        for applied, dialect in self.instances:
            if applied is first[0] or not (applied.covers(info.path) and dialect.claims(applied, info.path)):
                continue
            if _owns(dialect, applied, info):
                return applied, dialect
        return None

    def _through_dialect(self, root: Path, info: PageInfo, data: bytes | None) -> PageInfo:
        instance = self.instance_of(info)
        if instance is None:
            return info
        applied, dialect = instance
        text = decode(data)[0] if data is not None and info.parsed else ""
        dialect.read(applied, info, Path(root), text)
        return info

    def spec(self) -> dict[str, Any]:
        """What a build helper process needs to read pages the same way (JSON-able)."""
        return self.detection.to_json()

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> DialectReader:
        return cls(Detection.from_json(spec))

    def events(self, root: Path, info: PageInfo) -> list[dict[str, Any]]:
        """The store's own timeline of this page, for formats that keep one (else [])."""
        instance = self.instance_of(info)
        if instance is None or not hasattr(instance[1], "events"):
            return []
        events: list[dict[str, Any]] = instance[1].events(instance[0], Path(root), info.id or "")
        return events

    def counts(self, paths: Iterable[str], pages: Mapping[str, PageInfo] | None = None) -> list[tuple[Applied, int]]:
        """How many of the pages at ``paths`` each applied dialect read. The tally of the last call
        is kept and brought up to date by the paths added and gone (the dialect of a page depends
        on its path alone), unless a format here owns pages by their marks: then, with ``pages``,
        each page counts for the instance that read it."""
        if pages is not None and self.by_marks:
            counted = {id(applied): 0 for applied, _ in self.instances}
            for path in paths:
                info = pages.get(path)
                instance = self.instance_of(info) if info is not None else self.instance_for(path)
                if instance is not None:
                    counted[id(instance[0])] += 1
            return [(applied, counted[id(applied)]) for applied in self.detection.applied]
        last, tally = self._counted
        tally = dict(tally)  # (a new one: another thread may count at the same time)
        now = set(paths)
        for sign, changed in ((1, now - last), (-1, last - now)):
            for path in changed:
                instance = self.instance_for(path)
                if instance is not None:
                    tally[id(instance[0])] += sign
        self._counted = (now, tally)
        return [(applied, tally[id(applied)]) for applied in self.detection.applied]


def _owns(dialect: Dialect, applied: Applied, info: PageInfo) -> bool:
    """Does ``dialect`` own this page it claims by path? A format that names its marks
    (an ``owns(applied, info)`` method) owns only the pages carrying them."""
    owns = getattr(dialect, "owns", None)
    return owns is None or bool(owns(applied, info))
