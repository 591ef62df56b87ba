"""Issue 12, item 13: sizes are checked before reading; nothing reads more than its limit.

A 3 GB sparse page was read whole before the 2 MB check, and a 3 GB blob on a
``dream/*`` branch was read whole before the size check. Each command here runs
in its own process, and its peak memory shows what it read.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from memtui.field.page import MAX_PARSE_BYTES
from tests.helpers_review import git, init_repo, use_git_identity

GIB = 1024**3
HUGE = 3 * GIB
MEMORY_LIMIT_KB = 400 * 1024  # far below what reading 3 GB takes


def run_measured(*argv: str, cwd: Path | None = None) -> tuple[subprocess.CompletedProcess, int]:
    """Run ``memtui argv`` in a child process; return its result and its peak RSS in KB."""
    code = (
        "import resource, sys\n"
        "from memtui.cli import main\n"
        "try:\n"
        "    code = main(sys.argv[1:])\n"
        "finally:\n"
        "    sys.stderr.write('\\nMAXRSS %d\\n' % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
        "sys.exit(code)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, *argv],
        capture_output=True,
        timeout=300,
        cwd=cwd,
        env=dict(os.environ, MEMTUI_REVIEWER="maya"),
    )
    peak = int(result.stderr.rsplit(b"MAXRSS ", 1)[1].split()[0])
    return result, peak


def sparse_page(path: Path, head: bytes, size: int = HUGE) -> None:
    """A page of ``size`` bytes that takes no disk: ``head`` then a hole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(head)
        handle.truncate(size)


