"""Supersede history: which version of a fact is current, what it replaced, when.

Two forms are read:

- **frontmatter**: a page lists ``supersedes: [...]`` (by id, uuid, file stem or
  relative path) and carries ``valid_from``/``valid_to``; pages sharing a
  ``subject`` form one chain;
- **inline**: inside one page, ``~~Key: old [tag] (source DATE)~~ superseded DATE``
  lines followed by the live ``Key: new [tag] (source DATE)`` line.

A page is *superseded* when another page supersedes it, when it names the page
that replaced it (``superseded_by``, as Obsidian vaults and sidecar stores write),
when it says so (``status: superseded``) or its ``valid_to`` date has passed; it
is *stale* when it is marked stale (``status: stale``, ``archived``...) without a
replacement; otherwise it is *current*. The graph also reports broken references,
cycles, versions superseded twice, and contradiction candidates (two current
pages with the same subject and kind that do not supersede each other).
"""

from __future__ import annotations

import datetime as _dt
import fnmatch
import functools
import heapq
import re
import unicodedata
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from memtui.field.page import PageInfo

CURRENT = "current"
SUPERSEDED = "superseded"
STALE = "stale"
# Nothing says whether the page still holds: its format keeps no status and no supersede
# record, and the page declares none. Never shown as current (no default claims currency).
UNRECORDED = "unrecorded"
STATUSES = (CURRENT, STALE, SUPERSEDED, UNRECORDED)
# Formats that record currency: a page is current unless its format's own record (a
# successor's ``supersedes``, a sidecar's status) says otherwise. memtui's own format keeps
# supersede chains; an aictx store's sidecars keep a status.
CURRENCY_DIALECTS = frozenset({"memtui", "sidecar-store"})
# Formats whose ``subject`` groups the versions of one fact (memtui's own).
SUBJECT_DIALECTS = frozenset({"memtui"})
_SLUG_RE = re.compile(r"[\W_]+")


def slug(text: str) -> str:
    """Words of any script joined by ``-``: how a subject or chain name is looked up on the command line.

    Letters and digits are kept (never reduced to ASCII), so two different
    non-Latin names never meet. Links never resolve by slug; see ``Field.resolve``.
    """
    return _SLUG_RE.sub("-", unicodedata.normalize("NFC", text).casefold()).strip("-")


class PageSet(Protocol):
    """What the history needs of a field: its pages, and how a reference resolves."""

    pages: dict[str, PageInfo]
    root: Path

    def resolve(self, target: str, *, near: str | None = None) -> PageInfo | None: ...


def _date(value: str | None) -> str | None:
    """The YYYY-MM-DD part of a date or timestamp string."""
    if not value or not isinstance(value, str):
        return None
    head = value.strip()[:10]
    try:
        _dt.date.fromisoformat(head)
    except ValueError:
        return None
    return head


@dataclass(slots=True)
class Version:
    ref: str  # "path" (frontmatter form) or "path#L12" (inline form)
    path: str
    line: int | None
    form: str  # "frontmatter" | "inline"
    chain: str  # the subject, or "path#Key" for inline history
    title: str
    value: str
    status: str
    valid_from: str | None
    valid_to: str | None
    created: str | None
    sources: list[str]
    tag: str | None = None
    id: str | None = None
    supersedes: list[str] = field(default_factory=list)
    superseded_by: list[str] = field(default_factory=list)
    reason: str = ""
    events: list[dict[str, Any]] = field(default_factory=list)  # the store's own timeline, if it keeps one

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path if self.line is None else f"{self.path}#L{self.line}",
            "id": self.id,
            "status": self.status,
            "valid_from": self.valid_from,
            "valid_to": self.valid_to,
            "sources": self.sources,
            "supersedes": self.supersedes,
            "superseded_by": self.superseded_by,
            "title": self.title,
            "value": self.value,
            "tag": self.tag,
            "form": self.form,
            "chain": self.chain,
            "reason": self.reason,
            "events": self.events,
        }

    def held_on(self, day: str) -> bool:
        """Was this version the valid one on ``day`` (YYYY-MM-DD)?"""
        start = self.valid_from or _date(self.created)
        if start is None or start > day:
            return False
        return self.valid_to is None or day < self.valid_to


