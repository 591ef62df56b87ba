"""Trust state of a page: reviewed, unreviewed, quarantined, or unknown. Evidence, never a default.

- ``reviewed``: there is evidence a human reviewed the page: ``reviewed: true`` in
  its frontmatter, a dialect's own review field (``review`` in the page's reading),
  or an approval of exactly these bytes in memtui's ledger (``approved``). A review
  date with no reviewer named, or a ``reviewed_by`` naming an agent or a job, is an
  agent's mark (``agent_review``): the page is ``unreviewed``, and its evidence says so.
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
from collections.abc import Mapping
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


def is_reviewed_value(value: Any) -> bool:
    """Is ``value`` of a ``reviewed`` key a review mark (``true``, ``yes``, a date)? The editor asks
    before it writes one over text the reviewer has not seen."""
    return _is_true(value)


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


# Words that name an agent or an automation in ``reviewed_by`` ("audit:claude-code
# (background)", "nightly-dream-job", "bot"): such a review is an agent's, not a person's.
AGENT_WORDS = frozenset(
    {
        "agent", "agents", "bot", "ai", "llm", "gpt", "claude", "anthropic", "openai", "codex", "copilot",
        "cursor", "gemini", "windsurf", "cascade", "cline", "roo", "kiro", "serena", "openclaw", "assistant",
        "auto", "automated", "automation", "automatic", "background", "job", "cron", "ci", "dream", "script",
        "pipeline", "workflow", "scheduler", "audit", "model",
    }
)  # fmt: skip
_WORD_RE = re.compile(r"[a-z0-9]+")


def is_agent_name(name: str) -> bool:
    """Does a ``reviewed_by`` value name an agent or an automation rather than a person?"""
    lowered = name.lower()
    return any(word in AGENT_WORDS for word in _WORD_RE.findall(lowered)) or "[bot]" in lowered


def agent_review(meta: dict[str, Any]) -> str | None:
    """Why a review mark is an agent's rather than a person's (None: a person's, or no mark).

    A review is a human's: ``reviewed: true`` (optionally ``reviewed_by`` a person). A date
    alone says when, not who; a ``reviewed_by`` naming an agent or a job says an agent did it.
    """
    value = meta.get("reviewed")
    if not _is_true(value):
        return None
    who = meta.get("reviewed_by")
    if isinstance(who, str) and who.strip() and is_agent_name(who):
        return f"reviewed by an agent ({who.strip()[:60]}), not by a person"
    if not (isinstance(who, str) and who.strip()) and value is not True and _DATE_RE.match(str(value).strip()):
        return f"a review date ({str(value).strip()[:10]}) with no reviewer named: an agent's mark, not a person's"
    return None


def trust_state(meta: dict[str, Any], path: str, norm: NormalPage | None = None, *, approved: bool = False) -> str:
    """The trust state from the frontmatter, a dialect's reading (``norm``) and a ledger approval.
    A review mark an agent made (``agent_review``) is no review: the page stays unreviewed."""
    review = norm.reviewed if norm is not None else None
    if (_is_true(meta.get("reviewed")) and agent_review(meta) is None) or review is True or approved:
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
    agent = agent_review(meta)
    if agent is not None and not approved_by and not (norm is not None and norm.reviewed is True):
        return agent
    if _is_true(meta.get("reviewed")) and agent is None:
        who = meta.get("reviewed_by")
        return "reviewed: true" + (f" (by {who})" if isinstance(who, str) and who else "")
    if norm is not None and norm.reviewed is True:
        return str(norm.review_evidence or "the format's own review field")
    if approved_by:
        return f"approved in memtui's ledger by {approved_by}"
    if "reviewed" in meta or (norm is not None and norm.reviewed is False):
        return "marked not reviewed"
    return "no review record"


def nothing_waiting(counts: Mapping[str, int]) -> str:
    """What an empty review queue says, truthfully: "nothing waits" is not "all reviewed" when
    nothing was ever reviewed (``counts``: pages per trust state)."""
    reviewed, unknown = counts.get(REVIEWED, 0), counts.get(UNKNOWN, 0)
    if not reviewed and unknown:
        return f"nothing has ever been reviewed here: {unknown:,} pages have no review record"
    tail = f"; {unknown:,} pages have no review record" if unknown else ""
    return f"nothing waits for review: {reviewed:,} pages reviewed{tail}"


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
