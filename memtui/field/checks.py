"""Deterministic checks over a field: each rule has a stable id, a severity and a reason.

``run_checks(field)`` returns every finding, sorted by path and line (``check_field``
passes each to a function instead, for a tally of a large field). The same
rules run on a single page for the page view (``check_page``) and on a field as
it would be after a proposal is applied (the review screens build such a field).
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import re
import urllib.parse
import weakref
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from memtui.credentials import find_secrets
from memtui.field import trust as trust_mod
from memtui.field.check_memo import CheckMemo, ContradictionFindings, PageRefs, reference_keys
from memtui.field.claims import (
    Claim,
    each_page_in_context,
    field_claims,
    keep_claims,
    page_claims_in_context,
)
from memtui.field.frontmatter import MAX_YAML_DEPTH
from memtui.field.history import page_edges
from memtui.field.page import KINDS, ORIGINS, is_index_page
from memtui.field.rule_settings import SETTINGS_FILE, RuleSettings
from memtui.field.rule_settings import load as load_rule_settings

if TYPE_CHECKING:
    from memtui.field.field import Field
    from memtui.field.page import PageInfo

ERROR = "error"
WARNING = "warning"
INFO = "info"
SEVERITY_ORDER = {ERROR: 0, WARNING: 1, INFO: 2}
SEVERITIES = (ERROR, WARNING, INFO)

PAGE_SOFT_LIMIT = 8000
MEMORY_CAP = 15000
LESSON_MIN_WEIGHT = 3.0
LESSON_MIN_SESSIONS = 2
LESSON_HALF_LIFE_DAYS = 30
MAX_LINE_FINDINGS_PER_RULE = 20


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    severity: str
    explanation: str


_RULES = [
    Rule("yaml-invalid", ERROR, "frontmatter YAML does not parse"),
    Rule("frontmatter-unclosed", ERROR, "frontmatter opened with --- is never closed"),
    Rule("frontmatter-not-mapping", ERROR, "frontmatter is not a mapping of keys to values"),
    Rule("frontmatter-too-large", ERROR, "frontmatter over 64 KB is not parsed"),
    Rule("yaml-alias", ERROR, "YAML aliases are refused (alias bombs)"),
    Rule("yaml-too-deep", ERROR, f"frontmatter YAML nested more than {MAX_YAML_DEPTH} levels deep is not read"),
    Rule("frontmatter-duplicate-key", ERROR, "a frontmatter key appears twice: readers disagree on which counts"),
    Rule("kind-unknown", WARNING, "kind is not episodic, semantic, procedural or preference"),
    Rule("origin-unknown", WARNING, "origin is not agent, user, job or external"),
    Rule("confidence-range", ERROR, "confidence must be a number from 0 to 1"),
    Rule("date-invalid", WARNING, "a date field does not parse, or valid_to is before valid_from"),
    Rule(
        "page-size",
        WARNING,
        f"page over the {PAGE_SOFT_LIMIT:,}-byte soft limit: split it (not MEMORY.md, not sessions/)",
    ),
    Rule("untagged-claim", WARNING, "claim line in a fact page without a source tag"),
    Rule("link-broken", WARNING, "[[wikilink]] to a page (or ![[embed]] to a file) that does not exist"),
    Rule(
        "link-ambiguous",
        WARNING,
        "a [[wikilink]] name several pages claim (a file name, a title, an alias, an id): a page's own "
        "aliases: or title: can take links from another page",
    ),
    Rule("cite-broken", ERROR, "[cite:N] with no N-th source"),
    Rule("cite-source-missing", WARNING, "a cited source path inside the field does not exist"),
    Rule("supersedes-broken", ERROR, "supersedes names a page that does not exist"),
    Rule("supersedes-self", ERROR, "a page supersedes itself"),
    Rule("supersede-cycle", ERROR, "pages supersede each other in a cycle"),
    Rule("superseded-twice", WARNING, "one version is superseded by two different pages"),
    Rule("contradiction", WARNING, "two current pages on the same subject and kind, neither supersedes the other"),
    Rule("memory-too-long", ERROR, f"MEMORY.md over {MEMORY_CAP:,} characters (memtui's format, OpenClaw)"),
    Rule("memory-missing-target", ERROR, "MEMORY.md points at a page that does not exist"),
    Rule("memory-untrusted-target", ERROR, "MEMORY.md points at a quarantined or unreviewed page"),
    Rule("generated-no-sources", ERROR, "generated: true page with no sources (never the only copy)"),
    Rule("lesson-ungated", ERROR, "[inferred] lesson marked established without 3 signals from 2 sessions"),
    Rule("lesson-unrecorded", WARNING, "[inferred] lesson marked established without recorded signals"),
    Rule("utf8-invalid", ERROR, "bytes that are not valid UTF-8"),
    Rule("control-chars", ERROR, "terminal control characters (ESC, C0/C1) in page text"),
    Rule("bidi-override", ERROR, "bidirectional override characters can disguise text"),
    Rule(
        "zero-width", WARNING, "invisible characters (zero-width, format, fillers, variation selectors) can hide text"
    ),
    Rule("binary-file", ERROR, "binary content in a .md file"),
    Rule("page-too-large", ERROR, "file too large to parse"),
    Rule("empty-page", WARNING, "empty file"),
    Rule(
        "conflict-markers",
        ERROR,
        "unresolved git merge conflict markers (<<<<<<<, =======, >>>>>>>): two versions of the page are mixed",
    ),
    Rule(
        "tool-markup",
        WARNING,
        "leftover tool-call or chat-template markup (</content>, <parameter name=...>, <|im_end|>) "
        "outside code: the page was written by a tool call that leaked its own syntax",
    ),
    Rule(
        "lookalike-tag",
        ERROR,
        "a source tag written with look-alike letters ([ſtated], [іnferred]): it reads as a tag and is none",
    ),
    Rule(
        "secret",
        ERROR,
        "a password, key or token in the text: every agent that loads the page reads it (never shown by memtui)",
    ),
    Rule("page-unreadable", ERROR, "the file cannot be read"),
    Rule("folder-unreadable", ERROR, "a folder cannot be listed"),
    Rule("symlink-outside", WARNING, "symlink leaving the field (not followed)"),
    Rule("symlink-skipped", INFO, "symlinked page (not followed)"),
    Rule("page-vanished", INFO, "page deleted while it was being read"),
    Rule("superseded-no-successor", INFO, "marked superseded but names no page that replaced it"),
    Rule(
        "claude-memory-truncated",
        WARNING,
        "Claude Code loads only the first 200 lines or 25,000 bytes of an auto-memory MEMORY.md",
    ),
    Rule("never-loaded", INFO, "the agent's own settings keep it from ever listing or reading this page"),
    Rule(
        "import-outside",
        WARNING,
        "an @import loads a file outside the field into the agent's context (memtui cannot show it)",
    ),
    Rule("import-credential", ERROR, "an @import names a key, credential or password file"),
    Rule("topic-unindexed", WARNING, "MEMORY.md never points at this topic file: the agent does not know it exists"),
    Rule(
        "loaded-untrusted",
        ERROR,
        "a quarantined or unreviewed file that an agent loads by itself (every session, or by a pattern)",
    ),
    Rule("import-broken", WARNING, "a CLAUDE.md @import names a file that does not exist"),
    Rule("sidecar-invalid", WARNING, "a page of a JSON-sidecar store has no sidecar, or one that does not parse"),
    Rule("sidecar-hash-mismatch", WARNING, "the body or sidecar changed since the store recorded its content hash"),
    Rule("settings-invalid", ERROR, "memtui.toml does not parse or names an unknown rule or severity"),
    Rule(
        "tag-promoted",
        WARNING,
        "a claim's source tag rose (suggested < inferred < observed < stated) since an earlier version, "
        "without a new citation",
    ),
    Rule("stated-uncited", INFO, "a current [stated] claim that cites nothing (no [cite:N], no source on the line)"),
]
RULES: dict[str, Rule] = {rule.id: rule for rule in _RULES}
_HAZARD_RULE = {"control": "control-chars", "bidi": "bidi-override", "zero-width": "zero-width"}


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    severity: str
    path: str
    line: int | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "path": self.path,
            "line": self.line,
            "message": self.message,
        }


def _quoted(text: str, limit: int = 80) -> str:
    """A claim's text as a finding quotes it: never a line that holds a secret (the ``secret``
    rule names such a line and its kind, never the value; no other finding may repeat it)."""
    if find_secrets(text):
        return "(the line holds a secret: not repeated here)"
    return text[:limit]


def make_finding(rule: str, path: str, line: int | None, message: str) -> Finding:
    """A finding of a known rule, at the rule's severity (``memtui.toml`` may change it later)."""
    return Finding(rule, RULES[rule].severity, path, line, message)


