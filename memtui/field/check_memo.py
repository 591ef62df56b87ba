"""What one run of the checks learned about each page, kept for the next run.

While an agent writes, the app analyses the field again after every batch of
changes. Most of a run's cost is per page and depends on little: a page's own
rules depend on the page alone, and its references (links, embeds, cited and
listed sources) on the page and on the *names* of the pages they could mean.
``CheckMemo`` keeps, per page, those findings and where each reference led, and
on the next run redoes only:

* the pages whose summary changed (a new ``PageInfo`` object: pages are
  immutable summaries, shared between field snapshots while unchanged);
* the pages with a reference to a name that changed: the memo keeps the field's
  lookup tables (path and file stem, title, aliases, ids) entry by entry, and
  every page with a reference that could look up an entry that changed is
  resolved again;
* everything, when the other files (embeds), the dialect or the day changed.

It also holds, for ``claims.field_claims``, each page's claims in context (put in
context again only when the page, a page it replaced, its previous git revision,
its status or its trust changed) and the claim findings made from them; for the
history, each page's resolved supersede references (with its other references),
its own status and its (subject, kind) group, so the statuses, cycles and
contradictions are made from edges, not from every page; each page's trust state;
the backlink table, list by list; and each page's findings as ``memtui.toml``
wants them with the counts by severity and rule (``checks.field_findings``),
made again only for the pages whose parts changed.

Each update also says what moved since the last one (``Moved``: the pages whose version,
references, status, list of replaced pages or trust inputs changed), so that the claims
and the findings are revisited for those pages alone, not looked up for every page.

A run with a memo gives exactly the findings and backlinks of a run without one
(tests compare the two after random changes). One memo serves one field and
its snapshots, used by one analysis at a time.
"""

from __future__ import annotations

import datetime as _dt
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from memtui.field.claims import Claim, KeptClaims
from memtui.field.history import (
    CURRENT,
    BrokenRef,
    Edge,
    History,
    HistoryParts,
    own_status,
    subject_group,
)
from memtui.field.lookup import LookupTables, Tables, file_tables
from memtui.field.lookup import lookup_key as _folded
from memtui.field.page import clean_ref, is_index_page

if TYPE_CHECKING:
    from memtui.field.field import Field, PageReader
    from memtui.field.page import PageInfo
    from memtui.field.rule_settings import RuleSettings

# The findings the memo keeps are ``checks.Finding``s, which this module cannot name (``checks``
# imports it): it only holds them for ``checks``.
Findings = list[Any]
Group = tuple[str, str | None]  # a (subject, kind) group (``history.subject_group``)
Contradiction = tuple[str, str | None, list[str]]  # (subject, kind, pages): ``History.contradictions``
# (subject, kind, pages) -> (those pages' versions, the contradiction findings made of them)
ContradictionFindings = dict[tuple[str, str | None, tuple[str, ...]], tuple[tuple["PageInfo", ...], Findings]]


class Totals(TypedDict, total=False):
    """The findings as ``memtui.toml`` wants them, per page, and their counts (``checks.field_findings``)."""

    by_path: dict[str, Findings]
    severity: Counter[str]
    rule: Counter[str]


@dataclass(slots=True)
class PageRefs:
    """One page version's references, resolved against the field of one run."""

    info: PageInfo  # the PageInfo they were resolved for
    findings: Findings  # link-broken and cite-source-missing findings
    backlinks: list[tuple[str, int]]  # (target page, line) for each reference that leads to another page
    keys: frozenset[str]  # the folded names its references may look up
    edges: tuple[Edge, ...] = ()  # its supersede references, resolved (``history.page_edges``)


@dataclass(slots=True)
class Moved:
    """What one ``CheckMemo.update`` found moved since the one before (paths)."""

    versions: set[str]  # pages added, changed or removed
    refs: set[str]  # pages whose references were resolved again
    status: set[str]  # pages whose status changed (or that appeared or went)
    replaces: set[str]  # pages whose list of replaced pages changed
    trust: set[str]  # pages whose trust inputs changed: their version or their review record
    since: int  # the serial of the update these are compared with (CheckMemo.serial)
    before: dict[str, PageInfo]  # the pages of the field of that update


def _group_order(group: Group) -> tuple[str, str]:
    return (group[0], group[1] or "")


@dataclass(slots=True)
class _Graph:
    """The supersede graph of a history (``HistoryParts.graph``), kept without the field it was made for."""

    replaces: dict[str, list[str]]
    replaced_by: dict[str, list[str]]
    broken: list[BrokenRef]
    self_refs: list[str]
    cycles: list[list[str]]
    superseded_twice: dict[str, list[str]]


