"""memtui's benchmark: index build, warm open, change latency, search latency, memory.

    python bench/bench.py --sizes 1000 10000          # the figures for the README
    python bench/bench.py --sizes 200 --quick         # a smoke run (seconds)
    python bench/bench.py --sizes 1000 --save         # also write bench/results/<time>.json
    python bench/bench.py --sizes 1000 --fields cjk   # only the CJK-heavy field

For each size N the script generates synthetic fields of N pages
(``bench/synthetic.py``): an English one and a CJK-heavy one (Chinese and
Japanese, ``--fields``), each in a temporary folder, and runs every measurement
in a fresh child process, so each field's peak RSS is its own. Measurements:

1. full build: ``IndexService.open()`` on an empty index folder (scan, read and
   parse every page, statuses, Whoosh indexing, commit), against SQLite FTS5
   reading the same files and indexing their full text in the same run; the
   ratio is our yardstick (target: Whoosh at most 10x FTS5);
2. warm open: ``open()`` again with nothing changed, until the index is known
   current (target: under 0.5 s at 10,000 pages);
3. change latency: a page rewritten on disk (temp file + rename) until a search
   finds the new word through the real watcher; p50/p95 over the changes
   (target: p95 under 300 ms);
4. search latency: p50/p95 over one- to three-word queries, once the writer has
   merged its segments (target: p95 under 20 ms);
5. peak RSS of the child process (and of the largest build helper process: at
   1,000 pages and more a full build runs in two helper processes).

6. the TUI, headless, in fresh processes (``bench/tui_launch.py``): launch to an
   interactive browse list with no page cache and no index yet (target: 2 s at
   10,000 pages) and again with both current (target: 1 s), and keystroke-to-
   repaint while that first launch builds the index.

7. a long page (``--long-page``, 50,000 lines) in a fresh process
   (``bench/page_open.py``): ``open_page`` until its first lines are drawn
   (target: under 0.5 s) and key-to-repaint for the scrolling keys while it is
   open (target: p95 under 50 ms).

More measurements are added with ``@measurement``; ``--only NAME`` runs some of them:

    python bench/bench.py --sizes 200 --fields latin --only "long page"
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from synthetic import generate_field, query_words, rewrite_page  # noqa: E402 - after sys.path

RESULTS_DIR = HERE / "results"
TARGETS = {
    "build_ratio": ("<= 10x FTS5", lambda v, n: v <= 10),
    "warm_open_s": ("< 0.5 s at 10k", lambda v, n: n < 10000 or v < 0.5),
    "change_p95_ms": ("p95 < 300 ms", lambda v, n: v < 300),
    "search_p95_ms": ("p95 < 20 ms", lambda v, n: v < 20),
    "phrase_p95_ms": ("p95 < 100 ms", lambda v, n: v < 100),
    "tui_cold_launch_s": ("< 2 s at 10k", lambda v, n: n < 10000 or v < 2),
    "tui_warm_launch_s": ("< 1 s at 10k", lambda v, n: n < 10000 or v < 1),
    "detect_share_pct": ("<= 5% of cold launch", lambda v, n: n < 10000 or v <= 5),
    "claims_warm_s": ("< 1 s at 10k", lambda v, n: n < 10000 or v < 1),
    "storm_key_p95_ms": ("p95 < 100 ms", lambda v, n: v < 100),
    "storm_lag_p95_ms": ("p95 < 500 ms", lambda v, n: v < 500),
    "trickle_new_p95_ms": ("p95 < 300 ms", lambda v, n: v < 300),
    "trickle_rewrite_p95_ms": ("p95 < 200 ms", lambda v, n: v < 200),
    "page_open_s": ("< 0.5 s", lambda v, n: v < 0.5),
    "page_key_p95_ms": ("p95 < 50 ms", lambda v, n: v < 50),
    "check_rss_mb": ("< 400 MB at 100k", lambda v, n: v < 400),
    "process_build_rss_mb": ("< 400 MB at 100k", lambda v, n: v < 400),
    "check_output_ratio": ("<= 1.5x --json", lambda v, n: v <= 1.5),
    "cli_warm_open_s": ("< 1.5 s at 100k", lambda v, n: v < 1.5),
    "cli_search_s": ("< 2 s at 100k", lambda v, n: v < 2),
    "cli_version_s": ("<= 100 ms", lambda v, n: v <= 0.1),
    "cli_help_s": ("<= 100 ms", lambda v, n: v <= 0.1),
}


@dataclass
class BenchContext:
    """What a measurement gets: the generated field, its page paths, a scratch folder, the options."""

    size: int
    field: Path
    pages: list[str]
    work: Path
    changes: int
    queries: int
    results: dict = field(default_factory=dict)
    script: str = "latin"  # the synthetic field's text: "latin" (English) or "cjk"
    long_page: int = 50_000  # lines of the page the long-page measurement opens


Measurement = Callable[[BenchContext], dict]
MEASUREMENTS: list[tuple[str, Measurement]] = []


def measurement(name: str) -> Callable[[Measurement], Measurement]:
    """Register a measurement: a function of a ``BenchContext`` returning {metric: value}."""

    def register(fn: Measurement) -> Measurement:
        MEASUREMENTS.append((name, fn))
        return fn

    return register


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return ordered[index]


# ---------------------------------------------------------------------- the index measurements
def _service(ctx: BenchContext):
    from memtui.index import IndexService

    return IndexService(ctx.field, index_dir=ctx.work / "index")


@measurement("fts5")
def measure_fts5(ctx: BenchContext) -> dict:
    """SQLite FTS5 over the same texts: the median of three builds (one run alone varies by 2x)."""
    times = []
    for attempt in range(3):
        db = ctx.work / f"fts5-{attempt}.sqlite3"
        started = time.perf_counter()
        conn = sqlite3.connect(db)
        conn.execute("CREATE VIRTUAL TABLE pages USING fts5(path UNINDEXED, body)")
        with conn:
            for rel in ctx.pages:
                text = (ctx.field / rel).read_text(encoding="utf-8")
                conn.execute("INSERT INTO pages VALUES (?, ?)", (rel, text))
        conn.close()
        times.append(time.perf_counter() - started)
        db.unlink()
    return {"fts5_build_s": statistics.median(times)}


@measurement("build")
def measure_build(ctx: BenchContext) -> dict:
    import memtui.index  # noqa: F401 - imported before the clock starts

    phases: dict[str, float] = {}

    def progress(done: int, total: int, phase: str) -> None:
        phases.setdefault(phase, time.perf_counter() - started)

    svc = _service(ctx)
    started = time.perf_counter()
    report = svc.open(progress=progress)
    elapsed = time.perf_counter() - started
    svc.close()
    assert report.rebuilt and report.pages == len(ctx.pages), report
    index_bytes = sum(f.stat().st_size for f in (ctx.work / "index").rglob("*") if f.is_file())
    out = {"build_s": elapsed, "index_mb": index_bytes / 1e6}
    if "indexing" in phases:
        out["build_read_parse_s"] = phases["indexing"] - phases.get("reading", 0.0)
        out["build_whoosh_s"] = elapsed - phases["indexing"]
    return out


@measurement("whole-process build")
def measure_process_build(ctx: BenchContext) -> dict:
    """What a user runs: ``memtui index FIELD --rebuild`` in a fresh process (interpreter,
    imports, scan, page reading, the two-process build, the manifest), medians of three; the
    peak RSS of its largest process (itself or a build helper; sampling /proc costs a little of
    a core, well under the run-to-run spread)."""
    times, peaks = [], []
    for attempt in range(3):
        xdg = ctx.work / f"process-build-{attempt}"
        env = {**os.environ, "XDG_CACHE_HOME": str(xdg / "cache"), "XDG_CONFIG_HOME": str(xdg / "config")}
        seconds, peak = _run_watched(
            [sys.executable, "-m", "memtui", "index", str(ctx.field), "--rebuild", "--json"], env=env
        )
        times.append(seconds)
        peaks.append(peak)
        shutil.rmtree(xdg, ignore_errors=True)
    out = {"process_build_s": statistics.median(times), "process_build_rss_mb": max(peaks)}
    if ctx.results.get("fts5_build_s"):
        out["process_build_ratio"] = out["process_build_s"] / ctx.results["fts5_build_s"]
    return out


@measurement("warm open")
def measure_warm_open(ctx: BenchContext) -> dict:
    times = []
    for _ in range(5):
        svc = _service(ctx)
        started = time.perf_counter()
        report = svc.open()
        times.append(time.perf_counter() - started)
        svc.close()
        assert report.up_to_date and not report.rebuilt, report.to_json()
    return {"warm_open_s": statistics.median(times)}


@measurement("change latency + search latency")
def measure_live(ctx: BenchContext) -> dict:
    svc = _service(ctx)
    svc.open()
    svc.start_watching(lambda batch: None)
    rng = random.Random(5)
    latencies: list[float] = []
    misses = 0
    try:
        time.sleep(0.5)
        for number in range(ctx.changes):
            rel = rng.choice(ctx.pages)
            marker = f"zqmark{number}x{rng.randrange(10**6)}"
            started = time.perf_counter()
            rewrite_page(ctx.field, rel, marker)
            while True:
                hits = svc.search(marker, limit=3)
                if any(hit.path == rel for hit in hits):
                    latencies.append((time.perf_counter() - started) * 1000)
                    break
                if time.perf_counter() - started > 10:
                    misses += 1
                    break
                time.sleep(0.002)
            time.sleep(0.05)
        svc.flush(10)
        segments_before = svc.segment_count()
        settled = time.perf_counter()
        # Let the idle-time merges run (small segments after 2 s, the build's segments after 5 s):
        # search latency is measured on a settled index.
        while time.perf_counter() - settled < 30:
            count = svc.segment_count()
            time.sleep(1.0)
            if count == svc.segment_count() and count <= 2 and svc.state.pending == 0:
                break
        queries = query_words(script=ctx.script)[: ctx.queries]
        for query in queries[:5]:
            svc.search(query, limit=20)
        search_times = []
        for query in queries:
            started = time.perf_counter()
            svc.search(query, limit=20)
            search_times.append((time.perf_counter() - started) * 1000)
        phrase_times = []
        for query in phrase_queries(ctx, ctx.queries):
            started = time.perf_counter()
            svc.search(query, limit=20)
            phrase_times.append((time.perf_counter() - started) * 1000)
        segments = svc.segment_count()
    finally:
        svc.close()
    return {
        "change_p50_ms": percentile(latencies, 0.5),
        "change_p95_ms": percentile(latencies, 0.95),
        "change_misses": misses,
        "search_p50_ms": percentile(search_times, 0.5),
        "search_p95_ms": percentile(search_times, 0.95),
        "phrase_p50_ms": percentile(phrase_times, 0.5),
        "phrase_p95_ms": percentile(phrase_times, 0.95),
        "segments_after_changes": segments_before,
        "segments_when_searching": segments,
    }


_LATIN_PAIR_RE = re.compile(r"\b([a-z]{4,}) ([a-z]{4,})\b")
_CJK_RUN_RE = re.compile("[\u3040-\u30ff\u3400-\u9fff]{4,}")


def phrase_queries(ctx: BenchContext, count: int) -> list[str]:
    """Quoted phrases taken from the pages (two neighbouring words; four CJK characters), so
    each is in at least one page: the index finds the pages holding the words, search
    checks the order on their text."""
    rng = random.Random(13)
    queries: list[str] = []
    for _ in range(count * 20):
        if len(queries) >= count:
            break
        text = (ctx.field / rng.choice(ctx.pages)).read_text(encoding="utf-8").split("---", 2)[-1]
        if ctx.script == "cjk":
            runs = _CJK_RUN_RE.findall(text)
            if runs:
                run = rng.choice(runs)
                start = rng.randrange(len(run) - 3)
                queries.append(f'"{run[start : start + 4]}"')
        else:
            pairs = _LATIN_PAIR_RE.findall(text)
            if pairs:
                queries.append('"{} {}"'.format(*rng.choice(pairs)))
    return queries


# ---------------------------------------------------------------------- the TUI
def _launch_tui(ctx: BenchContext, xdg: Path, *, keys: int) -> dict:
    """Start the app headless in a fresh process (bench/tui_launch.py); seconds from spawn."""
    command = [
        sys.executable,
        str(HERE / "tui_launch.py"),
        str(ctx.field),
        "--xdg",
        str(xdg),
        "--index",
        "--keys",
        str(keys),
        "--expected",
        str(len(ctx.pages)),
    ]
    spawned = time.time()
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if done.returncode != 0 or not done.stdout.strip():
        # What the child said, in the error the results carry (a bare exit code explains nothing).
        tail = " | ".join((done.stderr or done.stdout or "").strip().splitlines()[-6:])
        raise RuntimeError(f"tui_launch exited {done.returncode}: {tail}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["launch_s"] = result["interactive_epoch"] - spawned
    return result


@measurement("tui launch")
def measure_tui(ctx: BenchContext) -> dict:
    """Launch to an interactive browse list with no cache or index yet, then again with both
    current; keystroke-to-repaint while the first launch builds the index."""
    xdg = ctx.work / "tui-xdg"
    cold = _launch_tui(ctx, xdg, keys=40)
    warm = _launch_tui(ctx, xdg, keys=0)
    keys = cold.get("key_latencies_ms", [])
    return {
        "tui_cold_launch_s": cold["launch_s"],
        "tui_cold_index_ready_s": cold.get("index_ready_s"),
        "tui_keys_during_build": cold.get("keys_during_build"),
        "tui_key_p50_ms": percentile(keys, 0.5) if keys else None,
        "tui_key_p95_ms": percentile(keys, 0.95) if keys else None,
        "tui_warm_launch_s": warm["launch_s"],
    }


@measurement("write storm")
def measure_storm(ctx: BenchContext) -> dict:
    """The TUI open and current while an agent writes 50 new pages a second for 10 s (through
    the real watcher): keystroke-to-repaint, and each page's write to found by search."""
    seconds = 10.0 if ctx.changes >= 50 else 2.0
    command = [
        sys.executable,
        str(HERE / "tui_launch.py"),
        str(ctx.field),
        "--xdg",
        str(ctx.work / "tui-xdg"),
        "--storm",
        "50",
        "--storm-seconds",
        str(seconds),
        "--expected",
        str(len(ctx.pages)),
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=900)
    finally:
        shutil.rmtree(ctx.field / "storm", ignore_errors=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    keys, lags = result["key_latencies_ms"], [lag * 1000 for lag in result["index_lags_s"]]
    return {
        "storm_pages": result["storm_pages"],
        "storm_key_p95_ms": percentile(keys, 0.95) if keys else None,
        "storm_lag_p50_ms": percentile(lags, 0.5) if lags else None,
        "storm_lag_p95_ms": percentile(lags, 0.95) if lags else None,
        "storm_found": len(lags),
        "storm_settle_s": result.get("settle_s"),
    }


@measurement("one change at a time")
def measure_trickle(ctx: BenchContext) -> dict:
    """The TUI open and current (watching the field) while an agent makes one change at a time,
    1.5 s apart, alternately a new page and a rewrite of an existing one: write to found by search."""
    changes = 20 if ctx.changes >= 50 else 4 if ctx.changes > 3 else 2  # a smoke run: one of each kind
    command = [
        sys.executable,
        str(HERE / "tui_launch.py"),
        str(ctx.field),
        "--xdg",
        str(ctx.work / "tui-xdg"),
        "--trickle",
        str(changes),
        "--expected",
        str(len(ctx.pages)),
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=900)
    finally:
        shutil.rmtree(ctx.field / "trickle", ignore_errors=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    new = [lag * 1000 for lag in result["new_lags_s"]]
    rewrites = [lag * 1000 for lag in result["rewrite_lags_s"]]
    return {
        "trickle_new_p50_ms": percentile(new, 0.5) if new else None,
        "trickle_new_p95_ms": percentile(new, 0.95) if new else None,
        "trickle_rewrite_p50_ms": percentile(rewrites, 0.5) if rewrites else None,
        "trickle_rewrite_p95_ms": percentile(rewrites, 0.95) if rewrites else None,
        "trickle_missed": result["missed"],
    }


@measurement("long page")
def measure_long_page(ctx: BenchContext) -> dict:
    """A page of ``ctx.long_page`` lines put into the field (``synthetic.write_long_page``):
    seconds from ``open_page`` to its first lines drawn, then key-to-repaint for down, up,
    pagedown, pageup, end and home while it is open (``bench/page_open.py``, a fresh process)."""
    from synthetic import write_long_page

    rel = "notes/long-running-log.md"
    page = write_long_page(ctx.field, rel, ctx.long_page)
    try:
        command = [sys.executable, str(HERE / "page_open.py"), str(ctx.field), rel, "--xdg", str(ctx.work / "page-xdg")]
        done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=600)
        result = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        page.unlink()
    keys = [ms for values in result["key_latencies_ms"].values() for ms in values]
    return {
        "page_lines": ctx.long_page,
        "page_open_s": result["open_s"],
        "page_key_p50_ms": percentile(keys, 0.5),
        "page_key_p95_ms": percentile(keys, 0.95),
        "page_key_max_ms": max(keys),
    }


@measurement("dialect detection")
def measure_detection(ctx: BenchContext) -> dict:
    """What recognising the memory formats adds to opening a field: ``detect`` (which scans)
    minus the scan it needs anyway; medians of five, and its share of the TUI's cold launch."""
    from memtui.dialects.detect import detect
    from memtui.field.field import scan_field

    scans, detections = [], []
    for _ in range(5):
        started = time.perf_counter()
        scan_field(ctx.field)
        scans.append(time.perf_counter() - started)
        started = time.perf_counter()
        detect(ctx.field)
        detections.append(time.perf_counter() - started)
    extra = max(0.0, statistics.median(detections) - statistics.median(scans))
    out = {"detect_extra_s": extra}
    cold = ctx.results.get("tui_cold_launch_s")
    if cold:
        out["detect_share_pct"] = 100 * extra / cold
    return out


# ---------------------------------------------------------------------- claims
_CLAIMS_IN_A_FRESH_PROCESS = """
import json, sys, time
from memtui.dialects.open import open_field
from memtui.field.claims import field_claims
field = open_field(sys.argv[1])
started = time.perf_counter()
claims = field_claims(field)
print(json.dumps({"seconds": time.perf_counter() - started, "claims": len(claims)}))
"""


@measurement("claims listed and filtered (unchanged field)")
def measure_claims(ctx: BenchContext) -> dict:
    """``field_claims`` the first time (every page read for its claims, the cache written), then in
    fresh processes with nothing changed (claims from the cache folder), and ``memtui claims FIELD
    --uncited`` whole-process, output to a pipe that discards it: medians of three."""
    from memtui.dialects.open import open_field
    from memtui.field.claims import field_claims, select

    field = open_field(ctx.field)
    started = time.perf_counter()
    claims = field_claims(field)
    first = time.perf_counter() - started
    uncited = len(select(claims, uncited=True))
    warm = []
    for _ in range(3):
        done = subprocess.run(
            [sys.executable, "-c", _CLAIMS_IN_A_FRESH_PROCESS, str(ctx.field)],
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        )
        warm.append(json.loads(done.stdout.strip().splitlines()[-1])["seconds"])
    whole = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "memtui", "claims", str(ctx.field), "--uncited"],
            stdout=subprocess.DEVNULL,
            check=True,
            timeout=600,
        )
        whole.append(time.perf_counter() - started)
    return {
        "claims": len(claims),
        "claims_uncited": uncited,
        "claims_first_s": first,
        "claims_warm_s": statistics.median(warm),
        "claims_cli_uncited_s": statistics.median(whole),
    }