_finding = make_finding


def _as_date(value: Any) -> _dt.date | None:
    if not isinstance(value, str):
        return None
    try:
        return _dt.date.fromisoformat(value.strip()[:10])
    except ValueError:
        return None


def _capped(findings: list[Finding], rule: str, path: str, total: int | None = None) -> list[Finding]:
    """At most ``MAX_LINE_FINDINGS_PER_RULE`` findings, then one saying how many more there are.

    ``total`` is the real number when ``findings`` is already a truncated list.
    """
    total = max(total or 0, len(findings))
    if total <= MAX_LINE_FINDINGS_PER_RULE:
        return findings
    rest = total - MAX_LINE_FINDINGS_PER_RULE
    kept = findings[:MAX_LINE_FINDINGS_PER_RULE]
    kept.append(_finding(rule, path, None, f"... and {rest} more like this"))
    return kept


# --------------------------------------------------------------------------- per page


def check_page_local(info: PageInfo) -> list[Finding]:
    """Rules that need only the page itself."""
    out: list[Finding] = []
    path = info.path
    for rule, line, message in info.problems:
        out.append(_finding(rule if rule in RULES else "page-unreadable", path, line, message))
    hazard_findings: dict[str, list[Finding]] = {}
    for line, column, hazard, label in info.hazards:
        hazard_rule = _HAZARD_RULE.get(hazard)
        if hazard_rule is None:
            continue
        hazard_findings.setdefault(hazard_rule, []).append(
            _finding(hazard_rule, path, line, f"{label} at column {column}")
        )
    for rule, items in hazard_findings.items():
        total = sum(n for kind, n in info.hazard_counts.items() if _HAZARD_RULE.get(kind) == rule)
        out.extend(_capped(items, rule, path, total))
    # MEMORY.md has its own cap (memory-too-long); sessions/ is evidence that is never split.
    exempt = path == "MEMORY.md" or path.startswith("sessions/")
    if info.size > PAGE_SOFT_LIMIT and info.parsed and not exempt:
        out.append(_finding("page-size", path, None, f"{info.size:,} bytes (soft limit {PAGE_SOFT_LIMIT:,})"))
    meta = info.meta
    lines = info.key_lines
    own_format = info.dialect == "memtui"  # other formats have kinds, origins, lessons of their own
    kind = meta.get("kind")
    if own_format and kind is not None and (not isinstance(kind, str) or kind.strip().lower() not in KINDS):
        out.append(
            _finding(
                "kind-unknown", path, lines.get("kind"), f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}"
            )
        )
    origin = meta.get("origin")
    if own_format and origin is not None and (not isinstance(origin, str) or origin.strip().lower() not in ORIGINS):
        out.append(_finding("origin-unknown", path, lines.get("origin"), f"unknown origin {origin!r}"))
    if "confidence" in meta:
        value = meta["confidence"]
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1
        if not ok:
            out.append(
                _finding("confidence-range", path, lines.get("confidence"), f"confidence is {value!r}; must be 0..1")
            )
    for key in ("valid_from", "valid_to", "created", "updated", "reviewed_at"):
        value = meta.get(key)
        if value is not None and _as_date(value) is None:
            out.append(_finding("date-invalid", path, lines.get(key), f"{key} {value!r} is not a date"))
    start, end = _as_date(meta.get("valid_from")), _as_date(meta.get("valid_to"))
    if start and end and end < start:
        out.append(
            _finding("date-invalid", path, lines.get("valid_to"), f"valid_to {end} is before valid_from {start}")
        )
    if info.is_fact_page and info.untagged_claim_lines:
        items = [
            _finding("untagged-claim", path, line, "claim without [stated]/[observed]/[inferred]/[suggested]")
            for line in info.untagged_claim_lines
        ]
        out.extend(_capped(items, "untagged-claim", path))
    generated = meta.get("generated")
    if (generated is True or str(generated).lower() == "true") and not info.sources and not info.numbered_sources:
        out.append(_finding("generated-no-sources", path, lines.get("generated"), "generated page lists no sources"))
    sources = info.citation_sources
    for number, line in info.citations:
        if number < 1 or number > len(sources):
            have = f"{len(sources)} source{'s' if len(sources) != 1 else ''}"
            out.append(_finding("cite-broken", path, line, f"[cite:{number}] but the page has {have}"))
    if own_format:
        out.extend(_lesson_findings(info))
    return out


