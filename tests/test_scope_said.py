"""Issue 41, item 5: nothing silently out of scope.

Dependency folders anywhere in the field (``node_modules``) and Markdown-like files that are
not ``*.md`` pages (``README.MD``, ``.mdx``, ``.markdown``) are counted in one line each, with
how to include them; evidence lines count only what they claim.
"""

from __future__ import annotations

from pathlib import Path

from tests.fixtures_dialects import claude_auto_memory
from tests.helpers_field import make_field, run_cli, run_cli_json


def test_dependency_folders_at_any_depth_are_counted_in_one_line(tmp_path: Path, capsys) -> None:
    root = make_field(
        tmp_path / "repo",
        {
            "notes.md": "# Notes\n",
            "packages/a/node_modules/x/README.md": "# x\n",
            "packages/b/node_modules/y/README.md": "# y\n",
            "packages/b/node_modules/y/CHANGELOG.md": "# y\n",
            "node_modules/z/README.md": "# z\n",
        },
    )
    code, out, _err = run_cli(["check", root], capsys)
    flat = " ".join(out.split())  # the console may wrap a long line
    assert flat.count("node_modules folders") == 1, out
    assert "3 node_modules folders" in flat and "4 Markdown files in all" in flat
    assert "open it with: memtui" in flat
    _code, data, _err = run_cli_json(["check", root], capsys)
    skipped = [s for s in data["summary"]["skipped"] if "node_modules" in s["path"]]
    assert len(skipped) == 1 and "4 Markdown files in all" in skipped[0]["what"]


def test_markdown_like_files_that_are_not_pages_are_said(tmp_path: Path, capsys) -> None:
    root = make_field(
        tmp_path / "f",
        {"a.md": "# A\n", "README.MD": "# R\n", "docs/guide.mdx": "# G\n", "docs/old.markdown": "# O\n"},
    )
    _code, out, _err = run_cli(["check", root], capsys)
    flat = " ".join(out.split())  # the console may wrap a long line
    assert "3 Markdown-like files" in flat and "README.MD" in flat and "memtui reads *.md only" in flat


def test_auto_memory_evidence_counts_files_not_topics(tmp_path: Path, capsys) -> None:
    root = claude_auto_memory(tmp_path / "mem")
    (root / "memory" / "README.md").write_text("# Readme, not a topic\n")
    _code, out, _err = run_cli(["check", root], capsys)
    flat = " ".join(out.split())  # the console may wrap a long line
    assert "MEMORY.md + 4 other Markdown files" in flat  # the README is counted as a file, not as a topic
    assert "4 topic files" not in flat
