"""The screens a number key switches to: one table, read by the app (its modes and keys),
the command palette and the help.

A new screen of that kind is its module in ``tui/screens/`` and a line here: the app
imports it when the mode is first entered (start-up time), binds its key, and the palette
and the help list it. Screens opened another way (a page, its history, the editor) or
with their own routing (search, claims) are not here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Mode:
    name: str  # the Textual mode
    key: str  # the number key that switches to it
    module: str  # memtui.tui.screens.<module>
    screen: str  # the screen class in it
    title: str  # the footer's and the help's name
    palette: str  # the command palette's name
    palette_help: str  # and its line of help
    tooltip: str = ""


MODES: tuple[Mode, ...] = (
    Mode(
        "overview", "3", "overview", "OverviewScreen", "Overview", "Overview",
        "counts, findings, tags, what loads every session, index and watcher state",
    ),
    Mode(
        "quarantine", "4", "quarantine", "QuarantineScreen", "Quarantine", "Quarantine queue",
        "review notes from tainted sessions",
    ),
    Mode(
        "proposals", "5", "proposals", "ProposalsScreen", "Proposals", "Proposals queue",
        "review maintenance (dream) proposals",
    ),
    Mode(
        "context", "7", "context", "ContextScreen", "Context", "What agents load",
        "each agent's files at the start of a session, with caps and findings",
        "What each agent loads at the start of a session",
    ),
)  # fmt: skip
