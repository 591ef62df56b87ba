"""A scroll view's virtual size, changed without a layout of the screen where it can be.

Setting ``virtual_size`` lays the whole screen out again (and a layout repaints it all):
20-35 ms of the UI thread at 120 columns, and several times that while an agent writes and
background work shares the interpreter. When only the height changes and the vertical
scrollbar is shown before and after, nothing but the scrollbar moves.
"""

from __future__ import annotations

from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.widget import Widget

from memtui.tui.compat import scroll_to_size


def set_virtual_size(view: ScrollView, size: Size) -> None:
    if size == view.virtual_size:
        return
    room = view.scrollable_content_region.height
    if size.width == view.virtual_size.width and min(size.height, view.virtual_size.height) > room:
        view.set_reactive(Widget.virtual_size, size)
        scroll_to_size(view, size)
        view.refresh()
    else:
        view.virtual_size = size