def _lesson_findings(info: PageInfo) -> list[Finding]:
    meta = info.meta
    status = meta.get("lesson", meta.get("lesson_status"))
    if not isinstance(status, str) or status.strip().lower() != "established":
        return []
    if meta.get("user_correction") is True:
        return []  # an explicit user correction skips the gate
    if info.tag_counts.get("inferred", 0) == 0:
        return []  # not an [inferred] lesson
    line = info.key_lines.get("lesson") or info.key_lines.get("lesson_status")
    signals = meta.get("signals")
    if not isinstance(signals, list) or not signals:
        return [_finding("lesson-unrecorded", info.path, line, "established lesson records no signals")]
    weight, sessions = lesson_weight(signals, reference=_as_date(info.updated))
    if weight + 1e-9 < LESSON_MIN_WEIGHT or sessions < LESSON_MIN_SESSIONS:
        return [
            _finding(
                "lesson-ungated",
                info.path,
                line,
                f"signals weigh {weight:g} from {sessions} session(s); needs {LESSON_MIN_WEIGHT:g} from "
                f"{LESSON_MIN_SESSIONS} (older than {LESSON_HALF_LIFE_DAYS} days count half)",
            )
        ]
    return []


def lesson_weight(signals: list[Any], *, reference: _dt.date | None) -> tuple[float, int]:
    """Weighted count of distinct signals and the number of distinct sessions."""
    seen: set[tuple[str, str]] = set()
    dated: list[tuple[_dt.date | None, str]] = []
    for signal in signals:
        if isinstance(signal, dict):
            session = str(signal.get("session") or signal.get("source") or "")
            day = _as_date(signal.get("date"))
        else:
            session, day = str(signal), None
        key = (session, day.isoformat() if day else "")
        if key in seen:
            continue
        seen.add(key)
        dated.append((day, session))
    if reference is None:
        days = [d for d, _ in dated if d]
        reference = max(days) if days else None
    weight = 0.0
    for day, _ in dated:
        old = reference is not None and day is not None and (reference - day).days > LESSON_HALF_LIFE_DAYS
        weight += 0.5 if old else 1.0
    sessions = len({s for _, s in dated if s})
    return weight, sessions


# --------------------------------------------------------------------------- whole field


# References a format writes in its own form, shown as written (Serena's ``mem:name``).
REFERENCE_SCHEMES = ("mem:",)


