"""A quick run of the benchmark at a tiny size: it runs and prints its table (no timing asserts)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_bench_runs_at_a_small_size(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    command = [sys.executable, str(REPO / "bench" / "bench.py"), "--sizes", "60", "--quick",
               "--changes", "3", "--queries", "5", "--long-page", "2000", "--json", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr
    for label in ("full build, Whoosh", "SQLite FTS5", "build ratio", "warm open", "change latency p95",
                  "search latency p95", "peak RSS"):
        assert label in done.stdout
    assert "N=60 CJK" in done.stdout  # the CJK-heavy field is the second column
    data = json.loads(out.read_text())
    for label, script in (("60", "latin"), ("60-cjk", "cjk")):
        figures = data["results"][label]
        assert figures["pages"] == 60 and figures["change_misses"] == 0 and figures["script"] == script
        assert not {key: value for key, value in figures.items() if key.startswith("error")}  # with why
