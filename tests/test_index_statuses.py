"""Statuses kept current by the index: a change that cannot move another page's status is
decided locally (no whole-field graph), and the result always equals a whole recomputation."""

from __future__ import annotations

import random
from pathlib import Path

from memtui.field.field import scan
from memtui.index.indexer import IndexGeneration, assign_statuses, read_all
from memtui.index.records import compute_statuses


def _page(number: int, rng: random.Random, names: list[str]) -> str:
    lines = [f"id: mem_{number}", f"title: Note {number}", f"subject: topic/{number % 7}"]
    roll = rng.random()
    if roll < 0.15 and names:
        lines.append(f"supersedes: [{rng.choice(names)}]")
    elif roll < 0.25 and names:
        lines.append(f"superseded_by: {rng.choice(names)}")
    elif roll < 0.3:
        lines.append("status: stale")
    elif roll < 0.35:
        lines.append("valid_to: 2020-01-01")
    if rng.random() < 0.2:
        lines.append(f"aliases: [Alias {rng.randrange(40)}]")
    return "---\n" + "\n".join(lines) + f"\n---\n# Note {number}\n\nA fact about {number}. [observed]\n"


def _targets(rng: random.Random) -> list[str]:
    """Names a reference may use: ids, titles, aliases, paths (some of pages not written yet)."""
    out = []
    for _ in range(30):
        n = rng.randrange(60)
        out.append(rng.choice([f"mem_{n}", f"Note {n}", f"Alias {n % 40}", f"notes/n{n}.md", f"[[Note {n}]]"]))
    return out


def _built(root: Path, gen_dir: Path) -> IndexGeneration:
    """A generation of every page of ``root``, built in ``gen_dir`` (no status computed since)."""
    entries, _ = scan(root)
    docs = read_all(root, entries)
    assign_statuses(root, docs)
    gen_dir.mkdir()
    gen = IndexGeneration.create(gen_dir)
    gen.build(docs, len(docs))
    return gen


def _whole(gen: IndexGeneration, root: Path) -> dict[str, tuple[str, tuple[str, ...]]]:
    return compute_statuses(root, gen.records, gen.reader)


def _stored(gen: IndexGeneration) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {path: (record.status, tuple(record.successors)) for path, record in gen.records.items()}


def test_local_status_decisions_equal_a_whole_recomputation(tmp_path: Path) -> None:
    rng = random.Random(5)
    root = tmp_path / "field"
    (root / "notes").mkdir(parents=True)
    names = _targets(rng)
    for n in range(40):
        (root / "notes" / f"n{n}.md").write_text(_page(n, rng, names))
    gen = _built(root, tmp_path / "gen")
    locally = 0
    for step in range(150):
        action = rng.random()
        number = rng.randrange(60)
        path = f"notes/n{number}.md"
        target = root / path
        if action < 0.25 and target.exists():
            target.unlink()
        elif action < 0.45:  # a plain page: no references, maybe an existing name
            target.write_text(f"---\nid: mem_{number}\ntitle: Note {number}\n---\nplain {step} [observed]\n")
        elif action < 0.65 and target.exists():  # the body only
            target.write_text(target.read_text() + f"\nmore {step} [observed]\n")
        else:
            target.write_text(_page(number, rng, names))
        references_before = gen.references
        plan = gen.plan_paths(root, [path])
        gen.apply(plan)
        if references_before is not None and gen.references is references_before:
            locally += 1
        assert _stored(gen) == _whole(gen, root), f"step {step}: {action:.2f} {path}"
    assert locally > 30  # most changes were decided without the whole graph


def test_a_plain_new_page_is_decided_locally_and_a_superseding_one_is_not(sample_field: Path, tmp_path: Path) -> None:
    gen = _built(sample_field, tmp_path / "gen")
    (sample_field / "notes" / "plain.md").write_text(
        "---\ntitle: A plain note\nstatus: stale\n---\nNothing. [observed]\n"
    )
    gen.apply(gen.plan_paths(sample_field, ["notes/plain.md"]))
    first = gen.references
    assert first is not None
    gen.warm(sample_field)  # the lookup keys: the first change made them already
    assert not gen.warm(sample_field)  # made once
    by_key = gen._reference_keys
    (sample_field / "notes" / "plain2.md").write_text("---\ntitle: Another plain note\n---\nNothing. [observed]\n")
    gen.apply(gen.plan_paths(sample_field, ["notes/plain2.md"]))
    assert gen.references is first  # decided locally
    assert gen._reference_keys is by_key  # with what was made while idle
    assert gen.records["notes/plain2.md"].status == "current"
    assert gen.records["notes/plain.md"].status == "stale"
    (sample_field / "decisions" / "public-api-grpc.md").write_text(
        "---\nid: mem_grpc\ntitle: Public API decision gRPC\nsubject: decision/public-api\nsupersedes: [mem_9tx5]\n---\n"
        "Now gRPC. [stated]\n"
    )
    gen.apply(gen.plan_paths(sample_field, ["decisions/public-api-grpc.md"]))
    assert gen.references is not first  # a reference: the whole graph
    assert gen.records["decisions/public-api-trpc.md"].status == "superseded"
    assert _stored(gen) == _whole(gen, sample_field)


def test_a_new_generation_decides_its_first_plain_change_locally(
    sample_field: Path, tmp_path: Path, monkeypatch
) -> None:
    """A generation just built (or merged) has no references from a whole computation yet: they
    are made from its records, and the first plain page written is decided without the whole
    field's graph (at 20,000 pages that graph took 0.9 s of the first commit of a storm)."""
    from memtui.index import indexer as indexer_mod

    gen = _built(sample_field, tmp_path / "gen")
    assert gen.references is None
    wholes = []
    real = indexer_mod.compute_statuses
    whole = len(gen.records)  # a computation over every page (a local one takes the changed pages alone)
    monkeypatch.setattr(
        indexer_mod,
        "compute_statuses",
        lambda root, records, *a: (len(records) >= whole and wholes.append(1)) or real(root, records, *a),
    )
    (sample_field / "notes" / "plain.md").write_text("---\ntitle: A plain note\n---\nNothing. [observed]\n")
    gen.apply(gen.plan_paths(sample_field, ["notes/plain.md"]))
    assert wholes == []
    assert sorted(gen.references) == sorted(gen.records.references()) and gen.references
    assert _stored(gen) == _whole(gen, sample_field)
    # Idle, the references are made first (one piece of work a step), then their lookup keys.
    fresh = _built(sample_field, tmp_path / "gen2")
    assert fresh.warm(sample_field) and fresh.references is not None and fresh._reference_keys is None
    assert fresh.warm(sample_field) and fresh._reference_keys is not None
    assert not fresh.warm(sample_field)
