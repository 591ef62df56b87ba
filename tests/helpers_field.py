"""Helpers for the memory-model tests (field, checks, history, safe writes, CLI).

Everything works on real folders under ``tmp_path``; nothing here mocks the file system.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from memtui.field.checks import Finding, run_checks
from memtui.field.field import Field
from tests.helpers import write_page


def settle_change_times(root: Path) -> None:
    """Wait until every file's change time (which no one can set back, unlike its modification
    time) is older than the page cache's racy window: only then is a page cached with its
    identity and taken from the cache next time, without reading it again."""
    from memtui.field.field import RACY_WINDOW_NS

    deadline = time.monotonic() + 30
    newest = max(os.stat(os.path.join(f, n)).st_ctime_ns for f, _, names in os.walk(root) for n in names)
    while time.time_ns() - newest <= RACY_WINDOW_NS + 50_000_000:
        assert time.monotonic() < deadline, "the clock does not move"
        time.sleep(0.05)


def make_field(root: Path, pages: dict[str, str | bytes]) -> Path:
    """Create a field folder holding ``pages`` (relative path -> text or bytes)."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in pages.items():
        write_page(root, rel, text)
    return root


def load(root: Path, **kwargs) -> Field:
    """Load a field with its page cache kept inside the field (the default place)."""
    return Field.load(root, **kwargs)


def findings(root: Path) -> list[Finding]:
    return run_checks(Field.load(root, use_cache=False))


def rules(found: list[Finding]) -> set[str]:
    return {f.rule for f in found}


def rule_paths(found: list[Finding]) -> set[tuple[str, str]]:
    return {(f.rule, f.path) for f in found}


def tree_hashes(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` (symlinks by their target text), by relative path."""
    out: dict[str, str] = {}
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names) + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = Path(folder) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                out[rel] = "link:" + os.readlink(path)
            else:
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def page(frontmatter: str = "", body: str = "") -> str:
    """A page from frontmatter lines (without fences) and a body."""
    if frontmatter:
        return f"---\n{frontmatter.strip(chr(10))}\n---\n{body}"
    return body


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    """Run ``memtui`` in-process; return (exit code, stdout, stderr)."""
    from memtui.cli import main, output

    # Fresh consoles, so each run sees the current environment (COLUMNS) and capsys streams.
    output._console = None
    output._error_console = None
    code = main([os.fspath(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_cli_json(argv: list[str], capsys):
    code, out, err = run_cli([*argv, "--json"], capsys)
    return code, json.loads(out), err
