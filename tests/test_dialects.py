"""Memory dialects: each format is detected with its evidence and read truthfully into memtui's model.

Every test opens a field the way every surface does (``memtui.dialects.open``),
or runs the real CLI; the folders are written by ``tests/fixtures_dialects.py``.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest

from memtui.cli import main
from memtui.dialects.open import open_field
from memtui.dialects.report import field_report
from memtui.field.checks import run_checks
from memtui.field.history import CURRENT, STALE, SUPERSEDED
from memtui.index import IndexService
from tests import fixtures_dialects as fx
from tests.helpers_field import make_field


def _check_json(root: Path, capsys, *extra: str) -> tuple[int, dict]:
    code = main(["check", str(root), "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


def _dialects(summary: dict) -> dict[str, dict]:
    return {f"{d['name']}@{d['root']}": d for d in summary["dialects"]}


# --------------------------------------------------------------------------- detection and the report


def test_check_names_the_dialects_it_applied_with_evidence(tmp_path, capsys):
    root = fx.sidecar_store(tmp_path / "repo")
    code, out = _check_json(root, capsys)
    found = _dialects(out["summary"])
    store = found["sidecar-store@.memory"]
    assert store["pages"] == 5 and any("config.json" in e for e in store["evidence"])
    assert found["claude-code@."]["evidence"] == ["CLAUDE.md"]
    assert found["markdown@."]["pages"] == 1  # README.md: plain notes, memtui's own rules not imposed
    assert out["summary"]["included_hidden"] == [".memory/memory/"]
    assert code == 0
    main(["check", str(root)])
    text = capsys.readouterr().out
    assert "read as JSON-sidecar store (aictx) in .memory/: 5 pages" in " ".join(text.split())


def test_dialect_can_be_forced(tmp_path, capsys):
    root = fx.basic_memory(tmp_path / "bm")
    _, out = _check_json(root, capsys, "--dialect", "memtui")
    assert [d["name"] for d in out["summary"]["dialects"]] == ["memtui"]
    assert out["summary"]["forced"] == "memtui"
    assert "forced with --dialect" in out["summary"]["dialects"][0]["evidence"]
    with pytest.raises(SystemExit) as refused:
        main(["check", str(root), "--dialect", "nonsense"])
    assert refused.value.code == 2
    assert "invalid choice: 'nonsense'" in capsys.readouterr().err


def test_skipped_hidden_folders_are_named_with_the_command_that_opens_them(tmp_path, capsys):
    root = fx.claude_project(tmp_path / "repo")
    _, out = _check_json(root, capsys)
    skipped = {s["path"]: s for s in out["summary"]["skipped"]}
    assert set(skipped) == {".vscode"}
    assert skipped[".vscode"]["what"] == "hidden folder with 1 Markdown file"
    assert skipped[".vscode"]["command"] == f"memtui {root / '.vscode'}"
    field = open_field(root)
    # Claude Code's own project memory in .claude/ is read, its settings are not pages.
    assert {".claude/CLAUDE.md", ".claude/rules/testing.md"} <= set(field.pages)
    assert ".vscode/notes.md" not in field.pages


# --------------------------------------------------------------------------- trust is evidence


def test_no_review_record_is_unknown_never_reviewed(tmp_path, capsys):
    root = fx.claude_auto_memory(tmp_path / "cc")
    field = open_field(root)
    assert {field.trust(p) for p in field.pages} == {"unknown"}
    _, out = _check_json(root, capsys)
    assert out["summary"]["trust"] == {"reviewed": 0, "unreviewed": 0, "quarantined": 0, "unknown": 4}
    main(["check", str(root)])
    assert "4 with no review record" in capsys.readouterr().out


def test_a_sidecar_saying_the_content_came_from_outside_quarantines_it(tmp_path):
    field = open_field(fx.sidecar_store(tmp_path / "repo"))
    assert field.trust(".memory/memory/questions/retry-owner.md") == "quarantined"
    assert field.trust(".memory/memory/decisions/public-api-trpc.md") == "unknown"


# --------------------------------------------------------------------------- Claude Code


def test_claude_code_imports_are_checked_and_code_is_not_an_import(tmp_path):
    field = open_field(fx.claude_project(tmp_path / "repo"))
    info = field.pages["CLAUDE.md"]
    assert info.dialect == "claude-code" and info.role == "instructions"
    targets = [t for t, _ in info.norm.imports]
    assert "docs/build.md" in targets and "docs/conventions.md" in targets
    assert not any("not-an-import" in t for t in targets)
    found = [(f.rule, f.path, f.line, f.message) for f in run_checks(field)]
    assert found == [("import-broken", "CLAUDE.md", 4, "@docs/conventions.md: no such file")]


def test_auto_memory_topic_files_read_name_description_and_type(tmp_path):
    field = open_field(fx.claude_auto_memory(tmp_path / "cc"))
    topic = field.pages["memory/deploy-windows.md"]
    assert (topic.title, topic.kind, topic.description) == (
        "Deploy windows",
        "feedback",
        "Ship on Tuesday and Thursday mornings",
    )
    assert field.pages["memory/staging.md"].kind == "project"  # type under metadata:
    assert field.pages["memory/MEMORY.md"].role == "index"
    assert run_checks(field) == []  # no false error: the 15,000-character cap is not Claude Code's
    assert field.resolve("deploy-windows.md", near="memory/MEMORY.md").path == "memory/deploy-windows.md"


def test_a_long_auto_memory_index_says_where_the_agent_stops_reading(tmp_path):
    field = open_field(fx.claude_auto_memory(tmp_path / "cc", index_lines=260))
    index = field.pages["memory/MEMORY.md"]
    view = index.norm.agent_view
    assert (view["lines"], view["ends_at"]) == (260, 200)
    assert [target for target, _ in view["pointers"]] == ["deploy-windows.md", "user-role.md", "staging.md"]
    (finding,) = [f for f in run_checks(field) if f.rule == "claude-memory-truncated"]
    assert finding.line == 201 and "lines 201-260 (60 of 260) never reach a session" in finding.message


def test_the_page_view_marks_where_claude_code_stops_loading(tmp_path):
    from memtui.field.page import parse_bytes
    from memtui.tui.widgets.page_body import BodyRows

    root = fx.claude_auto_memory(tmp_path / "cc", index_lines=230)
    data = (root / "memory" / "MEMORY.md").read_bytes()
    rows = BodyRows(parse_bytes("memory/MEMORY.md", data), {}, fact_page=False, agent_view_ends=200)
    marker = [row for row in range(len(rows)) if "agent's view ends here" in rows.content(row).plain]
    assert len(marker) == 1 and "lines 1-200" in rows.content(marker[0]).plain
    assert rows.row_of(201) == rows.row_of(200) + 2 == marker[0] + 1  # the marker sits between lines 200 and 201
    assert rows.line_of(marker[0]) is None and rows.gutter(marker[0]).plain.strip() == "✂"


# --------------------------------------------------------------------------- OpenClaw


def test_openclaw_workspace_roles_daily_logs_and_template_pointers(tmp_path, capsys):
    root = fx.openclaw_workspace(tmp_path / "ws")
    field = open_field(root)
    assert field.pages["SOUL.md"].role == "instructions"
    assert field.pages["USER.md"].role == "memory"
    assert field.pages["skills/backup/SKILL.md"].role == "instructions"
    daily = field.pages["memory/2026-11-02.md"]
    assert (daily.role, daily.kind, daily.created, daily.updated) == ("log", "episodic", "2026-11-02", "2026-11-02")
    # memory/events/YYYY-MM-DD.md is a pattern, not a broken pointer: a healthy workspace exits 0.
    code, out = _check_json(root, capsys)
    assert code == 0 and out["findings"] == []


def test_openclaw_memory_keeps_its_15000_character_cap(tmp_path):
    field = open_field(fx.openclaw_workspace(tmp_path / "ws", memory_chars=16_000))
    assert [f.rule for f in run_checks(field)] == ["memory-too-long"]


# --------------------------------------------------------------------------- JSON-sidecar stores


def test_sidecar_status_chain_title_kind_dates_and_origin(tmp_path):
    field = open_field(fx.sidecar_store(tmp_path / "repo"))
    base = ".memory/memory/"
    status = field.history.status
    assert status[base + "decisions/public-api-rest.md"] == SUPERSEDED
    assert status[base + "decisions/public-api-graphql.md"] == SUPERSEDED
    assert status[base + "decisions/public-api-trpc.md"] == CURRENT
    assert status[base + "gotchas/build-cache.md"] == STALE
    assert status[base + "questions/retry-owner.md"] == CURRENT  # open is not stale
    trpc = field.pages[base + "decisions/public-api-trpc.md"]
    assert (trpc.title, trpc.kind, trpc.created, trpc.updated, trpc.origin) == (
        "Public API: tRPC",
        "decision",
        "2026-08-20T10:00:00+00:00",
        "2026-08-20T10:00:00+00:00",
        "user",
    )
    # [[decision.public-api-graphql]] names an object by id.
    assert field.resolve("decision.public-api-graphql", near=trpc.path).path == base + "decisions/public-api-graphql.md"
    assert [f.rule for f in run_checks(field)] == []


def test_three_versions_in_a_sidecar_store(tmp_path, capsys):
    root = fx.sidecar_store(tmp_path / "repo")
    assert main(["history", str(root), "decision.public-api-trpc", "--json"]) == 0
    versions = json.loads(capsys.readouterr().out)
    assert [(v["title"], v["status"]) for v in versions] == [
        ("Public API: REST", "superseded"),
        ("Public API: GraphQL", "superseded"),
        ("Public API: tRPC", "current"),
    ]
    assert versions[0]["events"][1]["event"] == "memory.superseded"
    assert versions[0]["events"][1]["reason"] == "the April review chose GraphQL"


def test_a_body_edited_behind_the_stores_back_is_reported(tmp_path):
    root = fx.sidecar_store(tmp_path / "repo")
    page = root / ".memory/memory/decisions/public-api-trpc.md"
    page.write_text(page.read_text() + "An agent added this line.\n")
    found = [(f.rule, f.path) for f in run_checks(open_field(root))]
    assert found == [("sidecar-hash-mismatch", ".memory/memory/decisions/public-api-trpc.md")]


def test_a_changed_sidecar_alone_changes_the_page(tmp_path):
    root = fx.sidecar_store(tmp_path / "repo")
    field = open_field(root)  # writes the page cache
    side = root / ".memory/memory/decisions/public-api-trpc.json"
    data = json.loads(side.read_text())
    data["status"] = "stale"
    side.write_text(json.dumps(data))
    # The page's own bytes did not change: the sidecar's size and mtime tell.
    again = open_field(root)
    assert again.history.status[".memory/memory/decisions/public-api-trpc.md"] == STALE
    assert field.refresh_page(".memory/memory/decisions/public-api-trpc.json") == "changed"
    assert field.history.status[".memory/memory/decisions/public-api-trpc.md"] == STALE


def test_search_sees_sidecar_status_and_ranks_current_first(tmp_path):
    root = fx.sidecar_store(tmp_path / "repo")
    with IndexService(root) as svc:
        svc.open()
        hits = svc.search("public API")
        assert [(h.title, h.status, h.trust) for h in hits][:3] == [
            ("Public API: tRPC", "current", "unknown"),
            ("Public API: GraphQL", "superseded", "unknown"),
            ("Public API: REST", "superseded", "unknown"),
        ]
        assert [h.title for h in svc.search("status:stale")] == ["Clear the build cache after a Node upgrade"]
        assert {h.trust for h in svc.search("trust:unknown status:current")} == {"unknown"}
        assert [h.title for h in svc.search("trust:quarantined")] == ["Who owns the retry queue?"]


# --------------------------------------------------------------------------- Obsidian-style vaults


def test_obsidian_history_from_frontmatter_wikilinks(tmp_path, capsys):
    root = fx.obsidian_vault(tmp_path / "vault")
    field = open_field(root)
    status = field.history.status
    assert status["Notes/Decisions/api-rest.md"] == SUPERSEDED
    assert status["Notes/Decisions/api-graphql.md"] == SUPERSEDED
    assert status["Notes/Decisions/api-trpc.md"] == CURRENT
    assert status["Notes/Patterns/old-retry.md"] == STALE  # archived: marked, not replaced
    assert field.pages["Notes/Decisions/api-trpc.md"].kind == "decision"
    assert main(["history", str(root), "Notes/Decisions/api-trpc.md", "--json"]) == 0
    versions = json.loads(capsys.readouterr().out)
    assert [(v["title"], v["status"]) for v in versions] == [
        ("Public API: REST", "superseded"),
        ("Public API: GraphQL", "superseded"),
        ("Public API: tRPC", "current"),
    ]


def test_obsidian_links_embeds_code_and_unicode(tmp_path):
    field = open_field(fx.obsidian_vault(tmp_path / "vault"))
    found = sorted((f.rule, f.path, f.message) for f in run_checks(field))
    # Only the link to a page that does not exist; embeds, aliases, headings, blocks, NFD names resolve,
    # [[links]] in code are examples.
    assert found == [("link-broken", "Notes/index.md", "[[不存在的页面]] matches no page")]
    assert field.resolve("Café", near="Notes/index.md").path == unicodedata.normalize("NFD", "Notes/Café.md")
    assert field.resolve("Obsidian 官方同步简介").path == "Docs/Obsidian 官方同步简介.md"
    assert field.resolve("Meeting", near="Notes/index.md").path == "Notes/Meeting.md"  # the closest wins
    assert field.resolve("Meeting", near="Archive/x.md").path == "Archive/Meeting.md"
    assert field.resolve("API decision").path == "Notes/Decisions/api-trpc.md"
    assert field.resolve_file("icon.svg#icon", near="Notes/Decisions/api-trpc.md") == "attachments/icon.svg"


def test_a_vault_inside_a_bigger_vault_resolves_vault_root_paths(tmp_path):
    root = fx.exomem_knowledge_base(tmp_path / "vault")
    field = open_field(root)
    report = field_report(field)
    (obsidian,) = [a for a, _ in report.dialects if a.name == "obsidian"]
    assert obsidian.params["link_prefixes"] == ["Knowledge Base/"]
    assert field.history.status["Notes/Patterns/retry-fixed.md"] == SUPERSEDED
    assert field.history.status["Notes/Patterns/retry-jitter.md"] == CURRENT
    assert run_checks(field) == []  # no false supersedes-broken, no false link-broken


def test_a_missing_non_ascii_link_is_never_resolved_by_a_slug(tmp_path):
    root = make_field(
        tmp_path / "f",
        {
            "Obsidian 官方同步简介.md": "# 简介\n",
            "obsidian.md": "# Obsidian\n",
            "index.md": "- [[Obsidian 官方同步]]\n- [[Obsidian 官方同步简介]]\n",
        },
    )
    field = open_field(root)
    assert field.resolve("Obsidian 官方同步") is None
    assert [f.message for f in run_checks(field)] == ["[[Obsidian 官方同步]] matches no page"]


# --------------------------------------------------------------------------- basic-memory


def test_basic_memory_categories_are_not_source_tags(tmp_path):
    field = open_field(fx.basic_memory(tmp_path / "bm"))
    info = field.pages["notes/auth-design.md"]
    assert info.dialect == "basic-memory"
    assert info.norm.observations == {"decision": 1, "risk": 1}
    assert sum(info.tag_counts.values()) == 0
    assert field.resolve("authentication-design").path == "notes/auth-design.md"  # the permalink
    assert run_checks(field) == []  # no untagged-claim in notes/: the format has no source tags


# --------------------------------------------------------------------------- memtui.toml


def test_rule_settings_change_severities_switch_rules_off_and_say_so(tmp_path, capsys):
    long_page = "---\ntitle: Long\n---\n" + "A sentence that states something clearly. [observed]\n" * 300
    root = make_field(
        tmp_path / "f",
        {
            "notes/long.md": long_page,
            "notes/links.md": "See [[Nowhere]]. [observed]\n",
            "templates/t.md": "See [[Template Target]]. [observed]\n",
            "memtui.toml": "ignore = ['templates/**']\n[rules]\npage-size = 'off'\nlink-broken = 'info'\n",
        },
    )
    code, out = _check_json(root, capsys)
    assert [(f["rule"], f["severity"], f["path"]) for f in out["findings"]] == [
        ("link-broken", "info", "notes/links.md")
    ]
    settings = out["summary"]["settings"]
    assert settings["changes"] == ["page-size: off", "link-broken: info"] and settings["ignore"] == ["templates/**"]
    main(["check", str(root)])
    assert "2 rules changed by memtui.toml" in capsys.readouterr().out


def test_a_broken_memtui_toml_changes_nothing_and_is_reported(tmp_path):
    root = make_field(tmp_path / "f", {"memtui.toml": "[rules\npage-size = 'off'\n", "notes/a.md": "A. [observed]\n"})
    found = run_checks(open_field(root))
    assert [f.rule for f in found] == ["settings-invalid"]


# --------------------------------------------------------------------------- the TUI


async def test_overview_counts_no_review_record_apart_and_names_the_formats(tmp_path):
    from tests.helpers_tui import make_app, rendered_text, wait_ready

    root = fx.sidecar_store(tmp_path / "repo")
    app = make_app(root)
    async with app.run_test(size=(120, 50)) as pilot:
        await wait_ready(app, pilot)
        await pilot.press("3")
        await pilot.pause()
        pages = rendered_text(app.screen.query_one("#ov-pages"))
        read = rendered_text(app.screen.query_one("#ov-read"))
    assert "no review record" in pages and "✓ reviewed" in pages
    assert "JSON-sidecar store (aictx) in .memory/" in read
    assert "not read: .github/" in read and "memtui" in read


@pytest.mark.parametrize("builder", [fx.claude_auto_memory, fx.openclaw_workspace, fx.basic_memory, fx.obsidian_vault])
def test_no_false_error_on_a_healthy_field_of_each_format(builder, tmp_path, capsys):
    root = builder(tmp_path / "f")
    code, out = _check_json(root, capsys)
    errors = [f for f in out["findings"] if f["severity"] == "error"]
    assert errors == [] and code == 0


# --------------------------------------------------------------------------- found on real folders
# Each of these was a confident wrong answer on public memory folders (see the README's figures).


def test_a_status_with_words_after_it_still_counts(tmp_path):
    root = make_field(
        tmp_path / "adr",
        {
            "adr/0001-rest.md": "---\nstatus: superseded by [[0002-graphql|ADR 2]]\n---\n# Use REST\n",
            "adr/0002-graphql.md": "---\nlifecycle: Deprecated (2026-05)\n---\n# Use GraphQL\n",
        },
    )
    field = open_field(root)
    assert field.history.status["adr/0001-rest.md"] == SUPERSEDED
    assert field.history.replaced_by["adr/0001-rest.md"] == ["adr/0002-graphql.md"]
    assert field.history.status["adr/0002-graphql.md"] == STALE


def test_basic_memory_supersedes_relations_are_history(tmp_path):
    root = fx.basic_memory(tmp_path / "bm")
    make_field(
        root,
        {
            "notes/auth-v2.md": (
                "---\ntitle: Authentication v2\ntype: note\npermalink: auth-v2\n---\n# Authentication v2\n\n"
                "- [decision] Sessions move to signed cookies\n\n## Relations\n- supersedes [[Authentication Design]]\n"
            )
        },
    )
    field = open_field(root)
    assert field.history.status["notes/auth-design.md"] == SUPERSEDED
    assert field.history.status["notes/auth-v2.md"] == CURRENT


def test_frontmatter_that_does_not_parse_still_says_what_the_page_is(tmp_path):
    root = make_field(
        tmp_path / "f",
        {
            "notes/old.md": "---\ntitle: Deploys: the old way\nstatus: deprecated\nreviewed: true\n---\nBody.\n",
            "notes/index.md": "See [[Deploys: the old way]].\n",
        },
    )
    field = open_field(root)
    old = field.pages["notes/old.md"]
    assert (old.title, old.declared_status) == ("Deploys: the old way", "stale")
    assert field.history.status["notes/old.md"] == STALE
    assert field.trust("notes/old.md") == "unknown"  # review keys are never recovered from broken YAML
    assert {f.rule for f in run_checks(field)} == {"yaml-invalid"}  # the link resolves by the recovered title


def test_author_year_placeholders_and_prose_file_names_are_not_errors(tmp_path):
    root = fx.claude_auto_memory(tmp_path / "cc")
    make_field(
        root,
        {
            "memory/MEMORY.md": "# Index\n- [Deploy windows](deploy-windows.md)\n- In the other repo, prompt.md holds the prompt\n",
            "docs/draft.md": "Prior work [CITE: 2024] showed it.\n",
        },
    )
    assert [f for f in run_checks(open_field(root)) if f.severity == "error"] == []


def test_a_review_is_a_persons_a_date_alone_or_an_agent_reviewer_is_not(tmp_path):
    """Issue 41: ``reviewed: 2026-09-29`` with ``reviewed_by: audit:claude-code (background)``
    counted as a human review. A date alone, or a reviewer naming an agent, is an agent's mark."""
    pages = {
        "notes/date.md": "---\nreviewed: 2026-06-16\n---\nA fact. [stated]\n",
        "notes/agent.md": "---\nreviewed: 2026-09-29\nreviewed_by: audit:claude-code (background)\n---\nB. [stated]\n",
        "notes/bot.md": "---\nreviewed: true\nreviewed_by: dream-bot\n---\nC. [stated]\n",
        "notes/person.md": "---\nreviewed: 2026-06-16\nreviewed_by: maya\n---\nD. [stated]\n",
        "notes/flag.md": "---\nreviewed: true\n---\nE. [stated]\n",
    }
    field = open_field(make_field(tmp_path / "f", pages))
    assert {path: field.trust(path) for path in pages} == {
        "notes/date.md": "unreviewed",
        "notes/agent.md": "unreviewed",
        "notes/bot.md": "unreviewed",
        "notes/person.md": "reviewed",
        "notes/flag.md": "reviewed",
    }
    from memtui.field.trust import review_evidence

    evidence = review_evidence(field.pages["notes/agent.md"].meta)
    assert "reviewed by an agent (audit:claude-code (background))" in evidence


