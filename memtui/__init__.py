"""memtui: audit what an AI agent remembers.

Layers, bottom to top (a package imports only from the layers below it: the import
contracts in ``pyproject.toml``, checked by import-linter in CI):

    memtui.errors, memtui.textsafety   errors with hints; untrusted text made inert
    memtui.store    bytes on disk: safe writes, reading files, archives, git, edit buffer, locations
    memtui.field    the memory model: pages, frontmatter, body, the folder, history, trust, checks
    memtui.dialects the memory formats real agents write, read into the model
    memtui.review   review workflows: quarantine, proposals, apply journal, ledger, diffs, injection
    memtui.index    the search index: a Whoosh cache kept current by watchdog (Whoosh's
                    internals fenced in ``memtui.index.engine``)
    memtui.render   one renderer per concept (glyphs, diffs, reviews) for the CLI and the TUI
    memtui.session  the application core: a field open for auditing, kept current
    memtui.tui      the Textual application (a thin shell over a session)
    memtui.cli      the ``memtui`` command (opens the TUI)

Nothing below ``memtui.tui`` imports Textual.
"""

__version__ = "0.1.0"
