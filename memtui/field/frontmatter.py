"""YAML frontmatter: find it, parse it safely, edit one key without touching the rest.

Parsing uses PyYAML's ``CSafeLoader`` (libyaml) where available and the pure
Python ``SafeLoader`` otherwise; never an unsafe loader. Aliases are refused
(an alias bomb expands a few hundred bytes into gigabytes), tags such as
``!!python/object`` are refused by the safe constructor, and frontmatter over
``MAX_FRONTMATTER_BYTES`` is not parsed at all. Values nested deeper than
``MAX_YAML_DEPTH`` are refused (libyaml accepts 999 levels; everything that
walks such a value afterwards would exhaust Python's stack). A key given twice
in one mapping is reported: YAML readers disagree on which value counts.

Edits work on the page text, line by line: the line(s) holding one top-level key
are replaced and every other byte is kept, including comments, quoting style,
key order, unknown keys and the file's line endings.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from memtui.errors import FrontmatterError, StaleWriteError
from memtui.store import safe_write
from memtui.store.files import sha256_bytes

if TYPE_CHECKING:
    _BaseSafeLoader = yaml.CSafeLoader  # the stubs know both loaders; they construct and load alike
else:
    try:  # libyaml bindings: ~10x faster; the pure-Python safe loader otherwise.
        _BaseSafeLoader = yaml.CSafeLoader
    except AttributeError:  # pragma: no cover - depends on how PyYAML was built
        _BaseSafeLoader = yaml.SafeLoader

MAX_FRONTMATTER_BYTES = 64 * 1024
MAX_YAML_DEPTH = 32
_SURROGATE_RE = re.compile("[\ud800-\udfff]")

_FENCE_OPEN = re.compile(r"---[ \t]*\r?$")
_FENCE_CLOSE = re.compile(r"(?:---|\.\.\.)[ \t]*\r?$")
_TOP_KEY = re.compile(r"""^(?P<key>[A-Za-z_][\w.-]*|"[^"\n]*"|'[^'\n]*')[ \t]*:(?=[ \t]|\r?$)""")


@dataclass(slots=True)
class Frontmatter:
    """Where the frontmatter sits in a page's text and what it says."""

    present: bool = False
    closed: bool = True
    raw: str = ""  # text between the fences
    start: int = 0  # char offset of the first frontmatter line (after the opening fence)
    end: int = 0  # char offset of the closing fence line
    body_offset: int = 0  # char offset where the body starts
    first_line: int = 1  # 1-based file line number of the first frontmatter line
    body_line: int = 1  # 1-based file line number where the body starts
    data: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    error_line: int | None = None
    error_rule: str | None = None
    key_lines: dict[str, int] = field(default_factory=dict)
    duplicate_keys: list[tuple[str, int]] = field(default_factory=list)  # (key, 1-based file line)


def newline_of(text: str) -> str:
    """The line ending a page uses: CRLF if its first line ends with one."""
    first = text.find("\n")
    if first > 0 and text[first - 1] == "\r":
        return "\r\n"
    return "\n"