def test_claude_rules_with_unquoted_globs_are_read_as_claude_code_reads_them(tmp_path):
    root = make_field(
        tmp_path / "repo",
        {
            "CLAUDE.md": "# Project\n",
            ".claude/rules/md.md": "---\npaths: **/*.md\n---\n# Markdown\n\nWrap at 100.\n",
        },
    )
    field = open_field(root)
    assert field.pages[".claude/rules/md.md"].meta == {"paths": "**/*.md"}
    assert run_checks(field) == []
    alias_bomb = make_field(tmp_path / "bomb", {"a.md": "---\na: &x [1, 2]\nb: [*x, *x]\n---\nx\n"})
    assert [f.rule for f in run_checks(open_field(alias_bomb))] == ["yaml-alias"]  # anchors: still refused


def test_plain_links_to_files_and_escaped_pipes_in_tables(tmp_path):
    root = make_field(
        tmp_path / "vault",
        {
            ".obsidian/app.json": "{}",
            "notes/a.md": "See [[report.pdf]] and [[diagram.png|the diagram]].\n\n| pic |\n|---|\n| ![[diagram.png\\|800]] |\n",
            "files/report.pdf": b"%PDF-1.4",
            "files/diagram.png": b"\x89PNG",
        },
    )
    assert run_checks(open_field(root)) == []


