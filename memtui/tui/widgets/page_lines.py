"""The page view's body: only the rows in sight are styled, wrapped and drawn (Textual's Line API).

A page of 50,000 lines opens as fast as one of 50: the rows (``page_body.Rows``) build
each line's ``Text`` only when it is shown, and the wrapped height of a row is known for
free when its cells fit the width (most lines), estimated otherwise until it is measured:
the rows in sight at once, the others a few milliseconds at a time in the background, the
view held on the row at its top while they change.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Protocol, cast

from rich.style import Style
from rich.text import Text
from textual import events
from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer

from memtui.tui.widgets.page_body import LINK_META, Rows
from memtui.tui.widgets.scroll_size import set_virtual_size

BLOCK = 256  # rows per partial sum
MEASURE_BUDGET = 0.008  # seconds of background measuring per turn of the event loop
STRIP_CACHE = 600  # rows kept wrapped
HIGHLIGHT = Style(reverse=True)


class RowHeights:
    """The wrapped height of every row at one content width: exact where known, else estimated.

    A row whose cells fit the width is one line; a longer (or non-ASCII) row counts
    ceil(cells / width) until ``measure`` wraps it (word wrapping can take a line more).
    Sums per block of rows make y -> row and row -> y a walk over blocks, not rows.
    """

    def __init__(self, cells: list[int], width: int) -> None:
        self.width = width
        self.heights = [1 if 0 <= c <= width else max(1, -(-abs(c) // width)) for c in cells]
        self.exact = bytearray(1 if 0 <= c <= width else 0 for c in cells)
        self.pending = [row for row, c in enumerate(cells) if not 0 <= c <= width]
        self.next_pending = 0  # measured in order, from here
        self.blocks = [sum(self.heights[i : i + BLOCK]) for i in range(0, len(cells), BLOCK)]
        self.total = sum(self.blocks)

    def __len__(self) -> int:
        return len(self.heights)

    def set(self, row: int, height: int) -> bool:
        """Record a measured height; True if it differs from what was counted."""
        self.exact[row] = 1
        delta = height - self.heights[row]
        if delta:
            self.heights[row] = height
            self.blocks[row // BLOCK] += delta
            self.total += delta
        return bool(delta)

    def y_of(self, row: int) -> int:
        """The first line of ``row``."""
        block = row // BLOCK
        return sum(self.blocks[:block]) + sum(self.heights[block * BLOCK : row])

    def top(self, y: int) -> tuple[int, int]:
        """The row shown on line ``y`` and the line of it that is."""
        if not self.heights:
            return 0, 0
        if y >= self.total:
            last = len(self.heights) - 1
            return last, self.heights[last] - 1
        start = 0
        for block, size in enumerate(self.blocks):
            if start + size > max(0, y):
                row = block * BLOCK
                for height in self.heights[row : row + BLOCK]:
                    if start + height > y:
                        return row, max(0, y - start)
                    start += height
                    row += 1
            start += size
        return len(self.heights) - 1, 0


class FollowsLinks(Protocol):
    """The screen of a ``PageLines`` that follows links (the page view)."""

    def follow_link(self, index: int) -> None: ...


class PageLines(ScrollView, can_focus=True):
    """Rows of a page; clicks on a link go to the screen's ``follow_link`` with its index."""

    def __init__(self, *, id: str | None = None, follows_links: bool = True) -> None:
        super().__init__(id=id)
        self.follows_links = follows_links  # a click on a link follows it (the screen's ``follow_link``)
        self.rows: Rows = Rows()
        self.selected_link: int | None = None
        self.highlighted: tuple[int, int] | None = None  # a range of rows, both included
        self.shows = 0  # how many times rows were put in (what a re-render costs is counted here)
        self._heights: RowHeights | None = None
        self._strips: OrderedDict[int, list[Strip]] = OrderedDict()
        self._window_key: tuple | None = None
        self._window: list[tuple[int, int]] = []
        self._pending_scroll: tuple[int, int] | None = None  # (row, lines above it) once laid out
        self._measuring: Timer | None = None
        self._frame: tuple[Style, int] | None = None  # while render_lines draws: (style, width)

    # ------------------------------------------------------------------ what is shown
    def show(self, rows: Rows, *, keep_place: bool = False) -> None:
        """Put in new rows; ``keep_place``: the file line at the top stays at the top."""
        line = self.rows.line_of(self.top_row()) if keep_place and self._heights is not None else None
        at_top = self.scroll_y == 0
        self.rows = rows
        self.shows += 1
        self._heights = None
        self._forget()
        if self.selected_link is not None and self.selected_link >= len(rows.links):
            self.selected_link = None
        if self._layout() and line is not None and not at_top:
            self.scroll_to_row(rows.row_of(line), above=0, if_hidden=False)
        elif not keep_place:
            self.scroll_to(y=0, animate=False)

    def restyle(self) -> None:
        """Draw every row again (the colours changed)."""
        self._forget()

    def select_link(self, index: int | None) -> None:
        before, self.selected_link = self.selected_link, index
        for link in (before, index):
            if link is not None and 0 <= link < len(self.rows.links):
                self._strips.pop(self.rows.row_of(self.rows.links[link].line), None)
        self._window_key = None
        self.refresh()

    def highlight_rows(self, first: int | None, last: int | None = None) -> None:
        """Reverse rows ``first`` to ``last`` (None: none)."""
        before = self.highlighted
        self.highlighted = None if first is None else (first, first if last is None else last)
        for span in (before, self.highlighted):
            if span is not None:
                for row in range(span[0], span[1] + 1):
                    self._strips.pop(row, None)
        self._window_key = None
        self.refresh()

    def _forget(self) -> None:
        self._strips.clear()
        self._window_key = None
        self.refresh()

    # ------------------------------------------------------------------ geometry
    @property
    def text_width(self) -> int:
        return max(1, self.scrollable_content_region.width - self.rows.gutter_width)

    def _layout(self) -> bool:
        """Heights for the current width (kept if the width did not change); False before layout."""
        if self.scrollable_content_region.width <= 0:
            return False
        width = self.text_width
        if self._heights is not None and self._heights.width == width and len(self._heights) == len(self.rows):
            return True
        anchor = self.top_row() if self._heights is not None else None
        self._strips.clear()
        self._window_key = None
        self._heights = RowHeights(self.rows.all_cells(), width)
        self._sync_size()
        if self._pending_scroll is not None:
            row, above = self._pending_scroll
            self._pending_scroll = None
            self.scroll_to_row(row, above=above, if_hidden=False)
        elif anchor is not None and self.scroll_y:
            self.scroll_to(y=self._heights.y_of(min(anchor, len(self.rows) - 1)), animate=False)
        self._schedule_measuring()
        return True

    def _sync_size(self) -> None:
        if self._heights is None:
            return
        set_virtual_size(self, Size(self.scrollable_content_region.width, self._heights.total))

    def on_resize(self, event: events.Resize) -> None:
        self._layout()

    def _measure(self, row: int) -> bool:
        heights = self._heights
        assert heights is not None  # rows are measured only once laid out
        lines = Text(self.rows.plain(row)).wrap(self.app.console, heights.width, overflow="fold")
        return heights.set(row, max(1, len(lines)))

    def _schedule_measuring(self) -> None:
        heights = self._heights
        if self._measuring is None and heights is not None and heights.next_pending < len(heights.pending):
            self._measuring = self.set_timer(0.01, self._measure_some)

    def _measure_some(self) -> None:
        """Measure estimated rows for a few milliseconds; the row at the top stays where it is."""
        self._measuring = None
        heights = self._heights
        if heights is None or not self.is_attached:
            return
        top, offset = self._top()
        at_end = self.max_scroll_y > 0 and self.scroll_y >= self.max_scroll_y
        changed = False
        deadline = time.perf_counter() + MEASURE_BUDGET
        pending = heights.pending
        while heights.next_pending < len(pending) and time.perf_counter() < deadline:
            for row in pending[heights.next_pending : heights.next_pending + 32]:
                if not heights.exact[row]:
                    changed |= self._measure(row)
            heights.next_pending += 32
        if changed:
            self._window_key = None
            self._sync_size()
            if at_end:
                self.scroll_to(y=self.max_scroll_y, animate=False)
            else:
                y = heights.y_of(top) + min(offset, heights.heights[top] - 1)
                if y != round(self.scroll_y):
                    self.scroll_to(y=y, animate=False)
            self.refresh()
        self._schedule_measuring()

    def _top(self) -> tuple[int, int]:
        return self._heights.top(round(self.scroll_y)) if self._heights is not None else (0, 0)

    def top_row(self) -> int:
        return self._top()[0]

    def reading_line(self) -> int | None:
        """The file line at the top of the view (the next one after a marker row)."""
        if self._heights is None:
            return None
        row = self.top_row()
        for candidate in range(row, min(len(self.rows), row + 3)):
            line = self.rows.line_of(candidate)
            if line is not None:
                return line
        return None

    def row_visible(self, row: int) -> bool:
        if self._heights is None:
            return False
        y = self._heights.y_of(row)
        return self.scroll_y <= y < self.scroll_y + self.scrollable_content_region.height - 1

    def scroll_to_row(self, row: int, *, above: int = 2, if_hidden: bool = True) -> None:
        """Bring ``row`` into view with ``above`` lines over it (only if hidden, unless told)."""
        if not self._layout():
            self._pending_scroll = (row, above)
            return
        row = max(0, min(row, len(self.rows) - 1))
        if if_hidden and self.row_visible(row):
            return
        assert self._heights is not None  # laid out
        self.scroll_to(y=max(0, self._heights.y_of(row) - above), animate=False)

    # ------------------------------------------------------------------ keys
    def action_scroll_end(self) -> None:
        """Measure the last screenful first, so the end is the end."""
        if not self._layout():
            return
        heights, room = self._heights, self.scrollable_content_region.height
        assert heights is not None  # laid out
        row, covered = len(heights) - 1, 0
        while row >= 0 and covered < room:
            if not heights.exact[row]:
                self._measure(row)
            covered += heights.heights[row]
            row -= 1
        self._sync_size()
        self._window_key = None
        self.scroll_to(y=self.max_scroll_y, animate=False)

    def action_scroll_home(self) -> None:
        self.scroll_to(y=0, animate=False)

    def action_page_down(self) -> None:
        self.scroll_to(y=self.scroll_y + self.scrollable_content_region.height, animate=False)

    def action_page_up(self) -> None:
        self.scroll_to(y=self.scroll_y - self.scrollable_content_region.height, animate=False)

    def action_scroll_down(self) -> None:
        self.scroll_to(y=self.scroll_y + 1, animate=False)

    def action_scroll_up(self) -> None:
        self.scroll_to(y=self.scroll_y - 1, animate=False)

    def on_click(self, event: events.Click) -> None:
        meta = event.style.meta if event.style else {}
        if LINK_META in meta and self.follows_links:
            event.stop()
            # Only the page view's bodies follow links (``follows_links``).
            cast(FollowsLinks, self.screen).follow_link(int(meta[LINK_META]))

    # ------------------------------------------------------------------ drawing
    def _current_window(self) -> list[tuple[int, int]]:
        """(row, line of the row) for each line in sight; the rows in sight measured first."""
        self._layout()
        heights = self._heights
        region = self.scrollable_content_region
        key = (round(self.scroll_y), region.width, region.height, id(heights))
        if heights is None or key == self._window_key:
            return self._window
        row, offset = heights.top(key[0])
        window: list[tuple[int, int]] = []
        changed = False
        while row < len(heights) and len(window) < region.height:
            if not heights.exact[row]:
                changed |= self._measure(row)
            height = heights.heights[row]
            window.extend((row, line) for line in range(min(offset, height - 1), height))
            row += 1
            offset = 0
        del window[region.height :]
        self._window, self._window_key = window, key
        if changed:
            self.call_later(self._sync_size)
        return window

    def _row_strips(self, row: int) -> list[Strip]:
        strips = self._strips.get(row)
        if strips is not None:
            self._strips.move_to_end(row)
            return strips
        console = self.app.console
        assert self._heights is not None  # the rows drawn are those of the window: laid out
        width = self._heights.width
        lines = self.rows.content(row, self.selected_link).wrap(console, width, overflow="fold")
        gutter = self.rows.gutter(row)
        gutter_strip = Strip(list(gutter.render(console))) if gutter is not None else None
        blank = Strip.blank(self.rows.gutter_width)
        highlighted = self.highlighted is not None and self.highlighted[0] <= row <= self.highlighted[1]
        strips = []
        for index, line in enumerate(lines):
            strip = Strip(list(line.render(console)))  # the spans' styles; the line's own goes under them
            if line.style:
                strip = strip.apply_style(console.get_style(line.style) if isinstance(line.style, str) else line.style)
            strip = strip.adjust_cell_length(width)
            if gutter_strip is not None:
                strip = Strip.join([gutter_strip if index == 0 else blank, strip])
            strips.append(strip.apply_style(HIGHLIGHT) if highlighted else strip)
        self._strips[row] = strips
        if len(self._strips) > STRIP_CACHE:
            self._strips.popitem(last=False)
        return strips

    def render_lines(self, crop: Region) -> list[Strip]:
        # The widget's style and content width, worked out once for the lines drawn together
        # (each reading walks the styles: a fifth of a scroll's repaint when read per line).
        self._frame = (self.rich_style, self.scrollable_content_region.width)
        try:
            return super().render_lines(crop)
        finally:
            self._frame = None

    def render_line(self, y: int) -> Strip:
        window = self._current_window()
        style, width = self._frame or (self.rich_style, self.scrollable_content_region.width)
        if y < len(window):
            row, line = window[y]
            strips = self._row_strips(row)
            strip = strips[line] if line < len(strips) else Strip.blank(width)
        else:
            strip = Strip.blank(width)
        return strip.apply_style(style)

    def export_text(self) -> str:
        """Every row as plain text, gutter included (for tests and copying; not used to draw)."""
        out = []
        for row in range(len(self.rows)):
            gutter = self.rows.gutter(row)
            out.append((gutter.plain if gutter is not None else "") + self.rows.content(row).plain)
        return "\n".join(out)
