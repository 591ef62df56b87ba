"""Credentials in page text: what must never be in memory an agent loads.

Detection is Yelp's ``detect-secrets`` (its plugins for keys, tokens, private keys, URLs
with passwords, ``password = ...`` assignments), minus the entropy and IP-address
plugins, which flag every commit hash and address in prose. Its keyword plugin reads
Markdown as code, where a secret must be quoted; in memory a password is written as
prose (``staging password: hunter2-Blue``), so lines naming a credential are also read
with the plugin's YAML reading, and the value is kept only when it looks like one (no
spaces, a digit or a symbol, not a placeholder).

Only lines that could hold a secret reach the plugins: a page is first searched for the
words and token prefixes the plugins key on (``_candidate``: substring searches and a few
regular expressions that start with a literal), so a page that holds none costs well
under a millisecond. A finding names the line and
the kind of secret, never the secret.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import cache
from itertools import accumulate
from typing import Any

# A line worth handing to the plugins holds one of these; anything else costs a few
# substring searches and never reaches them. Lower-case words (searched in the lowered
# text): every credential word of the keyword plugin and of the vendor plugins that key
# on a word (api_key, private_key, AccountKey ... all hold "key"). Then one pattern per
# token format detect-secrets knows, each starting with a literal (the search skips
# ahead to it in C): AWS, Artifactory and Twilio keys; JSON web tokens; GitHub, GitLab,
# OpenAI, PyPI, SendGrid, Slack, Square, Stripe, Twilio, Mailchimp, Telegram and Discord
# tokens; PuTTY keys; URLs with a password; Cloudant and SoftLayer URLs.
_WORDS = ("key", "pass", "pw", "secret", "token", "contrase")
_SHAPES = tuple(
    re.compile(pattern)
    for pattern in (
        r"A(?:KIA|SIA|BIA|CCA|3T[A-Z0-9]|KC|C[a-z0-9]{32}|P[\dA-F])", r"eyJ", r"gh[pousr]_", r"gl[a-z]{2,6}-",
        r"GR1348941", r"T3BlbkFJ", r"pypi-Ag", r"SG\.", r"xox", r"sq0csp-", r"k_live_", r"SK[a-z0-9]{32}",
        r"-us\d", r":[\w-]{35}", r"\.[\w-]{6}\.[\w-]{27}", r"PuTTY-User", r"://[^/\s:@]+:[^/\s@]+@",
        r"cloudant\.com", r"softlayer\.com", r"hooks\.slack\.com",
    )
)  # fmt: skip
_KEYWORDS = r"pass(?:word|wd|phrase)|pwd|secret|token|api[_ -]?key|apikey|credentials?|private[_ ]key"
_KEYWORD_RE = re.compile(rf"(?<![a-z]){_KEYWORDS}", re.IGNORECASE)
_PLACEHOLDER_RE = re.compile(
    r"^(?:<.*>|\$\{.*\}|\$[A-Z_]+|\{\{.*\}\}|x+|\*+|\.+|-+|redacted|changeme|placeholder|example|none|null"
    r"|true|false|required|optional|yes|no|password|passwd|secret|token)$",  # the key named again
    re.IGNORECASE,
)
MAX_LINE_CHARS = 4000  # a longer line is read in overlapping windows of this size
SKIPPED_PLUGINS = ("Base64 High Entropy String", "Hex High Entropy String", "Public IP (ipv4)")
KIND_WORDS = {"Secret Keyword": "password or secret"}


@cache
def _plugins() -> tuple[Any, ...]:
    """detect-secrets' plugins, made once (imported on first need: it costs 0.1 s)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

    mapping: dict[str, Any] = get_mapping_from_secret_type_to_class()
    return tuple(cls() for kind, cls in sorted(mapping.items()) if kind not in SKIPPED_PLUGINS)


# Words a value of documentation holds ("your_api_key_here", "sk_test_placeholder", "<token>").
_PLACEHOLDER_WORDS = ("your", "example", "placeholder", "changeme", "change_me", "dummy", "sample", "redacted")


def _placeholder(value: str) -> bool:
    """A value documentation shows instead of a secret."""
    value = value.strip().strip("`'\"").lower()
    return bool(_PLACEHOLDER_RE.match(value)) or any(word in value for word in _PLACEHOLDER_WORDS)


# What a prose value holds when it is code (``os.environ.get(``), a list of names
# (``Argon2/bcrypt``) or an elided example (``sk_test_...``) rather than a password.
_NOT_A_VALUE = ("(", ")", "[", "]", "{", "}", "/", "\\", "...", "…")


def _looks_like_credential(value: str) -> bool:
    """The first word of a prose value (``hunter2-Blue7 [observed]``) is the candidate: it counts
    when it is not a placeholder, is six characters or more and has a digit or a symbol."""
    words = value.split()
    value = words[0].strip("`'\"") if words else ""
    if len(value) < 6 or _placeholder(value):
        return False
    if any(mark in value for mark in _NOT_A_VALUE):  # code, a path or a list of names, an elision
        return False
    return any(c.isdigit() for c in value) or any(not c.isalnum() for c in value)


def _hits(text: str) -> list[int]:
    """Where ``text`` holds something a plugin keys on (see ``_WORDS``): offsets, unsorted."""
    lowered = text.lower()
    out: list[int] = []
    for word in _WORDS:
        at = lowered.find(word)
        while at >= 0:
            out.append(at)
            at = lowered.find(word, at + 1)
    for shape in _SHAPES:
        out.extend(match.start() for match in shape.finditer(text))
    return out


def _windows(line: str) -> list[str]:
    if len(line) <= MAX_LINE_CHARS:
        return [line]
    step = MAX_LINE_CHARS // 2
    return [line[start : start + MAX_LINE_CHARS] for start in range(0, len(line) - step, step)]


def line_secrets(line: str) -> list[str]:
    """The kinds of secret on one line (empty: none found)."""
    if not _hits(line):
        return []
    kinds: list[str] = []
    for window in _windows(line):
        for plugin in _plugins():
            try:
                found = plugin.analyze_line(filename="memory.md", line=window, line_number=1)
                if found and plugin.secret_type == "Secret Keyword":  # a documented placeholder is no secret
                    found = {s for s in found if not _placeholder(str(s.secret_value or ""))}
                if not found and plugin.secret_type == "Secret Keyword" and _KEYWORD_RE.search(window):
                    found = {
                        secret
                        for secret in plugin.analyze_line(filename="memory.yaml", line=window, line_number=1)
                        if _looks_like_credential(str(secret.secret_value or ""))
                    }
            except Exception:  # a plugin's own failure on odd text is no finding, never a crash
                continue
            if found:
                kind = KIND_WORDS.get(plugin.secret_type, plugin.secret_type)
                if kind not in kinds:
                    kinds.append(kind)
    return kinds


def find_secrets(text: str, first_line: int = 1) -> list[tuple[int, str]]:
    """(line, kind) for every line of ``text`` holding a likely secret."""
    hits = _hits(text)
    if not hits:
        return []
    out: list[tuple[int, str]] = []
    lines = text.splitlines(keepends=True)
    starts = list(accumulate((len(line) for line in lines), initial=0))
    for index in sorted({bisect_right(starts, at) - 1 for at in hits}):
        for kind in line_secrets(lines[index].rstrip("\r\n")):
            out.append((first_line + index, kind))
    return out
