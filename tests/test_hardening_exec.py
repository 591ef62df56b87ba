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

# A module a build helper imports (pickle for its pipe protocol, struct for the
# message header): if either ran, it would leave a marker file beside itself.
PLANTED = (
    "import os\n"
    "open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'RAN-' + __name__), 'w').write('x')\n"
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
