"""memtui: audit what an AI agent remembers.

Layers, bottom to top (a package imports only from the layers below it; the
test ``tests/test_layering.py`` proves it):

    memtui.errors, memtui.textsafety   errors with hints; untrusted text made inert
    memtui.store    bytes on disk: safe writes, reading files, archives, git, edit buffer, locations
    memtui.field    the memory model: pages, frontmatter, body, the folder, history, trust, checks
    memtui.review   review workflows: quarantine, proposals, apply journal, ledger, diffs, injection
    memtui.index    the search index: a Whoosh cache kept current by watchdog
    memtui.cli      the ``memtui`` command (a thin shell; opens the TUI)
    memtui.tui      the Textual application

Nothing below ``memtui.tui`` imports Textual.
"""

__version__ = "0.1.0"