def test_plain_notes_get_no_memtui_conventions(tmp_path):
    root = make_field(
        tmp_path / "notes",
        {
            "knowledge/topic.md": "A sentence that would be an untagged claim in memtui's format.\n",
            "memos/one.md": "---\nsubject: Quarterly numbers\n---\nBody of the memo.\n",
            "memos/two.md": "---\nsubject: Quarterly numbers\n---\nAnother memo, same e-mail subject.\n",
            "intro.md": "---\n\nA page that starts with a horizontal rule, and no frontmatter.\n",
        },
    )
    field = open_field(root)
    assert {info.dialect for info in field} == {"markdown"}
    assert run_checks(field) == []


def test_partly_read_hidden_folders_list_what_they_leave_out(tmp_path, capsys):
    root = make_field(
        tmp_path / "repo",
        {
            "CLAUDE.md": "# Project\n",
            ".claude/rules/style.md": "# Style\n",
            ".claude/commands/release.md": "# Release\n\nRun the release.\n",
        },
    )
    _, out = _check_json(root, capsys)
    assert out["summary"]["included_hidden"] == [".claude/rules/"]  # only paths that exist
    assert {s["path"]: s["what"] for s in out["summary"]["skipped"]} == {
        ".claude/commands": "Claude Code slash commands (instructions) with 1 Markdown file"
    }


