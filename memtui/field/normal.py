"""The normalised page: what a page's memory format says about it, in memtui's terms.

A page's frontmatter is kept exactly as written (``PageInfo.meta``). What its *dialect*
(the tool that wrote it: memtui's own format, Claude Code, OpenClaw, an Obsidian vault, a
JSON-sidecar store ...) says about it goes into a ``NormalPage``: its role for an agent,
its kind, title, dates, what it supersedes, where it came from, review evidence. Every
field is ``None`` until a dialect says it; ``PageInfo`` reads a field said here before the
frontmatter key of the same name, so memtui's own format needs no reading at all (its
pages share ``NO_NORM``). ``recovered``: top-level keys read one by one from frontmatter
YAML that does not parse (a title, a status), read after the fields, before ``meta``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class NormalPage:
    role: str | None = None  # "memory" (facts), "instructions", "index" (a routing index), "log"
    kind: str | None = None  # episodic, semantic, procedural, preference, or the format's own word
    title: str | None = None
    description: str | None = None
    summary: str | None = None
    id: str | None = None
    uuid: str | None = None
    ids: list[str] | None = None  # more names other pages may use for this one (a permalink)
    subject: str | None = None
    created: str | None = None  # ISO dates, as the format gives them
    updated: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    supersedes: list[str] | None = None  # references to the pages this one replaces
    superseded_by: list[str] | None = None
    status: str | None = None  # "superseded by [[B]]", "deprecated" ...
    origin: str | None = None  # agent, user, job, external
    written_by: str | None = None
    session: str | None = None  # the session that wrote it
    sources: list[str] | None = None
    tags: list[str] | None = None
    aliases: list[str] | None = None
    tainted: bool | None = None  # read outside content and never reviewed
    reviewed: bool | None = None  # the format's own review field
    review_evidence: str | None = None  # what that review field says, in words
    observations: dict[str, int] | None = None  # basic-memory: observations per category
    imports: list[tuple[str, int]] | None = None  # Claude Code: @path imports (target, line)
    agent_view: dict[str, Any] | None = None  # what an agent loads of a routing index (where it ends)
    cap_chars: int | None = None  # the format's cap on what an agent loads of the page
    sidecar_problem: str | None = None  # a sidecar store: what is wrong with the page's sidecar
    recovered: dict[str, Any] | None = None  # keys of frontmatter that does not parse, read line by line

    def value(self, key: str) -> Any:
        """What this reading says of ``key`` (a field, else a recovered frontmatter key); None: nothing."""
        if key in FIELD_NAMES and key != "recovered":
            return getattr(self, key)
        recovered = self.recovered
        return recovered.get(key) if recovered else None

    def says(self, key: str) -> bool:
        return self.value(key) is not None

    def to_dict(self, keys: tuple[str, ...] | None = None) -> dict[str, Any]:
        """The fields said (and the recovered keys), flat, as caches store them; ``keys``: only those."""
        out = {**(self.recovered or {})}
        for name in FIELD_NAMES:
            if name != "recovered":
                value = getattr(self, name)
                if value is not None:
                    out[name] = value
        if keys is not None:
            out = {key: out[key] for key in keys if key in out}
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NormalPage:
        """The reading ``to_dict`` made (keys that are not fields are recovered keys)."""
        if not data:
            return NO_NORM
        fields = {key: value for key, value in data.items() if key in FIELD_NAMES and key != "recovered"}
        rest = {key: value for key, value in data.items() if key not in fields}
        if "imports" in fields and fields["imports"] is not None:
            fields["imports"] = [tuple(item) for item in fields["imports"]]
        return cls(**fields, recovered=rest or None)

    def copy(self) -> NormalPage:
        return dataclasses.replace(self, recovered=dict(self.recovered) if self.recovered else None)


FIELD_NAMES = frozenset(field.name for field in dataclasses.fields(NormalPage))
NO_NORM = NormalPage()  # what memtui's own format says beyond its frontmatter: nothing (shared, never changed)