def _link_findings(field: Field, info: PageInfo) -> list[Finding]:
    return page_references(field, info).findings


def page_references(field: Field, info: PageInfo) -> PageRefs:
    """A page's references resolved: its link-broken and cite-source-missing findings, the
    backlinks it gives other pages (as ``Field.backlinks`` counts them), and the names its
    references may look up (what ``CheckMemo`` watches)."""
    out: list[Finding] = []
    path = info.path
    outgoing = field.outgoing(info)
    resolved_sources: dict[str, PageInfo | None] = {}
    for kind, target, line, hit in outgoing:
        if kind == "link" and hit is None and not _names_a_file(field, target, path):
            shown = target if target.startswith(REFERENCE_SCHEMES) else f"[[{target}]]"
            out.append(_finding("link-broken", path, line, f"{shown} matches no page"))
        elif kind == "link" and hit is not None:
            ambiguous = _ambiguous_name(field, target, hit.path)
            if ambiguous:
                out.append(_finding("link-ambiguous", path, line, ambiguous))
        elif kind == "embed" and field.resolve_file(target, near=path) is None:
            out.append(_finding("link-broken", path, line, f"![[{target}]] matches no file"))
        elif kind == "source":
            resolved_sources[target] = hit
    sources = info.citation_sources
    for number, line in info.citations:
        if 1 <= number <= len(sources):
            source = sources[number - 1]
            target = source.split("#", 1)[0].split("@", 1)[0].strip()
            if "://" in target or not target.endswith(".md"):
                continue
            hit = resolved_sources[source] if source in resolved_sources else field.resolve_source(source, near=path)
            if hit is None:
                out.append(_finding("cite-source-missing", path, line, f"[cite:{number}] -> {target}: no such page"))
    supersedes, superseded_by = info.supersedes, info.superseded_by
    edges = page_edges(field, info) if supersedes or superseded_by else ()
    keys = reference_keys(
        [t for t, _ in info.links]
        + [t for t, _ in info.embeds]
        + list(info.sources)
        + list(sources)
        + supersedes
        + superseded_by
    )
    return PageRefs(info, out, field.backlinks_given(info, outgoing), keys, edges)


def _ambiguous_name(field: Field, target: str, opened: str) -> str:
    """The message when the link name ``target`` is claimed by several pages and at least one
    claims it by what its frontmatter says (a title, an alias, an id): '' otherwise. Two files
    of one name in two folders are the closest-wins rule of every wiki, not a finding."""
    claims = field.name_claims(target)
    if len(claims) < 2 or all(how == "file name" for how in claims.values()):
        return ""
    shown = sorted(claims.items(), key=lambda item: (item[0] != opened, item[0]))
    listed = "; ".join(f"{path} by {how}" for path, how in shown[:3])
    more = f"; and {len(shown) - 3} more" if len(shown) > 3 else ""
    return f"[[{target}]] is claimed by {len(claims)} pages ({listed}{more}); it opens {opened}"


def _names_a_file(field: Field, target: str, near: str) -> bool:
    """``[[report.pdf]]``: a plain link to a file that is not a page (Obsidian opens it)."""
    name = target.split("#", 1)[0].split("|", 1)[0].strip().rsplit("/", 1)[-1]
    if "." not in name or name.lower().endswith(".md"):
        return False
    return field.resolve_file(target, near=near) is not None


def _history_findings(
    field: Field,
    paths: set[str] | None = None,
    kept: tuple[ContradictionFindings, ContradictionFindings] | None = None,
) -> list[Finding]:
    """The findings of the supersede history. ``kept``: (the contradiction findings of the last
    run, by group; where this run puts them): a group of the same page versions keeps its findings."""
    history = field.history
    out: list[Finding] = []
    for ref in history.broken:
        if paths is None or ref.path in paths:
            out.append(_finding("supersedes-broken", ref.path, ref.line, f"{ref.key} {ref.target!r}: no such page"))
    for path in history.self_refs:
        if paths is None or path in paths:
            out.append(
                _finding(
                    "supersedes-self", path, field.pages[path].key_lines.get("supersedes"), "page supersedes itself"
                )
            )
    for cycle in history.cycles:
        names = " -> ".join(cycle + [cycle[0]])
        for path in cycle:
            if paths is None or path in paths:
                out.append(
                    _finding("supersede-cycle", path, field.pages[path].key_lines.get("supersedes"), f"cycle: {names}")
                )
    for old, newer in history.superseded_twice.items():
        if paths is None or old in paths or paths & set(newer):
            out.append(_finding("superseded-twice", old, None, f"superseded by {', '.join(sorted(set(newer)))}"))
    for path, status in history.status.items():
        if status == "superseded" and not history.replaced_by.get(path) and (paths is None or path in paths):
            info = field.pages[path]
            if info.declared_status == "superseded" and not info.superseded_by:
                line = info.key_lines.get("status")
                out.append(
                    _finding("superseded-no-successor", path, line, "status: superseded, but no successor named")
                )
    last, now = kept if kept is not None else ({}, {})
    pages = field.pages
    for subject, kind, group in history.contradictions:
        if paths is None:
            key = (subject, kind, tuple(group))
            versions = tuple(pages[path] for path in group)
            held = last.get(key)
            if held is not None and all(a is b for a, b in zip(held[0], versions)):
                out.extend(held[1])
                now[key] = held
                continue
            start = len(out)
        for path in group:
            if paths is None or path in paths:
                others = ", ".join(p for p in group if p != path)
                out.append(
                    _finding(
                        "contradiction",
                        path,
                        field.pages[path].key_lines.get("subject"),
                        f"also current for subject {subject!r} (kind {kind or 'none'}): {others}",
                    )
                )
        if paths is None:
            now[key] = (versions, out[start:])
    return out


