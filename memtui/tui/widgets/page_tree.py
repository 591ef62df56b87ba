"""The pages as a tree by folder. Folders fill in when opened, so 10,000 pages cost nothing up front.

The cursor row carries a ``▶`` glyph (visible without colour) and the tree
starts with its cursor on the first row; folder rows roll up what is inside
them (pages, quarantined, unreviewed, with findings), so a problem deep in a
folder shows on the closed folder.
"""

from __future__ import annotations

from collections import Counter

from rich.style import Style
from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from memtui.render.glyphs import FILTER_LABELS
from memtui.session.rows import PageRow, badge_parts
from memtui.textsafety import one_line
from memtui.tui.widgets.lists import SELECTED_MARK

ROLL_UP = ("quarantined", "unreviewed", "findings")


def badge_text(row: PageRow, colours: dict[str, str]) -> Text:
    text = Text()
    for label, colour in badge_parts(row):
        text.append(label + " ", style=colours.get(colour, ""))
    return text


class PageTree(Tree[str]):
    """Folder nodes carry data "dir:<path>", page leaves carry the page path."""

    ICON_NODE = "▸ "
    ICON_NODE_EXPANDED = "▾ "

    def __init__(self, **kwargs) -> None:
        super().__init__(Text("field"), **kwargs)
        self.show_root = False
        self.guide_depth = 3
        self._rows: dict[str, PageRow] = {}
        self._folders: dict[str, list[str]] = {}
        self._colours: dict[str, str] = {}
        self._rollup: dict[str, Counter] = {}

    def render_label(self, node: TreeNode[str], base_style: Style, style: Style) -> Text:
        cursor = node is self.cursor_node
        label = super().render_label(node, base_style, style)
        if cursor:
            label.stylize(Style(color=style.color, dim=False))  # one readable pair on the cursor row
        return Text.assemble((f"{SELECTED_MARK} " if cursor else "  ", base_style + Style(bold=True)), label)

    def set_rows(self, rows: dict[str, PageRow], colours: dict[str, str], root_label: str) -> None:
        """(Re)build the tree, keeping which folders were open."""
        opened = {node.data for node in self._walk(self.root) if node.is_expanded and node.data}
        cursor_data = self.cursor_node.data if self.cursor_node is not None else None
        self._rows = rows
        self._colours = colours
        self._folders = {}
        for path in sorted(rows):
            folder = path.rsplit("/", 1)[0] if "/" in path else ""
            self._folders.setdefault(folder, []).append(path)
            # Register every ancestor so empty intermediate folders still appear.
            while folder:
                parent = folder.rsplit("/", 1)[0] if "/" in folder else ""
                self._folders.setdefault(parent, [])
                folder = parent
        self._rollup = {}
        for path, row in rows.items():
            states = [state for state in row.states() if state in ROLL_UP]
            folder = path.rsplit("/", 1)[0] if "/" in path else ""
            while folder:
                counts = self._rollup.setdefault(folder, Counter())
                counts["pages"] += 1
                counts.update(states)
                folder = folder.rsplit("/", 1)[0] if "/" in folder else ""
        self.clear()
        self.root.set_label(Text(one_line(root_label)))
        self._fill(self.root, "", opened)
        self.root.expand()
        if cursor_data:
            self.select_data(cursor_data)
        if self.cursor_line < 0 and self.root.children:
            self.cursor_line = 0  # the tree starts with a cursor, like every other list

    def _walk(self, node: TreeNode[str]):
        yield node
        for child in node.children:
            yield from self._walk(child)

    def _subfolders(self, folder: str) -> list[str]:
        prefix = folder + "/" if folder else ""
        return sorted(f for f in self._folders if f.startswith(prefix) and f != folder and "/" not in f[len(prefix) :])

    def _fill(self, node: TreeNode[str], folder: str, opened: set[str]) -> None:
        for sub in self._subfolders(folder):
            name = sub.rsplit("/", 1)[-1]
            label = Text(f"{one_line(name)}/", style="bold")
            counts = self._rollup.get(sub, Counter())
            label.append(f"  {counts['pages']}", style="dim")
            for state in ROLL_UP:
                if counts[state]:
                    glyph, word, colour = FILTER_LABELS[state]
                    label.append(f"  {glyph}{counts[state]} {word}", style=self._colours.get(colour, ""))
            child = node.add(label, data=f"dir:{sub}", allow_expand=True)
            if f"dir:{sub}" in opened:
                self._fill(child, sub, opened)
                child.expand()
        for path in self._folders.get(folder, []):
            row = self._rows[path]
            label = badge_text(row, self._colours)
            label.append(one_line(row.title, 70))
            label.append(f"  {one_line(path.rsplit('/', 1)[-1])}", style="dim")
            node.add_leaf(label, data=path)

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[str]) -> None:
        node = event.node
        if node.data and node.data.startswith("dir:") and not node.children:
            self._fill(node, node.data[4:], set())

    def select_data(self, data: str) -> None:
        for node in self._walk(self.root):
            if node.data == data:
                self.move_cursor(node)
                return
