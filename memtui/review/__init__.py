"""Review workflows: how a human decides what memory keeps.

``quarantine`` (notes from tainted sessions), ``proposals`` with its carriers
``proposal_model``, ``proposal_staging`` and ``proposal_git`` (maintenance-job
edits), ``apply_journal`` (all-or-nothing applies that survive a crash),
``ledger`` (every decision, one JSON line), ``diffs`` (page diffs as data),
``injection`` (lines that look like instructions aimed at an agent).

What this package may import is the import contract in ``pyproject.toml``
(``[tool.importlinter]``), checked in CI.
"""
