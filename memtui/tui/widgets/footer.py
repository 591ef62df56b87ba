"""The footer, with ``?`` (help) and the command palette key pinned right, visible at every width."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Footer

from memtui.tui.compat import FooterKey

PINNED_ACTIONS = {"help", "app.help"}


class PinnedKeys(Horizontal):
    DEFAULT_CSS = """
    PinnedKeys { dock: right; width: auto; height: 1; background: $footer-background; }
    PinnedKeys FooterKey.-command-palette { dock: none; }
    """


class MemtuiFooter(Footer):
    """Textual's footer; the help key sits beside the palette key at the right edge, so a
    narrow terminal cuts the screen's own keys, never the way to see all of them."""

    _shown: tuple | None = None  # what the keys were made from (see ``bindings_changed``)

    def _signature(self) -> tuple:
        return (
            tuple(
                (binding.key, binding.action, binding.description, binding.key_display, enabled, tooltip)
                for (_node, binding, enabled, tooltip) in self.screen.active_bindings.values()
                if binding.show
            ),
            self.compact,
            self.show_command_palette,
        )

    def bindings_changed(self, screen) -> None:
        """Make the keys again only when what they show changed: Textual's footer rebuilds every
        key whenever any binding is checked again (focus moves, a screen refreshes its actions),
        which took about half of the CPU of starting the app."""
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        if self.is_attached and self._signature() != self._shown:
            await self.recompose()

    def compose(self) -> ComposeResult:
        if self._bindings_ready:
            self._shown = self._signature()
        pinned = []
        for widget in super().compose():
            if isinstance(widget, FooterKey) and (
                widget.action in PINNED_ACTIONS or widget.has_class("-command-palette")
            ):
                pinned.append(widget)
                continue
            yield widget
        if pinned:
            yield PinnedKeys(*pinned)