def _tree_peak_mb(root_pid: int) -> float:
    """The largest high-water RSS (``VmHWM``) among ``root_pid`` and its descendants now.

    Not ``wait4``'s ``ru_maxrss``: a child started from a big process reports the parent's
    size at the fork (the bench's own 2.6 GB once it had listed 2,000,000 claims)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    parents[int(entry)] = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    tree, todo = set(), [root_pid]
    while todo:
        pid = todo.pop()
        tree.add(pid)
        todo.extend(child for child, parent in parents.items() if parent == pid and child not in tree)
    peak = 0.0
    for pid in tree:
        try:
            with open(f"/proc/{pid}/status") as handle:
                for line in handle:
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]) / 1024)
        except OSError:
            pass
    return peak


def _run_watched(command: list[str], env: dict | None = None) -> tuple[float, float]:
    """Seconds and the peak RSS (MB) of the largest process of ``command`` (itself or a helper it
    starts), sampled every 50 ms; its output to a pipe that discards it."""
    started = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    peak = 0.0
    while proc.poll() is None:
        peak = max(peak, _tree_peak_mb(proc.pid))
        time.sleep(0.05)
    elapsed = time.perf_counter() - started
    if proc.returncode not in (0, 1):  # check exits 1 when it finds errors
        raise RuntimeError(f"{' '.join(command[2:4])} exited {proc.returncode}")
    return elapsed, peak


def _run_quick(command: list[str]) -> tuple[float, float]:
    """Seconds of a command that ends in tens of milliseconds (``_run_watched`` samples every 50
    ms, too coarse for it), and no RSS."""
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started, 0.0


def _run_measured(argv: list[str]) -> tuple[float, float]:
    """Seconds and peak RSS (MB) of one ``memtui`` command in a fresh process."""
    return _run_watched([sys.executable, "-m", "memtui", *argv])


STAT_EVERY_FILE = """
import os, sys
stack, files = [sys.argv[1]], 0
while stack:
    with os.scandir(stack.pop()) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            else:
                entry.stat(follow_symlinks=False)
                files += 1
