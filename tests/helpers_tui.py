"""Helpers for the TUI tests: start the app on a copy of a field and wait until it is ready."""

from __future__ import annotations

import contextlib
from pathlib import Path

from memtui.tui.app import MemtuiApp
from memtui.tui.settings import Settings

SIZE = (120, 40)


def make_app(root: Path, *, theme: str = "memtui-dusk", use_index: bool = False, watch: bool = False) -> MemtuiApp:
    return MemtuiApp(root, use_index=use_index, watch=watch, theme=theme, settings=Settings(theme=theme))


@contextlib.asynccontextmanager
async def page_list_open(root: Path, size: tuple[int, int] = SIZE):
    """The app open and ready on ``root``: (app, pilot, its page list)."""
    from memtui.tui.widgets.page_table import PageTable

    app = make_app(root)
    async with app.run_test(size=size) as pilot:
        await wait_ready(app, pilot)
        yield app, pilot, app.screen.query_one(PageTable)


async def wait_ready(app: MemtuiApp, pilot, *, index: bool = False) -> None:
    await app.ready.wait()
    if index:
        await app.index_ready.wait()
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()
    await screen_settled(app, pilot)


async def screen_settled(app: MemtuiApp, pilot) -> None:
    """A screen coalesces updates (the analysis, typing in a filter) into one refill a
    moment later: wait for it."""
    for _ in range(400):
        screen = app.screen
        if (
            getattr(screen, "_reload_timer", None) is None
            and getattr(screen, "_filter_timer", None) is None
            and app.session.settled
        ):
            break
        await pilot.pause(0.02)
    await pilot.pause()


async def screen_still(app: MemtuiApp, pilot, *, quiet: float = 0.1, timeout: float = 20.0) -> None:
    """Wait until what the screen shows stops changing: no refill or analysis waits, and two looks
    at the whole screen ``quiet`` seconds apart are the same. A snapshot taken then does not race
    a worker or a timer still drawing (under load, three snapshots were taken a moment too early
    and failed). Workers are not waited for: one may wait for the dialog on screen."""
    import time

    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        await screen_settled(app, pilot)
        now = app.export_screenshot()
        if now == last:
            return
        last = now
        await pilot.pause(quiet)


async def wait_for_screen(app: MemtuiApp, pilot, screen_type, *, timeout: float = 2.0) -> bool:
    """Wait until ``screen_type`` is on top (a worker pushes it a moment after a key)."""
    for _ in range(int(timeout / 0.02)):
        if isinstance(app.screen, screen_type):
            return True
        await pilot.pause(0.02)
    return isinstance(app.screen, screen_type)


async def search_results(pilot, query: str, *, timeout: float = 10.0) -> list:
    """Wait until the search screen shows the results of the whole ``query``: under load a
    half-typed query's results (from the debounce) can arrive before those of the whole one."""
    screen = pilot.app.screen
    for _ in range(int(timeout / 0.02)):
        if screen.hits and screen.hits_query == query:
            break
        await pilot.pause(0.02)
    return screen.hits


def rendered_text(widget, width: int = 200) -> str:
    """What a Static shows, as plain text (its Rich content rendered without styles); for the
    page body, every row (it draws only those in sight)."""
    import io

    from rich.console import Console
    from rich.text import Text

    if hasattr(widget, "export_text"):
        return widget.export_text()
    content = widget.content
    if isinstance(content, str):
        content = Text(content)
    console = Console(file=io.StringIO(), width=width, color_system=None, force_terminal=False, legacy_windows=False)
    console.print(content)
    return console.file.getvalue()


def screen_text(app) -> str:
    """The whole screen as plain text (from the SVG export, spaces restored)."""
    import html
    import re

    svg = app.export_screenshot()
    texts = re.findall(r"<text[^>]*>(.*?)</text>", svg, flags=re.S)
    return html.unescape("".join(texts)).replace("\xa0", " ")
