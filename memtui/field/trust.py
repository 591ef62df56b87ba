"""Trust state of a page: quarantined, unreviewed or reviewed.

- ``quarantined``: not reviewed and tainted; tainted means any ``taint`` value
  (``external`` in the format; ``null``, ``none``, ``false`` and empty mean untainted),
  ``origin: external``, or the page lives under ``quarantine/``. Such a page can be
  found by search but is never auto-loaded nor listed in ``MEMORY.md``.
- ``unreviewed``: a ``reviewed`` key that is not true (``false``, ``null``, ``pending``...)
  and not tainted.
- ``reviewed``: ``reviewed: true``, or no ``reviewed`` key on an untainted page
  (pages written by the user or before review existed carry no marker).
Unexpected values fail safe: they never make a page look more trusted.
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


_UNTAINTED = {"", "null", "none", "false", "no", "~"}


def is_tainted(meta: dict[str, Any], path: str) -> bool:
    taint = meta.get("taint")
    origin = meta.get("origin")
    if taint is not None and taint is not False and str(taint).strip().lower() not in _UNTAINTED:
        return True
    return (isinstance(origin, str) and origin.strip().lower() == "external") or path.startswith(
        QUARANTINE_FOLDER + "/"
    )


def trust_state(meta: dict[str, Any], path: str) -> str:
    reviewed = meta.get("reviewed")
    if _is_true(reviewed):
        return REVIEWED
    if is_tainted(meta, path):
        return QUARANTINED
    if "reviewed" in meta:
        return UNREVIEWED  # false, null, "pending", 0 ...: anything but true
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
