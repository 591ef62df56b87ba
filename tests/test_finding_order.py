"""``SortedFindings``: every finding back in ``run_checks``'s order, most of them held on disk."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

from memtui.field.checks import Finding, sort_findings
from memtui.field.finding_order import SortedFindings
from tests.helpers_field import make_field, page


def _findings(count: int) -> list[Finding]:
    rng = random.Random(4)
    rules = ["stated-uncited", "cite-source-missing", "link-broken"]
    return [
        Finding(
            rng.choice(rules),
            rng.choice(["error", "warning", "info"]),
            f"notes/p{rng.randrange(40)}.md",
            rng.choice([None, *range(1, 30)]),
            f"message {rng.randrange(1000)} é 给",
        )
        for _ in range(count)
    ]


def test_findings_come_back_sorted_across_runs_and_the_runs_are_removed() -> None:
    findings = _findings(5_003)
    with SortedFindings(run_size=700) as found:
        for finding in findings:
            found.add(finding)
        assert len(found) == 5_003
        folder = found._folder
        assert folder is not None and len(list(folder.iterdir())) == 7  # seven runs written so far
        assert list(found) == sort_findings(findings)
    assert not folder.exists()


def test_a_few_findings_never_touch_the_disk() -> None:
    findings = _findings(50)
    with SortedFindings(run_size=700) as found:
        for finding in findings:
            found.add(finding)
        assert list(found) == sort_findings(findings) and found._folder is None


def test_check_json_lists_every_finding_sorted_and_leaves_no_runs(tmp_path: Path) -> None:
    # 1,500 pages with an unknown kind and an uncited [stated] line: more findings than a run
    # holds once RUN_SIZE is small (the child process sets it), so the output is merged runs.
    root = make_field(
        tmp_path / "f",
        {f"notes/p{n:04d}.md": page(f"kind: odd{n}", "A fact. [stated]\nAnother. [stated]\n") for n in range(1500)},
    )
    runs = tmp_path / "tmp"
    runs.mkdir()
    code = (
        "import atexit, sys; import memtui.field.finding_order as o; o.RUN_SIZE = 500; "
        "spill = o.SortedFindings._spill; runs = []; "
        "o.SortedFindings._spill = lambda self: (runs.append(len(self._held)), spill(self)); "
        "atexit.register(lambda: print('runs', len(runs), file=sys.stderr)); "
        "from memtui.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    env = {**os.environ, "TMPDIR": str(runs), "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run(
        [sys.executable, "-c", code, "check", str(root), "--json"], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode in (0, 1), done.stderr
    data = json.loads(done.stdout)
    findings = [Finding(**f) for f in data["findings"]]
    assert len(findings) >= 4_500 and findings == sort_findings(findings)
    assert int(done.stderr.split("runs ")[-1]) >= 9  # at most 500 a run in memory
    assert sum(data["summary"]["by_rule"].values()) == len(findings)
    assert list(runs.iterdir()) == []  # the runs were written there, and are gone
    # --all prints the same findings, one a line, in the same order, through runs too
    every = subprocess.run(
        [sys.executable, "-c", code, "check", str(root), "--all"], capture_output=True, text=True, timeout=120, env=env
    )
    assert every.returncode in (0, 1), every.stderr
    lines = [line for line in every.stdout.splitlines() if line.startswith(("✖", "▲", "·"))]
    assert [line.split("  ")[1:3] for line in lines] == [
        [f.rule, f"{f.path}:{f.line}" if f.line else f.path] for f in findings
    ]
    assert int(every.stderr.split("runs ")[-1]) >= 9
    assert list(runs.iterdir()) == []
