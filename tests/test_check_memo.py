"""CheckMemo: checks kept from one analysis to the next give what a fresh run gives.

The sample field is copied and changed at random, step by step, the way agents change
memory: pages added under names other pages link to (or already use as titles), pages
removed, retitled, given aliases, linked, superseded with a stronger tag, rewritten.
After each step the analysis with the memo (what the app runs) and a fresh one without
it must agree on every finding, the lookup tables, the backlink table and every claim, while the memo
resolves again only the pages the change can affect.
"""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path

import pytest

from memtui.dialects.open import open_field
from memtui.field.check_memo import CheckMemo
from memtui.field.checks import run_checks
from memtui.field.claims import field_claims
from memtui.session.analysis import analyse

SAMPLE = Path(__file__).resolve().parent.parent / "sample-field"
NAMES = ["ghost-1", "Ghost Two", "ghost-3", "Pricing", "notes/ghost-1", "../notes/ghost-3.md", "alias-x"]


def _frontmatter(
    title: str, *, aliases: list[str] = (), ident: str | None = None, supersedes: str | None = None
) -> str:
    lines = ["---", f"title: {title}", "kind: note", "origin: user", "updated: 2026-11-20"]
    if aliases:
        lines.append("aliases: [" + ", ".join(aliases) + "]")
    if ident:
        lines.append(f"id: {ident}")
    if supersedes:
        lines.append(f"supersedes: [{supersedes}]")
    return "\n".join(lines + ["---", ""])


class Agent:
    """Random changes to a field on disk (seeded)."""

    def __init__(self, root: Path, seed: int) -> None:
        self.root = root
        self.rng = random.Random(seed)
        self.count = 0

    def pages(self) -> list[Path]:
        return sorted(p for p in self.root.rglob("*.md") if "sessions" not in p.parts and ".memtui" not in p.parts)

    def step(self, field) -> str:
        rng = self.rng
        self.count += 1
        action = rng.choice(
            ["link", "add", "add", "remove", "retitle", "alias", "supersede", "rewrite", "approve", "route"]
        )
        pages = self.pages()
        target = rng.choice(pages)
        if action == "approve":  # a review decision recorded (or taken back): the page's trust moves
            path = rng.choice(sorted(field.pages))
            if path in field.approvals:
                del field.approvals[path]
            else:
                field.approvals[path] = (field.pages[path].sha256, "reviewer")
        elif action == "route":  # the routing index points at a page (or at a name no page has yet)
            with (self.root / "MEMORY.md").open("a", encoding="utf-8") as handle:
                handle.write(
                    f"- more: {rng.choice(['notes/ghost-1.md', 'knowledge/ghost-3.md', pages[0].relative_to(self.root).as_posix()])}\n"
                )
        elif action == "link":
            names = NAMES + [p.stem for p in pages[:20]] + [info.title for info in list(field.pages.values())[:20]]
            with target.open("a", encoding="utf-8") as handle:
                handle.write(f"\n- see [[{rng.choice(names)}]] and ![[{rng.choice(NAMES)}]] [observed]\n")
        elif action == "add":
            name = rng.choice(["ghost-1", "ghost-3", "pricing", f"new-{self.count}"])
            folder = self.root / rng.choice(["notes", "knowledge", "projects"])
            folder.mkdir(exist_ok=True)
            text = _frontmatter(rng.choice(NAMES[:4] + [f"Page {self.count}"]), aliases=[rng.choice(NAMES)])
            text += f"# {name}\n\n- a fact about {name} [stated]\n- links to [[{rng.choice(NAMES)}]] [inferred]\n"
            (folder / f"{name}.md").write_text(text, encoding="utf-8")
        elif action == "remove":
            target.unlink()
        elif action in ("retitle", "alias"):
            text = target.read_text(encoding="utf-8")
            if text.startswith("---\n") and "\n---" in text[4:]:
                head, rest = text[4:].split("\n---", 1)
                head = re.sub(r"(?m)^(title|aliases):.*\n?", "", head)
                extra = f"title: {rng.choice(NAMES)}" if action == "retitle" else f"aliases: [{rng.choice(NAMES)}]"
                target.write_text("---\n" + head.rstrip("\n") + "\n" + extra + "\n---" + rest, encoding="utf-8")
        elif action == "supersede":
            infos = [info for info in field.pages.values() if info.id and not info.path.startswith("sessions/")]
            if infos:
                old = rng.choice(infos)
                claim = next(
                    (
                        line
                        for line in (self.root / old.path).read_text(encoding="utf-8").splitlines()
                        if "[suggested]" in line or "[inferred]" in line
                    ),
                    "- a new idea [suggested]",
                )
                stronger = re.sub(r"\[(suggested|inferred)\]", "[stated]", claim)
                text = _frontmatter(f"Replaces {old.title}", ident=f"mem_new{self.count}", supersedes=old.id)
                (self.root / "notes" / f"replaces-{self.count}.md").write_text(text + stronger + "\n", encoding="utf-8")
        else:
            with target.open("a", encoding="utf-8") as handle:
                handle.write(
                    f"\n- ~~an old note {self.count} [suggested]~~ superseded 2026-11-01\n"
                    f"- an old note {self.count} [stated]\n"
                )
        return action


