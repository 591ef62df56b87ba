"""The TUI's long-page figures, run headless in a child process.

    python bench/page_open.py FIELD PAGE --xdg DIR

prints one JSON line: seconds from ``open_page`` until the page screen has painted its
first lines (and the body answers keys), and key-to-repaint latencies for the scrolling
keys while it is open (each key is posted, then we wait until the view moved and the
screen refreshed after it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from pathlib import Path

TIMEOUT = 300.0  # seconds
KEYS = ["down"] * 10 + ["pagedown"] * 5 + ["up"] * 5 + ["pageup"] * 3 + ["end", "up", "home", "end", "home"]


async def _refreshed(app) -> None:
    done = asyncio.get_running_loop().create_future()
    app.call_after_refresh(lambda: done.done() or done.set_result(None))
    await done


async def _measure(field: Path, page: str, *, keys: bool = True) -> dict:
    from textual import events

    from memtui.tui.app import MemtuiApp
    from memtui.tui.screens.page import PageScreen
    from memtui.tui.settings import Settings

    app = MemtuiApp(field, use_index=False, watch=False, settings=Settings())
    result: dict = {}
    async with app.run_test(size=(120, 40)) as pilot:
        await app.ready.wait()
        await app.workers.wait_for_complete()
        await pilot.pause()
        started = time.perf_counter()
        app.open_page(page)
        while not (isinstance(app.screen, PageScreen) and app.screen.is_mounted):
            await asyncio.sleep(0.0005)
        await _refreshed(app)
        result["open_s"] = time.perf_counter() - started
        screen = app.screen
        body = screen.query_one("#page-body")
        latencies: dict[str, list[float]] = {}
        for key in KEYS if keys else ():
            before = body.scroll_y
            sent = time.perf_counter()
            app.post_message(events.Key(key, None))
            deadline = sent + 10
            while body.scroll_y == before and time.perf_counter() < deadline:
                await asyncio.sleep(0.0005)
            await _refreshed(app)
            latencies.setdefault(key, []).append(round((time.perf_counter() - sent) * 1000, 2))
            await asyncio.sleep(0.01)
        result["key_latencies_ms"] = latencies
        result["lines"] = len(screen.parsed.body.lines) if screen.parsed else None
    return result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("field")
    parser.add_argument("page", help="the page to open, relative to FIELD")
    parser.add_argument("--xdg", required=True, help="folder for XDG cache/config")
    parser.add_argument("--open-only", action="store_true", help="no keys (a page too short to scroll)")
    args = parser.parse_args()
    os.environ["XDG_CACHE_HOME"] = str(Path(args.xdg) / "cache")
    os.environ["XDG_CONFIG_HOME"] = str(Path(args.xdg) / "config")
    result = asyncio.run(
        asyncio.wait_for(_measure(Path(args.field), args.page, keys=not args.open_only), timeout=TIMEOUT)
    )
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
