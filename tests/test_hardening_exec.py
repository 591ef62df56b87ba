"""Issue 12, code execution: nothing a field holds runs when memtui indexes or commits it.

Item 1: the parallel index build starts helper processes; run inside a field
(``cd FIELD && memtui index .``), a ``pickle.py`` among the pages must not be
imported by them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memtui.index import parallel
from tests.helpers import write_page
from tests.helpers_review import approve_proposal, proposal_queue, review_proposal

# A module a build helper imports (pickle for its pipe protocol, struct for the
# message header): if either ran, it would leave a marker file beside itself.
PLANTED = (
    "import os\nopen(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'RAN-' + __name__), 'w').write('x')\n"
)


def memtui_command() -> list[str]:
    """``memtui`` as a person runs it: the console script installed beside this Python."""
    script = Path(sys.executable).parent / "memtui"
    return [str(script)] if script.exists() else [sys.executable, "-c", "from memtui.cli import main; main()"]


def test_index_build_helpers_never_import_modules_from_the_field(tmp_path: Path) -> None:
    if parallel.worker_count() < 2:
        pytest.skip("one CPU: the build never starts helpers")
    field = tmp_path / "field"
    for number in range(parallel.PARALLEL_MIN_PAGES):
        write_page(field, f"notes/page-{number:04d}.md", f"---\ntitle: Page {number}\n---\n- fact {number} [stated]\n")
    for module in ("pickle", "struct", "runpy"):
        (field / f"{module}.py").write_text(PLANTED)
    env = dict(os.environ)
    env.pop("MEMTUI_SERIAL_BUILD", None)
    result = subprocess.run(
        [*memtui_command(), "index", ".", "--json"], cwd=field, env=env, capture_output=True, timeout=240
    )
    assert result.returncode == 0, result.stderr.decode()
    report = json.loads(result.stdout)
    assert report["pages"] == parallel.PARALLEL_MIN_PAGES, (report, sorted(os.listdir(field)))
    assert report["notes"] == []  # the two helpers ran (no fallback to one process)
    assert sorted(p.name for p in field.iterdir() if p.name.startswith("RAN-")) == []


def test_helper_import_path_leaves_out_the_working_folder_and_the_field(tmp_path: Path, monkeypatch) -> None:
    field = tmp_path / "field"
    (field / "lib").mkdir(parents=True)
    monkeypatch.chdir(field)
    monkeypatch.setattr(sys, "path", ["", ".", str(field), str(field / "lib"), *sys.path])
    path = parallel.helper_sys_path(field)
    assert all(os.path.isabs(entry) for entry in path)
    assert not [entry for entry in path if os.path.realpath(entry).startswith(os.path.realpath(field))]
    assert os.path.dirname(os.path.dirname(os.path.realpath(parallel.__file__))) == path[0]


# --------------------------------------------------------------------------- items 2 and 7: git

TRIAL = "notes/trackstream-trial-terms.md"


def quiet_git(root: Path, *args: str) -> str:
    """git for the test's own checks, with the repository's programs switched off."""
    from tests.helpers_review import git

    return git(root, "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", *args)


def _hostile_git_config(root: Path, marker: Path) -> None:
    """Make the repository's own config name programs at every turn git could run one.

    Each program appends its name to ``marker`` (and passes data through, so
    ordinary git still works with them).
    """
    from tests.helpers_review import git

    script = root.parent / "evil.sh"
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> "{marker}"\ncat\n')
    script.chmod(0o755)
    hooks = root / ".git" / "hooks"
    for hook in ("pre-commit", "commit-msg", "post-commit", "reference-transaction", "post-index-change"):
        (hooks / hook).write_text(f'#!/bin/sh\necho "hook {hook}" >> "{marker}"\n')
        (hooks / hook).chmod(0o755)
    (root / ".gitattributes").write_text("* filter=evil diff=evil\n")
    settings = {
        "filter.evil.clean": f"{script} clean",
        "filter.evil.smudge": f"{script} smudge",
        "filter.evil.process": f"{script} process",
        "diff.evil.textconv": f"{script} textconv",
        "diff.external": f"{script} external",
        "core.fsmonitor": f"{script}",
        "core.hooksPath": ".git/hooks",
        "gpg.program": f"{script}",
        "commit.gpgSign": "true",
        "user.signingKey": "ABCDEF",
    }
    for key, value in settings.items():
        git(root, "config", key, value)


@pytest.fixture
def hostile_repo(sample_field: Path, tmp_path: Path, monkeypatch) -> tuple[Path, Path]:
    """The sample field as a repository whose config names programs everywhere (set last, so
    that only what runs after the fixture can trigger them)."""
    import shutil

    from tests.helpers_review import (
        branch_proposal,
        git,
        init_repo,
        sha,
        staging_proposal,
        use_git_identity,
    )

    use_git_identity(monkeypatch, tmp_path)
    monkeypatch.setenv("MEMTUI_REVIEWER", "maya")
    shutil.rmtree(sample_field / ".dream")
    init_repo(sample_field)
    old = (sample_field / TRIAL).read_bytes()
    new = old.replace(b"valid_to: null", b"valid_to: 2026-09-30")
    staging_proposal(sample_field, "2026-11-28-expire-05", job="expire", files={TRIAL: new}, base={TRIAL: sha(old)})
    branch_proposal(sample_field, "2026-11-29-expire-06", {TRIAL: new}, "Expire it again\n\nDream-Job: expire\n")
    marker = tmp_path / "programs-that-ran"
    _hostile_git_config(sample_field, marker)
    git(sample_field, "status", "--porcelain")  # the trap is live: ordinary git runs the field's programs
    assert marker.exists()
    marker.unlink()
    return sample_field, marker


def test_approve_and_revert_commit_without_running_anything_from_the_repository(hostile_repo) -> None:
    from memtui.review import proposals

    root, marker = hostile_repo
    old = (root / TRIAL).read_bytes()
    new = old.replace(b"valid_to: null", b"valid_to: 2026-09-30")
    head_before = quiet_git(root, "rev-parse", "HEAD")
    approval = approve_proposal(root, "2026-11-28-expire-05")
    proposals.revert(root, "2026-11-28-expire-05", reason="trial extended")
    assert (root / TRIAL).read_bytes() == old
    proposal_queue(root)  # a branch proposal is read and applied the same way
    review_proposal(root, "2026-11-29-expire-06")
    branch = approve_proposal(root, "2026-11-29-expire-06")
    assert (root / TRIAL).read_bytes() == new
    assert not marker.exists(), marker.read_text()
    # Three commits were made, unsigned, holding memtui's exact bytes.
    log = quiet_git(root, "log", "--format=%H %s", f"{head_before}..HEAD").splitlines()
    assert [line.split(" ", 1)[1].split(" (")[0] for line in log] == [
        "memtui: apply dream proposal 2026-11-29-expire-06",
        "memtui: revert dream proposal 2026-11-28-expire-05",
        "memtui: apply dream proposal 2026-11-28-expire-05",
    ]
    assert [line.split(" ", 1)[0] for line in log][::2] == [branch.commit, approval.commit]
    for commit in (approval.commit, branch.commit):
        assert "gpgsig" not in quiet_git(root, "cat-file", "commit", commit)
    blob = subprocess.run(["git", "cat-file", "blob", f"HEAD:{TRIAL}"], cwd=root, capture_output=True, check=True)
    assert blob.stdout == new


async def test_commit_after_save_runs_nothing_from_the_repository(hostile_repo) -> None:
    from memtui.tui.screens.dialogs import TextDialog
    from memtui.tui.screens.editor import EditorScreen
    from tests.helpers_tui import SIZE, make_app, wait_for_screen, wait_ready

    root, marker = hostile_repo
    page = "notes/q3-digest.md"
    app = make_app(root)
    app.settings.commit_after_save = True
    app.settings.bump_updated = "never"
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(app, pilot)
        app.open_editor(page)
        await pilot.pause()
        assert isinstance(app.screen, EditorScreen)
        app.screen.area.insert("edited by a human [stated]\n", (app.screen.area.document.line_count - 1, 0))
        await pilot.press("ctrl+s")
        assert await wait_for_screen(app, pilot, TextDialog)
        await pilot.press("enter")
        await pilot.pause()
        await app.workers.wait_for_complete()
    assert not marker.exists(), marker.read_text()
    assert quiet_git(root, "log", "-1", "--format=%s") == f"memtui: edit {page}"
    assert "edited by a human" in quiet_git(root, "cat-file", "blob", f"HEAD:{page}")


def _other_repository(tmp_path: Path) -> tuple[Path, str]:
    """A repository elsewhere with a dream branch of its own."""
    from tests.helpers_review import branch_proposal, git, init_repo

    other = tmp_path / "elsewhere"
    (other / "notes").mkdir(parents=True)
    (other / "notes" / "secret.md").write_text("---\ntitle: Secret\n---\nthe other repository's page [stated]\n")
    init_repo(other)
    branch_proposal(other, "2026-11-30-leak-01", {"notes/secret.md": b"leaked [stated]\n"}, "leak\n\nDream-Job: leak\n")
    return other, git(other, "rev-parse", "HEAD")


@pytest.mark.parametrize("kind", ["gitdir-file", "symlink", "commondir"])
def test_a_redirecting_git_entry_is_never_used(sample_field: Path, tmp_path: Path, monkeypatch, kind: str) -> None:
    import shutil

    from memtui.review import proposals
    from memtui.store import gitrepo
    from tests.helpers_review import git, sha, staging_proposal, use_git_identity

    use_git_identity(monkeypatch, tmp_path)
    monkeypatch.setenv("MEMTUI_REVIEWER", "maya")
    other, other_head = _other_repository(tmp_path)
    if kind == "gitdir-file":
        (sample_field / ".git").write_text(f"gitdir: {other / '.git'}\n")
    elif kind == "symlink":
        (sample_field / ".git").symlink_to(other / ".git")
    else:
        (sample_field / ".git").mkdir()
        for name in ("HEAD", "config"):
            shutil.copy(other / ".git" / name, sample_field / ".git" / name)
        (sample_field / ".git" / "commondir").write_text(f"{other / '.git'}\n")
    assert not gitrepo.is_field_repo(sample_field)
    assert "2026-11-30-leak-01" not in [p.id for p in proposals.load_proposals(sample_field).proposals]
    page = "notes/q3-digest.md"
    old = (sample_field / page).read_bytes()
    shutil.rmtree(sample_field / ".dream")
    staging_proposal(
        sample_field, "2026-11-30-dedupe-01", files={page: old + b"more [stated]\n"}, base={page: sha(old)}
    )
    entry = approve_proposal(sample_field, "2026-11-30-dedupe-01")
    assert entry.commit is None  # applied as a plain folder
    assert git(other, "rev-parse", "HEAD") == other_head
    assert "memtui" not in git(other, "log", "--all", "--format=%s")


def test_a_zip_holding_a_git_file_shows_no_other_repository(tmp_path: Path, capsys) -> None:
    import zipfile

    from tests.helpers_field import run_cli_json

    other, _ = _other_repository(tmp_path)
    archive = tmp_path / "field.memoryfield.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("notes/a.md", "---\ntitle: A\n---\na [stated]\n")
        out.writestr(".git", f"gitdir: {other / '.git'}\n")
    code, data, _ = run_cli_json(["proposals", "list", str(archive), "--all"], capsys)
    assert code == 0
    assert data["proposals"] == []