_TEMPLATE_RE = re.compile(r"YYYY|MM-DD|\bDD\b|<[^>]*>|\{[^}]*\}|\*|\.\.\.|…|X{2,}")


def is_template(target: str) -> bool:
    """A pointer written as a pattern (``memory/YYYY-MM-DD.md``, ``notes/<topic>.md``): not a link to one page."""
    return bool(_TEMPLATE_RE.search(target))


def index_pages(field: Field) -> list[str]:
    """The routing indexes of a field: ``MEMORY.md`` at the top, and any page a dialect reads as an index."""
    found = ["MEMORY.md"] if "MEMORY.md" in field.pages else []
    found.extend(p for p, info in field.pages.items() if p != "MEMORY.md" and is_index_page(info))
    return found


def _memory_findings(field: Field, index: str = "MEMORY.md") -> list[Finding]:
    info = field.pages.get(index)
    if info is None:
        return []
    out: list[Finding] = []
    norm = info.norm
    cap = norm.cap_chars if norm.cap_chars is not None else (None if norm.agent_view is not None else MEMORY_CAP)
    text = _index_text(field, index)
    if cap:
        if len(text) > cap:
            out.append(_finding("memory-too-long", index, None, f"{len(text):,} characters (cap {cap:,})"))
    seen: set[tuple[str, int]] = set()
    untrusted: set[tuple[str, int]] = set()  # (page, line) reported
    for target, line in field.memory_pointers(index, bare_paths=info.dialect == "memtui"):
        if (target, line) in seen or is_template(target):
            continue
        seen.add((target, line))
        hit = field.resolve(target, near=index)
        if hit is None:
            out.append(_finding("memory-missing-target", index, line, f"points at {target}: no such page"))
            continue
        state = field.trust(hit.path)
        if state in (trust_mod.QUARANTINED, trust_mod.UNREVIEWED) and (hit.path, line) not in untrusted:
            untrusted.add((hit.path, line))
            out.append(_finding("memory-untrusted-target", index, line, f"points at {hit.path}, which is {state}"))
    # The guard holds in any link form and whatever format reads the index: every name in it
    # that leads to an untrusted page (bare paths, links with titles or <>, references, code).
    for target, line in _every_name(text):
        hit = field.resolve(target, near=index)
        if hit is None or hit.path == index or (hit.path, line) in untrusted:
            continue
        state = field.trust(hit.path)
        if state in (trust_mod.QUARANTINED, trust_mod.UNREVIEWED):
            untrusted.add((hit.path, line))
            out.append(_finding("memory-untrusted-target", index, line, f"points at {hit.path}, which is {state}"))
    return out


def _index_text(field: Field, index: str) -> str:
    try:
        return (field.root / index).read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""


_LINK_TARGET_RE = re.compile(
    r"\]\(\s*<?([^)>\s]+)"  # [label](target "title"), [label](<target>)
    r"|^\s*\[[^\]]+\]:\s*<?([^>\s]+)"  # [ref]: target
    r"|<([^<>\s]+)>"  # <target>
    r"|\[\[([^\]|#]+)"  # [[target|label]]
    r"|([^\s()\[\]<>\"'`|*,;]+)",  # a bare word: a path when it holds / or ends in .md
    re.MULTILINE,
)


def _every_name(text: str) -> Iterable[tuple[str, int]]:
    """Every name in an index that may lead an agent to a page, with its line: what its
    wikilinks, Markdown links (with a title, in <>, as references), autolinks and bare paths
    name, percent-escapes undone, code spans and fences included (an agent reads them too)."""
    for number, line in enumerate(text.splitlines(), start=1):
        for match in _LINK_TARGET_RE.finditer(line):
            bare = match.lastindex == 5
            target = urllib.parse.unquote(match.group(match.lastindex or 0)).strip().rstrip(".:!?")
            if not target or "://" in target or is_template(target):
                continue
            if bare and "/" not in target and not target.lower().endswith(".md"):
                continue
            yield target, number


def claim_findings(field: Field, paths: set[str] | None = None, memo: CheckMemo | None = None) -> list[Finding]:
    """Tags that rose without evidence, and current [stated] claims that cite nothing (memtui's format)."""
    if memo is None:
        if paths is not None and len(paths) == 1:
            return _claim_findings(field, page_claims_in_context(field, next(iter(paths))), None)
        return _claim_findings(field, field_claims(field), paths)
    return [finding for found in claim_findings_per_page(field, memo).values() for finding in found]


_NONE: tuple[()] = ()  # the claim findings of a page without claims (one object: compared by identity)


