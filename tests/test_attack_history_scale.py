"""Issue 40, hazard 16: a long supersede chain must cost O(n), not O(n^2) page reads.

Class: Unbounded reads (an agent that writes 1,000 versions of one fact made ``memtui check`` read
every predecessor again for every version: 500,000 page parses, 20-45x a field of plain pages).
Performance is asserted on counts (pages parsed for their claims), never on wall-clock time.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memtui.dialects.open import open_field
from memtui.field import claims as claims_mod
from memtui.field.checks import check_field
from memtui.field.claims import each_page_in_context, field_claims
from memtui.field.history import History
from tests.helpers_field import page

VERSIONS = 1000


def _chain(root: Path, count: int, *, plain: bool = False) -> Path:
    """``count`` versions of one fact, each superseding the one before (or unlinked, ``plain``).

    The first version holds the agent's idea as ``[suggested]``; every later one states it as the
    user's decision (a promotion the last version must still show, 999 versions later).
    """
    folder = root / "notes"
    folder.mkdir(parents=True)
    for number in range(count):
        before = "" if plain or number == 0 else f"\nsupersedes: [v{number - 1:05d}]"
        tag = "suggested" if number == 0 else "stated"
        (folder / f"v{number:05d}.md").write_text(
            page(
                f"id: v{number:05d}\ntitle: Version {number}\nkind: semantic\nsubject: topic/x{number if plain else ''}"
                + before,
                f"# V{number}\n\n- Fact number {number} holds [observed]\n- Queue jobs run on Redis [{tag}]\n",
            ),
            encoding="utf-8",
        )
    return root


def _count_parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A test hook: count every page version parsed for its claims (the real parser still runs),
    with an empty in-memory claims cache (other tests may have parsed the same bytes)."""
    monkeypatch.setattr(claims_mod, "CACHE", claims_mod.ClaimCache())
    calls = [0]
    real: Callable[..., Any] = claims_mod.claims_of_bytes

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(claims_mod, "claims_of_bytes", counted)
    return calls


def test_h16_check_parses_each_version_of_a_1000_version_chain_a_bounded_number_of_times(tmp_path, monkeypatch):
    """``memtui check``'s pass (``check_field``, streaming claims) on a 1,000-version chain parses about as
    many pages as on 1,000 unlinked pages (at most twice each: once for the chain walk, once for the
    cache file the first pass writes); before: 375,750 parses for 1,000 versions."""
    chain = open_field(_chain(tmp_path / "chain", VERSIONS))
    plain = open_field(_chain(tmp_path / "plain", VERSIONS, plain=True))
    counts = {}
    for name, field in (("plain", plain), ("chain", chain)):
        calls = _count_parses(monkeypatch)
        findings: list[Any] = []
        check_field(field, findings.append)
        counts[name] = calls[0]
        monkeypatch.undo()
    assert counts["plain"] <= VERSIONS + 5
    assert counts["chain"] <= 2 * VERSIONS + 5, counts
    # and the 999th supersede still sees the idea the first version held
    promoted = [f for f in findings if f.rule == "tag-promoted"]
    assert len(promoted) == VERSIONS - 1 and all("[suggested] -> [stated]" in f.message for f in promoted)


def test_h16_every_listing_of_claims_reads_a_chain_once_per_version(tmp_path, monkeypatch):
    """``field_claims`` (the claims screen) and the streamed pass both put the last version in context
    with the weakest tag of all 999 before it, reading each version a bounded number of times."""
    field = open_field(_chain(tmp_path / "chain", VERSIONS))
    calls = _count_parses(monkeypatch)
    seen: list[Any] = []
    each_page_in_context(field, seen.extend, git=False)  # first: nothing cached in memory
    assert calls[0] <= 2 * VERSIONS + 5
    assert sum(1 for c in seen if c.promoted_from == "suggested") == VERSIONS - 1
    calls = _count_parses(monkeypatch)
    claims = field_claims(field, git=False)
    assert calls[0] <= VERSIONS + 5
    last = [c for c in claims if c.path == f"notes/v{VERSIONS - 1:05d}.md" and "redis" in c.key]
    assert [c.promoted_from for c in last] == ["suggested"]


