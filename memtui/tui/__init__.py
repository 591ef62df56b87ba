"""The Textual application: screens, widgets and styles (``*.tcss``).

What this package may import is the import contract in ``pyproject.toml``
(``[tool.importlinter]``), checked in CI.
"""