def claim_findings_per_page(field: Field, memo: CheckMemo) -> dict[str, list[Finding]]:
    """The claim findings of each page with claims. The list of a page whose claims did not
    change in context is the same object as last time."""
    _keep_claim_findings(field, memo)
    return {path: found[1] for path, found in memo.claim_findings.items()}


def _keep_claim_findings(field: Field, memo: CheckMemo) -> set[str]:
    """Put the claims in context (``claims.keep_claims``, in ``memo.claims``) and bring
    ``memo.claim_findings`` (path -> (claims in context, their findings), for each page with
    claims) up to date. Returns the pages whose entry changed or went."""
    kept = memo.claims
    redone = keep_claims(field, kept, memo.moved, memo.serial)
    held = memo.claim_findings
    changed: set[str] = set()
    for path in kept if redone is None else redone:
        entry = kept.get(path)
        claims = entry[1] if entry is not None else None
        found = held.get(path)
        if claims:
            if found is None or found[0] is not claims:
                held[path] = (claims, _claim_findings(field, claims, None))
                changed.add(path)
        elif found is not None:
            del held[path]
            changed.add(path)
    if redone is None:
        for gone in [path for path in held if path not in kept]:
            del held[gone]
            changed.add(gone)
    return changed


def _claim_findings(field: Field, claims: Iterable[Claim], paths: set[str] | None) -> list[Finding]:
    out: list[Finding] = []
    for claim in claims:
        if paths is not None and claim.path not in paths:
            continue
        if claim.path.startswith("sessions/"):
            continue  # transcripts are evidence, not claims
        own_format = field.pages[claim.path].dialect == "memtui"
        # A tag that rose is laundering whatever format reads the page (a safety rule: no
        # agent-written mark switches it off); the citation habit is memtui's convention only.
        if claim.promoted_from and not claim.new_citation:
            out.append(
                _finding(
                    "tag-promoted",
                    claim.path,
                    claim.line,
                    f"[{claim.promoted_from}] -> [{claim.tag}] without a new citation: {_quoted(claim.text)}",
                )
            )
        elif own_format and claim.tag == "stated" and not claim.cited and not claim.cites and claim.status == "current":
            out.append(_finding("stated-uncited", claim.path, claim.line, f"cites nothing: {_quoted(claim.text)}"))
    return out


def rule_settings(field: Field) -> RuleSettings:
    """The field's ``memtui.toml`` (read again each time: an agent may change it), from where the
    field's other files are: a proposal's result (an overlay in a temporary folder) is checked
    under the same file as the field it is compared with, never under none."""
    return load_rule_settings(field.content_root, set(RULES), SEVERITIES)


def run_checks(field: Field, *, include_info: bool = True, memo: CheckMemo | None = None) -> list[Finding]:
    """Every finding of the field, sorted. With ``memo`` (the app's, kept between runs), each
    page's own findings and references are taken from the last run where a change cannot
    have moved them, and the field's backlink table is filled from the references."""
    findings: list[Finding] = []
    check_field(field, findings.append, include_info=include_info, memo=memo)
    return sort_findings(findings)


def check_field(
    field: Field,
    emit: Callable[[Finding], object],
    *,
    include_info: bool = True,
    memo: CheckMemo | None = None,
    hidden: Callable[[Finding], object] | None = None,
) -> None:
    """Pass every finding of the field to ``emit``, in no order, as ``memtui.toml`` wants it.

    What ``run_checks`` collects; ``memtui check`` counts them instead (``FindingTally``), so that
    a field of 100,000 pages and a million findings is never held as a list of findings.
    ``hidden`` is given each finding ``memtui.toml`` switched off or ignored, so that every count
    can say how many it hid (the field's own file must not make a clean bill of health silently).
    """
    settings = rule_settings(field)
    adjust = settings.adjust

    def put(findings: Iterable[Finding]) -> None:
        for finding in findings:
            adjusted = adjust(finding)
            if adjusted is None:
                if hidden is not None and (include_info or finding.severity != INFO):
                    hidden(finding)
            elif include_info or adjusted.severity != INFO:
                emit(adjusted)

    if memo is not None:
        found = field_findings(field, memo, settings)
        for path in sorted(found.by_path):
            for finding in found.by_path[path]:
                if include_info or finding.severity != INFO:
                    emit(finding)
        return
    for info in field.pages.values():
        put(check_page_local(info))
        put(_link_findings(field, info))
    put(_wide_findings(field, settings))
    # one page's claims in memory at a time (2,000,000 claims at 100,000 pages)
    each_page_in_context(field, lambda claims: put(_claim_findings(field, claims, None)))


def _wide_findings(
    field: Field,
    settings: RuleSettings,
    kept: tuple[ContradictionFindings, ContradictionFindings] | None = None,
    indexes: list[str] | None = None,
) -> Iterable[Finding]:
    """The findings of the field as a whole (its scan, history, routing indexes, dialect, settings).
    ``kept``: see ``_history_findings``; ``indexes``: the field's ``index_pages``, when known."""
    for problem in field.scan_problems:
        yield _finding(problem.rule, problem.path, None, problem.message)
    for path in field.vanished:
        yield _finding("page-vanished", path, None, "deleted while being read; skipped")
    yield from _history_findings(field, kept=kept)
    for index in index_pages(field) if indexes is None else indexes:
        yield from _memory_findings(field, index)
    yield from field.reader.checks(field)
    for message in settings.problems:
        yield _finding("settings-invalid", SETTINGS_FILE, None, message)


