"""One page: read its bytes safely, parse it, summarise it.

``read_page`` never raises for a bad page: a binary, empty, huge, non-UTF-8 or
vanished file comes back as a ``PageInfo`` carrying ``problems`` (or ``None`` when
the file is gone), which the checks turn into findings.

``ParsedPage`` is the full parse (text, frontmatter, every body line) used by the
page view, the editor and the index; ``PageInfo`` is the compact summary the rest
of the model needs, small enough to keep for 10,000 pages and to cache as JSON.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from memtui.credentials import find_secrets
from memtui.field import body as body_mod
from memtui.field import frontmatter as fm_mod
from memtui.field.normal import NO_NORM, NormalPage
from memtui.store.files import FileTooLarge, read_bytes, read_head, sha256_bytes
from memtui.textsafety import find_hazards

MAX_PARSE_BYTES = 2 * 1024 * 1024  # bigger files are listed and hashed, not parsed
MAX_INDEX_BYTES = 20 * 1024 * 1024  # the text of a bigger page is still searchable up to this
BINARY_SNIFF_BYTES = 8192
MAX_HAZARDS_KEPT = 50  # per kind; ``hazard_counts`` has the full numbers
MAX_LINE_PROBLEMS_KEPT = 5  # per rule: conflicts, tool-call markup (then one line says how many more)

KINDS = ("episodic", "semantic", "procedural", "preference")
ORIGINS = ("agent", "user", "job", "external")
# Folders whose pages state facts and so should tag every claim line.
FACT_FOLDERS = ("people", "projects", "decisions", "knowledge", "notes", "memory/notes")


@dataclass(slots=True)
class Problem:
    """Something wrong found while reading one page (becomes a check finding)."""

    rule: str
    line: int | None
    message: str


@dataclass(slots=True)
class ParsedPage:
    path: str
    data: bytes
    text: str  # decoded with surrogateescape: re-encoding gives the exact bytes
    frontmatter: fm_mod.Frontmatter
    body: body_mod.Body
    problems: list[Problem]
    newline: str
    has_bom: bool

    @property
    def sha256(self) -> str:
        return sha256_bytes(self.data)

    @property
    def meta(self) -> dict[str, Any]:
        return self.frontmatter.data


# Frontmatter ``status:`` words that say a page is no longer current, whatever tool wrote them.
DECLARED_STATUS = {
    "superseded": "superseded",
    "replaced": "superseded",
    "stale": "stale",
    "archived": "stale",
    "deprecated": "stale",
    "obsolete": "stale",
    "outdated": "stale",
    "expired": "stale",
    "retired": "stale",
}


# Keys that carry a page's lifecycle in real vaults, first match wins.
STATUS_KEYS = ("status", "lifecycle", "decision_status", "memory_status")
_FIRST_WORD_RE = re.compile(r"\s*([^\W\d_]+)")
_STATUS_LINK_RE = re.compile(r"\[\[([^\[\]|#\n]+)(?:[#|][^\]\n]*)?\]\]")


_FIRST_WIKILINK_RE = re.compile(r"!?\[\[([^\[\]]+)\]\]")


def clean_ref(value: str) -> str:
    """A reference as a page states it, unwrapped: ``"[[Notes/x|label]]"`` -> ``Notes/x``.

    The ``#section`` part is kept (resolution ignores it); labels and the brackets go.
    """
    text = value.strip()
    if text.startswith("[[") and text.endswith("]]") and "]]" not in text[2:-2]:
        text = text[2:-2]
    elif text.startswith("![[") and text.endswith("]]") and "]]" not in text[3:-2]:
        text = text[3:-2]
    elif "[[" in text:
        # "[[New note]] (two-view design; merged later)": the link names the page, the rest is a remark
        link = _FIRST_WIKILINK_RE.search(text)
        if link:
            text = link.group(1)
    if "§" in text:  # "BACKLOG.md § B2": a section of a page, as "#B2" is
        page, _, section = text.partition("§")
        text = f"{page.strip()}#{section.strip()}" if page.strip() else text
    return text.split("|", 1)[0].strip().rstrip("\\").strip()


_LINE_ANCHOR_RE = re.compile(r"#L(\d{1,9})(?:\s*[-–:]\s*L?(\d{1,9}))?(?![\w])")


def line_anchor(ref: str) -> tuple[int, int] | None:
    """The file lines a reference points at: ``x.md#L13-L18`` -> (13, 18), ``#L7`` -> (7, 7).

    GitHub's form (``#L13-L18``), also ``#L13-18``; a range written backwards is put in
    order. None when the reference names no line.
    """
    match = _LINE_ANCHOR_RE.search(ref)
    if match is None:
        return None
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) else first
    if first < 1:
        return None
    return (first, last) if first <= last else (last, first)


def _as_list(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, list):
        return [v if isinstance(v, str) else str(v) for v in value if v is not None]
    return [value if isinstance(value, str) else str(value)]


def path_stem(path: str) -> str:
    """``PurePosixPath(path).stem`` in strings (asked for every page whenever the lookup tables
    are built) for a page's path as the scan gives it (no empty or "." parts): the last part
    without its last suffix."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


