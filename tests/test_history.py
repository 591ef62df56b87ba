"""Supersede history: the three-versions-of-one-decision test (MEMORY-FORMAT.md section 6)
in both forms, through the API, the CLI in-process and a real ``python -m memtui`` subprocess;
plus the graph's odd cases (broken refs, self refs, cycles, forks, expiry, contradictions).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys

import pytest

from memtui.field.field import Field
from memtui.field.history import CURRENT, SUPERSEDED, History
from tests.helpers_field import make_field, page, run_cli, run_cli_json

JSON_KEYS = {"path", "id", "status", "valid_from", "valid_to", "sources", "supersedes"}

FRONTMATTER_FORM = [
    {
        "path": "decisions/public-api-rest.md",
        "id": "mem_4kq2",
        "status": "superseded",
        "valid_from": "2026-01-14",
        "valid_to": "2026-04-03",
        "sources": ["sessions/2026-01-14-kickoff.md#L16-L18"],
        "supersedes": [],
    },
    {
        "path": "decisions/public-api-graphql.md",
        "id": "mem_7h2p",
        "status": "superseded",
        "valid_from": "2026-04-03",
        "valid_to": "2026-08-20",
        "sources": ["sessions/2026-04-03-arch-review.md#L13-L19"],
        "supersedes": ["mem_4kq2"],
    },
    {
        "path": "decisions/public-api-trpc.md",
        "id": "mem_9tx5",
        "status": "current",
        "valid_from": "2026-08-20",
        "valid_to": None,
        "sources": ["sessions/2026-08-20-planning.md#L13-L18", "sessions/2026-10-21-release-1-4.md#L14"],
        "supersedes": ["mem_7h2p"],
    },
]

INLINE_FORM = [
    {
        "path": "projects/harbor.md#L36",
        "id": None,
        "status": "superseded",
        "valid_from": "2026-01-14",
        "valid_to": "2026-04-03",
        "sources": ["kickoff 2026-01-14"],
        "supersedes": [],
    },
    {
        "path": "projects/harbor.md#L37",
        "id": None,
        "status": "superseded",
        "valid_from": "2026-04-03",
        "valid_to": "2026-08-20",
        "sources": ["arch review 2026-04-03"],
        "supersedes": ["projects/harbor.md#L36"],
    },
    {
        "path": "projects/harbor.md#L38",
        "id": None,
        "status": "current",
        "valid_from": "2026-08-20",
        "valid_to": None,
        "sources": ["planning 2026-08-20"],
        "supersedes": ["projects/harbor.md#L37"],
    },
]


def _core(entries: list[dict]) -> list[dict]:
    assert all(JSON_KEYS <= set(entry) for entry in entries)
    return [{key: entry[key] for key in JSON_KEYS} for entry in entries]


@pytest.fixture
def sample(sample_field) -> Field:
    return Field.load(sample_field, use_cache=False)


# --------------------------------------------------------------------------- the API


@pytest.mark.parametrize(
    "query",
    [
        "decision/public-api",
        "DECISION/PUBLIC-API",
        "decisions/public-api-graphql.md",
        "mem_9tx5",
        "Public API decision: REST",
    ],
)
def test_lookup_frontmatter_form(sample, query):
    (chain,) = sample.history.lookup(query)
    assert chain.name == "decision/public-api" and chain.form == "frontmatter"
    assert _core([v.to_json() for v in chain.versions]) == FRONTMATTER_FORM
    assert [v.title for v in chain.versions] == [
        "Public API decision: REST",
        "Public API decision: GraphQL",
        "Public API decision: tRPC",
    ]
    assert [v.title for v in chain.current] == ["Public API decision: tRPC"]
    assert chain.versions[0].superseded_by == ["mem_7h2p"]
    assert chain.versions[1].reason == "superseded by Public API decision: tRPC on 2026-08-20"


def test_lookup_inline_form(sample):
    chains = sample.history.lookup("projects/harbor.md")
    names = [c.name for c in chains]
    assert names == ["project/harbor", "projects/harbor.md#Public API", "projects/harbor.md#Release cadence"]
    chain = chains[1]
    assert chain.form == "inline"
    assert _core([v.to_json() for v in chain.versions]) == INLINE_FORM
    assert [v.value for v in chain.versions] == ["REST", "GraphQL", "tRPC"]
    assert [v.tag for v in chain.versions] == ["stated"] * 3
    assert [v.title for v in chain.current] == ["Public API: tRPC"]


def test_lookup_one_inline_chain_by_its_name(sample):
    (chain,) = sample.history.lookup("projects/harbor.md#Public API")
    assert chain.name == "projects/harbor.md#Public API"
    (chain,) = sample.history.lookup("harbor#release-cadence")
    assert chain.name == "projects/harbor.md#Release cadence"


def test_lookup_by_words_finds_both_forms(sample):
    chains = sample.history.lookup("public api")
    assert [(c.name, c.form) for c in chains] == [
        ("decision/public-api", "frontmatter"),
        ("projects/harbor.md#Public API", "inline"),
    ]
    for chain in chains:
        assert [v.status for v in chain.versions] == [SUPERSEDED, SUPERSEDED, CURRENT]


def test_lookup_by_glob_and_no_match(sample):
    names = [c.name for c in sample.history.lookup("decision/*")]
    assert "decision/public-api" in names and all(n.startswith("decision/") for n in names)
    assert sample.history.lookup("no such thing at all") == []


@pytest.mark.parametrize(
    "day, frontmatter, inline",
    [
        ("2025-12-31", None, None),
        ("2026-01-14", "Public API decision: REST", "Public API: REST"),
        ("2026-04-02", "Public API decision: REST", "Public API: REST"),
        ("2026-04-03", "Public API decision: GraphQL", "Public API: GraphQL"),
        ("2026-08-19", "Public API decision: GraphQL", "Public API: GraphQL"),
        ("2026-08-20", "Public API decision: tRPC", "Public API: tRPC"),
        ("2030-01-01", "Public API decision: tRPC", "Public API: tRPC"),
    ],
)
def test_as_of_gives_the_version_valid_on_a_day(sample, day, frontmatter, inline):
    chains = sample.history.lookup("public api")
    held = {chain.form: (version.title if version else None) for chain, version in sample.history.as_of(day, chains)}
    assert held == {"frontmatter": frontmatter, "inline": inline}


def test_as_of_over_every_chain(sample):
    held = {chain.name: version for chain, version in sample.history.as_of("2026-05-01")}
    assert held["decision/public-api"].title == "Public API decision: GraphQL"
    assert held["projects/harbor.md#Public API"].value == "GraphQL"
    assert held["projects/harbor.md#Release cadence"].value == "weekly, Tuesdays"


def test_status_of_every_sample_page(sample):
    history = sample.history
    superseded = sorted(p for p, s in history.status.items() if s == SUPERSEDED)
    assert "decisions/public-api-rest.md" in superseded and "decisions/public-api-graphql.md" in superseded
    assert history.is_current("decisions/public-api-trpc.md")
    assert [(b.path, b.target, b.line) for b in history.broken] == [
        ("decisions/release-cadence-biweekly.md", "mem_1wk8", 16)
    ]
    assert history.cycles == [] and history.self_refs == [] and history.superseded_twice == {}
    assert history.contradictions == [
        (
            "preference/meeting-times",
            "preference",
            ["notes/meeting-times-afternoons.md", "notes/meeting-times-mornings.md"],
        )
    ]


# --------------------------------------------------------------------------- the graph's odd cases


def _field(tmp_path, pages):
    return Field.load(make_field(tmp_path / "f", pages), use_cache=False)


def test_supersede_edges_order_versions_even_against_their_dates(tmp_path):
    field = _field(
        tmp_path,
        {
            "a.md": page("id: a\nsubject: s\nvalid_from: 2026-05-01"),
            "b.md": page("id: b\nsubject: s\nvalid_from: 2026-01-01\nsupersedes: [a]"),  # wrong date, edge wins
            "c.md": page("id: c\nsubject: s\nvalid_from: 2026-03-01\nsupersedes: b"),  # a bare string works
        },
    )
    (chain,) = field.history.lookup("s")
    assert [v.path for v in chain.versions] == ["a.md", "b.md", "c.md"]
    assert [v.status for v in chain.versions] == [SUPERSEDED, SUPERSEDED, CURRENT]


def test_supersedes_by_path_stem_and_uuid(tmp_path):
    field = _field(
        tmp_path,
        {
            "old/one.md": page("uuid: 11111111-2222-3333-4444-555555555555"),
            "old/two.md": "# two\n",
            "old/three.md": "# three\n",
            "new.md": page("supersedes:\n  - 11111111-2222-3333-4444-555555555555\n  - two\n  - old/three.md"),
        },
    )
    assert field.history.replaces["new.md"] == ["old/one.md", "old/two.md", "old/three.md"]
    assert [field.history.status[p] for p in ("old/one.md", "old/two.md", "old/three.md", "new.md")] == [
        SUPERSEDED,
        SUPERSEDED,
        SUPERSEDED,
        CURRENT,
    ]
    (chain,) = field.history.lookup("new.md")
    assert len(chain.versions) == 4 and chain.versions[-1].path == "new.md"


def test_references_with_a_remark_or_a_section_resolve(tmp_path):
    """Forms seen in real vaults: a wikilink followed by a remark, and a page's section
    written with §. Both name an existing page: no supersedes-broken, the edge holds."""
    field = _field(
        tmp_path,
        {
            "a/old2.md": page('status: superseded\nsuperseded_by: "[[new2]] (two-view design; merged later)"'),
            "a/new2.md": "# new2\n",
            "docs/BACKLOG.md": "# Backlog\n\n## B2\n",
            "docs/specs/b2-design.md": page("supersedes: BACKLOG.md § B2"),
            "a/gone.md": page('superseded_by: "[[nowhere]] (remark)"'),
        },
    )
    history = field.history
    assert history.replaced_by["a/old2.md"] == ["a/new2.md"]
    assert history.replaced_by["docs/BACKLOG.md"] == ["docs/specs/b2-design.md"]
    assert [(b.path, b.target) for b in history.broken] == [("a/gone.md", "nowhere")]


def test_broken_self_and_cyclic_references(tmp_path):
    field = _field(
        tmp_path,
        {
            "broken.md": page("id: br\nsupersedes: [nope, '']"),
            "self.md": page("id: me\nsupersedes: [me]"),
            "x.md": page("id: x\nsubject: loop\nsupersedes: [y]"),
            "y.md": page("id: y\nsubject: loop\nsupersedes: [z]"),
            "z.md": page("id: z\nsubject: loop\nsupersedes: [x]"),
        },
    )
    history = field.history
    assert [(b.path, b.target) for b in history.broken] == [("broken.md", "nope"), ("broken.md", "")]
    assert history.self_refs == ["self.md"]
    assert history.status["self.md"] == CURRENT
    assert [sorted(c) for c in history.cycles] == [["x.md", "y.md", "z.md"]]
    (chain,) = history.lookup("loop")  # a cycle still gives every version, never hangs
    assert sorted(v.path for v in chain.versions) == ["x.md", "y.md", "z.md"]
    assert chain.current == []


def test_one_version_superseded_by_two_pages(tmp_path):
    field = _field(
        tmp_path,
        {
            "old.md": page("id: old\nsubject: s"),
            "new1.md": page("subject: s\nsupersedes: [old]"),
            "new2.md": page("subject: s\nsupersedes: [old]"),
        },
    )
    assert field.history.superseded_twice == {"old.md": ["new1.md", "new2.md"]}
    (chain,) = field.history.lookup("s")
    assert len(chain.current) == 2


def test_valid_to_in_the_past_expires_a_page(tmp_path):
    root = make_field(
        tmp_path / "f",
        {
            "trial.md": page("subject: vendor/trial\nvalid_from: 2026-07-01\nvalid_to: 2026-09-30"),
            "open.md": page("subject: vendor/other\nvalid_from: 2026-07-01\nvalid_to: null"),
        },
    )
    field = Field.load(root, use_cache=False)
    before = History(field, today=dt.date(2026, 9, 29))
    after = History(field, today=dt.date(2026, 9, 30))
    assert before.status["trial.md"] == CURRENT
    assert after.status["trial.md"] == SUPERSEDED
    assert after.page_version("trial.md").reason == "expired 2026-09-30"
    assert after.status["open.md"] == CURRENT


def test_contradictions_need_same_subject_and_kind_and_both_current(tmp_path):
    field = _field(
        tmp_path,
        {
            "m.md": page("subject: Pref/Meetings\nkind: preference"),
            "a.md": page("subject: pref/meetings \nkind: preference"),
            "other-kind.md": page("subject: pref/meetings\nkind: episodic"),
            "old.md": page("id: old\nsubject: pref/x\nkind: preference"),
            "new.md": page("subject: pref/x\nkind: preference\nsupersedes: [old]"),
        },
    )
    # Subjects compare without case; the first page (by path) names the group.
    assert field.history.contradictions == [("pref/meetings", "preference", ["a.md", "m.md"])]


def test_inline_history_in_a_crlf_page_without_dates(tmp_path):
    text = "- ~~Owner: Dana [stated]~~\r\n- Owner: Luis [stated]\r\n"
    field = _field(tmp_path, {"p.md": text})
    (chain,) = field.history.lookup("p.md")
    assert [(v.value, v.status, v.valid_from, v.valid_to) for v in chain.versions] == [
        ("Dana", SUPERSEDED, None, None),
        ("Luis", CURRENT, None, None),
    ]
    assert chain.versions[0].reason == "superseded (struck through)"
    assert chain.as_of("2026-01-01") is None  # no dates: nothing can be said to hold


def test_two_live_lines_for_one_key_are_both_current(tmp_path, capsys):
    text = (
        "- ~~Owner: Dana [stated] (kickoff 2026-01-14)~~ superseded 2026-03-01\n"
        "- Owner: Luis [stated] (review 2026-03-01)\n"
        "- Owner: Priya [inferred] (chat 2026-03-05)\n"
    )
    root = make_field(tmp_path / "f", {"p.md": text})
    (chain,) = Field.load(root, use_cache=False).history.lookup("p.md#Owner")
    assert [(v.value, v.status, v.supersedes) for v in chain.versions] == [
        ("Dana", SUPERSEDED, []),
        ("Luis", CURRENT, ["p.md#L1"]),
        ("Priya", CURRENT, ["p.md#L1"]),
    ]
    assert chain.versions[0].superseded_by == ["p.md#L2", "p.md#L3"]
    code, out, _ = run_cli(["history", root, "p.md#Owner"], capsys)
    assert code == 0 and "2 versions are current at once: a contradiction" in out


def test_history_is_rebuilt_after_a_change(tmp_path):
    root = make_field(tmp_path / "f", {"a.md": page("id: a\nsubject: s"), "b.md": page("subject: s")})
    field = Field.load(root, use_cache=False)
    assert field.history.status["a.md"] == CURRENT
    (root / "b.md").write_text(page("subject: s\nsupersedes: [a]"))
    field.refresh_page("b.md")
    assert field.history.status["a.md"] == SUPERSEDED


# --------------------------------------------------------------------------- the CLI


def test_cli_history_json_frontmatter_form(sample_field, capsys):
    code, data, err = run_cli_json(["history", sample_field, "decision/public-api"], capsys)
    assert code == 0 and err == ""
    assert _core(data) == FRONTMATTER_FORM


def test_cli_history_json_inline_form(sample_field, capsys):
    code, data, _ = run_cli_json(["history", sample_field, "projects/harbor.md#Public API"], capsys)
    assert code == 0
    assert _core(data) == INLINE_FORM


def test_cli_history_json_page_gives_every_chain_oldest_first(sample_field, capsys):
    code, data, _ = run_cli_json(["history", sample_field, "projects/harbor.md"], capsys)
    assert code == 0
    public_api = [e for e in data if e.get("chain") == "projects/harbor.md#Public API"]
    assert _core(public_api) == INLINE_FORM


def test_cli_history_text_names_current_and_superseded_with_dates_and_sources(sample_field, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    code, out, err = run_cli(["history", sample_field, "public api"], capsys)
    assert code == 0 and err == ""
    lines = [line for line in out.splitlines() if "Public API" in line and ("current" in line or "superseded" in line)]
    assert len(lines) == 6
    rest, graphql, trpc = lines[0], lines[1], lines[2]
    assert "superseded" in rest and "2026-01-14 → 2026-04-03" in rest and "kickoff.md#L16-L18" in rest
    assert "superseded" in graphql and "2026-04-03 → 2026-08-20" in graphql and "arch-review.md" in graphql
    assert "current" in trpc and "tRPC" in trpc and "2026-08-20 → now" in trpc and "planning.md" in trpc
    assert "superseded" in lines[3] and "REST" in lines[3] and "kickoff 2026-01-14" in lines[3]
    assert "current" in lines[5] and "tRPC" in lines[5] and "planning 2026-08-20" in lines[5]
    assert out.index("decision/public-api") < out.index("projects/harbor.md#Public API")


def test_cli_history_as_of(sample_field, capsys):
    code, data, _ = run_cli_json(["history", sample_field, "public api", "--as-of", "2026-05-01"], capsys)
    assert code == 0
    assert [(e["path"], e["status"]) for e in data] == [
        ("decisions/public-api-graphql.md", "superseded"),
        ("projects/harbor.md#L37", "superseded"),
    ]
    code, out, _ = run_cli(["history", sample_field, "public api", "--as-of", "2025-01-01"], capsys)
    assert code == 0 and "nothing recorded yet" in out


def test_cli_history_bad_usage_and_no_match(sample_field, tmp_path, capsys):
    with pytest.raises(SystemExit) as bad_date:
        run_cli(["history", sample_field, "public api", "--as-of", "2026-13-01"], capsys)
    assert bad_date.value.code == 2
    assert "not a date" in capsys.readouterr().err
    code, out, err = run_cli(["history", sample_field, "nothing like this"], capsys)
    assert code == 1 and out == ""
    assert "no page or subject matches" in err and "hint:" in err
    code, out, err = run_cli(["history", tmp_path / "missing", "x"], capsys)
    assert code == 2 and "no such folder" in err and "Traceback" not in err


def test_cli_history_shows_hostile_subjects_inertly(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    root = make_field(
        tmp_path / "f",
        {
            "a.md": page('id: a\nsubject: "evil\\e]0;pwned\\a\\u202e"\ntitle: "[bold red]A[/]"'),
            "b.md": page('subject: "evil\\e]0;pwned\\a\\u202e"\nsupersedes: [a]\ntitle: "\\e[2JB"'),
        },
    )
    code, out, _ = run_cli(["history", root, "a.md"], capsys)
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "evil␛]0;pwned␇⟨RLO⟩" in out and "[bold red]A[/]" in out
    code, out, _ = run_cli(["history", root, "a.md", "--as-of", "2030-01-01"], capsys)
    assert "\x1b" not in out


def test_python_m_memtui_history_in_a_subprocess(sample_field):
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    result = subprocess.run(
        [sys.executable, "-m", "memtui", "history", str(sample_field), "public api", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert _core([e for e in data if e["form"] == "frontmatter"]) == FRONTMATTER_FORM
    assert _core([e for e in data if e["form"] == "inline"]) == INLINE_FORM
