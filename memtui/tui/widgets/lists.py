"""List conventions shared by every list in memtui (fzf, lazygit, k9s).

- ``MarkedOptionList``: the highlighted option carries a ``▶`` glyph in a
  two-cell gutter, so the selection shows without colour (NO_COLOR, monochrome,
  colour-blind readers), as ``PageTable`` and ``PageTree`` do.
- ``FilterBox``: ``/`` inside a list opens it; typing narrows the list in place;
  ``enter`` or ``down`` goes back to the list, ``escape`` clears and closes it.
- ``matches(query, *fields)``: the filter's rule (every word, any order,
  ignoring case), cheap enough to run per keystroke over 10,000 rows.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Input, OptionList

SELECTED_MARK = "▶"


class MarkedOptionList(OptionList):
    """An ``OptionList`` whose highlighted option is marked with a glyph, not only a colour."""

    def _get_left_gutter_width(self) -> int:
        return 2

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        try:
            index, offset = self._lines[self.scroll_offset.y + y]
            option = self.options[index]
        except IndexError:
            return Strip([Segment("  ", self.get_visual_style("option-list--option").rich_style), *strip])
        if option.disabled:
            style = self.get_visual_style("option-list--option", "option-list--option-disabled")
        elif self.highlighted == index:
            style = self.get_visual_style("option-list--option", "option-list--option-highlighted")
        elif self._mouse_hovering_over == index:
            style = self.get_visual_style("option-list--option", "option-list--option-hover")
        else:
            style = self.get_visual_style("option-list--option")
        highlighted = self.highlighted == index and not option.disabled
        mark = f"{SELECTED_MARK} " if highlighted and offset == 0 else "  "
        base = style.rich_style
        if highlighted:
            # The prompt's own colours give way to the highlight's one readable pair.
            plain = Style(color=base.color, bgcolor=base.bgcolor, dim=False)
            strip = Strip(
                [Segment(text, (seg_style or Style()) + plain, control) for text, seg_style, control in strip]
            )
        return Strip([Segment(mark, base + Style(bold=True)), *strip])


class FilterBox(Input):
    """Narrows the list below it as you type (``/`` opens it)."""

    BINDINGS = [
        Binding("escape", "clear_and_close", "Clear filter", show=True),
        Binding("down", "back_to_list", "To the list", show=False),
    ]

    class Closed(Message):
        """The filter box gave the focus back to its list (``cleared``: the filter is off)."""

        def __init__(self, box: FilterBox, cleared: bool) -> None:
            super().__init__()
            self.box = box
            self.cleared = cleared

        @property
        def control(self) -> FilterBox:
            return self.box

    def __init__(
        self, *, id: str | None = None, placeholder: str = "filter: type words (enter: back to the list, escape: clear)"
    ) -> None:
        super().__init__(placeholder=placeholder, id=id, classes="filter-box")
        self.display = False

    def open(self) -> None:
        self.display = True
        self.focus()

    def action_clear_and_close(self) -> None:
        self.value = ""
        self.display = False
        self.post_message(self.Closed(self, cleared=True))

    def action_back_to_list(self) -> None:
        if not self.value:
            self.display = False
        self.post_message(self.Closed(self, cleared=not self.value))

    def _on_input_submitted(self, event: Input.Submitted) -> None:  # enter: back to the list
        event.stop()
        self.action_back_to_list()


WidgetType = TypeVar("WidgetType", bound=Widget)


class QueriesWidgets(Protocol):
    """What ``FilterInPlace`` uses of the screen it is mixed into (a Textual ``DOMNode``'s)."""

    def query_one(self, selector: str, expect_type: type[WidgetType]) -> WidgetType: ...


class FilterInPlace:
    """Screen mixin: ``/`` opens the screen's ``FilterBox`` (id ``list-filter``), typing sets
    ``text_filter`` and calls ``refilter()``, closing gives the focus back to ``filtered_list()``."""

    text_filter = ""

    def refilter(self) -> None:  # pragma: no cover - each screen fills its own list
        raise NotImplementedError

    def filtered_list(self) -> Widget:  # pragma: no cover
        raise NotImplementedError

    def action_filter_list(self: QueriesWidgets) -> None:
        self.query_one("#list-filter", FilterBox).open()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "list-filter":
            self.text_filter = event.value.strip()
            self.refilter()

    def on_filter_box_closed(self, event: FilterBox.Closed) -> None:
        if event.cleared and self.text_filter:
            self.text_filter = ""
            self.refilter()
        self.filtered_list().focus()


def matches(query: str, *fields: str) -> bool:
    """True when every word of ``query`` occurs in one of ``fields`` (ignoring case)."""
    words = query.casefold().split()
    if not words:
        return True
    haystack = "\n".join(fields).casefold()
    return all(word in haystack for word in words)