def _nothing() -> None:
    return None


@dataclass(slots=True)
class FieldFindings:
    """Every finding of a field as ``memtui.toml`` wants it, per page (each list sorted), with
    the counts by severity and by rule, and the pages whose findings changed since the last run."""

    by_path: dict[str, list[Finding]]
    by_severity: dict[str, int]
    by_rule: dict[str, int]
    changed: set[str]
    since_last: bool = False  # ``changed`` is every page whose findings differ from the memo's last run
    hidden: int = 0  # findings ``memtui.toml`` switched off or ignored (every count says so)
    hidden_by_path: dict[str, int] = dataclasses.field(default_factory=dict)  # and per page (a page view says it)

    def sorted(self) -> list[Finding]:
        """All of them in ``run_checks``'s order."""
        by_path = self.by_path
        return [finding for path in sorted(by_path) for finding in by_path[path]]


# Per memo: how many findings of each page memtui.toml hid (kept beside ``memo.totals``, reset with it).
_HIDDEN: weakref.WeakKeyDictionary[CheckMemo, Counter[str]] = weakref.WeakKeyDictionary()


def field_findings(
    field: Field, memo: CheckMemo, settings: RuleSettings | None = None, between: Callable[[], object] | None = None
) -> FieldFindings:
    """The field's findings, made again only where a change since the memo's last run can have
    moved them: each page's list is kept while its own findings, its references' findings, its
    claims' findings and the field-wide findings about it are the same objects (or values).
    After the memo's first run only the pages the change reached are looked at (``memo.moved``).
    ``between`` is called between the steps (the app lets its search index write there)."""
    between = between or _nothing
    settings = settings if settings is not None else rule_settings(field)
    memo.update(field, page_references)  # (starts afresh when the day, the dialect or the files changed)
    between()
    moved = memo.moved
    if memo.assembled_for != settings or not memo.totals or moved is None or memo.assembled_serial != moved.since:
        memo.assembled.clear()
        memo.assembled_for = settings
        memo.totals = {"by_path": {}, "severity": Counter(), "rule": Counter()}
        _HIDDEN[memo] = Counter()
        memo.wide = {}
        moved = None
    memo.assembled_serial = memo.serial
    wide: dict[str, list[Finding]] = {}
    groups: ContradictionFindings = {}
    for finding in _wide_findings(field, settings, (memo.contradiction_findings, groups), memo.index_pages()):
        wide.setdefault(finding.path, []).append(finding)
    memo.contradiction_findings = groups
    between()
    claimed_moved = _keep_claim_findings(field, memo)
    claims = memo.claim_findings
    between()
    held = memo.assembled
    totals = memo.totals
    by_path = dict(totals["by_path"])
    by_severity: Counter[str] = totals["severity"].copy()
    by_rule: Counter[str] = totals["rule"].copy()
    hidden_by: Counter[str] = _HIDDEN.get(memo, Counter()).copy()  # path -> findings memtui.toml hid
    adjust = settings.adjust
    changed: set[str] = set()
    local = memo.local
    refs = memo.refs
    pages = field.pages
    none = _NONE
    last_wide = memo.wide

    def put(path: str, parts: tuple[Sequence[Finding], ...]) -> None:
        entry = held.get(path)
        if entry is not None:
            for finding in entry[-1]:
                by_severity[finding.severity] -= 1
                by_rule[finding.rule] -= 1
        found = sorted(
            (f for f in map(adjust, (f for part in parts for f in part)) if f is not None), key=finding_sort_key
        )
        hidden = sum(map(len, parts)) - len(found)
        if hidden:
            hidden_by[path] = hidden
        else:
            hidden_by.pop(path, None)
        for finding in found:
            by_severity[finding.severity] += 1
            by_rule[finding.rule] += 1
        held[path] = (*parts, found)
        if found:
            by_path[path] = found
        else:
            by_path.pop(path, None)
        if found or (entry is not None and entry[-1]):
            changed.add(path)

    def visit(path: str) -> None:
        info = pages.get(path)
        entry = held.get(path)
        extra = wide.get(path, none)
        if info is not None:
            own = local(info, check_page_local)
            linked = refs(path).findings
            held_claims = claims.get(path)
            claimed = held_claims[1] if held_claims is not None else none
            if (
                entry is None
                or entry[0] is not own
                or entry[1] is not linked
                or entry[2] is not claimed
                or entry[3] != extra
            ):
                put(path, (own, linked, claimed, extra))
        elif extra is not none:
            if entry is None or entry[3] != extra:
                put(path, (none, none, none, extra))
        elif entry is not None:
            put(path, (none, none, none, none))
            del held[path]

    if moved is None:
        for path in pages:
            visit(path)
        for path in wide:
            if path not in pages:
                visit(path)
        for path in [p for p in held if p not in pages and p not in wide]:
            visit(path)
    else:
        reach = moved.versions | moved.refs | claimed_moved
        reach.update(path for path in wide.keys() | last_wide.keys() if wide.get(path) != last_wide.get(path))
        for path in reach:
            visit(path)
    memo.wide = wide
    by_severity = +by_severity  # no zero counts
    by_rule = +by_rule
    memo.totals = {"by_path": by_path, "severity": by_severity, "rule": by_rule}
    _HIDDEN[memo] = hidden_by
    return FieldFindings(
        by_path, dict(by_severity), dict(by_rule), changed, moved is not None, sum(hidden_by.values()), dict(hidden_by)
    )


