"""Every state memtui shows, as a glyph, a word and a theme colour: one table for the CLI and the TUI.

A state is never shown by colour alone: the glyph and the word say it too. The colour is a
name of the theme's semantic colours (``error``, ``warning``, ``success``, ``secondary``,
``accent``); the CLI maps them to terminal styles (``CLI_STYLE``).
"""

from __future__ import annotations

from typing import NamedTuple

from memtui.field import trust as trust_mod
from memtui.field.checks import ERROR, INFO, WARNING
from memtui.field.history import CURRENT, STALE, SUPERSEDED, UNRECORDED

PENDING = "pending"  # listed, not read yet (or not analysed yet: never shown as current)


class Glyph(NamedTuple):
    glyph: str
    word: str
    colour: str  # a theme colour name

    def label(self) -> str:
        """``glyph word``, as a list cell or a legend shows it."""
        return f"{self.glyph} {self.word}"


SEVERITY: dict[str, Glyph] = {
    ERROR: Glyph("✖", "error", "error"),
    WARNING: Glyph("▲", "warning", "warning"),
    INFO: Glyph("·", "note", "secondary"),
}
TRUST: dict[str, Glyph] = {
    trust_mod.QUARANTINED: Glyph("⛔", "quarantined", "error"),
    trust_mod.UNREVIEWED: Glyph("◌", "unreviewed", "warning"),
    trust_mod.UNKNOWN: Glyph("?", "no review record", "secondary"),
    trust_mod.REVIEWED: Glyph("✓", "reviewed", "success"),
    PENDING: Glyph("…", "reading", "secondary"),
}
STATUS: dict[str, Glyph] = {
    CURRENT: Glyph("●", "current", "success"),
    SUPERSEDED: Glyph("↷", "superseded", "secondary"),
    STALE: Glyph("⌛", "stale", "warning"),
    UNRECORDED: Glyph("○", "no status recorded", "secondary"),
    PENDING: Glyph("…", "not analysed yet", "secondary"),
}
# The page list's state badges: short words, the same glyphs as above. "errors" and
# "warnings" are shown with their counts (✖2 ▲1).
BADGES: dict[str, Glyph] = {
    "quarantined": Glyph("⛔", "quar", "error"),
    "unreviewed": Glyph("◌", "unrev", "warning"),
    "unknown": Glyph("?", "norev", "secondary"),
    "superseded": Glyph("↷", "old", "secondary"),
    "stale": Glyph("⌛", "stale", "warning"),
    "unrecorded": Glyph("○", "nostat", "secondary"),
    "errors": Glyph("✖", "errors", "error"),
    "warnings": Glyph("▲", "warnings", "warning"),
    "proposal": Glyph("✎", "prop", "accent"),
    "loading": Glyph("…", "reading", "secondary"),
    "tainted": Glyph("◇", "taint", "secondary"),  # a session transcript that read outside content
}
# The browse tabs and the overview's counts: the same glyphs, whole words.
FILTER_LABELS: dict[str, Glyph] = {
    "all": Glyph("◆", "all", ""),
    "quarantined": Glyph("⛔", "quarantined", "error"),
    "unreviewed": Glyph("◌", "unreviewed", "warning"),
    "unknown": Glyph("?", "no review record", "secondary"),
    "superseded": Glyph("↷", "superseded", "secondary"),
    "stale": Glyph("⌛", "stale", "warning"),
    "findings": Glyph("▲", "with findings", "warning"),
    "proposal": Glyph("✎", "in proposals", "accent"),
    "loading": Glyph("…", "reading", "secondary"),
}
PROPOSAL_STATES: dict[str, Glyph] = {
    "ready": Glyph("●", "ready", "success"),
    "stale": Glyph("◐", "stale", "warning"),
    "conflicting": Glyph("⇄", "conflicting", "warning"),
    "invalid": Glyph("✖", "invalid", "error"),
    "approved": Glyph("✓", "approved", "success"),
    "rejected": Glyph("⊘", "rejected", "secondary"),
    "reverted": Glyph("↶", "reverted", "secondary"),
}
# The search index and its watcher (``SyncState.mode``), and the states before it opens.
INDEX_STATES: dict[str, Glyph] = {
    "watching": Glyph("●", "watching", "success"),
    "polling": Glyph("◐", "polling", "warning"),
    "rescanning": Glyph("↻", "rescanning", "warning"),
    "starting": Glyph("↻", "index writer starting", "warning"),
    "read-only": Glyph("◇", "read-only", "secondary"),
    "down": Glyph("✖", "down", "error"),
    "gone": Glyph("✖", "field folder gone", "error"),
    "stopped": Glyph("○", "stopped", "secondary"),
    "off": Glyph("○", "index off", "secondary"),
    "failed": Glyph("✖", "index down", "error"),
    "opening": Glyph("…", "index opening", "secondary"),
}
# How an agent loads a file (``dialects.loading``): what it is told at the start of a session.
LOADED: dict[str, Glyph] = {
    "always": Glyph("●", "every session", "warning"),
    "on-match": Glyph("◐", "on match", "accent"),
    "on-demand": Glyph("○", "on demand", "secondary"),
    "never": Glyph("⊘", "never", "secondary"),
    "unknown": Glyph("?", "unknown", "secondary"),
}
# Terminal styles for the theme colour names, where there is no theme (the CLI).
CLI_STYLE = {"error": "bold red", "warning": "yellow", "success": "green", "secondary": "dim", "accent": "cyan"}


def cli_style(glyph: Glyph) -> str:
    return CLI_STYLE.get(glyph.colour, "")


def severity_counts(errors: int, warnings: int) -> str:
    """``✖2 ▲1``: a page's or a field's findings by severity, errors and warnings apart."""
    parts = []
    if errors:
        parts.append(f"{SEVERITY[ERROR].glyph}{errors}")
    if warnings:
        parts.append(f"{SEVERITY[WARNING].glyph}{warnings}")
    return " ".join(parts)
