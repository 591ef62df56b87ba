"""The memory model: what a field holds and what it means.

``frontmatter`` and ``body`` parse a page, ``page`` reads and summarises one
(``PageInfo``), ``field`` is the folder (scan, page cache, lookups between
pages), ``history`` the supersede graph, ``trust`` the review state, ``checks``
the deterministic rules, ``check_memo`` what one run of them keeps for the next
(the app reruns only what a change can affect), ``claims`` the tagged lines.

What this package may import is the import contract in ``pyproject.toml``
(``[tool.importlinter]``), checked in CI.
"""
