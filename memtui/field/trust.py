"""Trust state of a page: quarantined, unreviewed or reviewed.

- ``quarantined``: not reviewed and tainted; tainted means ``taint: external``,
  ``origin: external``, or the page lives under ``quarantine/``. Such a page can be
  found by search but is never auto-loaded nor listed in ``MEMORY.md``.
- ``unreviewed``: ``reviewed: false`` and not tainted.
- ``reviewed``: ``reviewed: true``, or no ``reviewed`` key on an untainted page
  (pages written by the user or before review existed carry no marker).
"""

from __future__ import annotations

from typing import Any

QUARANTINED = "quarantined"
UNREVIEWED = "unreviewed"
REVIEWED = "reviewed"
STATES = (QUARANTINED, UNREVIEWED, REVIEWED)

QUARANTINE_FOLDER = "quarantine"


def _is_true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.strip().lower() in {"true", "yes"})


def _is_false(value: Any) -> bool:
    return value is False or (isinstance(value, str) and value.strip().lower() in {"false", "no"})


def is_tainted(meta: dict[str, Any], path: str) -> bool:
    taint = meta.get("taint")
    origin = meta.get("origin")
    return (
        (isinstance(taint, str) and taint.strip().lower() == "external")
        or (isinstance(origin, str) and origin.strip().lower() == "external")
        or path.startswith(QUARANTINE_FOLDER + "/")
    )


def trust_state(meta: dict[str, Any], path: str) -> str:
    reviewed = meta.get("reviewed")
    if _is_true(reviewed):
        return REVIEWED
    if is_tainted(meta, path):
        return QUARANTINED
    if _is_false(reviewed):
        return UNREVIEWED
    return REVIEWED


def taint_source(meta: dict[str, Any], path: str) -> str:
    """What tainted a page, for grouping the quarantine queue: its first source or folder."""
    for key in ("tainted_by", "session", "source_session"):
        value = meta.get(key)
        if isinstance(value, str) and value:
            return value
    sources = meta.get("sources")
    if isinstance(sources, list) and sources:
        first = sources[0]
        return first.split("#", 1)[0] if isinstance(first, str) else str(first)
    if isinstance(sources, str) and sources:
        return sources.split("#", 1)[0]
    origin = meta.get("origin")
    if isinstance(origin, str) and origin:
        return f"origin: {origin}"
    return path.rsplit("/", 1)[0] if "/" in path else "(field root)"
