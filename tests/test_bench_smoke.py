"""A quick run of the benchmark at a tiny size: it runs and prints its table (no timing asserts).

The English field runs every measurement; the CJK-heavy field runs those its script changes
(the builds, search and change latency), in a second test that runs beside the first."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.bench  # left out of the default run; .ci/run runs it apart


def run_bench(tmp_path: Path, *extra: str) -> tuple[str, dict]:
    out = tmp_path / "bench.json"
    command = [
        sys.executable,
        str(REPO / "bench" / "bench.py"),
        "--sizes",
        "60",
        "--quick",
        "--changes",
        "3",
        "--queries",
        "5",
        "--long-page",
        "2000",
        "--json",
        str(out),
        *extra,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=240, cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout, json.loads(out.read_text())


def assert_measured(figures: dict, script: str) -> None:
    assert figures["pages"] == 60 and figures["change_misses"] == 0 and figures["script"] == script
    assert not {key: value for key, value in figures.items() if key.startswith("error")}  # with why


def test_bench_runs_every_measurement_at_a_small_size(tmp_path: Path) -> None:
    stdout, data = run_bench(tmp_path, "--fields", "latin")
    for label in (
        "full build, Whoosh",
        "SQLite FTS5",
        "build ratio",
        "warm open",
        "change latency p95",
        "search latency p95",
        "peak RSS",
        "TUI launch",
        "write storm",
        "long page",
        "claims, first read",
        "memtui check",
        "one change at a time",
    ):
        assert label in stdout
    assert_measured(data["results"]["60"], "latin")
    assert data["results"]["60"]["trickle_missed"] == 0 and data["results"]["60"]["trickle_new_p95_ms"] > 0


def test_bench_measures_a_cjk_field(tmp_path: Path) -> None:
    stdout, data = run_bench(tmp_path, "--fields", "cjk", "--only", "fts5", "build", "latency")
    assert "N=60 CJK" in stdout
    for label in ("full build, Whoosh", "build ratio", "change latency p95", "search latency p95"):
        assert label in stdout
    figures = data["results"]["60-cjk"]
    assert_measured(figures, "cjk")
    assert set(figures["measure_s"]) == {"fts5", "build", "whole-process build", "change latency + search latency"}
