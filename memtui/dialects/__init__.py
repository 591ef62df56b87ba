"""Memory dialects: the formats real agents and tools write, read into memtui's one model.

A *dialect* is one tool's way of keeping memory: memtui's own format, Claude
Code (``CLAUDE.md``, rules, the auto-memory folder), OpenClaw workspaces,
JSON-sidecar stores such as aictx, Obsidian-style vaults, basic-memory. Each
module here can **detect** its format in a folder (with the evidence it found)
and **read** a page of it (and its sidecar) into the common page metadata
(``PageInfo.norm``, a ``field.normal.NormalPage``: title, kind, status, supersedes/superseded_by, dates,
origin, review evidence, tags, aliases, links ...). Several dialects can apply
to one field; ``detect.detect`` decides which, ``reader.DialectReader`` reads
every page through the right one, and ``open.open_field`` is how every surface
(CLI, TUI, index) opens a field so they all see the same reading.

What this package may import is the import contract in ``pyproject.toml``
(``[tool.importlinter]``), checked in CI.
"""
