"""The TUI's side of the benchmark, run headless in child processes.

    python bench/tui_launch.py FIELD --xdg DIR [--index] [--keys N]
    python bench/tui_launch.py FIELD --xdg DIR --storm RATE [--storm-seconds S]
    python bench/tui_launch.py FIELD --xdg DIR --trickle N [--trickle-pause S]

prints one JSON line: seconds from process start to an interactive browse list
(the page table holds a row for every page and a key moved its cursor), and,
with ``--keys``, keystroke-to-repaint latencies measured while the search index
builds (each key is posted, then we wait for the cursor to move and for the
next screen refresh after it).

With ``--storm``, the app (already current) watches the field while an agent writes
RATE new pages a second; it prints key latencies and each page's index lag. With
``--trickle N``, the app (already current) watches while an agent makes N changes one
at a time (a new page, then a rewrite, and so on): each change's write to found by search.

``bench.py`` calls it twice per size: once with empty cache folders (no page
cache, no index: the first launch ever) and once right after (everything
current).
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()  # as early as possible: imports count toward launch time

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
from pathlib import Path  # noqa: E402

TIMEOUT = 600.0  # seconds (at 100,000 pages the first analysis alone takes about a minute)


async def _settled(app, *, quiet: float = 1.0, limit: float = 300.0) -> float:
    """Wait until the index has written nothing for ``quiet`` seconds and merges nothing beside,
    no analysis is due, no worker runs and the row cache is written (at most ``limit``): what the app does
    after opening (pages changed while it was closed, such as an earlier run's, are committed,
    checked and saved; the segments of a build are merged) is not counted as the agent's.
    Returns the seconds waited."""
    from textual.worker import WorkerState

    started = time.perf_counter()
    calm_since = None
    while time.perf_counter() - started < limit:
        index = app.session.index
        busy = (
            (index is not None and (index.writing() or index.merging()))
            or not app.session.settled
            or app.session.writing_caches
            or any(worker.state == WorkerState.RUNNING for worker in app.workers)
        )
        now = time.perf_counter()
        if busy:
            calm_since = None
        elif calm_since is None:
            calm_since = now
        elif now - calm_since >= quiet:
            break
        await asyncio.sleep(0.05)
    return round(time.perf_counter() - started, 2)


_AGENT = """
import sys, time
from pathlib import Path
folder, rate, count = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
start = time.monotonic()
for number in range(count):
    delay = start + number / rate - time.monotonic()
    if delay > 0:
        time.sleep(delay)
    name = f"storm-{number:05}.md"
    (folder / name).write_text(f"---\\ntitle: Storm note {number}\\n---\\nThe stormword{number}x was seen. [observed]\\n")
    print(name, time.monotonic(), flush=True)