def _fresh(field):
    snap = field.snapshot()
    return run_checks(snap), snap


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_memo_gives_what_a_fresh_run_gives(tmp_path: Path, seed: int) -> None:
    root = tmp_path / "field"
    shutil.copytree(SAMPLE, root)
    field = open_field(str(root))
    memo = CheckMemo()
    agent = Agent(root, seed)
    run_checks(field.snapshot(), memo=memo)
    actions = []
    for _ in range(30):
        actions.append(agent.step(field))
        field.rescan()
        snap = field.snapshot()
        with_memo = run_checks(snap, memo=memo)
        expected, fresh = _fresh(field)
        assert with_memo == expected, actions
        fresh.backlinks("")
        assert snap._backlinks == fresh._backlinks, actions
        assert snap._lookup == fresh._tables(), actions  # the memo's tables, entry by entry
        assert field_claims(snap) == field_claims(fresh), actions
        _same_history(snap.history, fresh.history, actions)
    assert {"add", "remove", "link", "supersede", "approve"} <= set(actions)


def _same_history(kept, made, actions) -> None:
    """The memo's history (from the edges and statuses it keeps) is the one made from every page."""
    assert kept.status == made.status, actions
    assert dict(kept.replaces) == dict(made.replaces) and dict(kept.replaced_by) == dict(made.replaced_by), actions
    assert kept.broken == made.broken and kept.self_refs == made.self_refs, actions
    assert kept.cycles == made.cycles and kept.superseded_twice == made.superseded_twice, actions
    assert kept.contradictions == made.contradictions, actions


@pytest.mark.parametrize("seed", [4, 5])
def test_the_analysis_kept_from_the_last_one_is_a_fresh_one(tmp_path: Path, seed: int) -> None:
    """What the app shows after each change (rows, counts, totals, statuses, findings), made from
    the last analysis for the pages the change reached, is what an analysis from scratch shows."""
    root = tmp_path / "field"
    shutil.copytree(SAMPLE, root)
    field = open_field(str(root))
    memo = CheckMemo()
    last = analyse(field.snapshot(), memo)
    agent = Agent(root, seed)
    actions = []
    for _ in range(25):
        actions.append(agent.step(field))
        field.rescan()
        kept = analyse(field.snapshot(), memo, last)
        fresh = analyse(field.snapshot())
        for name in ("rows", "counts", "tag_totals", "per_day", "status", "findings", "by_path", "by_rule"):
            assert getattr(kept, name) == getattr(fresh, name), (name, actions)
        assert list(kept.rows) == list(fresh.rows), actions
        _same_history(kept.history, fresh.history, actions)
        last = kept
    assert {"add", "remove", "supersede"} <= set(actions)


def test_a_rewrite_that_keeps_the_names_resolves_one_page_again(tmp_path: Path) -> None:
    root = tmp_path / "field"
    shutil.copytree(SAMPLE, root)
    field = open_field(str(root))
    memo = CheckMemo()
    run_checks(field.snapshot(), memo=memo)
    assert memo.redone == len(field.pages)
    page = root / "notes" / "pref-weekly-update-bullets.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n- one more fact [stated]\n", encoding="utf-8")
    field.rescan()
    run_checks(field.snapshot(), memo=memo)
    assert memo.redone == 1
    # A new page under a name another page links to: the linking pages are resolved again, not the rest.
    linking = [info.path for info in field.pages.values() if any(t == "ghost-page" for t, _ in info.links)]
    assert linking == []
    (root / "notes" / "linker.md").write_text(
        _frontmatter("Linker") + "- see [[ghost-page]] [observed]\n", encoding="utf-8"
    )
    field.rescan()
    broken = run_checks(field.snapshot(), memo=memo)
    assert any(f.rule == "link-broken" and f.path == "notes/linker.md" for f in broken)
    (root / "knowledge" / "ghost-page.md").write_text(
        _frontmatter("Ghost page") + "- here [observed]\n", encoding="utf-8"
    )
    field.rescan()
    snap = field.snapshot()
    fixed = run_checks(snap, memo=memo)
    assert memo.redone == 2  # the new page and the one linking to it
    assert not any(f.rule == "link-broken" and f.path == "notes/linker.md" for f in fixed)
    assert [src for src, _ in snap.backlinks("knowledge/ghost-page.md")] == ["notes/linker.md"]