def page_findings(field: Field, info: PageInfo) -> list[Finding]:
    """The findings one page version has on its own and through its links (no field-wide rules).

    Used to tell whether an edit newly breaks something before it is saved.
    """
    return check_page_local(info) + _link_findings(field, info)


def check_page(field: Field, path: str) -> list[Finding]:
    """Every finding about one page (what the page view shows beside it)."""
    return check_page_counted(field, path)[0]


def check_page_counted(field: Field, path: str) -> tuple[list[Finding], int]:
    """``check_page``, and how many findings of the page ``memtui.toml`` hid: a page view
    saying "none" must say "none, N hidden by memtui.toml" when the field's own file hid them."""
    info = field.pages.get(path)
    if info is None:
        return [], 0
    findings = check_page_local(info) + _link_findings(field, info) + _history_findings(field, {path})
    if path in index_pages(field):
        findings.extend(_memory_findings(field, path))
    findings.extend(f for f in field.reader.checks(_Single(field, info)) if f.path == path)
    findings.extend(claim_findings(field, {path}))
    kept = rule_settings(field).apply(findings, {rule.id: rule.severity for rule in _RULES})
    return sort_findings(kept), len(findings) - len(kept)


class _Single:
    """A view of a field holding one page, for a dialect's checks of that page."""

    def __init__(self, field: Field, info: PageInfo) -> None:
        self.root = field.root
        self.content_root = field.content_root
        self.pages = {info.path: info}
        self.reader = field.reader
        self.trust = field.trust

    def __getattr__(self, name: str) -> NoReturn:
        raise AttributeError(name)


def sort_findings(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=finding_sort_key)


def summarise(findings: Iterable[Finding], pages: int) -> dict[str, Any]:
    findings = list(findings)
    return _summary(
        pages, Counter(f.severity for f in findings), Counter(f.rule for f in findings), len({f.path for f in findings})
    )


def _summary(
    pages: int, by_severity: Counter[str], by_rule: Counter[str], pages_with_findings: int, hidden: int = 0
) -> dict[str, Any]:
    return {
        "pages": pages,
        "errors": by_severity.get(ERROR, 0),
        "warnings": by_severity.get(WARNING, 0),
        "info": by_severity.get(INFO, 0),
        "by_rule": dict(sorted(by_rule.items())),
        "pages_with_findings": pages_with_findings,
        "hidden_by_settings": hidden,  # findings memtui.toml switched off or ignored
    }


def finding_sort_key(f: Finding) -> tuple[str, int, int, str, str]:
    """The order of ``run_checks``: page, line, severity, rule, message."""
    return (f.path, f.line or 0, SEVERITY_ORDER[f.severity], f.rule, f.message)


class FindingTally:
    """Counts of findings by severity, rule and page, and the first ``keep`` of each rule in
    ``run_checks``'s order: what a summary shows, without holding every finding."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.by_severity: Counter[str] = Counter()
        self.by_rule: Counter[str] = Counter()
        self.paths: set[str] = set()
        self._first: dict[str, list[Finding]] = {}
        self.hidden = 0  # findings memtui.toml switched off or ignored (``check_field(hidden=...)``)

    def hide(self, finding: Finding) -> None:
        """Count a finding ``memtui.toml`` hid: every count says how many it hid."""
        self.hidden += 1

    def add(self, finding: Finding) -> None:
        self.by_severity[finding.severity] += 1
        self.by_rule[finding.rule] += 1
        self.paths.add(finding.path)
        held = self._first.setdefault(finding.rule, [])
        held.append(finding)
        if len(held) >= 4 * max(self.keep, 1):
            held.sort(key=finding_sort_key)
            del held[max(self.keep, 1) :]

    def first(self, rule: str) -> list[Finding]:
        """The first ``keep`` findings of ``rule``, sorted as ``run_checks`` sorts."""
        return sorted(self._first.get(rule, ()), key=finding_sort_key)[: self.keep]

    def severity_of(self, rule: str) -> str:
        """The severity of the rule's first finding (``memtui.toml`` may change it on some paths)."""
        return min(self._first[rule], key=finding_sort_key).severity

    def summary(self, pages: int) -> dict[str, Any]:
        """What ``summarise`` says of the same findings, with how many ``memtui.toml`` hid."""
        return _summary(pages, self.by_severity, self.by_rule, len(self.paths), self.hidden)


def findings_by_path(findings: Iterable[Finding]) -> dict[str, list[Finding]]:
    out: dict[str, list[Finding]] = {}
    for finding in findings:
        out.setdefault(finding.path, []).append(finding)
    return out
