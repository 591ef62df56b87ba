"""The application core: a field open for auditing, one typed home for the workflow.

``session`` (``Session``: opening the field, reading it, the incremental analysis, the
index's lifecycle, the watcher's changes, pacing, the proposal queue), ``events`` (what a
session tells its user, typed), ``host`` (what it needs from the program it runs in),
``opening`` (``FieldOptions`` and ``open_field``: the one way every command opens a field),
``analysis`` (checks, statuses and counts of a snapshot), ``rows`` (a page as the page
list shows it), ``row_cache`` (the list as last shown), ``latest_only`` (one worker at a
time for work asked for again and again).

Never Textual: the CLI and the TUI both sit on this package. What it may import is the
contract in ``pyproject.toml`` (``[tool.importlinter]``), checked in CI.
"""
