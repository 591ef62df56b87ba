"""Trust state of a page: reviewed, unreviewed, quarantined, or unknown. Evidence, never a default.

- ``reviewed``: there is evidence a human reviewed the page: ``reviewed: true`` in
  its frontmatter, a dialect's own review field (``review`` in the page's reading),
  or an approval of exactly these bytes in memtui's ledger (``approved``).
- ``quarantined``: not reviewed and tainted; tainted means any ``taint`` value
  (``external`` in the format; ``null``, ``none``, ``false`` and empty mean untainted),
  ``origin: external``, a dialect saying the content came from outside, or the page
  lives under ``quarantine/``. Such a page can be found by search but is never
  auto-loaded nor listed in ``MEMORY.md``.
- ``unreviewed``: a ``reviewed`` key (or a dialect's review field) that is not true
  (``false``, ``null``, ``pending``...), not tainted.
- ``unknown``: no review record at all. Most memory written by agents and tools
  carries none; saying "reviewed" for it would be a confident wrong answer.
Unexpected values fail safe: they never make a page look more trusted.
"""

from __future__ import annotations

import re
from typing import Any

from memtui.field.normal import NormalPage

QUARANTINED = "quarantined"
UNREVIEWED = "unreviewed"
UNKNOWN = "unknown"
REVIEWED = "reviewed"
STATES = (QUARANTINED, UNREVIEWED, UNKNOWN, REVIEWED)
LABELS = {
    QUARANTINED: "quarantined",
    UNREVIEWED: "unreviewed",
    UNKNOWN: "no review record",
    REVIEWED: "reviewed",
}

QUARANTINE_FOLDER = "quarantine"


_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def _is_true(value: Any) -> bool:
    """``true``/``yes``, or the date of the review (``reviewed: 2026-06-16``)."""
    if value is True:
        return True
    return isinstance(value, str) and (value.strip().lower() in {"true", "yes"} or bool(_DATE_RE.match(value.strip())))


_UNTAINTED = {"", "null", "none", "false", "no", "~"}


def is_tainted(meta: dict[str, Any], path: str, norm: NormalPage | None = None) -> bool:
    if norm is not None and norm.tainted is True:
        return True
    taint = meta.get("taint")
    origin = meta.get("origin")
    if taint is not None and taint is not False and str(taint).strip().lower() not in _UNTAINTED:
        return True
    return (isinstance(origin, str) and origin.strip().lower() == "external") or path.startswith(
        QUARANTINE_FOLDER + "/"
    )


def trust_state(meta: dict[str, Any], path: str, norm: NormalPage | None = None, *, approved: bool = False) -> str:
    """The trust state from the frontmatter, a dialect's reading (``norm``) and a ledger approval."""
    review = norm.reviewed if norm is not None else None
    if _is_true(meta.get("reviewed")) or review is True or approved:
        return REVIEWED
    if is_tainted(meta, path, norm):
        return QUARANTINED
    if "reviewed" in meta or review is False:
        return UNREVIEWED  # false, null, "pending", 0 ...: anything but true
    return UNKNOWN


def trust_of(info: Any, *, approved: bool = False) -> str:
    """``trust_state`` of a ``PageInfo``."""
    return trust_state(info.meta, info.path, info.norm, approved=approved)


def review_evidence(meta: dict[str, Any], norm: NormalPage | None = None, *, approved_by: str = "") -> str:
    """In words, what the trust state rests on (for the page view and the CLI)."""
    if _is_true(meta.get("reviewed")):
        who = meta.get("reviewed_by")
        return "reviewed: true" + (f" (by {who})" if isinstance(who, str) and who else "")
    if norm is not None and norm.reviewed is True:
        return str(norm.review_evidence or "the format's own review field")
    if approved_by:
        return f"approved in memtui's ledger by {approved_by}"
    if "reviewed" in meta or (norm is not None and norm.reviewed is False):
        return "marked not reviewed"
    return "no review record"


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
