"""Small memory folders in the formats real tools write, for the dialect tests.

Every page here was written for these tests, in each tool's documented format;
none is copied from anyone's memory. Each builder writes into a folder and
returns it.
"""

from __future__ import annotations

import json
from pathlib import Path

from memtui.dialects.formats.sidecar_store import content_hash
from tests.helpers_field import make_field

# --------------------------------------------------------------------------- Claude Code


def claude_project(root: Path) -> Path:
    """A repository with Claude Code project memory: CLAUDE.md, .claude/ rules and imports."""
    return make_field(
        root,
        {
            "CLAUDE.md": (
                "# Harbor service\n\n"
                "Build with `make build`; see @docs/build.md for the details.\n"
                "Team conventions live in @docs/conventions.md (being written).\n"
                "Never import inside code: `@docs/not-an-import.md` is an example.\n\n"
                "```sh\n"
                "echo @docs/also-not-an-import.md\n"
                "```\n"
                "Ask @alice about deploys.\n"
            ),
            "docs/build.md": "# Build\n\nRun the build in a clean tree.\n",
            ".claude/CLAUDE.md": "# Local rules\n\nPrefer small pull requests.\n",
            ".claude/rules/testing.md": "---\npaths: ['src/**']\n---\n# Testing\n\nEvery fix gets a test.\n",
            ".claude/settings.json": "{}",
            ".vscode/notes.md": "# editor notes\n",
        },
    )


TOPIC = "---\nname: {name}\ndescription: {description}\ntype: {kind}\n---\n{body}\n"


def claude_auto_memory(root: Path, *, index_lines: int = 12) -> Path:
    """An auto-memory folder: MEMORY.md (an index) and topic files with name/description/type."""
    pointers = [
        "- [Deploy windows](deploy-windows.md): when we ship",
        "- [User role](user-role.md): who I work with",
        "- [Staging quirks](staging.md): what breaks",
    ]
    filler = [f"- note {n}: keep MEMORY.md short" for n in range(max(0, index_lines - len(pointers) - 1))]
    return make_field(
        root,
        {
            "memory/MEMORY.md": "# Memory index\n" + "\n".join(pointers + filler) + "\n",
            "memory/deploy-windows.md": TOPIC.format(
                name="Deploy windows",
                description="Ship on Tuesday and Thursday mornings",
                kind="feedback",
                body="Deploys go out Tuesday and Thursday before noon.\n\n**Why:** support is staffed then.",
            ),
            "memory/user-role.md": TOPIC.format(
                name="User role",
                description="The user leads the platform team",
                kind="user",
                body="The user leads platform and prefers short answers.",
            ),
            "memory/staging.md": (
                "---\nname: Staging quirks\ndescription: what breaks on staging\nmetadata:\n  type: project\n---\n"
                "Migrations on staging need the lock released first.\n"
            ),
        },
    )


# --------------------------------------------------------------------------- OpenClaw


