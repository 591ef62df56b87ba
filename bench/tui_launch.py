"""The TUI's side of the benchmark, run headless in child processes.

    python bench/tui_launch.py FIELD --xdg DIR [--index] [--keys N]

prints one JSON line: seconds from process start to an interactive browse list
(the page table holds a row for every page and a key moved its cursor), and,
with ``--keys``, keystroke-to-repaint latencies measured while the search index
builds (each key is posted, then we wait for the cursor to move and for the
next screen refresh after it).

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

TIMEOUT = 300.0  # seconds


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
            while app.index is None and not app.index_progress.total and not app.index_ready.is_set():
                await asyncio.sleep(0.005)
        for _ in range(keys):
            if app.index is None and not app.index_ready.is_set():
                building += 1
            before = table.cursor
            repainted = asyncio.get_running_loop().create_future()
            sent = time.perf_counter()
            app.post_message(events.Key("down" if before < table.row_count - 1 else "up", None))
            while table.cursor == before:
                await asyncio.sleep(0.0005)
            app.call_after_refresh(lambda: repainted.done() or repainted.set_result(None))
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
    args = parser.parse_args()
    os.environ["XDG_CACHE_HOME"] = str(Path(args.xdg) / "cache")
    os.environ["XDG_CONFIG_HOME"] = str(Path(args.xdg) / "config")
    measuring = _measure(Path(args.field), use_index=args.index, keys=args.keys, expected=args.expected)
    # A crashed app never shows its list: give up rather than hang the benchmark (and its test).
    result = asyncio.run(asyncio.wait_for(measuring, timeout=TIMEOUT))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