@dataclass(slots=True, eq=False)
class PageInfo:
    """What the model keeps about a page between reads.

    ``meta`` is the frontmatter exactly as written. ``norm`` is the normalised page
    (``normal.NormalPage``): what the page's *dialect* says about it in memtui's terms.
    Every accessor below reads ``norm`` first, then the frontmatter, so memtui's own
    format needs no reading at all (its pages share ``NO_NORM``).
    """

    path: str  # relative, POSIX separators
    size: int
    mtime_ns: int
    sha256: str
    meta: dict[str, Any] = field(default_factory=dict)
    fm_present: bool = False
    fm_error: str | None = None
    fm_error_line: int | None = None
    fm_error_rule: str | None = None
    key_lines: dict[str, int] = field(default_factory=dict)
    body_line: int = 1
    body_offset: int = 0  # where the body starts in the decoded text (characters)
    heading_title: str | None = None
    tag_counts: dict[str, int] = field(default_factory=dict)
    claim_lines: int = 0
    untagged_claim_lines: list[int] = field(default_factory=list)
    links: list[tuple[str, int]] = field(default_factory=list)  # (target, line)
    embeds: list[tuple[str, int]] = field(default_factory=list)  # ![[target]]: any file (target, line)
    citations: list[tuple[int, int]] = field(default_factory=list)  # (number, line)
    numbered_sources: list[str] = field(default_factory=list)
    inline_chains: list[list[dict[str, Any]]] = field(default_factory=list)
    hazards: list[tuple[int, int, str, str]] = field(default_factory=list)  # line, col, kind, label
    hazard_counts: dict[str, int] = field(default_factory=dict)  # kind -> how many in the page
    problems: list[tuple[str, int | None, str]] = field(default_factory=list)
    newline: str = "\n"
    has_bom: bool = False
    line_count: int = 0  # lines in the file (a last line without a newline counts)
    parsed: bool = True  # False for binary or oversized files
    dialect: str = "memtui"  # the format this page was read as
    norm: NormalPage = field(default_factory=lambda: NO_NORM)  # the dialect's reading (see the class docstring)
    # [path, *side_stamp] of a sidecar file read with the page (``side_stamp``: size, mtime, and
    # the sidecar's own change time, inode, device); ["", 0, 0] when one was looked for and absent.
    side: list[Any] | None = None
    # (ctime_ns, inode, device) of the file when read (``stat_ident``); None for bytes not read from
    # disk. Size and mtime are the writer's to set: a same-size rewrite with the old mtime put back
    # must still read again, so a summary is reused only while this is also unchanged.
    ident: tuple[int, int, int] | None = None

    __hash__ = None  # type: ignore[assignment]  # compared by value, as a dataclass is

    def __eq__(self, other: object) -> bool:
        """Field by field, a list field by its items: an empty list held as ``()`` (shared by
        every page, see ``shared_parts``) equals the ``[]`` a fresh read makes."""
        if type(other) is not PageInfo:
            return NotImplemented
        for name in _FIELD_NAMES:
            mine, theirs = getattr(self, name), getattr(other, name)
            if mine != theirs and not (
                isinstance(mine, (list, tuple)) and isinstance(theirs, (list, tuple)) and list(mine) == list(theirs)
            ):
                return False
        return True

    def writable_norm(self) -> NormalPage:
        """The page's ``norm``, its own (not the shared ``NO_NORM``), for a dialect to fill in."""
        if self.norm is NO_NORM:
            self.norm = NormalPage()
        return self.norm

    # -- accessors (values are untrusted; callers render them safely)
    def _value(self, key: str) -> Any:
        said = self.norm.value(key)
        return said if said is not None else self.meta.get(key)

    def text_of(self, key: str) -> str | None:
        """The page's ``key`` as text (the dialect's reading first, then the frontmatter)."""
        value = self._value(key)
        if value is None:
            return None
        return value if isinstance(value, str) else str(value)

    @property
    def stem(self) -> str:
        return path_stem(self.path)

    @property
    def folder(self) -> str:
        return self.path.rsplit("/", 1)[0] if "/" in self.path else ""

    @property
    def id(self) -> str | None:
        return self.text_of("id")

    @property
    def uuid(self) -> str | None:
        return self.text_of("uuid")

    @property
    def ids(self) -> list[str]:
        """Every identifier other pages may use for this page (id, uuid, a dialect's own ids)."""
        found = [v for v in (self.id, self.uuid) if v]
        found.extend(_as_list(self.norm.ids))
        return found

    @property
    def key(self) -> str:
        """The identifier other pages use: id, else uuid, else the path."""
        return self.id or self.uuid or self.path

    @property
    def title(self) -> str:
        return self.text_of("title") or self.heading_title or self.stem

    @property
    def summary(self) -> str | None:
        return self.text_of("summary") or (self.text_of("description") if self.norm.says("description") else None)

    @property
    def description(self) -> str | None:
        return self.text_of("description") or self.text_of("summary")

    @property
    def kind(self) -> str | None:
        return self.text_of("kind")

    @property
    def subject(self) -> str | None:
        return self.text_of("subject")

    @property
    def origin(self) -> str | None:
        return self.text_of("origin")

    @property
    def valid_from(self) -> str | None:
        return self.text_of("valid_from")

    @property
    def valid_to(self) -> str | None:
        return self.text_of("valid_to")

    @property
    def created(self) -> str | None:
        return self.text_of("created")

    @property
    def updated(self) -> str | None:
        return self.text_of("updated") or self.text_of("created")

    @property
    def sources(self) -> list[str]:
        return _as_list(self._value("sources"))

    @property
    def citation_sources(self) -> list[str]:
        """What ``[cite:N]`` counts through: frontmatter sources, else a numbered Sources list."""
        return self.sources or list(self.numbered_sources)

    @property
    def supersedes(self) -> list[str]:
        return [clean_ref(v) for v in _as_list(self._value("supersedes"))]

    @property
    def superseded_by(self) -> list[str]:
        named = [clean_ref(v) for v in _as_list(self._value("superseded_by"))]
        if named:
            return named
        said = self.status_text()  # "status: superseded by [[New page]]"
        return [m.group(1).strip() for m in _STATUS_LINK_RE.finditer(said)] if self.declared_status else []

    def status_text(self) -> str:
        for key in STATUS_KEYS:
            value = self._value(key)
            if isinstance(value, str) and value.strip():
                return value
        return ""

    @property
    def declared_status(self) -> str | None:
        """``superseded`` or ``stale`` when the page (or its dialect) says so; None otherwise.

        The first word counts ("superseded by [[B]]", "Deprecated (2026-05)"), under
        ``status`` or the other names real vaults use for it.
        """
        word = _FIRST_WORD_RE.match(self.status_text())
        return DECLARED_STATUS.get(word.group(1).lower()) if word else None

    @property
    def tags(self) -> list[str]:
        value = self._value("tags")
        if isinstance(value, str):
            value = value.replace(",", " ").split()
        return [t.strip().lstrip("#") for t in _as_list(value) if t.strip().lstrip("#")]

    @property
    def aliases(self) -> list[str]:
        value = self._value("aliases")
        if value is None:
            value = self._value("alias")
        return [a for a in _as_list(value) if a.strip()]

    @property
    def role(self) -> str:
        """What the page is to an agent: ``memory`` (facts), ``instructions``, ``index``, ``log``."""
        return self.norm.role or "memory"

    @property
    def is_fact_page(self) -> bool:
        """A memtui-format page in a folder of facts, whose claim lines should carry source tags."""
        return self.dialect == "memtui" and self.path.startswith(tuple(f + "/" for f in FACT_FOLDERS))