def test_the_app_analysis_keeps_rows_of_unchanged_pages(tmp_path: Path) -> None:
    root = tmp_path / "field"
    shutil.copytree(SAMPLE, root)
    field = open_field(str(root))
    memo = CheckMemo()
    first = analyse(field.snapshot(), memo)
    page = root / "notes" / "pref-weekly-update-bullets.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n- one more fact [stated]\n", encoding="utf-8")
    field.rescan()
    second = analyse(field.snapshot(), memo, first)
    fresh = analyse(field.snapshot())
    assert second.rows == fresh.rows and second.findings == fresh.findings and second.counts == fresh.counts
    kept = [path for path in second.rows if second.rows[path] is first.rows.get(path)]
    assert len(kept) >= len(second.rows) - 1
    assert second.rows["notes/pref-weekly-update-bullets.md"] is not first.rows["notes/pref-weekly-update-bullets.md"]


def test_a_new_head_puts_the_claims_in_context_again(tmp_path: Path) -> None:
    """A page unchanged on disk whose previous git revision changed (history rewritten under
    it) gets the claims of that revision: the memo follows HEAD, not only the pages."""
    from tests.helpers_review import git, init_repo

    root = tmp_path / "field"
    root.mkdir()
    page = root / "notes" / "pilot.md"
    page.parent.mkdir()
    page.write_text(_frontmatter("Pilot") + "- the pilot starts in May [suggested]\n", encoding="utf-8")
    init_repo(root)
    page.write_text(_frontmatter("Pilot") + "- the pilot starts in May [stated]\n", encoding="utf-8")
    git(root, "commit", "-q", "-am", "promote")
    field = open_field(str(root))
    memo = CheckMemo()
    before = run_checks(field.snapshot(), memo=memo)
    assert [f.rule for f in before if f.path == "notes/pilot.md"].count("tag-promoted") == 1
    git(root, "checkout", "-q", "--orphan", "rewritten")
    git(root, "commit", "-q", "-m", "the page was always stated")
    field.rescan()
    after = run_checks(field.snapshot(), memo=memo)
    assert after == _fresh(field)[0]
    assert "tag-promoted" not in [f.rule for f in after if f.path == "notes/pilot.md"]


def test_lookup_tables_kept_page_by_page_equal_tables_made_at_once():
    """One way to make the lookup tables: updating empty ones with every page gives what updating
    them change after change gives, whatever the order (a page renamed, removed, added back)."""
    import random

    from memtui.field.lookup import LookupTables
    from memtui.field.page import info_from_bytes

    def info(path: str, title: str, ident: str, aliases: str = "") -> object:
        text = f"---\nid: {ident}\ntitle: {title}\n" + (f"aliases: [{aliases}]\n" if aliases else "") + "---\nbody\n"
        data = text.encode()
        return info_from_bytes(path, data, len(data), 0)

    # One page gives up a name and another takes it in the same update.
    pages = {"a.md": info("a.md", "One", "x"), "b.md": info("b.md", "Two", "y")}
    kept = LookupTables.of(pages)
    pages = {"a.md": info("a.md", "Uno", "x"), "b.md": info("b.md", "One", "y")}
    kept.update(pages, ["a.md", "b.md"], ())
    assert kept.tables == LookupTables.of(pages).tables

    rng = random.Random(3)
    names = ["Alpha", "Beta", "Gamma", "alpha", "Δelta"]
    kept = LookupTables()
    pages = {}
    for step in range(120):
        changed: set[str] = set()
        removed: set[str] = set()
        for _ in range(rng.randrange(1, 5)):  # a batch: one page loses a name another takes
            path = f"{rng.choice(['a', 'b', 'a/c'])}/{rng.choice(names).lower()}{rng.randrange(4)}.md"
            if path in pages and rng.random() < 0.4:
                del pages[path]
                removed.add(path)
                changed.discard(path)
            else:
                pages[path] = info(path, rng.choice(names), f"id-{rng.randrange(6)}", rng.choice(["", "Beta", "Zeta"]))
                changed.add(path)
                removed.discard(path)
        kept.update(pages, changed, removed)
        if step % 10 == 0:
            assert kept.tables == LookupTables.of(pages).tables
    assert kept.tables == LookupTables.of(pages).tables
