"""The footer, with ``?`` (help) and the command palette key pinned right, visible at every width."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

PINNED_ACTIONS = {"help", "app.help"}


class PinnedKeys(Horizontal):
    DEFAULT_CSS = """
    PinnedKeys { dock: right; width: auto; height: 1; background: $footer-background; }
    PinnedKeys FooterKey.-command-palette { dock: none; }
    """


class MemtuiFooter(Footer):
    """Textual's footer; the help key sits beside the palette key at the right edge, so a
    narrow terminal cuts the screen's own keys, never the way to see all of them."""

    def compose(self) -> ComposeResult:
        pinned = []
        for widget in super().compose():
            if isinstance(widget, FooterKey) and (widget.action in PINNED_ACTIONS or widget.has_class("-command-palette")):
                pinned.append(widget)
                continue
            yield widget
        if pinned:
            yield PinnedKeys(*pinned)
