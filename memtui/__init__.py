"""memtui: audit what an AI agent remembers.

Layers (imports point one way):
    memtui.field  the memory model (no Textual)
    memtui.index  the Whoosh cache and watchdog sync (no Textual)
    memtui.tui    the Textual application
"""

__version__ = "0.1.0"
