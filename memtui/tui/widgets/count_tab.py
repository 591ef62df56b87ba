"""A tab whose label holds a count that changes often (the browse filters while an agent writes).

A new label lays the whole screen out again (Textual sizes a tab to its label), and a layout
repaints it all: at 100,000 pages the counts change at every refill of the list, about once
a second in a write storm, and a key pressed meanwhile waited for it. A label as wide as the
one before (most new counts) is only a repaint of the tab.
"""

from __future__ import annotations

from rich.cells import cell_len
from textual.content import Content
from textual.widgets import Static, Tab

from memtui.tui.compat import set_label_quietly


class CountTab(Tab):
    def relabel(self, label: Content) -> None:
        if label.plain == self.label_text:
            return
        if cell_len(label.plain) != cell_len(self.label_text):
            self.label = label  # a new width: the bar is laid out again (and its underline moved)
            return
        set_label_quietly(self, label)  # what ``Tab.label`` reads; its setter would ask for the layout
        Static.update(self, label, layout=False)