@pytest.fixture
def huge_field(sample_field: Path) -> Path:
    sparse_page(sample_field / "notes" / "huge.md", b"---\ntitle: Huge\n---\n" + b"- a fact [stated]\n" * 1000)
    sparse_page(sample_field / "quarantine" / "huge-binary.md", b"")  # all zero bytes: binary
    return sample_field


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "{field}", "--json"],
        ["index", "{field}", "--json"],
        ["search", "{field}", "huge", "--json"],
        ["quarantine", "list", "{field}", "--json"],
        ["quarantine", "show", "{field}", "quarantine/huge-binary.md"],
        ["history", "{field}", "notes/huge.md"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_a_3_gb_page_is_never_read_whole(huge_field: Path, argv: list[str]) -> None:
    result, peak = run_measured(*[a.replace("{field}", str(huge_field)) for a in argv])
    assert b"Traceback" not in result.stderr, result.stderr.decode()[-2000:]
    assert peak < MEMORY_LIMIT_KB, f"peak RSS {peak // 1024} MB"
    if argv[0] == "check":
        found = {(f["rule"], f["path"]) for f in json.loads(result.stdout)["findings"]}
        assert ("page-too-large", "notes/huge.md") in found
        assert ("binary-file", "quarantine/huge-binary.md") in found
    if argv[:2] == ["quarantine", "show"]:
        assert result.returncode == 1 and b"too large to review" in result.stderr


async def test_the_page_view_shows_the_start_of_a_3_gb_page(huge_field: Path) -> None:
    from tests.helpers_tui import SIZE, make_app, rendered_text, wait_ready

    app = make_app(huge_field)
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        app.open_page("notes/huge.md")
        await pilot.pause()
        assert len(app.screen.data) <= MAX_PARSE_BYTES
        assert "too large to parse" in rendered_text(app.screen.query_one("#page-body"), width=200)


def write_loose_blob(repo: Path, size: int, head: bytes = b"") -> str:
    """Write a blob of ``size`` bytes (``head`` then zeros) straight into the object store, streaming."""
    header = f"blob {size}\0".encode()
    digest = hashlib.sha1(header)
    packer = zlib.compressobj(1)
    tmp = repo / ".git" / "objects" / "tmp-blob"
    zeros = bytes(1 << 22)
    with open(tmp, "wb") as out:
        out.write(packer.compress(header))
        digest.update(head)
        out.write(packer.compress(head))
        left = size - len(head)
        while left:
            chunk = zeros[: min(left, len(zeros))]
            digest.update(chunk)
            out.write(packer.compress(chunk))
            left -= len(chunk)
        out.write(packer.flush())
    sha = digest.hexdigest()
    folder = repo / ".git" / "objects" / sha[:2]
    folder.mkdir(exist_ok=True)
    tmp.rename(folder / sha[2:])
    return sha


def test_a_3_gb_blob_on_a_dream_branch_is_never_read(sample_field: Path, tmp_path: Path, monkeypatch) -> None:
    import shutil

    use_git_identity(monkeypatch, tmp_path)
    shutil.rmtree(sample_field / ".dream")
    init_repo(sample_field)
    blob = write_loose_blob(sample_field, HUGE, b"---\ntitle: Huge\n---\n")
    index = tmp_path / "branch-index"
    env = {"GIT_INDEX_FILE": str(index)}
    git(sample_field, "read-tree", "HEAD", env=env)
    git(sample_field, "update-index", "--add", "--cacheinfo", f"100644,{blob},notes/huge.md", env=env)
    tree = git(sample_field, "write-tree", env=env)
    commit = git(sample_field, "commit-tree", tree, "-p", "HEAD", "-m", "huge\n\nDream-Job: bloat\n")
    git(sample_field, "update-ref", "refs/heads/dream/2026-12-01-bloat-01", commit)
    result, peak = run_measured("proposals", "list", str(sample_field), "--json")
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    assert peak < MEMORY_LIMIT_KB, f"peak RSS {peak // 1024} MB"
    (entry,) = [p for p in json.loads(result.stdout)["proposals"] if p["id"] == "2026-12-01-bloat-01"]
    assert entry["state"] == "invalid"
    assert any("too large for a page" in e for e in entry["validation"]["errors"])
    result, peak = run_measured("proposals", "show", str(sample_field), "2026-12-01-bloat-01")
    assert peak < MEMORY_LIMIT_KB and b"Traceback" not in result.stderr


def test_the_text_of_a_page_over_the_parse_limit_is_searchable(tmp_path: Path) -> None:
    """A 5 MB page is not parsed, but a word only near its end is found (by a word and by a
    phrase); a 25 MB page is searchable up to 20 MB and its finding says what was left out."""
    from memtui.field.page import MAX_INDEX_BYTES
    from tests.helpers_index import open_service, search_paths

    root = tmp_path / "field"
    (root / "notes").mkdir(parents=True)
    filler = b"- routine line about shipments and invoices [observed]\n"
    big = filler * (5 * 1024 * 1024 // len(filler)) + b"- the vendor code is zorblatt quintessa [stated]\n"
    assert len(big) > MAX_PARSE_BYTES
    (root / "notes" / "big.md").write_bytes(big)
    huge = filler * (MAX_INDEX_BYTES // len(filler) - 10) + b"- early marker frobnicate [stated]\n"
    huge += filler * (6 * 1024 * 1024 // len(filler)) + b"- late marker grommetwax [stated]\n"
    (root / "notes" / "huge.md").write_bytes(huge)
    (root / "notes" / "small.md").write_bytes(b"# Small\n\nNothing here. [observed]\n")
    svc = open_service(root, tmp_path / "index")
    try:
        assert search_paths(svc, "zorblatt") == ["notes/big.md"]
        assert search_paths(svc, '"zorblatt quintessa"') == ["notes/big.md"]
        assert search_paths(svc, "frobnicate") == ["notes/huge.md"]
        assert search_paths(svc, "grommetwax") == []  # past the 20 MB cap
    finally:
        svc.close()
    result, _ = run_measured("check", str(root), "--json")
    messages = {f["path"]: f["message"] for f in json.loads(result.stdout)["findings"] if f["rule"] == "page-too-large"}
    assert "its text is searchable" in messages["notes/big.md"]
    assert "the remaining" in messages["notes/huge.md"] and "are not" in messages["notes/huge.md"]