@dataclass(slots=True)
class Chain:
    name: str
    form: str
    versions: list[Version]

    @property
    def current(self) -> list[Version]:
        return [v for v in self.versions if v.status == CURRENT]

    def as_of(self, day: str) -> Version | None:
        held = [v for v in self.versions if v.held_on(day)]
        return held[-1] if held else None


@dataclass(slots=True)
class BrokenRef:
    path: str
    target: str
    line: int | None
    key: str = "supersedes"


def own_status(info: PageInfo, today: str) -> str:
    """What a page says of itself (``status:``, ``valid_to``): its status unless another page replaces it."""
    declared = info.declared_status
    if declared is not None:
        return declared
    valid_to = _date(info.valid_to)
    if valid_to is not None and valid_to <= today:
        return SUPERSEDED
    if info.dialect in CURRENCY_DIALECTS or info.valid_to or info.supersedes or info.status_text():
        return CURRENT  # the format, or the page itself, records currency
    return UNRECORDED


def age_evidence(info: PageInfo, now: _dt.datetime | None = None) -> tuple[str, str] | None:
    """How old a page is, from the best evidence there is, and which evidence: its own
    ``updated``/``created`` date (what the page says), else the file's modification time
    (what the disk says; a copy or a checkout resets it). For pages whose format records no
    status, this is all memtui can say about currency. None: no date at all."""
    now = now or _dt.datetime.now(_dt.UTC)
    for key in ("updated", "created"):
        day = _date(getattr(info, key))
        if day is not None:
            return _ago((now.date() - _dt.date.fromisoformat(day)).days), f"{key}: {day} in the page"
    if info.mtime_ns > 0:
        written = _dt.datetime.fromtimestamp(info.mtime_ns / 1e9, _dt.UTC)
        return _ago((now - written).days), f"file time {written:%Y-%m-%d}"
    return None


def _ago(days: int) -> str:
    if days < 1:
        return "today"
    if days < 60:
        return f"{days} day{'s' if days != 1 else ''} old"
    if days < 730:
        return f"{days // 30} months old"
    return f"{days // 365} years old"


def subject_group(info: PageInfo) -> tuple[str, str | None] | None:
    """The (subject, kind) a page competes in for "current" (contradictions), or None."""
    subject = info.subject
    if not subject or info.dialect not in SUBJECT_DIALECTS:
        return None  # ``subject:`` is memtui's key; an e-mail memo's subject line is not one
    return (subject.strip().casefold(), info.kind)


# One supersede reference of a page as resolved: (key, target, path it resolved to or None, line).
Edge = tuple[str, str, "str | None", "int | None"]


def page_edges(field_: PageSet, info: PageInfo) -> tuple[Edge, ...]:
    """A page's ``supersedes`` and ``superseded_by`` references, resolved, in the page's order."""
    out: list[Edge] = []
    for key, targets in (("supersedes", info.supersedes), ("superseded_by", info.superseded_by)):
        line = info.key_lines.get(key)
        for target in targets:
            hit = field_.resolve(target, near=info.path)
            out.append((key, target, hit.path if hit is not None else None, line))
    return tuple(out)


class SupersedeGraph(Protocol):
    """The graph of a history, as another history shares it (``HistoryParts.graph``)."""

    @property
    def replaces(self) -> dict[str, list[str]]: ...

    @property
    def replaced_by(self) -> dict[str, list[str]]: ...

    @property
    def broken(self) -> list[BrokenRef]: ...

    @property
    def self_refs(self) -> list[str]: ...

    @property
    def cycles(self) -> list[list[str]]: ...

    @property
    def superseded_twice(self) -> dict[str, list[str]]: ...