def _history(tmp_path: Path, graph: dict[str, list[str]]) -> History:
    files = {}
    for name, older in graph.items():
        supersedes = f"\nsupersedes: [{', '.join(older)}]" if older else ""
        files[f"{name}.md"] = page(f"id: {name}\ntitle: {name}{supersedes}", f"- {name} [observed]\n")
    root = tmp_path / "graph"
    root.mkdir()
    for path, text in files.items():
        (root / path).write_text(text, encoding="utf-8")
    return open_field(root).history


@pytest.mark.parametrize(
    "graph",
    [
        {"a": [], "b": ["a"], "c": ["b"], "d": ["c"]},  # a chain
        {"a": [], "b": ["a"], "c": ["a"], "d": ["b", "c"], "e": ["d"]},  # a fork and a merge
        {"a": ["c"], "b": ["a"], "c": ["b"], "d": ["c"]},  # a cycle, and a page replacing one of it
    ],
    ids=["chain", "fork-merge", "cycle"],
)
def test_h16_the_walk_gives_each_page_exactly_its_transitive_predecessors(tmp_path, graph):
    """The O(n) fold is the same set as the page-by-page walk it replaced, for chains, forks, merges, cycles."""
    history = _history(tmp_path, graph)
    got: dict[str, set[str]] = {}
    adds = [0]

    def add(older: str, table: dict[str, Any]) -> None:
        adds[0] += 1
        table[older] = True

    def take(node: str, table: dict[str, Any]) -> None:
        got[node] = set(table)

    nodes = history.walk_older("a.md", add, take)
    assert nodes == {f"{name}.md" for name in graph}
    assert got == {node: set(history.predecessors(node)) for node in nodes}
    if graph == {"a": [], "b": ["a"], "c": ["b"], "d": ["c"]}:
        assert adds[0] == 3  # one add per edge on a chain, not one per (page, predecessor)


def test_h16_the_apps_kept_claims_compare_a_chain_once_per_pass(tmp_path, monkeypatch):
    """The app's analyses (``keep_claims``) compared each version's tuple of predecessors page by page:
    O(n^2) per analysis. Now one walk of the component per pass; a change to the first version still
    reaches the last one."""
    root = _chain(tmp_path / "chain", VERSIONS)
    per_page = claims_mod.KeptClaims()
    claims_mod.keep_claims(open_field(root), per_page, git=False)
    # What each version was put in context with: one tuple of the chain's versions, shared, not one
    # tuple of its predecessors per version (499,500 references at 1,000 versions).
    held = {id(entry[0][1]): entry[0][1] for entry in per_page.values() if entry[1] is not None}
    assert sum(len(versions) for versions in held.values()) <= 2 * VERSIONS
    walks = [0]
    real = History.component

    def counted(self: History, path: str) -> set[str]:
        walks[0] += 1
        return real(self, path)

    monkeypatch.setattr(History, "component", counted)
    field = open_field(root)
    assert claims_mod.keep_claims(field, per_page, git=False) in (None, set())
    assert walks[0] <= 3  # the chain's component walked once or twice a pass, not once per version
    last = f"notes/v{VERSIONS - 1:05d}.md"
    assert [c.promoted_from for c in per_page[last][1] or [] if "redis" in c.key] == ["suggested"]
    # The first version says it was stated after all: no version is a promotion any more.
    first = root / "notes/v00000.md"
    first.write_text(first.read_text(encoding="utf-8").replace("[suggested]", "[stated]"), encoding="utf-8")
    claims_mod.keep_claims(open_field(root), per_page, git=False)
    assert not [c for entry in per_page.values() for c in entry[1] or [] if c.promoted_from]
