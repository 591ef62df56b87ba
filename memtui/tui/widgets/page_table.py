"""A fast list of pages: a Line API widget that renders only the rows on screen.

10,000 rows fill instantly (a list view that mounts one widget per row took
47 s; this keeps rows as plain data). Live updates replace row data by key, so the
cursor stays on the same page and the scroll position does not jump.

Narrow terminals: columns of low ``priority`` (decorative: kind, updated) are
dropped before the identity columns (title, path) shrink below their minimum;
a ``FIT`` column is as wide as its widest cell. Every row is reachable: the
table never scrolls sideways, so no scrollbar can cover the last row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from memtui.tui.widgets.scroll_size import set_virtual_size


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    width: int  # 0 = share the remaining width (by weight); FIT = as wide as its widest cell
    min_width: int = 8
    weight: int = 1
    priority: int = 5  # on a narrow terminal, the lowest priority columns are dropped first


FIT = -1  # a column as wide as its content (the state badges), no wider
ESSENTIAL = 8  # columns of this priority or more are never dropped


GUTTER = 1
CURSOR_MARK = "▶"

# A cell is text plus an optional style name resolved per theme. Cell text must
# already be safe for one line: build it with memtui.textsafety.one_line.
Cell = tuple[str, str]


@dataclass(frozen=True, slots=True)
class PreparedRows:
    """Rows ready for ``PageTable.set_prepared`` (made off the UI thread)."""

    keys: list[str]
    cells: dict
    index: dict[str, int]
    fit: dict[str, int]


STRIP_CACHE = 1000  # rows kept drawn (a screen shows about forty)
CELL_STYLES = ("header", "cursor", "error", "warning", "secondary", "accent", "success", "primary", "dim")


class _Frame:
    """What every row drawn together shares: the width, the widget's style and the cell
    styles of the theme (each reading walks the styles: most of a row's drawing when
    read per cell)."""

    __slots__ = ("width", "base", "styles", "_table")

    def __init__(self, table: PageTable) -> None:
        self._table = table
        self.width = table.scrollable_content_region.width
        self.base = table.rich_style
        self.styles: dict[str, Style] = {}

    def style(self, name: str) -> Style:
        style = self.styles.get(name)
        if style is None:
            style = self.styles[name] = self._table._style(name)
        return style

    def key(self, widths: list[int]) -> tuple:
        return (self.width, tuple(widths), self.base, *(self.style(name) for name in CELL_STYLES))


class _LazyCells(dict):
    """Row cells made on first use."""

    def __init__(self, make: Callable[[str], tuple[Cell, ...]]) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, key: str) -> tuple[Cell, ...]:
        cells = self[key] = self._make(key)
        return cells


class PageTable(ScrollView, can_focus=True):
    """Rows of (key, cells); a header line; cursor, sort and mouse support."""

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup,ctrl+b", "page(-1)", "Page up", show=False),
        Binding("pagedown,ctrl+f", "page(1)", "Page down", show=False),
        Binding("home,g", "edge(0)", "Top", show=False),
        Binding("end,G", "edge(1)", "Bottom", show=False),
        Binding("enter", "select", "Open", show=True),
    ]

    COMPONENT_CLASSES = {f"page-table--{name}" for name in CELL_STYLES}

    DEFAULT_CSS = """
    PageTable { height: 1fr; overflow-x: hidden; }
    """

    cursor: reactive[int] = reactive(0, always_update=True)

    class _TableMessage(Message):
        def __init__(self, table: PageTable) -> None:
            super().__init__()
            self.table = table

        @property
        def control(self) -> PageTable:
            return self.table

    class Highlighted(_TableMessage):
        """The cursor moved to another row (``key`` is None when the table is empty)."""

        def __init__(self, table: PageTable, key: str | None) -> None:
            super().__init__(table)
            self.key = key

    class Selected(_TableMessage):
        """A row was opened (enter or double click)."""

        def __init__(self, table: PageTable, key: str) -> None:
            super().__init__(table)
            self.key = key

    class HeaderClicked(_TableMessage):
        """A column header was clicked (to sort by it)."""

        def __init__(self, table: PageTable, column: str) -> None:
            super().__init__(table)
            self.column = column

    def __init__(
        self, columns: Sequence[Column], *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.columns = list(columns)
        self._keys: list[str] = []
        self._cells: dict[str, tuple[Cell, ...]] = {}
        self._index: dict[str, int] = {}
        self._widths: list[int] = []
        self._fit: dict[str, int] = {}  # FIT column -> widest cell
        self.sort_column: str | None = None
        self.sort_reverse = False
        self.empty_message = "nothing to show"
        # Rows drawn before, by key: (its cells, on the cursor, the strip). A repaint (every
        # key, every row an agent's change moves) draws again only the rows that changed;
        # a change of width, column widths or colours empties it (``_Frame.key``).
        self._strips: dict[str, tuple[tuple[Cell, ...], bool, Strip]] = {}
        self._strips_frame: tuple | None = None
        self._frame: _Frame | None = None  # while render_lines draws

    # ------------------------------------------------------------------ data
    @property
    def row_count(self) -> int:
        return len(self._keys)

    @property
    def cursor_key(self) -> str | None:
        if 0 <= self.cursor < len(self._keys):
            return self._keys[self.cursor]
        return None

    def keys(self) -> list[str]:
        return list(self._keys)

    def prepare_rows(self, rows: Sequence[tuple[str, tuple[Cell, ...]]]) -> PreparedRows:
        """What ``set_rows`` needs, made from ``rows`` alone: safe to call from a worker thread
        (10,000 rows take tens of milliseconds), then ``set_prepared`` on the UI thread."""
        keys = [key for key, _ in rows]
        return PreparedRows(keys, dict(rows), {key: i for i, key in enumerate(keys)}, self._fit_of(rows))

    def set_rows(self, rows: Sequence[tuple[str, tuple[Cell, ...]]], *, keep_cursor: bool = True) -> None:
        """Replace all rows; the cursor stays on the same key when it is still present."""
        self.set_prepared(self.prepare_rows(rows), keep_cursor=keep_cursor)

    def set_prepared(self, prepared: PreparedRows, *, keep_cursor: bool = True) -> None:
        """Replace all rows with rows prepared by ``prepare_rows``."""
        previous_key = self.cursor_key if keep_cursor else None
        offset_in_view = self.cursor - int(self.scroll_y)
        self._keys = prepared.keys
        self._cells = prepared.cells
        self._index = prepared.index
        if prepared.fit != self._fit:
            self._fit = prepared.fit
            self._widths = self._compute_widths(self.scrollable_content_region.width or self.size.width)
        self._set_virtual_size()
        if previous_key is not None and previous_key in self._index:
            new_cursor = self._index[previous_key]
            self.cursor = new_cursor
            self.scroll_to(y=max(0, new_cursor - offset_in_view), animate=False, immediate=True)
        else:
            self.cursor = min(self.cursor, max(0, len(self._keys) - 1))
        self.refresh()

    def set_lazy_rows(self, keys: Sequence[str], cells_of: Callable[[str], tuple[Cell, ...]]) -> None:
        """Replace all rows with ``keys`` whose cells are made only when shown (no FIT columns).

        For long lists (200,000 claims): making every row's cells up front would cost
        seconds; a screen shows about forty.
        """
        previous_key = self.cursor_key
        offset_in_view = self.cursor - int(self.scroll_y)
        self._keys = list(keys)
        self._cells = _LazyCells(cells_of)
        self._index = {key: i for i, key in enumerate(self._keys)}
        self._set_virtual_size()
        if previous_key is not None and previous_key in self._index:
            self.cursor = self._index[previous_key]
            self.scroll_to(y=max(0, self.cursor - offset_in_view), animate=False, immediate=True)
        else:
            self.cursor = 0
            self.scroll_to(y=0, animate=False, immediate=True)
        self.refresh()

    def fitted_columns(self) -> tuple[tuple[str, int, int], ...]:
        """Each FIT column's key, cell number and narrowest width (its label): what a list made
        off the UI thread needs to measure its widths (``page_list.fill_list``)."""
        return tuple(
            (column.key, number, cell_len(column.label) + 2)
            for number, column in enumerate(self.columns)
            if column.width == FIT
        )

    def _fit_of(self, rows: Sequence[tuple[str, tuple[Cell, ...]]]) -> dict[str, int]:
        """Width of each FIT column: its widest cell (few distinct values: measured once each)."""
        fit = {}
        for number, column in enumerate(self.columns):
            if column.width == FIT:
                values = {cells[number][0] for _, cells in rows if len(cells) > number}
                fit[column.key] = max([cell_len(column.label) + 2, *map(cell_len, values)])
        return fit

    def _set_virtual_size(self) -> None:
        # As wide as the visible content: never a horizontal scrollbar over the last row. Rows
        # added or removed (an agent writing) move only the scrollbar: no layout of the screen.
        set_virtual_size(self, Size(self.scrollable_content_region.width, len(self._keys) + 1))

    def update_cells(self, key: str, cells: tuple[Cell, ...]) -> None:
        """Change one row's cells in place (no reorder, no scroll)."""
        if key in self._cells:
            if len(cells) and self._fit:
                for number, column in enumerate(self.columns):
                    if column.key in self._fit and cell_len(cells[number][0]) > self._fit[column.key]:
                        self._fit[column.key] = cell_len(cells[number][0])
                        self._widths = self._compute_widths(self.scrollable_content_region.width)
                        self.refresh()
            self._cells[key] = cells
            index = self._index[key]
            self.refresh_line(index - int(self.scroll_y) + 1)

    def move_to(self, key: str) -> bool:
        index = self._index.get(key)
        if index is None:
            return False
        self.cursor = index
        self._scroll_cursor_into_view()
        return True

    # ------------------------------------------------------------------ layout
    def _compute_widths(self, total: int) -> list[int]:
        """Each column's width; 0 for a column dropped because the terminal is too narrow."""
        total -= GUTTER  # the cursor marker column
        fixed_width = {
            c.key: (self._fit.get(c.key, cell_len(c.label) + 2) if c.width == FIT else c.width) for c in self.columns
        }
        shown = list(self.columns)

        def needed(columns) -> int:
            return sum(fixed_width[c.key] if c.width else c.min_width for c in columns) + len(columns)

        while needed(shown) > total and len(shown) > 1:
            drop = min((c for c in shown if c.width), key=lambda c: c.priority, default=None)
            if drop is None or drop.priority >= ESSENTIAL:
                break  # only identity and state columns left: the flexible ones shrink instead
            shown.remove(drop)
        flex = [c for c in shown if not c.width]
        remaining = max(total - sum(fixed_width[c.key] for c in shown if c.width) - len(shown), 0)
        weights = sum(c.weight for c in flex) or 1
        widths = []
        given = 0
        for column in self.columns:
            if column not in shown:
                widths.append(0)
            elif column.width:
                widths.append(fixed_width[column.key])
            else:
                width = max(column.min_width, remaining * column.weight // weights)
                given += width
                widths.append(width)
        if flex and given < remaining:  # rounding leftovers go to the first flexible column
            first = self.columns.index(flex[0])
            widths[first] += remaining - given
        return widths

    def on_resize(self, event: events.Resize) -> None:
        self._widths = self._compute_widths(self.scrollable_content_region.width)
        self._set_virtual_size()

    # ------------------------------------------------------------------ rendering
    def _style(self, name: str) -> Style:
        if not name:
            return Style()
        return self.get_component_rich_style(f"page-table--{name}", partial=True)

    def _render_cells(self, cells: Sequence[Cell], base: Style, *, marker: str = " ") -> list[Segment]:
        # A glyph marks the cursor row, so it is visible without colour (NO_COLOR, monochrome).
        segments: list[Segment] = [Segment(marker, base + Style(bold=True))]
        widths = self._widths or self._compute_widths(self.scrollable_content_region.width)
        style_of = self._frame.style if self._frame is not None else self._style
        for (text, style_name), width in zip(cells, widths):
            if not width:
                continue
            shown = text if cell_len(text) == width else set_cell_size(text, width)
            # On the cursor row every cell takes the cursor's colours (one readable pair).
            style = base + style_of(style_name) if style_name and marker == " " else base
            segments.append(Segment(shown, style))
            segments.append(Segment(" ", base))
        return segments

    def render_lines(self, crop: Region) -> list[Strip]:
        frame = self._frame = _Frame(self)
        key = frame.key(self._widths)
        if key != self._strips_frame:
            self._strips.clear()
            self._strips_frame = key
        try:
            return super().render_lines(crop)
        finally:
            self._frame = None

    def render_line(self, y: int) -> Strip:
        frame = self._frame or _Frame(self)
        width, base = frame.width, frame.base
        if y == 0:
            header_style = base + frame.style("header")
            labels = []
            for column in self.columns:
                label = column.label
                if column.key == self.sort_column:
                    label += " ▼" if self.sort_reverse else " ▲"
                labels.append((label, ""))
            return Strip(self._render_cells(labels, header_style)).adjust_cell_length(width, header_style)
        row_index = int(self.scroll_y) + y - 1
        if not self._keys and y == 1:
            return Strip([Segment(set_cell_size(self.empty_message, width), base + frame.style("dim"))])
        if row_index >= len(self._keys):
            return Strip.blank(width, base)
        key = self._keys[row_index]
        cells = self._cells[key]
        on_cursor = row_index == self.cursor
        drawn = self._strips.get(key) if self._frame is not None else None
        if drawn is not None and drawn[0] is cells and drawn[1] == on_cursor:
            return drawn[2]
        style = base + frame.style("cursor") if on_cursor else base
        strip = Strip(self._render_cells(cells, style, marker=CURSOR_MARK if on_cursor else " "))
        strip = strip.adjust_cell_length(width, style)
        if self._frame is not None:
            if len(self._strips) >= STRIP_CACHE:
                self._strips.clear()
            self._strips[key] = (cells, on_cursor, strip)
        return strip

    # ------------------------------------------------------------------ cursor
    def watch_cursor(self, old: int, new: int) -> None:
        top = int(self.scroll_y)
        if old != new and top <= old < top + self._visible_rows() and top <= new < top + self._visible_rows():
            self.refresh_line(old - top + 1)  # only the two rows that changed
            self.refresh_line(new - top + 1)
        else:
            self.refresh()
        self.post_message(self.Highlighted(self, self.cursor_key))

    def shown_columns(self) -> list[str]:
        """Keys of the columns on screen at the current width."""
        widths = self._widths or self._compute_widths(self.scrollable_content_region.width)
        return [column.key for column, width in zip(self.columns, widths) if width]

    def _visible_rows(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    def _scroll_cursor_into_view(self) -> None:
        top = int(self.scroll_y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + self._visible_rows():
            self.scroll_to(y=self.cursor - self._visible_rows() + 1, animate=False, immediate=True)

    def action_cursor(self, delta: int) -> None:
        if not self._keys:
            return
        self.cursor = max(0, min(len(self._keys) - 1, self.cursor + delta))
        self._scroll_cursor_into_view()

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * self._visible_rows())

    def action_edge(self, end: int) -> None:
        if self._keys:
            self.cursor = len(self._keys) - 1 if end else 0
            self._scroll_cursor_into_view()

    def action_select(self) -> None:
        key = self.cursor_key
        if key is not None:
            self.post_message(self.Selected(self, key))

    def on_click(self, event: events.Click) -> None:
        y = event.y
        if y == 0:
            x = GUTTER
            widths = self._widths or self._compute_widths(self.scrollable_content_region.width)
            for column, width in zip(self.columns, widths):
                if not width:
                    continue
                if x <= event.x < x + width + 1:
                    self.post_message(self.HeaderClicked(self, column.key))
                    return
                x += width + 1
            return
        index = int(self.scroll_y) + y - 1
        if 0 <= index < len(self._keys):
            self.cursor = index
            if event.chain >= 2:
                self.action_select()
