"""Checks: every rule has a minimal field that triggers it and a clean counterpart that does not;
the sample field reports exactly the problems listed in sample-field/README-PROBLEMS.txt."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from memtui.dialects.formats.sidecar_store import content_hash
from memtui.dialects.open import open_field
from memtui.field import field as field_mod
from memtui.field import frontmatter as fm_mod
from memtui.field import page as page_mod
from memtui.field.checks import (
    ERROR,
    INFO,
    MAX_LINE_FINDINGS_PER_RULE,
    RULES,
    check_page,
    lesson_weight,
    run_checks,
    sort_findings,
    summarise,
)
from memtui.field.field import Field
from tests.conftest import SAMPLE_FIELD
from tests.helpers_field import make_field, page

TAGGED = "A line that states a fact clearly. [observed]\n"
GOOD_FM = "id: mem_a\ntitle: A page\nkind: semantic\norigin: agent\nconfidence: 0.9\nvalid_from: 2026-01-01"


def lesson(signals: str, *, status: str = "established", extra: str = "") -> str:
    return page(
        f"lesson: {status}\nupdated: 2026-10-22\n{signals}{extra}",
        "When deploys hung, a held lock was the cause. [inferred]\n",
    )


FOUR_SIGNALS = (
    "signals:\n"
    "  - {date: 2026-09-02, session: s1}\n"
    "  - {date: 2026-09-29, session: s2}\n"
    "  - {date: 2026-10-06, session: s3}\n"
    "  - {date: 2026-10-21, session: s4}\n"
)
ONE_SESSION = (
    "signals:\n"
    "  - {date: 2026-10-14, session: s1}\n"
    "  - {date: 2026-10-15, session: s1}\n"
    "  - {date: 2026-10-16, session: s1}\n"
)

CLAUDE_TOPIC = "---\nname: Deploys\ndescription: how we ship\ntype: feedback\n---\nShip on Tuesdays.\n"
AICTX_CONFIG = {"config.json": '{"version": 5, "project": {"id": "project.x", "name": "X"}}'}


def aictx_sidecar(body: str) -> str:
    sidecar = {
        "id": "decision.a",
        "type": "decision",
        "status": "active",
        "title": "A",
        "body_path": "memory/decisions/a.md",
    }
    sidecar["content_hash"] = content_hash(sidecar, body)
    return json.dumps(sidecar)


Setup = Callable[[Path, pytest.MonkeyPatch], None]


@dataclass
class Case:
    trigger: dict[str, str | bytes]
    clean: dict[str, str | bytes]
    setup: Setup | None = None  # applied to the triggering field only
    both: Setup | None = None  # applied to both fields (e.g. a smaller limit)
    expected_line: int | None = -1  # -1: do not check
    extra: dict[str, str | bytes] = field(default_factory=dict)


def _symlink(name: str, target_of: Callable[[Path], Path]) -> Setup:
    def setup(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        os.symlink(target_of(root), root / name)

    return setup


def _vanish(rel: str) -> Setup:
    def setup(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        real = page_mod.read_page_bytes

        def read_after_delete(root_arg, path):
            if path == rel:
                (Path(root_arg) / path).unlink()
            return real(root_arg, path)

        monkeypatch.setattr(page_mod, "read_page_bytes", read_after_delete)

    return setup


def _folder_instead_of_page(rel: str) -> Setup:
    def setup(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        real = page_mod.read_page_bytes

        def read_after_swap(root_arg, path):
            if path == rel:
                target = Path(root_arg) / path
                target.unlink()
                target.mkdir()
            return real(root_arg, path)

        monkeypatch.setattr(page_mod, "read_page_bytes", read_after_swap)

    return setup


def _unlistable(folder: str) -> Setup:
    def setup(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        real = os.scandir

        def scandir_after_swap(path):
            target = root / folder
            if os.fspath(path) == os.fspath(target) and target.is_dir():
                for child in target.iterdir():
                    child.unlink()
                target.rmdir()
                target.write_text("a file now")
            return real(path)

        monkeypatch.setattr(field_mod, "scandir", scandir_after_swap)

    return setup


def _limit(module, name: str, value: int) -> Setup:
    def setup(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setattr(module, name, value)

    return setup


CASES: dict[str, Case] = {
    "yaml-invalid": Case(
        {"notes/a.md": page("title: Offsite: Dec 9", TAGGED)},
        {"notes/a.md": page("title: 'Offsite: Dec 9'", TAGGED)},
        expected_line=2,
    ),
    "frontmatter-unclosed": Case(
        {"notes/a.md": "---\ntitle: A\n" + TAGGED}, {"notes/a.md": "---\ntitle: A\n---\n" + TAGGED}, expected_line=1
    ),
    "frontmatter-not-mapping": Case(
        {"notes/a.md": page("- a\n- b", TAGGED)}, {"notes/a.md": page("a: [a, b]", TAGGED)}
    ),
    "frontmatter-too-large": Case(
        {"notes/a.md": page("summary: " + "x" * 300, TAGGED)},
        {"notes/a.md": page("summary: " + "x" * 100, TAGGED)},
        both=_limit(fm_mod, "MAX_FRONTMATTER_BYTES", 200),
    ),
    "yaml-alias": Case(
        {"notes/a.md": page("a: &x mem_1\nsupersedes_note: *x", TAGGED)},
        {"notes/a.md": page("a: mem_1\nsupersedes_note: mem_1", TAGGED)},
        expected_line=3,
    ),
    "yaml-too-deep": Case(
        {"notes/a.md": page("nest: " + "[" * 40 + "]" * 40, TAGGED)},
        {"notes/a.md": page("nest: " + "[" * 5 + "]" * 5, TAGGED)},
    ),
    "frontmatter-duplicate-key": Case(
        {"notes/a.md": page("reviewed: false\ntitle: A\nreviewed: true", TAGGED)},
        {"notes/a.md": page("reviewed: true\ntitle: A", TAGGED)},
        expected_line=4,
    ),
    "kind-unknown": Case(
        {"notes/a.md": page("kind: opinion", TAGGED)}, {"notes/a.md": page("kind: Preference", TAGGED)}, expected_line=2
    ),
    "origin-unknown": Case(
        {"notes/a.md": page("origin: robot", TAGGED)}, {"notes/a.md": page("origin: job", TAGGED)}, expected_line=2
    ),
    "confidence-range": Case(
        {"notes/a.md": page("id: a\nconfidence: 1.4", TAGGED), "notes/b.md": page("confidence: high", TAGGED)},
        {"notes/a.md": page("id: a\nconfidence: 1", TAGGED), "notes/b.md": page("confidence: 0", TAGGED)},
        expected_line=3,
    ),
    "date-invalid": Case(
        {
            "notes/a.md": page("valid_from: 2026-02-30", TAGGED),
            "notes/b.md": page("valid_from: 2026-05-01\nvalid_to: 2026-04-01", TAGGED),
        },
        {
            "notes/a.md": page("valid_from: 2026-02-28", TAGGED),
            "notes/b.md": page("valid_from: 2026-04-01\nvalid_to: 2026-05-01\ncreated: 2026-04-01T09:00:00Z", TAGGED),
        },
    ),
    "page-size": Case(
        {"big.md": "x" * 8001},
        # sessions/ is raw evidence that is never edited, so "split it" does not apply there.
        {"big.md": "x" * 8000, "sessions/long-transcript.md": "x" * 20000},
    ),
    "untagged-claim": Case(  # memtui's tag rules apply where the field uses its source tags (notes/b.md)
        {
            "notes/a.md": "Weekly check-in on Thursdays with Luis\n",
            "daily/2026-01-01.md": "Untagged lines in a daily log\n",
            "notes/b.md": TAGGED,
        },
        {
            "notes/a.md": "Weekly check-in on Thursdays with Luis [observed]\n",
            "daily/2026-01-01.md": "Untagged lines in a daily log\n",
            "notes/b.md": TAGGED,
        },
        expected_line=1,
    ),
    "link-broken": Case(
        {"notes/a.md": "See [[Brightline Procurement Policy]] for details. [observed]\n"},
        {
            "notes/a.md": "See [[Brightline Procurement Policy]] for details. [observed]\n",
            "notes/policy.md": page("title: Brightline Procurement Policy", TAGGED),
        },
        expected_line=1,
    ),
    "link-ambiguous": Case(  # an agent's alias for a name a file already holds (tests/test_attack_rules.py)
        {
            "notes/a.md": "See [[Budget]] for the numbers. [observed]\n",
            "Budget.md": TAGGED,
            "notes/evil.md": page("aliases: [Budget]", TAGGED),
        },
        {
            "notes/a.md": "See [[Budget]] for the numbers. [observed]\n",
            "Budget.md": TAGGED,
            "notes/evil.md": page("aliases: [Budget plan]", TAGGED),
        },
        expected_line=1,
    ),
    "cite-broken": Case(
        {"notes/a.md": page("sources: [s1, s2]", "Fact [cite:3] here. [stated]\n")},
        {"notes/a.md": page("sources: [s1, s2]", "Fact [cite:2] here. [stated]\n")},
        expected_line=4,
    ),
    "cite-source-missing": Case(
        {"notes/a.md": page("sources: [sessions/gone.md#L2]", "Fact [cite:1] here. [stated]\n")},
        {
            "notes/a.md": page("sources: [sessions/here.md#L2]", "Fact [cite:1] here. [stated]\n"),
            "sessions/here.md": "raw\n",
        },
    ),
    "supersedes-broken": Case(
        {"notes/new.md": page("supersedes: [mem_1wk8]", TAGGED)},
        {"notes/new.md": page("supersedes: [mem_1wk8]", TAGGED), "notes/old.md": page("id: mem_1wk8", TAGGED)},
        expected_line=2,
    ),
    "supersedes-self": Case(
        {"notes/a.md": page("id: me\nsupersedes: [me]", TAGGED)}, {"notes/a.md": page("id: me\nsupersedes: []", TAGGED)}
    ),
    "supersede-cycle": Case(
        {"notes/a.md": page("id: a\nsupersedes: [b]", TAGGED), "notes/b.md": page("id: b\nsupersedes: [a]", TAGGED)},
        {"notes/a.md": page("id: a\nsupersedes: [b]", TAGGED), "notes/b.md": page("id: b", TAGGED)},
    ),
    "superseded-twice": Case(
        {
            "notes/old.md": page("id: old", TAGGED),
            "notes/n1.md": page("id: n1\nsupersedes: [old]", TAGGED),
            "notes/n2.md": page("id: n2\nsupersedes: [old]", TAGGED),
        },
        {
            "notes/old.md": page("id: old", TAGGED),
            "notes/n1.md": page("id: n1\nsupersedes: [old]", TAGGED),
            "notes/n2.md": page("id: n2\nsupersedes: [n1]", TAGGED),
        },
    ),
    "contradiction": Case(
        {
            "notes/am.md": page("subject: preference/meeting-times\nkind: preference", TAGGED),
            "notes/pm.md": page("subject: preference/meeting-times\nkind: preference", TAGGED),
        },
        {
            "notes/am.md": page("id: am\nsubject: preference/meeting-times\nkind: preference", TAGGED),
            "notes/pm.md": page("subject: preference/meeting-times\nkind: preference\nsupersedes: [am]", TAGGED),
        },
        expected_line=2,
    ),
    # MEMORY.md has its own cap, so the 8,000-byte page soft limit does not apply to it.
    "memory-too-long": Case({"MEMORY.md": "# MEMORY\n" + "p" * 15000}, {"MEMORY.md": "# MEMORY\n" + "p" * 14990}),
    "memory-missing-target": Case(  # a bare path is a pointer in memtui's format (notes/b.md has its tags)
        {"MEMORY.md": "# MEMORY\n- Contractor: people/old-contractor.md\n", "notes/b.md": TAGGED},
        {
            "MEMORY.md": "# MEMORY\n- Contractor: people/old-contractor.md\n",
            "people/old-contractor.md": "# Old\n",
            "notes/b.md": TAGGED,
        },
        expected_line=2,
    ),
    "memory-untrusted-target": Case(
        {
            "MEMORY.md": "# MEMORY\n- Hiring: [[hiring]]\n- Pricing: quarantine/p.md\n",
            "notes/hiring.md": page("reviewed: false", TAGGED),
            "quarantine/p.md": page("taint: external", TAGGED),
        },
        {
            "MEMORY.md": "# MEMORY\n- Hiring: [[hiring]]\n",
            "notes/hiring.md": page("reviewed: true", TAGGED),
            "quarantine/p.md": page("taint: external", TAGGED),  # may exist, but not be routed
        },
    ),
    "generated-no-sources": Case(
        {"notes/digest.md": page("generated: true", TAGGED)},
        {"notes/digest.md": page("generated: true\nsources: [sessions/a.md]", TAGGED)},
        expected_line=2,
    ),
    "lesson-ungated": Case(
        {"notes/lesson.md": lesson(ONE_SESSION)},
        {"notes/lesson.md": lesson(FOUR_SIGNALS)},
        expected_line=2,
    ),
    "lesson-unrecorded": Case(
        {"notes/lesson.md": lesson("")},
        {"notes/lesson.md": lesson("", extra="user_correction: true\n")},  # a user correction skips the gate
    ),
    "utf8-invalid": Case(
        {"notes/a.md": b"Caf\xe9 was closed on Monday. [stated]\n"},
        {"notes/a.md": "Café was closed on Monday. [observed]\n"},
    ),
    "control-chars": Case(
        {"notes/a.md": "A title \x1b[2J that clears. [observed]\n"},
        {"notes/a.md": "A title ^[[2J that is text. [observed]\n"},
    ),
    "bidi-override": Case(
        {"notes/a.md": "Renewal date \u202e10-01\u202c is set. [observed]\n"},
        {"notes/a.md": "Renewal date 10-01 is set. [observed]\n"},
    ),
    "zero-width": Case(
        {"notes/a.md": "Pay\u200bpal account is verified. [observed]\n"},
        {"notes/a.md": "Paypal account is verified. [observed]\n"},
    ),
    "binary-file": Case({"notes/a.md": b"\x00\x01\x02binary"}, {"notes/a.md": b"# Plain text, no NUL bytes\n"}),
    "page-too-large": Case(
        {"notes/a.md": TAGGED * 30}, {"notes/a.md": TAGGED * 10}, both=_limit(page_mod, "MAX_PARSE_BYTES", 1000)
    ),
    "empty-page": Case({"notes/a.md": ""}, {"notes/a.md": "\n"}),
    "conflict-markers": Case(
        {
            "notes/a.md": "# Queue\n\n<<<<<<< HEAD\nUse Redis for the queue. [stated]\n=======\n"
            "Use Postgres for the queue. [stated]\n>>>>>>> dream/nightly\n"
        },
        # resolved; and markers shown in a code block, or a setext heading, are no conflict
        {
            "notes/a.md": "Use Postgres for the queue. [observed]\n\n```\n<<<<<<< HEAD\nours\n=======\ntheirs\n"
            ">>>>>>> branch\n```\n\nA heading\n=======\n"
        },
        expected_line=3,
    ),
    "tool-markup": Case(
        {"notes/a.md": "# Queue\n\nUse Postgres for the queue. [stated]\n</content>\n"},
        # markup quoted in a code span or a fenced block, and ordinary HTML, are no leftover
        {
            "notes/a.md": "Use Postgres for the queue. [observed]\nThe tool closes with `</content>`. [observed]\n\n"
            '```xml\n<parameter name="path">x</parameter>\n```\n\nA <b>bold</b> word stays. [observed]\n'
        },
        expected_line=4,
    ),
    "page-unreadable": Case(
        {"notes/a.md": TAGGED}, {"notes/a.md": TAGGED}, setup=_folder_instead_of_page("notes/a.md")
    ),
    "folder-unreadable": Case(
        {"notes/a.md": TAGGED, "sub/b.md": TAGGED}, {"notes/a.md": TAGGED, "sub/b.md": TAGGED}, setup=_unlistable("sub")
    ),
    "symlink-outside": Case(
        {"notes/a.md": TAGGED},
        {"notes/a.md": TAGGED},
        setup=_symlink("leak.md", lambda root: root.parent / "outside.md"),
        extra={"outside.md": "SECRET\n"},
    ),
    "symlink-skipped": Case(
        {"notes/a.md": TAGGED}, {"notes/a.md": TAGGED}, setup=_symlink("alias.md", lambda root: root / "notes" / "a.md")
    ),
    "page-vanished": Case(
        {"notes/a.md": TAGGED, "notes/b.md": TAGGED}, {"notes/a.md": TAGGED}, setup=_vanish("notes/b.md")
    ),
    "superseded-no-successor": Case(
        {"notes/a.md": page("status: superseded", TAGGED)},
        {"notes/a.md": page("status: superseded\nsuperseded_by: b", TAGGED), "notes/b.md": page("id: b", TAGGED)},
        expected_line=2,
    ),
    "claude-memory-truncated": Case(
        {"memory/MEMORY.md": "- [Deploys](deploys.md): how we ship\n" * 230, "memory/deploys.md": CLAUDE_TOPIC},
        {"memory/MEMORY.md": "- [Deploys](deploys.md): how we ship\n" * 150, "memory/deploys.md": CLAUDE_TOPIC},
        expected_line=201,
    ),
    "never-loaded": Case(
        {
            ".serena/project.yml": "ignored_memory_patterns: ['scratch/.*']\n",
            ".serena/memories/scratch/idea.md": "# Idea\n\nShard the queue.\n",
        },
        {
            ".serena/project.yml": "ignored_memory_patterns: ['archive/.*']\n",
            ".serena/memories/scratch/idea.md": "# Idea\n\nShard the queue.\n",
        },
    ),
    "import-outside": Case(
        {"CLAUDE.md": "# Project\nTeam rules: @~/team/rules.md and @../shared/style.md\n"},
        {"CLAUDE.md": "# Project\nTeam rules: @docs/rules.md\n", "docs/rules.md": "# Rules\n"},
        expected_line=2,
    ),
    "import-credential": Case(
        {"CLAUDE.md": "# Project\nDeploy key: @~/.ssh/id_rsa\n"},
        {"CLAUDE.md": "# Project\nDeploy notes: @docs/deploy.md\n", "docs/deploy.md": "# Deploy\n"},
        expected_line=2,
    ),
    "topic-unindexed": Case(
        {
            "memory/MEMORY.md": "- [Deploys](deploys.md): how we ship\n",
            "memory/deploys.md": CLAUDE_TOPIC,
            "memory/orphan.md": CLAUDE_TOPIC,
        },
        {
            "memory/MEMORY.md": "- [Deploys](deploys.md): how we ship\n- [Other](orphan.md): more\n",
            "memory/deploys.md": CLAUDE_TOPIC,
            "memory/orphan.md": CLAUDE_TOPIC,
        },
    ),
    "lookalike-tag": Case(
        {"notes/a.md": "Deploy on Fridays. [observed]\nMaya chose Postgres. [\u0455tated]\n"},  # Cyrillic dze
        {"notes/a.md": "Deploy on Fridays. [observed]\nMaya chose Postgres. [observed]\n"},
        expected_line=2,
    ),
    "secret": Case(
        {"notes/a.md": "# Staging\n\nThe staging password: hunter2-Blue7 [observed]\n"},
        {"notes/a.md": "# Staging\n\nThe staging password is in the team vault. [observed]\n"},
        expected_line=3,
    ),
    "loaded-untrusted": Case(
        {"CLAUDE.md": "# Project\nSee @notes/vendor.md\n", "notes/vendor.md": page("taint: external", TAGGED)},
        {"CLAUDE.md": "# Project\nSee @notes/vendor.md\n", "notes/vendor.md": page("reviewed: true", TAGGED)},
    ),
    "import-broken": Case(
        {"CLAUDE.md": "# Project\nSee @docs/missing.md for the release steps.\n"},
        {
            "CLAUDE.md": "# Project\nSee @docs/guide.md for the release steps, and `@not/an/import.md`.\n",
            "docs/guide.md": "# Guide\n",
        },
        expected_line=2,
    ),
    "sidecar-invalid": Case(
        {**AICTX_CONFIG, "memory/decisions/a.md": "Body of a decision.\n", "memory/decisions/a.json": "{not json"},
        {
            **AICTX_CONFIG,
            "memory/decisions/a.md": "Body of a decision.\n",
            "memory/decisions/a.json": '{"id": "decision.a", "type": "decision", "status": "active", "title": "A"}',
        },
    ),
    "sidecar-hash-mismatch": Case(
        {
            **AICTX_CONFIG,
            "memory/decisions/a.md": "Body of a decision, edited by hand.\n",
            "memory/decisions/a.json": aictx_sidecar("Body of a decision.\n"),
        },
        {
            **AICTX_CONFIG,
            "memory/decisions/a.md": "Body of a decision.\n",
            "memory/decisions/a.json": aictx_sidecar("Body of a decision.\n"),
        },
    ),
    "tag-promoted": Case(
        {"notes/a.md": "- ~~Deploy on Fridays [suggested]~~ superseded 2026-02-01\n- Deploy on Fridays [stated]\n"},
        {
            "notes/a.md": "- ~~Deploy on Fridays [suggested]~~ superseded 2026-02-01\n"
            "- Deploy on Fridays (standup 2026-02-01) [stated]\n"
        },  # a new source came with the tag
        expected_line=2,
    ),
    "stated-uncited": Case(
        {
            "notes/a.md": page("sources: [sessions/s.md]", "Maya chose Postgres. [stated]\n"),
            "sessions/s.md": "Maya: let's use Postgres.\n",
        },
        {
            "notes/a.md": page("sources: [sessions/s.md]", "Maya chose Postgres [cite:1]. [stated]\n"),
            "sessions/s.md": "Maya: let's use Postgres.\n",
        },
        expected_line=4,
    ),
    "settings-invalid": Case(
        {"memtui.toml": "[rules]\nno-such-rule = 'off'\n", "notes/a.md": TAGGED},
        {"memtui.toml": "[rules]\npage-size = 'off'\n", "notes/a.md": TAGGED},
    ),
}


def test_every_rule_has_a_case():
    assert set(CASES) == set(RULES)


def _run(tmp_path: Path, name: str, pages: dict, case: Case, monkeypatch, triggered: bool):
    base = tmp_path / name
    make_field(base, case.extra)
    root = make_field(base / "field", pages)
    with monkeypatch.context() as patch:
        if case.both:
            case.both(root, patch)
        if triggered and case.setup:
            case.setup(root, patch)
        return run_checks(open_field(root, use_cache=False))


@pytest.mark.parametrize("rule", sorted(CASES))
def test_rule_triggers_on_a_minimal_field(rule, tmp_path, monkeypatch):
    case = CASES[rule]
    found = _run(tmp_path, "trigger", case.trigger, case, monkeypatch, triggered=True)
    hits = [f for f in found if f.rule == rule]
    assert hits, f"{rule} not reported; got {[(f.rule, f.path) for f in found]}"
    assert all(f.severity == RULES[rule].severity for f in hits)
    assert all(f.message and "\x1b" not in f.message for f in hits)
    if case.expected_line != -1:
        assert hits[0].line == case.expected_line


@pytest.mark.parametrize("rule", sorted(CASES))
def test_clean_counterpart_has_no_findings(rule, tmp_path, monkeypatch):
    case = CASES[rule]
    found = _run(tmp_path, "clean", case.clean, case, monkeypatch, triggered=False)
    assert [(f.rule, f.path, f.message) for f in found] == []


def test_a_good_page_with_every_field_is_clean(tmp_path):
    root = make_field(
        tmp_path / "f",
        {
            "notes/good.md": page(
                GOOD_FM + "\nsources:\n  - sessions/s.md#L1\nreviewed: true\nsupersedes: []",
                "# Good\n\nA fact from the session [cite:1]. [stated]\n\n```\nuntagged code lines are data\n```\n",
            ),
            "sessions/s.md": "Raw transcript lines are evidence, never claims\n",
        },
    )
    assert run_checks(Field.load(root, use_cache=False)) == []


def test_untagged_claims_are_capped_with_the_true_count(tmp_path):
    text = "".join(f"Claim number {n} has no source tag\n" for n in range(30))
    found = run_checks(Field.load(make_field(tmp_path / "f", {"notes/a.md": text}), use_cache=False))
    assert len(found) == MAX_LINE_FINDINGS_PER_RULE + 1
    assert found[0].line is None and found[0].message == "... and 10 more like this"


@pytest.mark.parametrize(
    "signals, weight, sessions",
    [
        ([{"date": "2026-10-14", "session": "a"}, {"date": "2026-10-14", "session": "a"}], 1.0, 1),
        ([{"date": "2026-09-02", "session": "a"}, {"date": "2026-10-21", "session": "b"}], 1.5, 2),
        (["sessions/a.md", "sessions/b.md", "sessions/a.md"], 2.0, 2),
        ([{"source": "a"}, {"session": "b", "date": "not a date"}], 2.0, 2),
    ],
)
def test_lesson_weight(signals, weight, sessions):
    assert lesson_weight(signals, reference=None) == (weight, sessions)


def test_check_page_gives_one_pages_findings(tmp_path):
    root = make_field(
        tmp_path / "f",
        {
            "MEMORY.md": "# MEMORY\n- gone: notes/gone.md\n",
            "notes/a.md": page("id: a\nkind: opinion\nsupersedes: [nope]", "See [[Nobody]] today. [observed]\n"),
            "notes/b.md": page("kind: opinion", TAGGED),
        },
    )
    field = Field.load(root, use_cache=False)
    assert [(f.rule, f.line) for f in check_page(field, "notes/a.md")] == [
        ("kind-unknown", 3),
        ("supersedes-broken", 4),
        ("link-broken", 6),
    ]
    assert [f.rule for f in check_page(field, "MEMORY.md")] == ["memory-missing-target"]
    assert check_page(field, "notes/none.md") == []


def test_findings_are_sorted_and_info_can_be_left_out(tmp_path):
    root = make_field(tmp_path / "f", {"b.md": "", "a.md": page("kind: x\norigin: y", "")})
    os.symlink(root / "a.md", root / "c.md")
    field = Field.load(root, use_cache=False)
    found = run_checks(field)
    assert [(f.path, f.line, f.rule) for f in found] == [
        ("a.md", 2, "kind-unknown"),
        ("a.md", 3, "origin-unknown"),
        ("b.md", None, "empty-page"),
        ("c.md", None, "symlink-skipped"),
    ]
    assert sort_findings(reversed(found)) == found
    assert all(f.severity != INFO for f in run_checks(field, include_info=False))
    summary = summarise(found, len(field))
    assert summary == {
        "pages": 2,
        "errors": 0,
        "warnings": 3,
        "info": 1,
        "by_rule": {"empty-page": 1, "kind-unknown": 1, "origin-unknown": 1, "symlink-skipped": 1},
        "pages_with_findings": 3,
        "hidden_by_settings": 0,
    }


# --------------------------------------------------------------------------- the sample field

PROPOSAL_LINES = {
    ".dream/proposals/2026-11-19-consolidate-01",
    ".dream/proposals/2026-11-19-consolidate-01 + .dream/proposals/2026-11-27-contradiction-01",
}
HOSTILE = "quarantine/vendor-pricing-update.md"
HAZARD_RULES = {"control-chars", "bidi-override", "zero-width"}

# README-PROBLEMS.txt line (the part before " — ") -> findings it must produce:
# (rule, path, text the message contains, or a line number).
EXPECTED: dict[str, list[tuple[str, str, str | int]]] = {
    "MEMORY.md": [
        ("memory-missing-target", "MEMORY.md", "people/old-contractor.md"),
        ("memory-untrusted-target", "MEMORY.md", "quarantine/portlink-pricing-2027.md, which is quarantined"),
        ("memory-untrusted-target", "MEMORY.md", "notes/hiring-plan-q1-2027.md, which is unreviewed"),
    ],
    "knowledge/entities/brightline-freight.md": [
        ("link-broken", "knowledge/entities/brightline-freight.md", "[[Brightline Procurement Policy]]")
    ],
    "knowledge/entities/trackstream.md": [
        ("cite-broken", "knowledge/entities/trackstream.md", "[cite:4] but the page has 2 sources")
    ],
    "decisions/release-cadence-biweekly.md": [
        ("supersedes-broken", "decisions/release-cadence-biweekly.md", "mem_1wk8")
    ],
    "notes/harbor-naming-opinion.md": [("kind-unknown", "notes/harbor-naming-opinion.md", "'opinion'")],
    "knowledge/entities/portlink.md": [("confidence-range", "knowledge/entities/portlink.md", "1.4")],
    "knowledge/projects/arch-review-2026-04-notes.md": [
        ("page-size", "knowledge/projects/arch-review-2026-04-notes.md", "8,421 bytes")
    ],
    "projects/brightline-pilot.md": [
        ("untagged-claim", "projects/brightline-pilot.md", "Weekly check-in on Thursdays with Luis"),
        ("untagged-claim", "projects/brightline-pilot.md", "Brightline queries shipments by PO number"),
        ("untagged-claim", "projects/brightline-pilot.md", "Dana told Luis about the incident the same week"),
        ("tag-promoted", "projects/brightline-pilot.md", "[suggested] -> [stated] without a new citation"),
    ],
    "notes/q3-digest.md": [("generated-no-sources", "notes/q3-digest.md", "no sources")],
    "notes/feedback-short-status-replies.md": [
        ("stated-uncited", "notes/feedback-short-status-replies.md", "Maya wants replies")
    ],
    "notes/meeting-times-mornings.md + notes/meeting-times-afternoons.md": [
        ("contradiction", "notes/meeting-times-mornings.md", "notes/meeting-times-afternoons.md"),
        ("contradiction", "notes/meeting-times-afternoons.md", "notes/meeting-times-mornings.md"),
    ],
    # libyaml words it "... not allowed in this context", PyYAML's pure loader "... not allowed here".
    "notes/offsite-logistics.md": [("yaml-invalid", "notes/offsite-logistics.md", "mapping values are not allowed")],
    "notes/lesson-decision-memo-first-line.md": [
        ("lesson-ungated", "notes/lesson-decision-memo-first-line.md", "1 session")
    ],
    HOSTILE: [
        ("control-chars", HOSTILE, "␛"),
        ("control-chars", HOSTILE, "␇"),
        ("bidi-override", HOSTILE, "⟨RLO⟩"),
        ("zero-width", HOSTILE, "⟨ZWSP⟩"),
    ],
}


def _readme_problem_lines() -> list[tuple[str, str]]:
    text = (SAMPLE_FIELD / "README-PROBLEMS.txt").read_text("utf-8")
    problems = text.split("Expected, not problems")[0]
    out = []
    for line in problems.splitlines()[1:]:
        if " — " in line:
            where, what = line.split(" — ", 1)
            out.append((where.strip(), what.strip()))
    return out


def test_the_expected_table_covers_every_line_of_the_readme():
    listed = {where for where, _ in _readme_problem_lines()}
    # Proposal staleness and conflicts are reported by the proposal review, not by `check`.
    assert listed == set(EXPECTED) | PROPOSAL_LINES
    assert len(_readme_problem_lines()) == 19


@pytest.fixture(scope="module")
def sample_findings(tmp_path_factory):
    import shutil

    root = tmp_path_factory.mktemp("sample") / "sample-field"
    shutil.copytree(SAMPLE_FIELD, root, symlinks=True, ignore=shutil.ignore_patterns(".memtui"))
    return run_checks(open_field(root, use_cache=False)), root


def _line_text(root: Path, path: str, line: int) -> str:
    return (root / path).read_text("utf-8").splitlines()[line - 1]


def test_sample_field_reports_every_listed_problem(sample_findings):
    found, root = sample_findings
    for where, expectations in EXPECTED.items():
        for rule, path, needle in expectations:
            candidates = [f for f in found if f.rule == rule and f.path == path]
            if rule == "untagged-claim":
                ok = any(f.line and needle in _line_text(root, path, f.line) for f in candidates)
            else:
                ok = any(needle in f.message for f in candidates)
            assert ok, f"{where}: expected {rule} on {path} mentioning {needle!r}"


def test_sample_field_reports_nothing_outside_the_list(sample_findings):
    found, _ = sample_findings
    allowed = {(rule, path) for items in EXPECTED.values() for rule, path, _ in items}
    extra = [
        (f.rule, f.path, f.line, f.message)
        for f in found
        if (f.rule, f.path) not in allowed and not (f.path == HOSTILE and f.rule in HAZARD_RULES)
    ]
    assert extra == []
    assert len([f for f in found if f.rule == "untagged-claim"]) == 3
    assert len([f for f in found if f.path == "MEMORY.md"]) == 3


def test_sample_field_severity_summary(sample_findings):
    found, _ = sample_findings
    summary = summarise(found, 73)
    assert summary["errors"] == sum(1 for f in found if f.severity == ERROR)
    assert summary["by_rule"]["untagged-claim"] == 3
    assert summary["info"] == 1  # the deliberate uncited [stated] claim


def test_the_sample_field_copy_is_untouched_by_checks(sample_field):
    before = {p: p.read_bytes() for p in sample_field.rglob("*") if p.is_file()}
    run_checks(Field.load(sample_field, use_cache=False))
    after = {p: p.read_bytes() for p in sample_field.rglob("*") if p.is_file()}
    assert before == after
    assert re.search(r"\.memtui", " ".join(str(p) for p in after)) is None


@pytest.mark.parametrize("keep", [0, 1, 3, 10])
def test_a_tally_counts_and_keeps_the_first_findings_of_each_rule_as_run_checks_sorts_them(keep):
    import random

    from memtui.field.checks import Finding, FindingTally, sort_findings, summarise

    rng = random.Random(keep)
    rules = ["link-broken", "stated-uncited", "page-size", "contradiction"]
    findings = [
        Finding(
            rng.choice(rules),
            rng.choice(["error", "warning", "info"]),
            f"p{rng.randrange(50)}.md",
            rng.choice([None, *range(1, 30)]),
            f"message {rng.randrange(5)}",
        )
        for _ in range(3000)
    ]
    tally = FindingTally(keep)
    for finding in findings:
        tally.add(finding)
    assert tally.summary(50) == summarise(findings, 50)
    ordered = sort_findings(findings)
    for rule in rules:
        of_rule = [f for f in ordered if f.rule == rule]
        assert tally.first(rule) == of_rule[:keep]
        assert tally.severity_of(rule) == of_rule[0].severity