def openclaw_workspace(root: Path, *, memory_chars: int = 0) -> Path:
    padding = ("\n- filler line to make MEMORY.md long " + "x" * 40) * (memory_chars // 80)
    return make_field(
        root,
        {
            "AGENTS.md": (
                "# AGENTS.md\n\n## Every session\n1. Read SOUL.md and USER.md\n"
                "2. Read memory/YYYY-MM-DD.md for today and yesterday\n"
                "3. Write what happened to memory/<date>.md\n"
            ),
            "SOUL.md": "# SOUL.md\n\nBe direct. Ask before deleting anything.\n",
            "USER.md": "# USER.md\n\n- Name: Rhea\n- Timezone: Europe/Lisbon\n",
            "IDENTITY.md": "# IDENTITY.md\n\n- Name: Kestrel\n- Vibe: calm\n",
            "TOOLS.md": "# TOOLS.md\n\nThe NAS is reachable at nas.local.\n",
            "HEARTBEAT.md": "# HEARTBEAT.md\n\n- Check the backup job every morning\n",
            "MEMORY.md": (
                "# MEMORY.md\n\n- Rhea prefers Portuguese on weekends\n"
                "- Event notes: memory/events/YYYY-MM-DD.md\n"
                "- Yesterday: memory/2026-11-02.md\n" + padding + "\n"
            ),
            "memory/2026-11-02.md": "# 2026-11-02\n\n- Moved the backup job to 06:00\n",
            "memory/2026-11-03.md": "# 2026-11-03\n\n- Backup ran at 06:00 without errors\n",
            "skills/backup/SKILL.md": "---\nname: backup\ndescription: run the backup\n---\n# Backup\n\nRun `restic backup`.\n",
        },
    )


# --------------------------------------------------------------------------- JSON-sidecar store (aictx)


def _sidecar(ident: str, kind: str, status: str, title: str, body: str, **extra) -> str:
    folder = {"decision": "decisions", "gotcha": "gotchas", "question": "questions", "feature": "features"}[kind]
    sidecar = {
        "id": ident,
        "type": kind,
        "status": status,
        "title": title,
        "body_path": f"memory/{folder}/{ident.split('.', 1)[1]}.md",
        "created_at": extra.pop("created_at", "2026-01-14T10:00:00+00:00"),
        "updated_at": extra.pop("updated_at", "2026-01-14T10:00:00+00:00"),
        "source": extra.pop("source", {"kind": "agent", "task": "planning"}),
        "tags": extra.pop("tags", []),
        "evidence": [],
        **extra,
    }
    sidecar["content_hash"] = content_hash(sidecar, body)
    return json.dumps(sidecar, indent=2)


def sidecar_store(root: Path, *, in_repository: bool = True) -> Path:
    """A repository whose memory is an aictx store in ``.memory/``: three versions of one decision."""
    prefix = ".memory/" if in_repository else ""
    bodies = {
        "rest": "The public API is REST, decided at the January kickoff.\n",
        "graphql": "The public API moves to GraphQL, decided at the April architecture review.\n",
        "trpc": "The public API moves to tRPC, decided at the August planning; see [[decision.public-api-graphql]].\n",
        "cache": "The build cache must be cleared after a Node upgrade.\n",
        "owner": "Who owns the retry queue?\n",
    }
    files = {
        f"{prefix}config.json": json.dumps({"version": 5, "project": {"id": "project.harbor", "name": "Harbor"}}),
        f"{prefix}memory/decisions/public-api-rest.md": bodies["rest"],
        f"{prefix}memory/decisions/public-api-rest.json": _sidecar(
            "decision.public-api-rest",
            "decision",
            "superseded",
            "Public API: REST",
            bodies["rest"],
            superseded_by="decision.public-api-graphql",
        ),
        f"{prefix}memory/decisions/public-api-graphql.md": bodies["graphql"],
        f"{prefix}memory/decisions/public-api-graphql.json": _sidecar(
            "decision.public-api-graphql",
            "decision",
            "superseded",
            "Public API: GraphQL",
            bodies["graphql"],
            superseded_by="decision.public-api-trpc",
            created_at="2026-04-03T10:00:00+00:00",
            updated_at="2026-08-20T10:00:00+00:00",
        ),
        f"{prefix}memory/decisions/public-api-trpc.md": bodies["trpc"],
        f"{prefix}memory/decisions/public-api-trpc.json": _sidecar(
            "decision.public-api-trpc",
            "decision",
            "active",
            "Public API: tRPC",
            bodies["trpc"],
            created_at="2026-08-20T10:00:00+00:00",
            updated_at="2026-08-20T10:00:00+00:00",
            source={"kind": "user"},
            tags=["api"],
        ),
        f"{prefix}memory/gotchas/build-cache.md": bodies["cache"],
        f"{prefix}memory/gotchas/build-cache.json": _sidecar(
            "gotcha.build-cache",
            "gotcha",
            "stale",
            "Clear the build cache after a Node upgrade",
            bodies["cache"],
        ),
        f"{prefix}memory/questions/retry-owner.md": bodies["owner"],
        f"{prefix}memory/questions/retry-owner.json": _sidecar(
            "question.retry-owner",
            "question",
            "open",
            "Who owns the retry queue?",
            bodies["owner"],
            origin={"kind": "url", "locator": "https://example.com/forum/thread"},
        ),
        f"{prefix}relations/decision-public-api-trpc-supersedes-decision-public-api-graphql.json": json.dumps(
            {
                "id": "rel.x",
                "from": "decision.public-api-trpc",
                "predicate": "supersedes",
                "to": "decision.public-api-graphql",
                "status": "active",
            }
        ),
        f"{prefix}events.jsonl": "\n".join(
            json.dumps(e)
            for e in [
                {
                    "actor": "agent",
                    "event": "memory.created",
                    "id": "decision.public-api-rest",
                    "timestamp": "2026-01-14T10:00:00+00:00",
                },
                {
                    "actor": "agent",
                    "event": "memory.superseded",
                    "id": "decision.public-api-rest",
                    "timestamp": "2026-04-03T10:00:00+00:00",
                    "reason": "the April review chose GraphQL",
                },
                {
                    "actor": "agent",
                    "event": "memory.marked_stale",
                    "id": "gotcha.build-cache",
                    "timestamp": "2026-09-01T10:00:00+00:00",
                    "reason": "fixed upstream",
                },
            ]
        )
        + "\n",
    }
    if in_repository:
        files["README.md"] = "# Harbor\n\nThe Harbor service.\n"
        files["CLAUDE.md"] = "# Harbor\n\nMemory lives in .memory/.\n"
        files[".github/workflows/ci.md"] = "# CI notes\n"
    return make_field(root, files)


# --------------------------------------------------------------------------- Obsidian-style vault


def obsidian_vault(root: Path) -> Path:
    """A vault (``.obsidian/``) with a supersede chain in frontmatter wikilinks, embeds, aliases, CJK."""
    vault = make_field(
        root,
        {
            ".obsidian/app.json": "{}",
            "Notes/Decisions/api-rest.md": (
                "---\ntype: decision\nstatus: superseded\ncreated: 2026-01-14\n"
                'superseded_by: "[[Notes/Decisions/api-graphql]]"\ntags: [api]\n---\n'
                "# Public API: REST\n\nDecided at the kickoff.\n"
            ),
            "Notes/Decisions/api-graphql.md": (
                "---\ntype: decision\nstatus: superseded\ncreated: 2026-04-03\n"
                'supersedes: "[[Notes/Decisions/api-rest]]"\n'
                'superseded_by: "[[Notes/Decisions/api-trpc|tRPC]]"\n---\n'
                "# Public API: GraphQL\n\nDecided at the architecture review.\n"
            ),
            "Notes/Decisions/api-trpc.md": (
                "---\ntype: decision\nstatus: active\ncreated: 2026-08-20\n"
                'supersedes: "[[Notes/Decisions/api-graphql]]"\naliases: [API decision]\n---\n'
                "# Public API: tRPC\n\nDecided at planning. Diagram: ![[diagram.png]] and ![[icon.svg#icon]].\n"
                "Write links like `[[Some Page]]` in backticks when you only show them.\n\n"
                "```\n[[Also Not A Link]]\n```\n"
            ),
            "Notes/Patterns/old-retry.md": (
                "---\ntype: pattern\nstatus: archived\n---\n# Fixed-interval retries\n\nNo longer used.\n"
            ),
            "Notes/index.md": (
                "# Index\n\n- [[API decision]] (the alias)\n- [[api-trpc#Decided]] and [[api-trpc#^block1]]\n"
                "- [[Café]] written in NFC\n- [[Obsidian 官方同步简介]]\n- [[不存在的页面]]\n"
                "- [[Meeting]] (the one beside this index)\n"
            ),
            "Notes/Meeting.md": "# Meeting (notes)\n\nThe one in Notes/.\n",
            "Archive/Meeting.md": "# Meeting (archive)\n\nAn old one.\n",
            "Docs/Obsidian 官方同步简介.md": "# 官方同步\n\n同步简介。\n",
            "attachments/diagram.png": b"\x89PNG\r\n\x1a\n",
            "attachments/icon.svg": "<svg/>",
        },
    )
    # macOS keeps file names decomposed (NFD): "Cafe" + combining acute.
    (vault / "Notes" / "Cafe\u0301.md").write_text("# Café\n\nCoffee notes.\n", encoding="utf-8")
    return vault


def exomem_knowledge_base(root: Path) -> Path:
    """An exomem-style vault whose field is the ``Knowledge Base/`` folder, linked from the vault root."""
    vault = make_field(root, {".obsidian/app.json": "{}"})
    return make_field(
        vault / "Knowledge Base",
        {
            "_Schema/SKILL.md": "# Schema\n\nHow this knowledge base is kept.\n",
            "Notes/Patterns/retry-fixed.md": (
                "---\nexomem_id: 7b4f2a10-0000-4000-8000-000000000001\ntype: pattern\nstatus: superseded\n"
                'created: 2026-01-12\nsuperseded_by: "[[Knowledge Base/Notes/Patterns/retry-jitter]]"\n---\n'
                "# Retry with a fixed interval\n"
            ),
            "Notes/Patterns/retry-jitter.md": (
                "---\nexomem_id: 7b4f2a10-0000-4000-8000-000000000002\ntype: pattern\nstatus: active\n"
                'created: 2026-06-10\nsupersedes: "[[Knowledge Base/Notes/Patterns/retry-fixed]]"\n---\n'
                "# Retry with backoff and jitter\n\nSee [[Knowledge Base/Sources/backoff-article]].\n"
            ),
            "Sources/backoff-article.md": "---\ntype: source\nstatus: active\n---\n# Backoff article\n",
        },
    )


# --------------------------------------------------------------------------- basic-memory


def basic_memory(root: Path) -> Path:
    return make_field(
        root,
        {
            "notes/auth-design.md": (
                "---\ntitle: Authentication Design\ntype: note\ntags: [auth, security]\n"
                "permalink: authentication-design\n---\n# Authentication Design\n\n"
                "## Observations\n"
                "- [decision] Tokens are short-lived and refreshed by the gateway #security\n"
                "- [risk] Refresh storms when the gateway restarts (seen in March)\n\n"
                "## Relations\n- depends_on [[Session Store]]\n- relates_to [[user-database-schema]]\n"
            ),
            "notes/session-store.md": (
                "---\ntitle: Session Store\ntype: note\npermalink: session-store\n---\n# Session Store\n\n"
                "- [fact] Sessions live in Redis for fourteen days\n"
            ),
            "notes/user-database-schema.md": (
                "---\ntitle: User Database Schema\ntype: note\npermalink: user-database-schema\n---\n"
                "# User Database Schema\n\n- [fact] Users have one row per tenant\n"
            ),
        },
    )


# --------------------------------------------------------------------------- Serena


def serena_project(root: Path) -> Path:
    """A repository whose Serena agent keeps memories in .serena/memories/ (topics as subfolders),
    with project.yml's memory patterns, Serena's own frontmatter and mem: references."""
    return make_field(
        root,
        {
            "README.md": "# Kestrel\n\nA job scheduler.\n",
            ".serena/project.yml": (
                "project_name: kestrel\nlanguages:\n- python\nread_only: false\n"
                'ignored_memory_patterns:\n- "scratch/.*"\n- "(a+)+$"\n'
                'read_only_memory_patterns:\n- "policy_.*"\n'
                'initial_prompt: ""\n'
            ),
            ".serena/cache/python/document_symbols.pkl": "not memory",
            ".serena/memories/project_overview.md": (
                "# Project overview\n\nKestrel schedules batch jobs on a worker pool.\n"
                "Commands are in mem:suggested_commands; the style guide is mem:code_style.\n"
                "Shared habits: mem:global/team_habits.\n"
            ),
            ".serena/memories/suggested_commands.md": (
                '---\nserena_frontmatter_version: 1\ntype: "Serena Memory"\ndescription: "dev commands"\n---\n'
                "# Suggested commands\n\n- `uv run pytest` runs the tests\n- `uv run kestrel --dry-run` plans jobs\n"
            ),
            ".serena/memories/modules/worker_pool.md": (
                "# Worker pool\n\nWorkers lease jobs for 30 seconds and renew while running.\n"
                "See mem:project_overview.\n"
            ),
            ".serena/memories/policy_release.md": "# Release policy\n\nReleases need two approvals.\n",
            ".serena/memories/scratch/draft_idea.md": "# Draft\n\nMaybe shard the queue by tenant.\n",
            ".serena/memories/memory_maintenance.md": (
                "# Memory maintenance\n\nKeep one memory per topic; update instead of duplicating.\n"
            ),
        },
    )