def test_a_claude_code_folder_opened_directly(tmp_path):
    root = make_field(
        tmp_path / "claude-backup",
        {
            "CLAUDE.md": "# Everywhere\n\nAnswer briefly.\n",
            "rules/python.md": "# Python\n\nUse type hints.\n",
            "agents/reviewer.md": "---\nname: reviewer\n---\n# Reviewer\n",
            "agent-memory/reviewer/MEMORY.md": "# Reviewer memory\n- [Style](style.md)\n",
            "agent-memory/reviewer/style.md": fx.TOPIC.format(
                name="Style", description="style", kind="feedback", body="x"
            ),
            "projects/-home-me-app/memory/MEMORY.md": "# App\n",
        },
    )
    field = open_field(root)
    assert (field.pages["rules/python.md"].dialect, field.pages["rules/python.md"].kind) == ("claude-code", "rules")
    assert field.pages["agents/reviewer.md"].kind == "subagent"
    assert field.pages["agent-memory/reviewer/MEMORY.md"].role == "index"
    assert field.pages["agent-memory/reviewer/style.md"].kind == "feedback"
    assert field.pages["projects/-home-me-app/memory/MEMORY.md"].role == "index"


def test_an_older_aictx_store_name_is_read_at_a_repository_root(tmp_path):
    root = fx.sidecar_store(tmp_path / "repo", in_repository=False)
    repo = tmp_path / "outer"
    (repo / ".aictx").parent.mkdir(parents=True)
    root.rename(repo / ".aictx")
    make_field(repo, {"README.md": "# Outer\n"})
    field = open_field(repo)
    assert field.history.status[".aictx/memory/decisions/public-api-rest.md"] == SUPERSEDED


