"""One renderer per concept, as Rich renderables, for the CLI and the TUI alike.

``glyphs`` (every state as a glyph, a word and a theme colour), ``diff`` (a page diff,
unified or side by side, promoted tags marked), ``review`` (a proposal and its review:
tag changes, rationale, checks, diffs, the three-way difference of a stale one).

Rich only, never Textual; what this package may import is the contract in
``pyproject.toml`` (``[tool.importlinter]``), checked in CI.
"""