@dataclass(slots=True)
class HistoryParts:
    """What a history is made of, kept per page between field snapshots (``CheckMemo``):
    the resolved edges of the pages that have any (in the field's page order), every page's
    own status, and the pages of each (subject, kind) group with more than one page."""

    edges: list[tuple[str, tuple[Edge, ...]]]
    own: dict[str, str]
    groups: list[tuple[tuple[str, str | None], set[str]]]
    today: str
    # The graph of the last history, when no supersede reference changed since: its graph
    # (edges, broken references, cycles) is shared, not made again from ``edges``.
    graph: SupersedeGraph | None = None


class History:
    def __init__(self, field_: PageSet, *, today: _dt.date | None = None, parts: HistoryParts | None = None) -> None:
        self.field = field_
        self.today = parts.today if parts is not None else (today or _dt.date.today()).isoformat()
        self.replaces: dict[str, list[str]] = defaultdict(list)  # new path -> old paths
        self.replaced_by: dict[str, list[str]] = defaultdict(list)  # old path -> new paths
        self.broken: list[BrokenRef] = []
        self.self_refs: list[str] = []
        self._groups = parts.groups if parts is not None else None
        graph = parts.graph if parts is not None else None
        if graph is not None:
            self.replaces, self.replaced_by = graph.replaces, graph.replaced_by
            self.broken, self.self_refs = graph.broken, graph.self_refs
            self.cycles, self.superseded_twice = graph.cycles, graph.superseded_twice
        else:
            if parts is None:
                self._build()
            else:
                for path, edges in parts.edges:
                    self._add_edges(path, edges)
            self.cycles = self._find_cycles()
            self.superseded_twice = {old: new for old, new in self.replaced_by.items() if len(set(new)) > 1}
        if parts is None:
            self.status = {path: self._status(info) for path, info in field_.pages.items()}
        else:
            status = dict(parts.own)
            for old, newer in self.replaced_by.items():
                if newer:
                    status[old] = SUPERSEDED
            self.status = status

    @functools.cached_property
    def contradictions(self) -> list[tuple[str, str | None, list[str]]]:
        """Current pages that share a subject and kind (found when first asked: a listing of claims
        needs each page's status, not these)."""
        return self._find_contradictions()

    # ------------------------------------------------------------------ graph
    def _build(self) -> None:
        for path, info in self.field.pages.items():
            if info.supersedes or info.superseded_by:
                self._add_edges(path, page_edges(self.field, info))

    def _add_edges(self, path: str, edges: tuple[Edge, ...]) -> None:
        for key, target, hit, line in edges:
            if hit is None:
                self.broken.append(BrokenRef(path, target, line, key))
            elif key == "supersedes":
                self._edge(hit, path)
            else:
                self._edge(path, hit)

    def _edge(self, old: str, new: str) -> None:
        """``new`` replaces ``old`` (stated on either side, or both)."""
        if old == new:
            if new not in self.self_refs:
                self.self_refs.append(new)
            return
        if old not in self.replaces[new]:
            self.replaces[new].append(old)
            self.replaced_by[old].append(new)

    def _find_cycles(self) -> list[list[str]]:
        """Each supersede cycle once, as the list of pages around it."""
        cycles: list[list[str]] = []
        seen_sets: set[frozenset[str]] = set()
        colour: dict[str, int] = {}
        for start in sorted(self.replaces):
            if colour.get(start):
                continue
            stack: list[tuple[str, int]] = [(start, 0)]
            path_stack: list[str] = []
            while stack:
                node, index = stack.pop()
                if index == 0:
                    colour[node] = 1
                    path_stack.append(node)
                children = self.replaces.get(node, [])
                if index < len(children):
                    stack.append((node, index + 1))
                    child = children[index]
                    state = colour.get(child, 0)
                    if state == 0:
                        stack.append((child, 0))
                    elif state == 1:
                        cycle = path_stack[path_stack.index(child) :]
                        key = frozenset(cycle)
                        if key not in seen_sets:
                            seen_sets.add(key)
                            cycles.append(list(cycle))
                else:
                    colour[node] = 2
                    path_stack.pop()
        return cycles

    def _status(self, info: PageInfo) -> str:
        if self.replaced_by.get(info.path):
            return SUPERSEDED
        return own_status(info, self.today)

    def is_current(self, path: str) -> bool:
        return self.status.get(path) == CURRENT

    def _find_contradictions(self) -> list[tuple[str, str | None, list[str]]]:
        """Each (subject, kind) with more than one current page: the subject as its first page
        (by path) writes it, the kind, the pages sorted."""
        status = self.status
        if self._groups is None:
            groups: dict[tuple[str, str | None], list[str]] = defaultdict(list)
            for path, info in self.field.pages.items():
                group = subject_group(info) if status[path] == CURRENT else None
                if group is not None:
                    groups[group].append(path)
            candidates: Iterable[tuple[tuple[str, str | None], list[str]]] = groups.items()
        else:
            candidates = [(group, [p for p in paths if status.get(p) == CURRENT]) for group, paths in self._groups]
        found = []
        for (subject, kind), paths in sorted(candidates, key=lambda kv: (kv[0][0], kv[0][1] or "")):
            if len(paths) > 1:
                paths = sorted(paths)
                found.append((self.field.pages[paths[0]].subject or subject, kind, paths))
        return found

    # ------------------------------------------------------------------ versions
    def _reason(self, info: PageInfo) -> str:
        newer = self.replaced_by.get(info.path)
        if newer:
            names = ", ".join(self.field.pages[p].title for p in newer)
            when = _date(self.field.pages[newer[0]].valid_from) or _date(info.valid_to)
            return f"superseded by {names}" + (f" on {when}" if when else "")
        declared = info.declared_status
        if declared is not None:
            return f"marked {declared} ({info.status_text()})"
        valid_to = _date(info.valid_to)
        if valid_to and valid_to <= self.today:
            return f"expired {valid_to}"
        return "current"

    def page_version(self, path: str) -> Version:
        info = self.field.pages[path]
        valid_to = _date(info.valid_to)
        if valid_to is None and self.replaced_by.get(path):
            # Closed by its successor's start when the page itself does not say.
            dates = [_date(self.field.pages[p].valid_from) for p in self.replaced_by[path]]
            starts = [s for s in dates if s]
            valid_to = min(starts) if starts else None
        return Version(
            ref=path,
            path=path,
            line=None,
            form="frontmatter",
            chain=info.subject or path,
            title=info.title,
            value=info.summary or info.title,
            status=self.status[path],
            valid_from=_date(info.valid_from) or _date(info.created),
            valid_to=valid_to,
            created=info.created,
            sources=info.sources,
            id=info.id or info.uuid,
            supersedes=[self.field.pages[p].key for p in self.replaces.get(path, [])],
            superseded_by=[self.field.pages[p].key for p in self.replaced_by.get(path, [])],
            reason=self._reason(info),
            events=self._events(info),
        )

    def _events(self, info: PageInfo) -> list[dict[str, Any]]:
        """What the page's store recorded about it over time (``events.jsonl``), for formats that keep one."""
        reader = getattr(self.field, "reader", None)
        events = getattr(reader, "events", None)
        return events(self.field.root, info) if callable(events) else []

    def _ordered(self, paths: set[str]) -> list[str]:
        """Oldest first: supersede edges win, then valid_from, created, path."""

        def key(p: str) -> tuple[str, str, str]:
            info = self.field.pages[p]
            return (_date(info.valid_from) or _date(info.created) or "9999", info.created or "", p)

        indegree = {p: 0 for p in paths}
        for p in paths:
            for old in self.replaces.get(p, []):
                if old in paths:
                    indegree[p] += 1
        heap = [(key(p), p) for p, d in indegree.items() if d == 0]
        heapq.heapify(heap)
        order: list[str] = []
        while heap:
            _, p = heapq.heappop(heap)
            order.append(p)
            for new in self.replaced_by.get(p, []):
                if new in indegree:
                    indegree[new] -= 1
                    if indegree[new] == 0:
                        heapq.heappush(heap, (key(new), new))
        rest = sorted((p for p in paths if p not in order), key=key)  # pages in cycles
        return order + rest

    def component(self, path: str) -> set[str]:
        """Every page linked to ``path`` by supersede edges, either way."""
        seen = {path}
        todo = [path]
        while todo:
            node = todo.pop()
            for nxt in self.replaces.get(node, []) + self.replaced_by.get(node, []):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    def predecessors(self, path: str) -> list[str]:
        """Every page ``path`` (transitively) replaced, nearest first: O(pages reached), cycles included."""
        seen: set[str] = {path}
        order: list[str] = []
        todo = deque(self.replaces.get(path, ()))
        while todo:
            page = todo.popleft()
            if page in seen:
                continue
            seen.add(page)
            order.append(page)
            todo.extend(self.replaces.get(page, ()))
        return order

    def walk_older(
        self,
        path: str,
        add: Callable[[str, dict[str, Any]], None],
        take: Callable[[str, dict[str, Any]], None],
    ) -> set[str]:
        """Fold every page of ``path``'s supersede component over the pages it replaced, once.

        ``take(page, table)`` is called once for each page of the component with a table that
        ``add(older, table)`` filled from every page it (transitively) replaced, the farther ones
        first (so ``add`` can let a nearer version win a tie); the table is only valid during the
        call. Returns the component.

        Why: a 1,000-version chain asked page by page ("what did the versions before this one
        say?") re-read every predecessor for every version, O(n^2) reads; here a version takes
        over the table of the one it replaced (when it is that one's only successor) and adds
        that one's own entries: a chain costs O(n). A page replacing several (a merge), or
        replaced by several (a fork), copies or rebuilds its table; pages in a supersede cycle
        are rebuilt from their predecessors one by one.
        """
        nodes = self.component(path)
        preds = {node: [p for p in dict.fromkeys(self.replaces.get(node, ())) if p in nodes] for node in nodes}
        waiting = {node: len(older) for node, older in preds.items()}
        users = {node: sum(1 for n in self.replaced_by.get(node, ()) if n in nodes) for node in nodes}
        held: dict[str, dict[str, Any]] = {}
        ready = deque(sorted(node for node, count in waiting.items() if count == 0))
        done: set[str] = set()
        while ready:
            node = ready.popleft()
            older = preds[node]
            if len(older) == 1 and users[older[0]] == 1:
                table = held.pop(older[0])  # its only successor: take its table over
                add(older[0], table)
            elif len(older) == 1:
                table = dict(held[older[0]])
                add(older[0], table)
                users[older[0]] -= 1
                if users[older[0]] == 0:
                    del held[older[0]]
            else:
                table = {}
                for page in reversed(self.predecessors(node)):  # a merge: farther first
                    add(page, table)
                for page in older:
                    users[page] -= 1
                    if users[page] == 0:
                        held.pop(page, None)
            take(node, table)
            done.add(node)
            if users[node]:
                held[node] = table
            for newer in sorted(n for n in self.replaced_by.get(node, ()) if n in nodes):
                waiting[newer] -= 1
                if waiting[newer] == 0:
                    ready.append(newer)
        for node in sorted(nodes - done):  # in a cycle, or replacing a page of one
            table = {}
            for page in reversed(self.predecessors(node)):
                add(page, table)
            take(node, table)
        return nodes

    def subject_chain(self, subject: str) -> Chain:
        wanted = subject.strip().casefold()
        paths: set[str] = set()
        for path, info in self.field.pages.items():
            if info.subject and info.subject.strip().casefold() == wanted:
                paths |= self.component(path)
        name = next((self.field.pages[p].subject for p in sorted(paths) if self.field.pages[p].subject), subject)
        return Chain(name or subject, "frontmatter", [self.page_version(p) for p in self._ordered(paths)])

    def page_chain(self, path: str) -> Chain:
        info = self.field.pages[path]
        if info.subject:
            return self.subject_chain(info.subject)
        paths = self.component(path)
        return Chain(path, "frontmatter", [self.page_version(p) for p in self._ordered(paths)])

    def inline_chains(self, path: str) -> list[Chain]:
        info = self.field.pages[path]
        chains = []
        for group in info.inline_chains:
            key = next((c["key"] for c in group if c["key"]), None) or f"line {group[0]['line']}"
            name = f"{path}#{key}"
            versions: list[Version] = []
            last_struck: Version | None = None
            ordered = sorted(group, key=lambda c: (not c["struck"], _date(c["source_date"]) or "", c["line"]))
            for claim in ordered:
                ref = f"{path}#L{claim['line']}"
                # Every live (not struck) line is current: two of them are a contradiction,
                # not a silent supersede. Each live line replaces the last struck one.
                is_current = not claim["struck"]
                previous = last_struck if is_current else (versions[-1] if versions else None)
                version = Version(
                    ref=ref,
                    path=path,
                    line=claim["line"],
                    form="inline",
                    chain=name,
                    title=f"{key}: {claim['value']}",
                    value=claim["value"],
                    status=CURRENT if is_current else SUPERSEDED,
                    valid_from=_date(claim["source_date"]),
                    valid_to=_date(claim["superseded_on"]),
                    created=None,
                    sources=[claim["source"]] if claim["source"] else [],
                    tag=claim["tag"],
                    supersedes=[previous.ref] if previous else [],
                    reason=(
                        f"superseded {claim['superseded_on']}"
                        if claim["superseded_on"]
                        else ("current" if is_current else "superseded (struck through)")
                    ),
                )
                if previous is not None:
                    previous.superseded_by.append(ref)
                if not is_current:
                    last_struck = version
                versions.append(version)
            chains.append(Chain(name, "inline", versions))
        return chains

    def all_inline_chains(self) -> list[Chain]:
        chains: list[Chain] = []
        for path, info in self.field.pages.items():
            if info.inline_chains:
                chains.extend(self.inline_chains(path))
        return chains

    def subjects(self) -> list[str]:
        return sorted({info.subject for info in self.field.pages.values() if info.subject})

    def lookup(self, query: str) -> list[Chain]:
        """Chains for a page (path, id, title...), one inline chain (``path#Key``) or a
        subject (exact, glob or slug)."""
        page = self.field.resolve(query)
        if page is not None:
            if "#" in query:  # "path#Key" names one inline chain (as Chain.name does)
                key = slug(query.split("#", 1)[1])
                named = [c for c in self.inline_chains(page.path) if slug(c.name.split("#", 1)[1]) == key]
                if named:
                    return named
            chains = []
            if page.subject or self.component(page.path) != {page.path} or not page.inline_chains:
                chains.append(self.page_chain(page.path))
            chains.extend(self.inline_chains(page.path))
            return chains
        subjects = self.subjects()
        wanted = query.strip().casefold()
        exact = [s for s in subjects if s.casefold() == wanted]
        if exact:
            return [self.subject_chain(exact[0])]
        if "*" in query or "?" in query:
            return [self.subject_chain(s) for s in subjects if fnmatch.fnmatch(s.casefold(), wanted)]
        key = slug(query)
        chains = [self.subject_chain(s) for s in subjects if slug(s) == key or slug(s.rsplit("/", 1)[-1]) == key]
        for chain in self.all_inline_chains():
            chain_key = chain.name.split("#", 1)[1]
            if slug(chain_key) == key:
                chains.append(chain)
        return chains

    def as_of(self, day: str, chains: list[Chain] | None = None) -> list[tuple[Chain, Version | None]]:
        """For each chain, the version that was valid on ``day``."""
        if chains is None:
            chains = [self.subject_chain(s) for s in self.subjects()] + self.all_inline_chains()
        return [(chain, chain.as_of(day)) for chain in chains]


def describe_event(event: dict[str, Any]) -> str:
    """One line of a store's own timeline: ``2026-06-11T11:28 memory.marked_stale by agent: reason``."""
    stamp = str(event.get("timestamp") or "?")[:16]
    words = f"{stamp} {event.get('event') or '?'}"
    if event.get("actor"):
        words += f" by {event['actor']}"
    if event.get("reason"):
        words += f": {event['reason']}"
    return words
