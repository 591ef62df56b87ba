"""Unsaved edits are never dropped: quitting asks, a closed terminal keeps them under .memtui/unsaved/."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import App

from memtui.errors import MemtuiError
from memtui.tui import safe
from memtui.tui.compat import screen_stacks


def editors(app: App[Any]) -> list[Any]:
    """Every editor open in any mode, the active one first."""
    from memtui.tui.screens.editor import EditorScreen

    found: list[Any] = [screen for screen in screen_stacks(app) if isinstance(screen, EditorScreen)]
    found.sort(key=lambda screen: screen is not app.screen)
    return found


def keep_unsaved_edits(app: App[Any]) -> list[str]:
    """Store every editor's unsaved text under .memtui/unsaved/ (nothing in the field changes)."""
    from memtui.store import merge3

    kept = []
    for editor in editors(app):
        data = editor.unsaved_bytes()
        if data is None:
            continue
        try:
            kept.append(merge3.keep_copy(editor.root, editor.path, data, folder=merge3.UNSAVED_DIR))
        except (OSError, MemtuiError):
            continue
    return kept


async def quit_asking(app: App[Any]) -> None:
    """Quit, or, with edits not saved, ask first: keep editing, save and quit, quit without saving."""
    dirty = [editor for editor in editors(app) if editor.dirty]
    if not dirty:
        app.exit()
        return
    app.run_worker(_ask_before_quitting(app, dirty), exclusive=True, group="quit", description="ask before quitting")


async def _ask_before_quitting(app: App[Any], dirty: list[Any]) -> None:
    from memtui.tui.screens.dialogs import ChoiceDialog

    names = ", ".join(editor.path for editor in dirty)
    verb = "has" if len(dirty) == 1 else "have"
    choice = await app.push_screen_wait(
        ChoiceDialog(
            "Unsaved edits",
            Text(f"{safe.line(names, limit=300).plain} {verb} edits that are not saved."),
            [("stay", "Keep editing"), ("save", "Save and quit"), ("discard", "Quit without saving")],
            variant_of={"save": "primary", "discard": "error"},
        )
    )
    if choice == "discard":
        app.exit()
        return
    if choice != "save":
        return
    for editor in dirty:
        if not await editor.save().wait():
            safe.notify(app, f"{editor.path} was not saved; still here", severity="warning")
            return
    app.exit()