def locate(text: str) -> Frontmatter:
    """Find the frontmatter block (without parsing it)."""
    fm = Frontmatter()
    offset = 1 if text.startswith("\ufeff") else 0
    first_nl = text.find("\n", offset)
    first = text[offset:] if first_nl < 0 else text[offset:first_nl]
    if first_nl < 0 or not _FENCE_OPEN.match(first):
        fm.body_offset = offset
        return fm
    fm.present = True
    fm.start = first_nl + 1
    fm.first_line = 2
    pos = fm.start
    line_no = 2
    while pos < len(text):
        nl = text.find("\n", pos)
        line = text[pos:] if nl < 0 else text[pos:nl]
        if _FENCE_CLOSE.match(line):
            fm.end = pos
            fm.raw = text[fm.start : pos]
            fm.body_offset = len(text) if nl < 0 else nl + 1
            fm.body_line = line_no + 1
            return fm
        if nl < 0:
            break
        pos = nl + 1
        line_no += 1
    # Opening fence without a closing one: frontmatter left open, or a horizontal rule that
    # merely starts the page (then the next line is prose or a heading, not ``key: value``).
    following = [line for line in text[fm.start :].split("\n", 12)[:12] if line.strip()]
    if following and not any(_KEY_LINE_RE.match(line) for line in following):
        fm.present = False
        fm.start = 0
        fm.first_line = 1
        fm.body_offset = offset
        return fm
    fm.closed = False
    fm.raw = text[fm.start :]
    fm.end = len(text)
    fm.body_offset = offset
    fm.body_line = 1
    fm.error = "frontmatter block opened with '---' on line 1 is never closed"
    fm.error_line = 1
    fm.error_rule = "frontmatter-unclosed"
    return fm


class _NoAliasLoader(_BaseSafeLoader):
    """Safe loader; aliases are rejected before construction (see ``_refuse_aliases``).

    Records every key that appears twice in one mapping (``duplicate_keys``:
    key text and 0-based line in the parsed text); the data keeps the last value.
    """

    duplicate_keys: list[tuple[str, int]]

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Hashable, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: set[tuple[str, str]] = set()
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    key = (key_node.tag, key_node.value)
                    if key in seen:
                        self.duplicate_keys.append((key_node.value, key_node.start_mark.line))
                    seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _too_deep(data: Any, limit: int) -> bool:
    """Is ``data`` nested more than ``limit`` lists/mappings deep? (Iterative: no recursion.)"""
    stack = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children = list(value.values()) + [k for k in value if isinstance(k, (dict, list, tuple))]
        elif isinstance(value, (list, tuple)):
            children = list(value)
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list, tuple)))
    return False


def _refuse_aliases(raw: str, first_line: int) -> None:
    if "*" not in raw:
        return
    for event in yaml.parse(raw, Loader=_NoAliasLoader):
        if isinstance(event, yaml.AliasEvent):
            line = event.start_mark.line + first_line if event.start_mark else None
            raise FrontmatterError(
                "YAML aliases are not accepted in frontmatter",
                "write the value out in full; aliases can expand into huge documents",
                line=line,
            )