def _name_forms(key: str) -> tuple[str, ...]:
    key = key.removesuffix(".md")
    last = key.rsplit("/", 1)[-1]
    return (key,) if last == key else (key, last)


def reference_keys(targets: list[str]) -> frozenset[str]:
    """The folded names a page's references may be resolved by (the whole name and its last
    part, with and without ``.md``), a superset of what ``Field.resolve`` looks up."""
    keys: set[str] = set()
    for target in targets:
        cleaned = clean_ref(target).split("#", 1)[0].split("@", 1)[0].strip()
        if not cleaned:
            continue
        for form in {cleaned, cleaned.replace("\\", "/")}:
            keys.update(_name_forms(_folded(form)))
    return frozenset(keys)


class CheckMemo:
    """Per-page results of the last run of the checks over one field (see the module)."""

    def __init__(self) -> None:
        self._infos: dict[str, PageInfo] = {}  # the page versions the memo holds results for
        self._refs: dict[str, PageRefs] = {}
        self._by_key: dict[str, set[str]] = {}  # folded name -> pages with a reference that may look it up
        self._local: dict[str, tuple[PageInfo, Findings]] = {}
        self.claims = KeptClaims()  # path -> (inputs, claims in context): claims.keep_claims keeps it
        # path -> (claims in context, the findings made of them)
        self.claim_findings: dict[str, tuple[list[Claim], Findings]] = {}
        self._context: tuple[PageReader, str, frozenset[str], _dt.date] | None = None
        # The field's lookup tables, kept up to date page by page (see install_tables).
        self._lookup = LookupTables()
        self._installed: Tables | None = None
        # What install_tables found since the last update: pages changed or added, pages
        # removed, and the folded names whose table entries changed.
        self._changed: set[str] = set()
        self._removed: set[str] = set()
        self._touched_names: set[str] = set()
        self.redone = 0  # pages resolved again by the last update (for tests and the benchmark)
        # For the history: the pages with supersede references, each page's own status, the
        # pages of each (subject, kind) and the groups holding more than one page.
        self._linked: set[str] = set()
        self._own: dict[str, str] = {}
        self._group_of: dict[str, Group] = {}
        self._members: dict[Group, set[str]] = {}
        self._multi: set[Group] = set()
        self._indexes: set[str] = set()  # the routing indexes among the pages (checks.index_pages)
        self._regrouped: set[Group] = set()  # groups a page joined or left since the last update
        self._contradictions: dict[Group, Contradiction] = {}  # group -> its contradiction (subject, kind, pages)
        # The backlink table (each list sorted), replaced list by list (snapshots keep theirs).
        self._backlinks: dict[str, list[tuple[str, int]]] = {}
        # Each page's trust state, for the page version and review record it was found for.
        self.trusts: dict[str, tuple[PageInfo, bool, str]] = {}  # Field.keep_trusts
        # Each page's findings as the checks give them (see checks.field_findings): its own, its
        # references', its claims', the field-wide ones about it, and all of them as memtui.toml wants.
        self.assembled: dict[str, tuple[Sequence[Any], ...]] = {}
        self.assembled_for: RuleSettings | None = None  # the rule settings they were adjusted with
        self.totals: Totals = {}
        self.assembled_serial: int | None = None  # the update they were assembled after
        self.wide: dict[str, Findings] = {}  # the field-wide findings of the last run, by page
        self.contradiction_findings: ContradictionFindings = {}  # (subject, kind, pages) -> (their versions, findings)
        # What the last update moved (None: everything, the first update after a reset), and
        # what the next one compares with: the statuses, replaced pages and review records.
        self.moved: Moved | None = None
        # (statuses, replaced pages, replacing pages, review records, graph, pages) of the last update
        self._last: (
            tuple[
                dict[str, str],
                dict[str, list[str]],
                dict[str, list[str]],
                dict[str, tuple[str, str]],
                _Graph,
                dict[str, PageInfo],
            ]
            | None
        ) = None
        self.serial = 0  # counts the updates: what is kept from moved sets says which it followed

    def _reset(self) -> None:
        self._infos.clear()
        self._lookup = LookupTables()
        self._installed = None
        self._changed.clear()
        self._removed.clear()
        self._touched_names.clear()
        self._refs.clear()
        self._by_key.clear()
        self._local.clear()
        self.claims = KeptClaims()
        self.claim_findings.clear()
        self._linked.clear()
        self._own.clear()
        self._group_of.clear()
        self._members.clear()
        self._multi.clear()
        self._regrouped.clear()
        self._contradictions = {}
        self._indexes.clear()
        self._backlinks = {}
        self.trusts.clear()
        self.assembled.clear()
        self.assembled_for = None
        self.totals = {}
        self.assembled_serial = None
        self.wide = {}
        self.contradiction_findings = {}
        self.moved = None
        self._last = None

    def _check_context(self, field: Field) -> None:
        context = (field.reader, str(field.content_root), frozenset(field.files), _dt.date.today())
        if context != self._context:
            self._reset()
            self._context = context

    def install_tables(self, field: Field) -> None:
        """Give ``field`` its lookup tables (what ``Field._tables`` builds from every page),
        updated from the last ones for the pages that changed: each table entry is
        recomputed from the pages holding it. Each field gets dicts of its own (a snapshot
        handed to the screens is never changed afterwards)."""
        self._check_context(field)
        if self._installed is not None and field.has_lookup(self._installed):
            field.keep_trusts(self.trusts)
            return
        pages = field.pages
        infos = self._infos
        changed = [path for path, info in pages.items() if infos.get(path) is not info]
        removed = list(infos.keys() - pages.keys())
        assert self._context is not None  # (set by _check_context)
        today = self._context[3].isoformat()
        for path in changed + removed:
            self._regroup(path, pages.get(path), today)
            if path in pages:
                infos[path] = pages[path]
            else:
                del infos[path]
        for _, key in self._lookup.update(pages, changed, removed):
            self._touched_names.update(_name_forms(key))  # ids are folded in their id_folded entry
        self._changed.difference_update(removed)
        self._changed.update(changed)
        self._removed.difference_update(changed)  # removed, then written again before the update
        self._removed.update(removed)
        installed = dict(self._lookup.tables)
        installed.update(file_tables(field.files))
        field.adopt_lookup(installed)
        field.keep_trusts(self.trusts)
        self._installed = installed

    def _regroup(self, path: str, info: PageInfo | None, today: str) -> None:
        """Keep the page's own status and its (subject, kind) group (None: the page is gone)."""
        before = self._group_of.pop(path, None)
        if before is not None:
            self._regrouped.add(before)
            members = self._members[before]
            members.discard(path)
            if len(members) < 2:
                self._multi.discard(before)
            if not members:
                del self._members[before]
        if info is None:
            self._own.pop(path, None)
            self._indexes.discard(path)
            return
        if is_index_page(info):
            self._indexes.add(path)
        else:
            self._indexes.discard(path)
        self._own[path] = own_status(info, today)
        group = subject_group(info)
        if group is not None:
            self._group_of[path] = group
            self._regrouped.add(group)
            members = self._members.setdefault(group, set())
            members.add(path)
            if len(members) > 1:
                self._multi.add(group)

    def update(self, field: Field, resolve_page: Callable[[Field, PageInfo], PageRefs]) -> None:
        """Bring the memo up to ``field``: ``resolve_page(field, info) -> PageRefs`` is
        called for every page that a change since the last update may affect. The field
        gets its history and backlink table, made from what the memo keeps."""
        self.install_tables(field)
        pages = field.pages
        redo = {path for path in self._changed if path in pages}
        versions = redo | self._removed
        for key in self._touched_names:
            redo.update(self._by_key.get(key, ()))
        moved: dict[str, None] = {}  # backlink targets whose lists change
        linked = self._linked  # the pages with supersede references (before, then now)
        graph_moved = any(path in linked for path in self._removed) or any(path in linked for path in redo)
        for path in self._removed:
            self._forget(path, moved)
            self._local.pop(path, None)
            self._linked.discard(path)
            self.trusts.pop(path, None)
        redo.difference_update(self._removed)
        for path in redo:
            self._forget(path, moved)
            refs = resolve_page(field, pages[path])
            self._refs[path] = refs
            for key in refs.keys:
                self._by_key.setdefault(key, set()).add(path)
            for target, _ in refs.backlinks:
                moved[target] = None
            if refs.edges:
                self._linked.add(path)
            else:
                self._linked.discard(path)
        self._install_backlinks(field, moved, redo)
        self._changed.clear()
        self._removed.clear()
        self._touched_names.clear()
        self.redone = len(redo)
        graph_moved = graph_moved or any(path in linked for path in redo)  # (linked now)
        last = self._last[4] if self._last is not None and not graph_moved else None
        assert self._context is not None  # (set by install_tables)
        parts = HistoryParts(
            edges=[(path, self._refs[path].edges) for path in pages if path in linked]
            if linked and last is None
            else [],
            own=self._own,  # copied by the history
            groups=[],  # the contradictions are given below
            today=self._context[3].isoformat(),
            graph=last,
        )
        history = History(field, parts=parts)
        field.adopt_history(history)
        self.serial += 1
        self.moved = self._moved(history, field.approvals, versions, redo)
        history.contradictions = self._contradictions_now(field, history.status)
        graph = _Graph(
            history.replaces,
            history.replaced_by,
            history.broken,
            history.self_refs,
            history.cycles,
            history.superseded_twice,
        )
        self._last = (history.status, history.replaces, history.replaced_by, field.approvals, graph, field.pages)

    def _contradictions_now(self, field: Field, status: dict[str, str]) -> list[Contradiction]:
        """``History.contradictions``, made again only for the groups a page joined or left, or
        a page of which changed status (``self.moved``)."""
        held = self._contradictions
        if self.moved is None:
            held.clear()
            todo = set(self._multi)
        else:
            todo = self._regrouped
            group_of = self._group_of
            todo.update(group_of[path] for path in self.moved.status if path in group_of)
        pages = field.pages
        for group in todo:
            members = self._members.get(group) if group in self._multi else None
            current = sorted(path for path in members if status.get(path) == CURRENT) if members else ()
            if len(current) > 1:
                held[group] = (pages[current[0]].subject or group[0], group[1], current)
            else:
                held.pop(group, None)
        self._regrouped = set()
        return [held[group] for group in sorted(held, key=_group_order)]

    def _moved(
        self, history: History, approvals: dict[str, tuple[str, str]], versions: set[str], redo: set[str]
    ) -> Moved | None:
        """What moved since the last update, found from the pages that changed and the supersede
        edges (a status changes only with the page's own version or with who replaces it)."""
        if self._last is None:
            return None
        old_status, old_replaces, old_replaced_by, old_approvals, _, _ = self._last
        replaces = history.replaces
        moved_replaces = {
            path
            for path in old_replaces.keys() | replaces.keys()
            if (old_replaces.get(path) or None) != (replaces.get(path) or None)
        }
        replaced_by = history.replaced_by
        maybe = versions | {
            path
            for path in old_replaced_by.keys() | replaced_by.keys()
            if bool(old_replaced_by.get(path)) != bool(replaced_by.get(path))
        }
        status = history.status
        moved_status = {path for path in maybe if old_status.get(path) != status.get(path)}
        trust = set(versions)
        if approvals is not old_approvals and approvals != old_approvals:
            trust.update(
                path
                for path in approvals.keys() | old_approvals.keys()
                if approvals.get(path) != old_approvals.get(path)
            )
        return Moved(versions, set(redo), moved_status, moved_replaces, trust, self.serial - 1, self._last[5])

    def _install_backlinks(self, field: Field, moved: dict[str, None], redone: set[str]) -> None:
        """A new table with a new list for each target whose references changed (sorted, as
        ``Field.backlinks`` sorts them); the lists of the others are shared."""
        table = dict(self._backlinks)
        for target in moved:
            held = [entry for entry in table.get(target, ()) if entry[0] not in redone and entry[0] in field.pages]
            table[target] = held
        for path in redone:
            for target, line in self._refs[path].backlinks:
                table[target].append((path, line))
        for target in moved:
            if table[target]:
                table[target].sort()
            else:
                del table[target]
        self._backlinks = table
        field.adopt_backlinks(table)

    def _forget(self, path: str, moved: dict[str, None]) -> None:
        refs = self._refs.pop(path, None)
        if refs is None:
            return
        for target, _ in refs.backlinks:
            moved[target] = None
        for key in refs.keys:
            holders = self._by_key.get(key)
            if holders is not None:
                holders.discard(path)
                if not holders:
                    del self._by_key[key]

    def index_pages(self) -> list[str]:
        """``checks.index_pages`` of the field of the last update."""
        return sorted(self._indexes, key=lambda path: (path != "MEMORY.md", path))

    def refs(self, path: str) -> PageRefs:
        return self._refs[path]

    def local(self, info: PageInfo, compute: Callable[[PageInfo], Findings]) -> Findings:
        """A page's own findings (``compute(info)``), kept while the page is unchanged."""
        held = self._local.get(info.path)
        if held is not None and held[0] is info:
            return held[1]
        found = compute(info)
        self._local[info.path] = (info, found)
        return found

    def trust(self, field: Field, path: str) -> str:
        """The page's trust state (``Field.trust``, kept while its version and review record are)."""
        return field.trust(path)
