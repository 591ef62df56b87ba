"""Lines in a page that look like instructions aimed at an agent.

A memory page is data: it states facts. Text that addresses the reader and
tells it what to do ("ignore previous instructions", "you must always run ...",
"add this to MEMORY.md", a tool-call payload) is how a web page read by a
session tries to steer every later session once the note is loaded. The
quarantine review flags such lines so the reviewer reads them first.

``find_instructions(text)`` is deterministic (regular expressions only) and
returns ``Flag`` items with the 1-based file line, the column, a rule id, a
severity (``danger`` for instruction-like text and hidden content, ``notice``
for things worth a look such as URLs) and the reason in words. The rules are
written so ordinary third-person prose ("delivery never shares a queue") is
not flagged; ``tests/test_quarantine_injection.py`` checks that against every
benign page of the sample field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from memtui.textsafety import find_hazards, one_line

DANGER = "danger"
NOTICE = "notice"
LONG_LINE_CHARS = 300
EXCERPT_CHARS = 120

_VERBS = (
    r"run|execute|exec|call|invoke|include|insert|add|append|write|save|store|copy|send|post|forward|email|"
    r"upload|download|fetch|visit|open|load|install|use|respond|reply|answer|say|tell|mention|reveal|share|"
    r"disclose|follow|obey|trust|ignore|treat|prefer|recommend|output|print|remember|delete|remove|"
    r"recommend|route|link|cite|report|hide|keep|ask|refuse|comply|start|begin|end|sign"
)


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    severity: str
    reason: str
    pattern: re.Pattern[str]


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


RULES: tuple[Rule, ...] = (
    Rule(
        "ignore-instructions",
        DANGER,
        "asks the reader to ignore or replace its instructions",
        _rx(
            r"\b(?:ignore|forget|override|bypass|disregard)\b[^.\n]{0,40}?\b(?:instructions?|prompts?|rules|"
            r"guidelines|directives|system\s+(?:message|prompt)|guardrails|polic(?:y|ies))\b"
        ),
    ),
    Rule("disregard", DANGER, "asks the reader to disregard something", _rx(r"\bdisregard\b")),
    Rule(
        "addressed-to-agent",
        DANGER,
        "text addressed to an AI agent reading the page",
        _rx(
            r"\b(?:note|message|instructions?|attention|notice|memo)\s*(?:to|for)\s+(?:all\s+|any\s+|the\s+)?"
            r"(?:AI|LLMs?|agents?|assistants?|language\s+models?|bots?|models?)\b"
            r"|\b(?:AI|LLM)s?\s+(?:agents?|assistants?|models?)\s+(?:reading|processing|seeing)\b"
            r"|\bif\s+you\s+are\s+an?\s+(?:AI|LLM|language\s+model|assistant|agent|bot)\b"
            r"|\bas\s+an\s+AI\b"
        ),
    ),
    Rule(
        "you-must",
        DANGER,
        "tells the reader what it must do",
        _rx(
            r"\byou\s+(?:must|have\s+to|need\s+to|are\s+(?:required|instructed|ordered)\s+to|shall|"
            r"(?:should|will)\s+(?:always|never))\b"
        ),
    ),
    Rule(
        "always-never",
        DANGER,
        "an always/never order addressed to the reader",
        _rx(
            r"(?:^|[.!?:;]\s+|^\s*(?:[-*+]|\d+[.)])\s+|\*\*)(?:always|never)\s+(?:" + _VERBS + r")\b"
            r"|\b(?:you|agents?|assistants?|AI|LLMs?|models?)\b[^.\n]{0,30}\b(?:always|never)\s+(?:" + _VERBS + r")\b"
        ),
    ),
    Rule(
        "conceal",
        DANGER,
        "asks the reader to hide something from the user",
        _rx(
            r"\b(?:do\s+not|don'?t|never|without)\s+(?:tell|mention|reveal|inform|disclose|alert|notify)(?:ing)?\b"
            r"[^.\n]{0,40}\b(?:users?|humans?|owners?|anyone|operators?|them|this)\b"
        ),
    ),
    Rule(
        "shell-payload",
        DANGER,
        "a shell command that downloads and runs code, or destroys files",
        _rx(
            r"\b(?:curl|wget|fetch|iwr|invoke-webrequest)\b[^\n|]{0,200}\|\s*(?:sudo\s+)?(?:ba|z|k|da)?sh\b"
            r"|\b(?:bash|sh|zsh)\s+-c\s+['\"]?\$?\(?\s*(?:curl|wget)\b"
            r"|\bbase64\s+(?:-d|--decode)\b[^\n]{0,40}\|\s*(?:ba)?sh\b"
            r"|\brm\s+-(?:rf|fr)\b|\bpowershell\b[^\n]{0,40}-e(?:nc|ncodedcommand)?\b"
            r"|\bchmod\s+\+x\b[^\n]{0,80}&&"
        ),
    ),
    Rule(
        "tool-payload",
        DANGER,
        "looks like a tool or function call for an agent",
        _rx(
            r"[{,]\s*[\"'](?:tool|tool_name|tool_calls?|function|function_call|arguments|tool_input)[\"']\s*:"
            r"|</?(?:tool_call|tool_use|function_calls?|invoke)\b"
            r"|<\|im_start\|>|\[/?INST\]"
        ),
    ),
    Rule(
        "fake-turn",
        DANGER,
        "looks like a chat turn (system/assistant/user) inside the page",
        _rx(r"^\s*(?:#+\s*)?(?:system|assistant|developer)\s*(?:prompt)?\s*:\s*\S"),
    ),
    Rule(
        "memory-write",
        DANGER,
        "asks for something to be written into memory or always loaded",
        _rx(
            r"\b(?:add|append|write|copy|insert|put|save|store|pin|link|list)\b[^.\n]{0,40}?\b(?:to|into|in|from)\s+"
            r"(?:your\s+|the\s+)?(?:MEMORY\.md|IDENTITY\.md|memory\s+index|long[- ]term\s+memory|system\s+prompt|"
            r"always[- ]loaded)"
            r"|\b(?:remember|memorize)\s+(?:this|that|the\s+following)\b"
        ),
    ),
    Rule(
        "url",
        NOTICE,
        "a URL (check where it points before trusting the page)",
        _rx(r"\b(?:https?|ftp|file|javascript|data):(?://)?[^\s)\]>\"']+"),
    ),
    Rule(
        "markup",
        NOTICE,
        "terminal/console markup that could trigger actions if rendered",
        _rx(r"\[@[a-z_.]+=|\[link=|\[/?(?:blink|reverse|on\s+\w+)\]"),
    ),
)
_RULES_BY_ID = {rule.id: rule for rule in RULES}
# Every rule above needs at least one of these substrings (lower-cased) on the
# line; lines without any skip the rules (most prose lines have none). The test
# suite checks that the result is the same with and without this shortcut.
_TRIGGERS = (
    "ignore",
    "forget",
    "override",
    "bypass",
    "disregard",
    "ai",
    "llm",
    "agent",
    "assistant",
    "model",
    "bot",
    "you",
    "always",
    "never",
    "not",
    "n't",
    "dont",
    "without",
    "curl",
    "wget",
    "fetch",
    "iwr",
    "invoke",
    "-c",
    "base64",
    "rm ",
    "rm\t",
    "powershell",
    "chmod",
    "tool",
    "function",
    "argument",
    "im_start",
    "inst]",
    "system",
    "developer",
    "memor",
    "identity",
    "remember",
    "http",
    "ftp:",
    "file:",
    "javascript:",
    "data:",
    "[@",
    "[link=",
    "[/",
    "[blink",
    "[reverse",
    "[on",
)


def _triggered(line: str) -> bool:
    low = line.lower()
    return any(word in low for word in _TRIGGERS)


EXTRA_RULES = {
    "html-comment": (DANGER, "hidden HTML comment (invisible when the page is rendered)"),
    "hidden-chars": (DANGER, "control, bidi or zero-width characters hide or reorder text"),
    "long-line": (NOTICE, f"a line over {LONG_LINE_CHARS} characters can hide text off screen"),
}
_COMMENT_RE = re.compile(r"<!--(.*?)(?:-->|\Z)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Flag:
    """One suspicious spot: 1-based file ``line`` and ``column``, why it is flagged."""

    line: int
    column: int
    rule: str
    severity: str
    reason: str
    excerpt: str  # display-safe (one_line), at most EXCERPT_CHARS

    def to_json(self) -> dict[str, Any]:
        return {
            "line": self.line,
            "column": self.column,
            "rule": self.rule,
            "severity": self.severity,
            "reason": self.reason,
            "excerpt": self.excerpt,
        }


def _excerpt(line: str, start: int, end: int) -> str:
    lo = max(0, start - 30)
    hi = min(len(line), max(end, start + 1) + 60)
    text = (("\u2026" if lo else "") + line[lo:hi] + ("\u2026" if hi < len(line) else "")).strip()
    return one_line(text, EXCERPT_CHARS)


def find_instructions(text: str, *, fast: bool = True) -> list[Flag]:
    """Every instruction-like or hidden spot in a page's text, in line order.

    One flag per rule and line (the first match), so a long hostile paragraph
    lists each kind of trouble once per line. ``fast=False`` skips the trigger
    pre-filter (same result, slower; used by the tests to prove that).
    """
    flags: list[Flag] = []
    lines = text.split("\n")
    for number, raw in enumerate(lines, start=1):
        line = raw[:-1] if raw.endswith("\r") else raw
        for rule in RULES if not fast or _triggered(line) else ():
            match = rule.pattern.search(line)
            if match is None:
                continue
            if rule.id == "disregard" and _RULES_BY_ID["ignore-instructions"].pattern.search(line):
                continue  # already flagged as the stronger rule
            excerpt = _excerpt(line, match.start(), match.end())
            flags.append(Flag(number, match.start() + 1, rule.id, rule.severity, rule.reason, excerpt))
        if len(line) > LONG_LINE_CHARS:
            severity, reason = EXTRA_RULES["long-line"]
            excerpt = _excerpt(line, LONG_LINE_CHARS, LONG_LINE_CHARS + 1)
            reason = f"{reason} ({len(line):,} characters)"
            flags.append(Flag(number, LONG_LINE_CHARS + 1, "long-line", severity, reason, excerpt))
    for match in _COMMENT_RE.finditer(text):
        number = text.count("\n", 0, match.start()) + 1
        line_start = text.rfind("\n", 0, match.start()) + 1
        severity, reason = EXTRA_RULES["html-comment"]
        excerpt = one_line(match.group(0), EXCERPT_CHARS)
        flags.append(Flag(number, match.start() - line_start + 1, "html-comment", severity, reason, excerpt))
    seen_hidden: set[int] = set()
    for hazard in find_hazards(text[1:] if text.startswith("\ufeff") else text):
        if hazard.line in seen_hidden:
            continue
        seen_hidden.add(hazard.line)
        severity, reason = EXTRA_RULES["hidden-chars"]
        line = lines[hazard.line - 1] if hazard.line - 1 < len(lines) else ""
        flags.append(
            Flag(
                hazard.line,
                hazard.column,
                "hidden-chars",
                severity,
                f"{reason}: {hazard.kind} {hazard.label}",
                _excerpt(line, hazard.column - 1, hazard.column),
            )
        )
    flags.sort(key=lambda f: (f.line, f.column, f.rule))
    return flags


def counts(flags: list[Flag]) -> dict[str, int]:
    """``{"danger": n, "notice": n}``."""
    out = {DANGER: 0, NOTICE: 0}
    for flag in flags:
        out[flag.severity] = out.get(flag.severity, 0) + 1
    return out


def rule_ids() -> list[str]:
    return [rule.id for rule in RULES] + list(EXTRA_RULES)