print(files)
"""


@measurement("commands, whole process")
def measure_commands(ctx: BenchContext) -> dict:
    """What a user types, each in a fresh process: ``memtui check`` (its summary by rule, then
    ``--json``), ``memtui index`` with nothing changed (the warm open) and ``memtui search``, on the
    index the build measurement made; seconds and the process's peak RSS, medians of three after
    a first run that writes the caches. Beside them, the floor of any warm open: a Python process
    that lists the field and stats every file in it (``os.scandir``), doing nothing else. Then
    ``--version``, ``--help`` and ``memtui context`` against a Python process that does nothing."""
    index = ["--index-dir", str(ctx.work / "index")]
    field = str(ctx.field)
    _run_measured(["check", field])  # the page and claims caches
    repeats = 3 if ctx.changes > 3 else 1  # medians of three; a smoke run (--changes 3) runs each once
    floor = [sys.executable, "-c", STAT_EVERY_FILE, field]
    runs = {
        "cli_stat_floor": [_run_watched(floor) for _ in range(repeats)],
        "check": [_run_measured(["check", field]) for _ in range(repeats)],
        "check_json": [_run_measured(["check", field, "--json"]) for _ in range(repeats)],
        "cli_warm_open": [_run_measured(["index", field, *index]) for _ in range(repeats)],
        "cli_search": [
            _run_measured(["search", field, query_words(script=ctx.script)[0], *index]) for _ in range(repeats)
        ],
        "cli_python_floor": [_run_quick([sys.executable, "-c", "pass"]) for _ in range(repeats)],
        "cli_version": [_run_quick([sys.executable, "-m", "memtui", "--version"]) for _ in range(repeats)],
        "cli_help": [_run_quick([sys.executable, "-m", "memtui", "--help"]) for _ in range(repeats)],
        "cli_context": [_run_measured(["context", field]) for _ in range(repeats)],
    }
    out: dict = {}
    for name, figures in runs.items():
        out[f"{name}_s"] = statistics.median(seconds for seconds, _ in figures)
        out[f"{name}_rss_mb"] = max(rss for _, rss in figures)
    for quick in ("cli_stat_floor", "cli_python_floor", "cli_version", "cli_help"):
        del out[f"{quick}_rss_mb"]  # time only
    out["check_output_ratio"] = out["check_s"] / out["check_json_s"]
    return out


# ---------------------------------------------------------------------- running
def run_child(
    size: int,
    changes: int,
    queries: int,
    keep: Path | None,
    script: str = "latin",
    only: list[str] | None = None,
    long_page: int = 50_000,
) -> dict:
    """Generate the field and run every measurement (or those named in ``only``) in this
    process; return the figures."""
    work = Path(tempfile.mkdtemp(prefix=f"memtui-bench-{size}-{script}-", dir=keep))
    os.environ["XDG_CACHE_HOME"] = str(work / "xdg-cache")
    os.environ["XDG_CONFIG_HOME"] = str(work / "xdg-config")
    # Fresh processes start as an installed memtui does: from compiled bytecode (written once,
    # outside the source tree), even where the environment says not to write it.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    try:
        root = work / "field"
        started = time.perf_counter()
        pages = generate_field(root, size, script=script)
        generated = time.perf_counter() - started
        field_bytes = sum((root / p).stat().st_size for p in pages)
        ctx = BenchContext(size, root, pages, work, changes, queries, script=script, long_page=long_page)
        results: dict = {"pages": len(pages), "field_mb": field_bytes / 1e6, "generate_s": generated, "script": script}
        for name, fn in MEASUREMENTS:
            if only and not any(word.lower() in name.lower() for word in only):
                continue
            ctx.results = results
            began = time.perf_counter()
            try:
                results.update(fn(ctx))
            except Exception as exc:  # noqa: BLE001 - report it, keep measuring
                results[f"error: {name}"] = f"{type(exc).__name__}: {exc}"
            results.setdefault("measure_s", {})[name] = time.perf_counter() - began
        if "build_s" in results and "fts5_build_s" in results:
            results["build_ratio"] = results["build_s"] / results["fts5_build_s"]
        results["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        helpers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        if helpers:
            results["helper_peak_rss_mb"] = helpers
        return results
    finally:
        if keep is None:
            shutil.rmtree(work, ignore_errors=True)


ROWS = [
    ("pages", "pages", "{:,.0f}", ""),
    ("field_mb", "field size (MB)", "{:.1f}", ""),
    ("build_s", "full build, Whoosh (s)", "{:.2f}", ""),
    ("build_read_parse_s", "  of which read + parse (s)", "{:.2f}", ""),
    ("build_whoosh_s", "  of which index + commit (s)", "{:.2f}", ""),
    ("fts5_build_s", "full build, SQLite FTS5 (s)", "{:.2f}", ""),
    ("build_ratio", "build ratio Whoosh / FTS5", "{:.1f}x", "build_ratio"),
    ("process_build_s", "memtui index --rebuild, whole process (s)", "{:.2f}", ""),
    ("process_build_ratio", "  whole-process ratio / FTS5", "{:.1f}x", "build_ratio"),
    ("process_build_rss_mb", "  peak RSS of its largest process (MB)", "{:.0f}", "process_build_rss_mb"),
    ("index_mb", "index size (MB)", "{:.1f}", ""),
    ("warm_open_s", "warm open, nothing changed (s)", "{:.3f}", "warm_open_s"),
    ("change_p50_ms", "change latency p50 (ms)", "{:.0f}", ""),
    ("change_p95_ms", "change latency p95 (ms)", "{:.0f}", "change_p95_ms"),
    ("change_misses", "changes never found (10 s)", "{:.0f}", ""),
    ("search_p50_ms", "search latency p50 (ms)", "{:.1f}", ""),
    ("search_p95_ms", "search latency p95 (ms)", "{:.1f}", "search_p95_ms"),
    ("phrase_p50_ms", "phrase search latency p50 (ms)", "{:.1f}", ""),
    ("phrase_p95_ms", "phrase search latency p95 (ms)", "{:.1f}", "phrase_p95_ms"),
    ("segments_after_changes", "segments after the changes", "{:.0f}", ""),
    ("segments_when_searching", "segments when searching (merged)", "{:.0f}", ""),
    ("tui_cold_launch_s", "TUI launch, no cache or index (s)", "{:.2f}", "tui_cold_launch_s"),
    ("tui_cold_index_ready_s", "  index built in the TUI by (s)", "{:.1f}", ""),
    ("tui_warm_launch_s", "TUI launch, everything current (s)", "{:.2f}", "tui_warm_launch_s"),
    ("tui_key_p50_ms", "keystroke to repaint p50, index building (ms)", "{:.1f}", ""),
    ("tui_key_p95_ms", "keystroke to repaint p95, index building (ms)", "{:.1f}", ""),
    ("tui_keys_during_build", "  keys sent while the index built", "{:.0f}", ""),
    ("storm_pages", "write storm: new pages written (50 a second)", "{:,.0f}", ""),
    ("storm_key_p95_ms", "  keystroke to repaint p95 meanwhile (ms)", "{:.0f}", "storm_key_p95_ms"),
    ("storm_lag_p50_ms", "  write to found by search p50 (ms)", "{:.0f}", ""),
    ("storm_lag_p95_ms", "  write to found by search p95 (ms)", "{:.0f}", "storm_lag_p95_ms"),
    ("storm_found", "  pages found within 30 s", "{:,.0f}", ""),
    ("storm_settle_s", "  waited before it for the app to settle (s)", "{:.1f}", ""),
    ("trickle_new_p50_ms", "one change at a time: new page found by search p50 (ms)", "{:.0f}", ""),
    ("trickle_new_p95_ms", "  new page found by search p95 (ms)", "{:.0f}", "trickle_new_p95_ms"),
    ("trickle_rewrite_p50_ms", "  rewrite found by search p50 (ms)", "{:.0f}", ""),
    ("trickle_rewrite_p95_ms", "  rewrite found by search p95 (ms)", "{:.0f}", "trickle_rewrite_p95_ms"),
    ("trickle_missed", "  changes not found within 30 s", "{:.0f}", ""),
    ("detect_extra_s", "dialect detection, beyond the scan (s)", "{:.3f}", ""),
    ("detect_share_pct", "  share of the TUI cold launch (%)", "{:.1f}", "detect_share_pct"),
    ("claims", "claims (lines with a source tag)", "{:,.0f}", ""),
    ("claims_first_s", "claims, first read of every page (s)", "{:.2f}", ""),
    ("claims_warm_s", "claims, unchanged field, fresh process (s)", "{:.2f}", "claims_warm_s"),
    ("claims_uncited", "  uncited claims listed", "{:,.0f}", ""),
    ("claims_cli_uncited_s", "  memtui claims --uncited, whole process (s)", "{:.2f}", ""),
    ("page_lines", "long page: lines", "{:,.0f}", ""),
    ("page_open_s", "  open to its first lines drawn (s)", "{:.2f}", "page_open_s"),
    ("page_key_p50_ms", "  scrolling key to repaint p50 (ms)", "{:.1f}", ""),
    ("page_key_p95_ms", "  scrolling key to repaint p95 (ms)", "{:.1f}", "page_key_p95_ms"),
    ("page_key_max_ms", "  scrolling key to repaint, slowest (ms)", "{:.1f}", ""),
    ("check_s", "memtui check, whole process, warm (s)", "{:.2f}", ""),
    ("check_rss_mb", "  its peak RSS (MB)", "{:.0f}", "check_rss_mb"),
    ("check_json_s", "memtui check --json, whole process (s)", "{:.2f}", ""),
    ("check_json_rss_mb", "  its peak RSS (MB)", "{:.0f}", ""),
    ("check_output_ratio", "  summary / --json time", "{:.2f}x", "check_output_ratio"),
    ("cli_stat_floor_s", "a process that stats every file, the floor (s)", "{:.2f}", ""),
    ("cli_warm_open_s", "memtui index, nothing changed, whole process (s)", "{:.2f}", "cli_warm_open_s"),
    ("cli_warm_open_rss_mb", "  its peak RSS (MB)", "{:.0f}", ""),
    ("cli_search_s", "memtui search, whole process (s)", "{:.2f}", "cli_search_s"),
    ("cli_search_rss_mb", "  its peak RSS (MB)", "{:.0f}", ""),
    ("cli_python_floor_s", "a Python process doing nothing, the floor (s)", "{:.3f}", ""),
    ("cli_version_s", "memtui --version, whole process (s)", "{:.3f}", "cli_version_s"),
    ("cli_help_s", "memtui --help, whole process (s)", "{:.3f}", "cli_help_s"),
    ("cli_context_s", "memtui context, whole process (s)", "{:.2f}", ""),
    ("cli_context_rss_mb", "  its peak RSS (MB)", "{:.0f}", ""),
    ("peak_rss_mb", "peak RSS (MB)", "{:.0f}", ""),
    ("helper_peak_rss_mb", "  peak RSS of the largest child process (MB)", "{:.0f}", ""),
]


FIELD_LABEL = {"latin": "", "cjk": " CJK"}


def label_of(size: int, script: str) -> str:
    """The key of a field's figures: "1000" (English), "1000-cjk"."""
    return str(size) if script == "latin" else f"{size}-{script}"