_FIELD_NAMES: tuple[str, ...] = PageInfo.__slots__


def is_index_page(info: PageInfo) -> bool:
    """A routing index: ``MEMORY.md`` at the top, or a ``MEMORY.md`` a dialect reads as an index."""
    path = info.path
    return path == "MEMORY.md" or (info.norm.role == "index" and path.rsplit("/", 1)[-1] == "MEMORY.md")


def decode(data: bytes) -> tuple[str, Problem | None]:
    """Decode page bytes; invalid UTF-8 is kept (surrogateescape) and reported."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        text = data.decode("utf-8", "surrogateescape")
        return text, Problem(
            "utf8-invalid",
            line,
            f"bytes that are not valid UTF-8 (first at byte {exc.start}, line {line})",
        )


def is_binary(data: bytes) -> bool:
    return b"\x00" in data[:BINARY_SNIFF_BYTES]


def parse_bytes(path: str, data: bytes, *, keep_lines: bool = True) -> ParsedPage:
    """Full parse of a page's bytes. Never raises.

    ``keep_lines=False`` skips the per-line records of the body, which only a
    view of the page needs (``summarise`` does not).
    """
    return body_mod.run_steps(parse_bytes_steps(path, data, keep_lines=keep_lines))


def _kept(rule: str, found: list[tuple[int, str]], what: str, keep: int = MAX_LINE_PROBLEMS_KEPT) -> list[Problem]:
    """The first ``keep`` of a page's ``found`` (line, message) as problems, and one more saying
    how many are left out."""
    out = [Problem(rule, line, message) for line, message in found[:keep]]
    if len(found) > keep:
        out.append(Problem(rule, found[keep][0], f"… {len(found) - keep} more {what}"))
    return out


def parse_bytes_steps(path: str, data: bytes, *, keep_lines: bool = True) -> Generator[None, None, ParsedPage]:
    """``parse_bytes`` that yields every few hundred body lines (a long page read between keystrokes)."""
    problems: list[Problem] = []
    text, decode_problem = decode(data)
    if decode_problem:
        problems.append(decode_problem)
    fm = fm_mod.parse(text)
    if fm.error:
        problems.append(Problem(fm.error_rule or "yaml-invalid", fm.error_line, fm.error))
    for key, line in fm.duplicate_keys:
        problems.append(
            Problem(
                "frontmatter-duplicate-key",
                line,
                f"the key {key!r} appears more than once "
                "(readers disagree on which value counts; memtui uses the last)",
            )
        )
    conflicts = body_mod.conflict_markers(text)
    problems += _kept(
        "conflict-markers",
        [
            (
                start,
                f"an unresolved git merge conflict (lines {start}-{end}): both versions are in the page, "
                "and an agent reads both",
            )
            for start, end in conflicts
        ],
        "unresolved conflicts",
    )
    problems += _kept(
        "tool-markup",
        [
            (line, f"leftover tool-call markup {token!r}: text of the model's tool call, not memory")
            for line, token in body_mod.tool_markup(text)
        ],
        "lines with tool-call markup",
    )
    problems += _kept(
        "lookalike-tag",
        [
            (
                line,
                f"{raw} imitates [{tag}] with look-alike letters: a reader sees a source tag, "
                "memtui and every tool see none",
            )
            for line, raw, tag in body_mod.lookalike_tags(text)
        ],
        "look-alike tags",
    )
    problems += _kept(
        "secret",
        [
            (line, f"a {kind} in the text (found by detect-secrets; the value is not repeated here)")
            for line, kind in find_secrets(text)
        ],
        "lines with secrets",
    )
    body_text = text[fm.body_offset :]
    parsed_body = yield from body_mod.parse_body_steps(body_text, fm.body_line, keep_lines=keep_lines)
    return ParsedPage(
        path=path,
        data=data,
        text=text,
        frontmatter=fm,
        body=parsed_body,
        problems=problems,
        newline=fm_mod.newline_of(text),
        has_bom=text.startswith("\ufeff"),
    )


def summarise(parsed: ParsedPage, size: int, mtime_ns: int) -> PageInfo:
    fm = parsed.frontmatter
    b = parsed.body
    heading_title = next((title for _, level, title in b.headings if level == 1), None)
    if heading_title is not None and heading_title == fm.data.get("title"):
        heading_title = fm.data["title"]  # one string for both (most pages head with their title)
    text_for_hazards = parsed.text[1:] if parsed.has_bom else parsed.text
    hazards: list[tuple[int, int, str, str]] = []
    hazard_counts: dict[str, int] = {}
    for hazard in find_hazards(text_for_hazards):
        # Keep the first few of each kind, so a flood of one kind cannot hide another.
        hazard_counts[hazard.kind] = hazard_counts.get(hazard.kind, 0) + 1
        if hazard_counts[hazard.kind] <= MAX_HAZARDS_KEPT:
            hazards.append((hazard.line, hazard.column, hazard.kind, hazard.label))
    chains = [
        [
            {
                "line": c.line,
                "key": c.key,
                "value": c.value,
                "tag": c.tag,
                "source": c.source,
                "source_date": c.source_date,
                "struck": c.struck,
                "superseded_on": c.superseded_on,
            }
            for c in chain
        ]
        for chain in body_mod.inline_chains(b.claims)
    ]
    info = PageInfo(
        path=parsed.path,
        size=size,
        mtime_ns=mtime_ns,
        sha256=parsed.sha256,
        meta=fm.data,
        fm_present=fm.present,
        fm_error=fm.error,
        fm_error_line=fm.error_line,
        fm_error_rule=fm.error_rule,
        key_lines=fm.key_lines,
        body_line=fm.body_line,
        body_offset=fm.body_offset,
        heading_title=heading_title,
        tag_counts=b.tag_counts,
        claim_lines=b.claim_line_count,
        untagged_claim_lines=b.untagged_claim_lines,
        links=[(link.target, link.line) for link in b.links if not link.embed],
        embeds=[(link.target, link.line) for link in b.links if link.embed],
        citations=[(c.number, c.line) for c in b.citations],
        numbered_sources=b.numbered_sources,
        inline_chains=chains,
        hazards=hazards,
        hazard_counts=hazard_counts,
        problems=[(p.rule, p.line, p.message) for p in parsed.problems],
        newline=parsed.newline,
        has_bom=parsed.has_bom,
        line_count=parsed.text.count("\n") + (not parsed.text.endswith("\n") and bool(parsed.text)),
    )
    if size == 0:
        info.problems.append(("empty-page", None, "the file is empty"))
    if fm.error and fm.raw:
        # The YAML does not parse, but "title: A: B" still names the page and "status:
        # deprecated" still says it is not current: read those lines one by one.
        recovered = fm_mod.recover_keys(fm.raw)
        if recovered:
            info.norm = NormalPage.from_dict(recovered)
    return info


def unparsed_info(path: str, data: bytes, size: int, mtime_ns: int, rule: str, message: str) -> PageInfo:
    return PageInfo(
        path=path,
        size=size,
        mtime_ns=mtime_ns,
        sha256=sha256_bytes(data),
        problems=[(rule, None, message)],
        parsed=False,
        tag_counts=dict.fromkeys(body_mod.SOURCE_TAGS, 0),
    )


def too_large_info(path: str, abspath: str | os.PathLike[str], size: int, mtime_ns: int) -> PageInfo:
    """A page over ``MAX_PARSE_BYTES``: never read whole (so it has no content hash).

    Only its first bytes are looked at, to tell a binary file from a huge page.
    """
    try:
        head = read_head(abspath, BINARY_SNIFF_BYTES)
    except OSError:
        head = None
    if head is not None and is_binary(head[0]):
        rule, message = "binary-file", "binary file (NUL bytes) with a .md name"
    else:
        rule, message = "page-too-large", _too_large_message(size)
    return PageInfo(
        path=path,
        size=size,
        mtime_ns=mtime_ns,
        sha256="",
        problems=[(rule, None, message)],
        parsed=False,
        tag_counts=dict.fromkeys(body_mod.SOURCE_TAGS, 0),
    )


def _too_large_message(size: int) -> str:
    searchable = (
        "its text is searchable"
        if size <= MAX_INDEX_BYTES
        else f"its first {MAX_INDEX_BYTES // (1024 * 1024)} MB are searchable, the remaining {size - MAX_INDEX_BYTES:,} bytes are not"
    )
    return f"{size:,} bytes: too large to parse (limit {MAX_PARSE_BYTES // (1024 * 1024)} MB); shown raw only; {searchable}"


def info_from_bytes(path: str, data: bytes, size: int, mtime_ns: int) -> PageInfo:
    if is_binary(data):
        return unparsed_info(path, data, size, mtime_ns, "binary-file", "binary file (NUL bytes) with a .md name")
    if size > MAX_PARSE_BYTES:
        return unparsed_info(
            path,
            data,
            size,
            mtime_ns,
            "page-too-large",
            _too_large_message(size),
        )
    return summarise(parse_bytes(path, data, keep_lines=False), size, mtime_ns)


def read_page(root: str | os.PathLike[str], path: str) -> PageInfo | None:
    """Read and summarise one page; ``None`` if it vanished before it could be read.

    Other OS errors (permissions, a folder where a file was) become a problem.
    """
    found = read_page_bytes(root, path)
    return None if found is None else found[0]


def read_page_bytes(root: str | os.PathLike[str], path: str) -> tuple[PageInfo, bytes | None] | None:
    """``read_page``, and the bytes it read (None when the file could not be read)."""
    abspath = os.path.join(os.fspath(root), *path.split("/"))
    try:
        result = read_bytes(abspath, max_bytes=MAX_PARSE_BYTES)  # the size is checked before reading
    except FileTooLarge as exc:
        info = too_large_info(path, abspath, exc.size, exc.stat.st_mtime_ns)
        info.ident = stat_ident(exc.stat)
        return info, None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if exc.errno == errno.ELOOP:
            reason = "it is a symlink, which memtui does not follow"
        info = PageInfo(
            path=path,
            size=0,
            mtime_ns=0,
            sha256="",
            problems=[("page-unreadable", None, f"cannot read: {reason}")],
            parsed=False,
            tag_counts=dict.fromkeys(body_mod.SOURCE_TAGS, 0),
        )
        return info, None
    if result is None:
        return None
    data, st = result
    info = info_from_bytes(path, data, len(data), st.st_mtime_ns)
    info.ident = stat_ident(st)  # the stat of the descriptor, taken before the bytes were read
    return info, data


def stat_ident(st: os.stat_result) -> tuple[int, int, int]:
    """What a writer cannot set about a file: its change time, inode and device.

    Size and mtime are chosen by whoever writes (``os.utime``); the change time moves to
    "now" on every write and every ``utime``, and a file replaced by a rename has a new
    inode. With these in the key, bytes nobody read are never taken for the ones cached.
    """
    return (st.st_ctime_ns, st.st_ino, st.st_dev)


def side_stamp(st: os.stat_result) -> tuple[int, int, int, int, int]:
    """What a sidecar read with a page is remembered by: size, mtime and ``stat_ident``.

    A sidecar (an aictx ``<page>.json``) decides the page's status, title and trust as much
    as the page's own bytes do; size and mtime alone are the writer's to set back, so a
    same-length rewrite (``superseded`` to ``active``) with the old mtime put back must still
    differ here, by its change time or inode.
    """
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)