def test_a_vault_without_its_obsidian_folder_is_recognised_by_its_links(tmp_path):
    root = make_field(
        tmp_path / "docs",
        {f"page{n}.md": f"# Page {n}\n\nSee [[page{n + 1}]] and ![[img{n}.png]].\n" for n in range(6)},
    )
    field = open_field(root)
    assert {info.dialect for info in field} == {"obsidian"}


def test_openclaw_reply_tags_are_not_links(tmp_path):
    root = fx.openclaw_workspace(tmp_path / "ws")
    make_field(root, {"memory/2026-11-04.md": "# 2026-11-04\n\n[[reply_to_current]] Done, the backup ran.\n"})
    assert run_checks(open_field(root)) == []


def test_search_filters_read_the_dialect_as_the_field_does(tmp_path):
    root = fx.sidecar_store(tmp_path / "repo")
    with IndexService(root) as svc:
        svc.open()
        assert {h.title for h in svc.search("kind:decision")} == {
            "Public API: REST",
            "Public API: GraphQL",
            "Public API: tRPC",
        }
        assert {h.title for h in svc.search("origin:user")} == {"Public API: tRPC"}
        (hit,) = svc.search("tRPC kind:decision status:current")
        assert hit.id == "decision.public-api-trpc"
    memory = fx.claude_auto_memory(tmp_path / "cc")
    with IndexService(memory) as svc:
        svc.open()
        assert [h.title for h in svc.search("kind:feedback")] == ["Deploy windows"]
        assert [h.title for h in svc.search("Tuesday Thursday mornings")][:1] == ["Deploy windows"]  # description