def normalise(value: Any) -> Any:
    """Turn YAML values into JSON-safe ones: dates become ISO strings."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, _dt.datetime):
        text = value.isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): normalise(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [normalise(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def parse_yaml_mapping(
    raw: str,
    first_line: int = 1,
    *,
    what: str = "frontmatter",
    max_bytes: int | None = None,
    duplicates: list[tuple[str, int]] | None = None,
) -> dict[str, Any]:
    """Parse YAML text into a JSON-safe dict, or raise ``FrontmatterError``.

    The one way memtui reads YAML it did not write (frontmatter, proposal
    manifests, golden files): a safe loader, aliases refused, a size cap, a
    nesting cap. ``what`` names the text in error messages. A key given twice in
    one mapping is added to ``duplicates`` as (key, 1-based line) when a list
    is passed (frontmatter: a finding); without one it is an error.
    """
    if max_bytes is None:
        max_bytes = MAX_FRONTMATTER_BYTES
    size = len(raw.encode("utf-8", "surrogateescape"))
    if size > max_bytes:
        raise FrontmatterError(
            f"{what} is {size:,} bytes, over the {max_bytes // 1024} KB limit",
            "move long content into the page body" if what == "frontmatter" else "split it",
            line=first_line,
        )
    if _SURROGATE_RE.search(raw):
        raise FrontmatterError(
            f"{what} contains bytes that are not valid UTF-8",
            "re-save the page as UTF-8",
            line=first_line,
        )
    try:
        _refuse_aliases(raw, first_line)
        loader = _NoAliasLoader(raw)
        loader.duplicate_keys = []
        try:
            data = loader.get_single_data()
        finally:
            loader.dispose()
    except FrontmatterError:
        raise
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + first_line if mark is not None else first_line
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context = getattr(exc, "context", None)
        message = f"{context}, {problem}" if context else str(problem)
        raise FrontmatterError(
            f"{what} YAML does not parse: {message}", "fix the YAML syntax on that line", line=line
        ) from None
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        raise FrontmatterError(
            f"{what} YAML has a value that cannot be read: {exc}", "fix the value", line=first_line
        ) from None
    if _too_deep(data, MAX_YAML_DEPTH):
        raise FrontmatterError(
            f"{what} YAML is nested more than {MAX_YAML_DEPTH} levels deep",
            "flatten it: deeper values are not read",
            line=first_line,
        )
    found = [(key, line + first_line) for key, line in loader.duplicate_keys]
    if found and duplicates is None:
        key, line = found[0]
        raise FrontmatterError(
            f"{what}: the key {key!r} appears more than once", "keep one: readers disagree on which counts", line=line
        )
    if duplicates is not None:
        duplicates.extend(found)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise FrontmatterError(
            f"{what} is a YAML {type(data).__name__}, not a mapping of keys to values",
            "write frontmatter as 'key: value' lines",
            line=first_line,
        )
    mapping: dict[str, Any] = normalise(data)  # a dict normalises to a dict of str keys
    return mapping


def top_level_key_lines(raw: str, first_line: int) -> dict[str, int]:
    """1-based file line of each top-level key in the frontmatter text."""
    lines: dict[str, int] = {}
    for index, line in enumerate(raw.split("\n")):
        match = _TOP_KEY.match(line)
        if match:
            key = match.group("key").strip("'\"")
            lines.setdefault(key, first_line + index)
    return lines


_KEY_LINE_RE = re.compile(r"^[\w\"'][^:#]*:(?:\s|$)")
_ANCHOR_RE = re.compile(r"(?:^|[\s\[{,:])&[^\s\]},]")
_STAR_VALUE_RE = re.compile(r"^(\s*(?:-\s+|[^\s:#'\"][^:#]*:\s+))(\*[^\s'\"].*?)\s*$", re.MULTILINE)


def _quote_star_values(raw: str) -> str | None:
    """``paths: **/*.md`` written unquoted: with no anchor anywhere, a ``*`` value is a glob, not an alias.

    Claude Code's rules are written so, and Claude Code reads them. Returns the
    frontmatter with such values quoted, or None when there is an anchor (then an
    alias stays refused: that is how alias bombs are built).
    """
    if _ANCHOR_RE.search(raw):
        return None
    return _STAR_VALUE_RE.sub(lambda m: m.group(1) + "'" + m.group(2).replace("'", "''") + "'", raw)


# Keys worth reading line by line from frontmatter that does not parse: what a page is
# and whether it is still current. Never review or taint keys: a broken page never
# looks more trusted than a parsed one would.
RECOVERABLE_KEYS = (
    "title",
    "name",
    "status",
    "type",
    "kind",
    "id",
    "permalink",
    "subject",
    "superseded_by",
    "supersedes",
    "description",
    "created",
    "updated",
)
_RECOVER_RE = re.compile(r"^(" + "|".join(RECOVERABLE_KEYS) + r"):[ \t]+(.+?)[ \t]*$", re.MULTILINE)


def recover_keys(raw: str) -> dict[str, str]:
    """Top-level ``key: value`` lines of frontmatter YAML could not read, as plain strings."""
    found: dict[str, str] = {}
    for key, value in _RECOVER_RE.findall(raw):
        if key in found:
            continue
        if value[:1] in ("'", '"') and value[-1:] == value[:1] and len(value) > 1:
            value = value[1:-1]
        if value and value[:1] not in ("[", "{", "|", ">", "&", "*"):
            found[key] = value
    return found


def parse(text: str) -> Frontmatter:
    """Locate and parse the frontmatter of a page's text."""
    fm = locate(text)
    if not fm.present or not fm.closed:
        return fm
    fm.key_lines = top_level_key_lines(fm.raw, fm.first_line)
    try:
        try:
            fm.data = parse_yaml_mapping(fm.raw, fm.first_line, duplicates=fm.duplicate_keys)
        except FrontmatterError as exc:
            quoted = _quote_star_values(fm.raw) if "alias" in exc.message else None
            if quoted is None or quoted == fm.raw:
                raise
            fm.data = parse_yaml_mapping(quoted, fm.first_line, duplicates=fm.duplicate_keys)
    except FrontmatterError as exc:
        fm.error = exc.message
        fm.error_line = exc.line
        if "nested more than" in exc.message:
            fm.error_rule = "yaml-too-deep"
        elif "alias" in exc.message:
            fm.error_rule = "yaml-alias"
        elif "limit" in exc.message:
            fm.error_rule = "frontmatter-too-large"
        elif "not a mapping" in exc.message:
            fm.error_rule = "frontmatter-not-mapping"
        else:
            fm.error_rule = "yaml-invalid"
    return fm


# --------------------------------------------------------------------------- editing


def dump_scalar(value: Any) -> str:
    """A YAML rendering of one value on one line."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, _dt.datetime):
        text = value.isoformat()
        return text[:-6] + "Z" if text.endswith("+00:00") else text
    if isinstance(value, _dt.date):
        return value.isoformat()
    dumped = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=math.inf, sort_keys=False)
    if dumped.endswith("\n...\n"):
        dumped = dumped[: -len("\n...\n")]
    dumped = dumped.strip()
    if "\n" in dumped:
        # A string with line breaks would be folded over several lines (and with
        # "\n" endings in a CRLF file); a double-quoted scalar keeps it on one line.
        dumped = yaml.safe_dump(
            value, default_style='"', default_flow_style=True, allow_unicode=True, width=math.inf
        ).strip()
    return dumped


def _strip_inline_comment(value: str) -> tuple[str, str]:
    """Split ``value  # comment`` into the value and the comment (with its leading blanks).

    A ``#`` inside a quoted string is part of the value, so ``"a # b" # note``
    keeps ``# note`` as the comment. Block scalars (``|``, ``>``) keep everything.
    """
    if value.lstrip()[:1] in {"|", ">"}:
        return value, ""
    quote = ""
    index = 0
    while index < len(value):
        char = value[index]
        if quote:
            if quote == '"' and char == "\\":
                index += 2
                continue
            if char == quote:
                if quote == "'" and value[index + 1 : index + 2] == "'":
                    index += 2  # '' is an escaped quote inside a single-quoted string
                    continue
                quote = ""
        elif char in "'\"" and (index == 0 or value[index - 1] in " \t[{,:"):
            quote = char
        elif char == "#" and index > 0 and value[index - 1] in " \t":
            start = index
            while start > 0 and value[start - 1] in " \t":
                start -= 1
            return value[:start], value[start:]
        index += 1
    return value, ""


def _key_extent(lines: list[str], key: str) -> tuple[int, int] | None:
    """Index range [start, stop) of the lines holding a top-level key's value."""
    for index, line in enumerate(lines):
        match = _TOP_KEY.match(line)
        if not match or match.group("key").strip("'\"") != key:
            continue
        inline_value = line[match.end() :].split("#", 1)[0].strip()
        stop = index + 1
        probe = index + 1
        while probe < len(lines):
            current = lines[probe]
            bare = current.rstrip("\r\n")
            if bare.strip() == "":
                probe += 1
                continue
            is_indented = bare[:1] in {" ", "\t"}
            is_dash_item = not inline_value and (bare.startswith("- ") or bare == "-")
            if is_indented or is_dash_item:
                probe += 1
                stop = probe
                continue
            break
        return index, stop
    return None


def set_key(text: str, key: str, value: Any) -> str:
    """Return ``text`` with top-level frontmatter ``key`` set to ``value``.

    Only the key's own line(s) change; a missing key is added just before the
    closing fence; a page without frontmatter gets a block at the top. The result
    is parsed again and must hold the new value and every other key unchanged.
    """
    if not re.fullmatch(r"[A-Za-z_][\w.-]*", key):
        raise FrontmatterError(f"'{key}' is not a key memtui can write", "use a plain key name")
    nl = newline_of(text)
    rendered = dump_scalar(value)
    fm = parse(text)
    if fm.present and (not fm.closed or fm.error):
        raise FrontmatterError(
            "the frontmatter does not parse, so memtui will not edit it",
            f"fix line {fm.error_line} first" if fm.error_line else "fix the frontmatter first",
            line=fm.error_line,
        )
    before = dict(fm.data)
    if not fm.present:
        bom = "\ufeff" if text.startswith("\ufeff") else ""
        new_text = f"{bom}---{nl}{key}: {rendered}{nl}---{nl}" + text[len(bom) :]
    else:
        lines = fm.raw.splitlines(keepends=True)
        extent = _key_extent(lines, key)
        if extent is None:
            if lines and not lines[-1].endswith("\n"):
                lines[-1] += nl
            lines.append(f"{key}: {rendered}{nl}")
        else:
            start, stop = extent
            original = lines[start]
            match = _TOP_KEY.match(original)
            assert match is not None
            line_nl = "\r\n" if original.endswith("\r\n") else ("\n" if original.endswith("\n") else "")
            old_value = original[match.end() :].rstrip("\r\n")
            _, comment = _strip_inline_comment(old_value)
            lines[start:stop] = [f"{original[: match.end()]} {rendered}{comment}{line_nl or nl}"]
        new_text = text[: fm.start] + "".join(lines) + text[fm.end :]
    check = parse(new_text)
    expected = normalise(value)
    if check.error or check.data.get(key) != expected:
        raise FrontmatterError(
            f"editing '{key}' would not give the intended value",
            "edit the frontmatter by hand",
        )
    after = {k: v for k, v in check.data.items() if k != key}
    if after != {k: v for k, v in before.items() if k != key}:
        raise FrontmatterError(f"editing '{key}' would change other keys", "edit the frontmatter by hand")
    return new_text


def set_keys(text: str, values: dict[str, Any]) -> str:
    """Set several keys, one minimal edit each."""
    for key, value in values.items():
        text = set_key(text, key, value)
    return text


# --------------------------------------------------------------------------- on disk
def set_frontmatter_key(
    root: Path, relpath: str, key: str, value: Any, *, expected_hash: str | None, readonly: bool = False
) -> str:
    """Change one frontmatter key of a page on disk, leaving every other byte as it was."""
    return set_frontmatter_keys(root, relpath, {key: value}, expected_hash=expected_hash, readonly=readonly)


def set_frontmatter_keys(
    root: Path, relpath: str, values: dict[str, Any], *, expected_hash: str | None, readonly: bool = False
) -> str:
    target = safe_write.resolve_in_field(Path(root), relpath)
    with safe_write.os_errors_as_memtui_errors("read", relpath):
        try:
            data = target.read_bytes()
        except FileNotFoundError:
            raise StaleWriteError(f"{relpath} no longer exists", "it was moved or deleted") from None
    if expected_hash is not None and sha256_bytes(data) != expected_hash:
        raise StaleWriteError(
            f"{relpath} changed on disk since it was loaded",
            "look at it again before changing it",
            current_hash=sha256_bytes(data),
        )
    text = data.decode("utf-8", "surrogateescape")
    new_text = set_keys(text, values)
    return safe_write.write_page(
        root,
        relpath,
        new_text.encode("utf-8", "surrogateescape"),
        expected_hash=sha256_bytes(data),
        readonly=readonly,
    )