"""


async def _storm(field: Path, *, rate: int, seconds: float, expected: int) -> dict:
    """With the app open and current, an agent writes ``rate`` new pages a second for
    ``seconds`` (through the real watcher) while keys are pressed every 50 ms: key latency,
    and how far behind the index is (each page's write to found by search)."""
    import threading

    from textual import events

    from memtui.tui.app import MemtuiApp
    from memtui.tui.settings import Settings
    from memtui.tui.widgets.page_table import PageTable

    app = MemtuiApp(field, use_index=True, watch=True, settings=Settings())
    folder = field / "storm"
    folder.mkdir(exist_ok=True)
    written: dict[str, float] = {}
    stop = threading.Event()

    def agent() -> None:
        """The agent is a process of its own, as a real one is (its writes took a tenth of the
        app's interpreter when they ran in a thread here); it prints each page's write time
        (CLOCK_MONOTONIC, the same clock in every process here as ``time.monotonic``)."""
        import subprocess
        import sys

        proc = subprocess.Popen(
            [sys.executable, "-I", "-c", _AGENT, str(folder), str(rate), str(int(rate * seconds))],
            stdout=subprocess.PIPE,
            text=True,
        )
        for line in proc.stdout:
            name, _, when = line.rpartition(" ")
            written[f"storm/{name}"] = float(when)
        proc.wait()
        stop.set()

    result: dict = {}
    async with app.run_test(size=(120, 40)):
        await app.ready.wait()
        await app.index_ready.wait()
        table = app.screen.query_one(PageTable)
        result["settle_s"] = await _settled(app)
        latencies: list[float] = []
        lags: list[float] = []
        checked: set[str] = set()

        def follow() -> None:
            """Each written page, oldest first: when does a search find it?"""
            number = 0
            total = int(rate * seconds)
            give_up = None
            while number < total:
                path = f"storm/storm-{number:05}.md"
                if path not in written:
                    time.sleep(0.01)
                    continue
                hits = (
                    app.session.index.search(f"stormword{number}x", limit=1) if app.session.index is not None else None
                )
                if hits is not None and any(h.path == path for h in hits):
                    lags.append(time.monotonic() - written[path])
                    checked.add(path)
                    number += 1
                    continue
                if stop.is_set():
                    give_up = give_up or time.perf_counter() + 30
                    if time.perf_counter() > give_up:
                        break
                time.sleep(0.05)

        thread = threading.Thread(target=agent, daemon=True)
        watcher = threading.Thread(target=follow, daemon=True)
        thread.start()
        watcher.start()
        while not stop.is_set() or len(checked) < len(written):
            before = table.cursor
            repainted = asyncio.get_running_loop().create_future()
            sent = time.perf_counter()
            app.post_message(events.Key("down" if before < table.row_count - 1 else "up", None))
            deadline = sent + 10
            while table.cursor == before and time.perf_counter() < deadline:
                await asyncio.sleep(0.0005)
            app.call_after_refresh(lambda done=repainted: done.done() or done.set_result(None))
            await repainted
            latencies.append(time.perf_counter() - sent)
            if stop.is_set() and time.monotonic() - max(written.values(), default=0) > 30:
                break
            await asyncio.sleep(0.05)
        thread.join()
        watcher.join()
    result["storm_pages"] = len(written)
    result["key_latencies_ms"] = [round(v * 1000, 2) for v in latencies]
    result["index_lags_s"] = [round(v, 3) for v in lags]
    return result


async def _trickle(field: Path, *, changes: int, pause: float) -> dict:
    """With the app open and current (watching the field), an agent makes one change at a time,
    ``pause`` seconds apart, alternately a new page and a rewrite of an existing one (as an
    editor writes: temp file + rename): each change's write to found by search."""
    import random

    from synthetic import rewrite_page

    from memtui.tui.app import MemtuiApp
    from memtui.tui.settings import Settings

    app = MemtuiApp(field, use_index=True, watch=True, settings=Settings())
    folder = field / "trickle"
    folder.mkdir(exist_ok=True)
    rng = random.Random(3)
    new_lags: list[float] = []
    rewrite_lags: list[float] = []
    missed = 0
    async with app.run_test(size=(120, 40)):
        await app.ready.wait()
        await app.index_ready.wait()
        settle_s = await _settled(app)
        existing = sorted(path for path in app.session.field.pages if path.startswith("notes/") or "/" in path)
        loop = asyncio.get_running_loop()
        for number in range(changes):
            marker = f"tricklemark{number}x{rng.randrange(10**6)}"
            if number % 2 == 0:
                rel = f"trickle/trickle-{number:04}.md"
                started = time.perf_counter()
                (field / rel).write_text(f"---\ntitle: Trickle {number}\n---\nThe {marker} was seen. [observed]\n")
                lags = new_lags
            else:
                rel = rng.choice(existing)
                started = time.perf_counter()
                await loop.run_in_executor(None, rewrite_page, field, rel, marker)
                lags = rewrite_lags
            while True:
                # Asked from a thread, as the app's search box asks: the UI loop keeps running.
                hits = await loop.run_in_executor(
                    None, lambda marker=marker: app.session.index.search(marker, limit=3) if app.session.index else []
                )
                if any(hit.path == rel for hit in hits):
                    lags.append(time.perf_counter() - started)
                    break
                if time.perf_counter() - started > 30:
                    missed += 1
                    break
                await asyncio.sleep(0.005)
            await asyncio.sleep(pause)
    return {
        "new_lags_s": [round(v, 4) for v in new_lags],
        "rewrite_lags_s": [round(v, 4) for v in rewrite_lags],
        "missed": missed,
        "settle_s": settle_s,
    }


async def _measure(field: Path, *, use_index: bool, keys: int, expected: int) -> dict:
    from textual import events

    from memtui.tui.app import MemtuiApp
    from memtui.tui.settings import Settings
    from memtui.tui.widgets.page_table import PageTable

    app = MemtuiApp(field, use_index=use_index, watch=False, settings=Settings())
    result: dict = {}
    async with app.run_test(size=(120, 40)):
        table = None
        while True:
            await asyncio.sleep(0.002)
            try:
                table = app.screen.query_one(PageTable)
            except Exception:  # noqa: BLE001 - not mounted yet
                continue
            if table.row_count >= expected:
                break
        before = table.cursor
        app.post_message(events.Key("down", None))
        while table.cursor == before:
            await asyncio.sleep(0.001)
        result["interactive_s"] = time.perf_counter() - STARTED
        result["interactive_epoch"] = time.time()  # the parent adds interpreter start-up
        latencies = []
        building = 0
        if keys and use_index:
            # Wait until the index build is under way, then type while it runs.
            while app.session.index is None and not app.session.index_progress.total and not app.index_ready.is_set():
                await asyncio.sleep(0.005)
        for _ in range(keys):
            if app.session.index is None and not app.index_ready.is_set():
                building += 1
            before = table.cursor
            repainted = asyncio.get_running_loop().create_future()
            sent = time.perf_counter()
            app.post_message(events.Key("down" if before < table.row_count - 1 else "up", None))
            while table.cursor == before:
                await asyncio.sleep(0.0005)
            app.call_after_refresh(lambda done=repainted: done.done() or done.set_result(None))
            await repainted
            latencies.append(time.perf_counter() - sent)
            await asyncio.sleep(0.02)
        if latencies:
            result["key_latencies_ms"] = [round(v * 1000, 2) for v in latencies]
            result["keys_during_build"] = building
        await app.ready.wait()
        result["analysed_s"] = time.perf_counter() - STARTED
        if use_index:
            await app.index_ready.wait()
            result["index_ready_s"] = time.perf_counter() - STARTED
    return result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("field")
    parser.add_argument("--xdg", required=True, help="folder for XDG cache/config (empty = first launch ever)")
    parser.add_argument("--index", action="store_true", help="open the search index as the app does")
    parser.add_argument("--keys", type=int, default=0)
    parser.add_argument("--expected", type=int, required=True, help="number of pages in the field")
    parser.add_argument(
        "--storm", type=int, default=0, metavar="RATE", help="new pages a second written while keys are pressed"
    )
    parser.add_argument("--storm-seconds", type=float, default=10.0)
    parser.add_argument(
        "--trickle",
        type=int,
        default=0,
        metavar="N",
        help="changes made one at a time (new pages and rewrites, alternately)",
    )
    parser.add_argument("--trickle-pause", type=float, default=1.5)
    args = parser.parse_args()
    os.environ["XDG_CACHE_HOME"] = str(Path(args.xdg) / "cache")
    os.environ["XDG_CONFIG_HOME"] = str(Path(args.xdg) / "config")
    if args.trickle:
        measuring = _trickle(Path(args.field), changes=args.trickle, pause=args.trickle_pause)
    elif args.storm:
        measuring = _storm(Path(args.field), rate=args.storm, seconds=args.storm_seconds, expected=args.expected)
    else:
        measuring = _measure(Path(args.field), use_index=args.index, keys=args.keys, expected=args.expected)
    # A crashed app never shows its list: give up rather than hang the benchmark (and its test).
    result = asyncio.run(asyncio.wait_for(measuring, timeout=TIMEOUT))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