def print_table(runs: list[tuple[int, str, dict]]) -> None:
    """One column per (size, field script)."""
    heads = [f"N={size:,}{FIELD_LABEL.get(script, ' ' + script)}" for size, script, _ in runs]
    label_width = max(len(label) for _, label, _, _ in ROWS) + 2
    header = "metric".ljust(label_width) + "".join(h.rjust(16) for h in heads) + "   target"
    print(header)
    print("-" * len(header))
    known = {key for key, _, _, _ in ROWS} | {"script", "measure_s"}  # measure_s: seconds per measurement (JSON only)
    for key, label, fmt, target in ROWS:
        if not any(key in figures for _, _, figures in runs):
            continue
        cells = []
        for size, _, figures in runs:
            value = figures.get(key)
            text = "-" if value is None else fmt.format(value)
            if target and value is not None and not TARGETS[target][1](value, size):
                text += " !"
            cells.append(text.rjust(16))
        note = TARGETS[target][0] if target else ""
        print(label.ljust(label_width) + "".join(cells) + ("   " + note if note else ""))
    extra = sorted({k for _, _, figures in runs for k in figures if k not in known and k != "generate_s"})
    for key in extra:
        cells = "".join(str(figures.get(key, "-"))[:40].rjust(16) for _, _, figures in runs)
        print(key.ljust(label_width) + cells)
    print("(! = misses its target)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000], help="field sizes (pages)")
    parser.add_argument("--changes", type=int, default=50, help="page rewrites for the change latency")
    parser.add_argument("--queries", type=int, default=100, help="queries for the search latency")
    parser.add_argument("--quick", action="store_true", help="few changes and queries (a smoke run)")
    parser.add_argument("--save", action="store_true", help="write the figures to bench/results/")
    parser.add_argument("--json", metavar="PATH", help="write the figures to this JSON file")
    parser.add_argument("--keep", metavar="DIR", help="generate fields under DIR and keep them")
    parser.add_argument(
        "--fields",
        nargs="+",
        choices=["latin", "cjk"],
        default=["latin", "cjk"],
        help="which synthetic fields: English (latin) and/or CJK-heavy (cjk); default both",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="WORD",
        help="run only the measurements whose name holds one of these words (e.g. claims)",
    )
    parser.add_argument(
        "--long-page",
        type=int,
        default=50_000,
        metavar="LINES",
        help="lines of the page the long-page measurement opens (default 50,000)",
    )
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--script", default="latin", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.quick:
        args.changes = min(args.changes, 5)
        args.queries = min(args.queries, 10)
    keep = Path(args.keep) if args.keep else None
    if keep:
        keep.mkdir(parents=True, exist_ok=True)
    if args.child:
        print(
            json.dumps(run_child(args.child, args.changes, args.queries, keep, args.script, args.only, args.long_page))
        )
        return 0
    env = dict(os.environ)
    runs: list[tuple[int, str, dict]] = []
    for size in args.sizes:
        for script in args.fields:
            command = [
                sys.executable,
                str(Path(__file__).resolve()),
                "--child",
                str(size),
                "--changes",
                str(args.changes),
                "--queries",
                str(args.queries),
                "--script",
                script,
                "--long-page",
                str(args.long_page),
            ]
            if args.only:
                command += ["--only", *args.only]
            if keep:
                command += ["--keep", str(keep)]
            print(f"measuring N={size:,} ({script}) ...", file=sys.stderr, flush=True)
            done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
            if done.returncode != 0:
                print(done.stderr, file=sys.stderr)
                return done.returncode
            runs.append((size, script, json.loads(done.stdout.strip().splitlines()[-1])))
    print_table(runs)
    payload = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "changes": args.changes,
        "queries": args.queries,
        "results": {label_of(size, script): figures for size, script, figures in runs},
    }
    targets = []
    if args.save:
        RESULTS_DIR.mkdir(exist_ok=True)
        targets.append(RESULTS_DIR / f"bench-{time.strftime('%Y%m%d-%H%M%S')}.json")
    if args.json:
        targets.append(Path(args.json))
    for target in targets:
        target.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {target}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
