"""Command palette providers: open a page by title, id or path; run any action; open a subject's history.

- ``PagesProvider``: open a page by title, id or path;
- ``ScreenActionsProvider``: the current screen's own keys as commands
  (approve, reject, undo, revert, edit...), run on that screen;
- ``ActionsProvider``: app-wide actions (no duplicates of Textual's system
  commands: those are Theme, Quit, Maximize; Textual's Keys and a Screenshot
  that cannot be saved are left out, see ``MemtuiApp.get_system_commands``);
- ``HistoryProvider``: "History: <subject>" for every subject and inline chain,
  the same lookup as ``memtui history FIELD SUBJECT``.

Hit prompts are built as ``rich.text.Text`` (never markup): Textual's own
``Matcher.highlight`` parses its candidate as markup, and ``Hit.help`` is parsed
as markup too, so neither ever receives page text here.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any

from rich.text import Text
from textual.app import App
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider

from memtui.session.session import Session
from memtui.textsafety import one_line
from memtui.tui.messages import OpenHistory, OpenPage
from memtui.tui.modes import MODES

MAX_PAGE_HITS = 40


def _highlighted(matcher, candidate: str, style: str = "bold underline") -> Text:
    text = Text(candidate)
    score, offsets = matcher.fuzzy_search.match(matcher.query, candidate)
    if score:
        for offset in offsets:
            if offset < len(candidate) and not candidate[offset].isspace():
                text.stylize(style, offset, offset + 1)
    return text


def _session(app: App[Any]) -> Session | None:
    """The app's session (the palette may open over a bare ``App`` in tests)."""
    session = getattr(app, "session", None)
    return session if isinstance(session, Session) else None


class PagesProvider(Provider):
    """Open a page by its title, id or path."""

    async def search(self, query: str) -> Hits:
        app = self.app
        session = _session(app)
        field = session.field if session is not None else None
        if field is None or not query.strip():
            return
        matcher = self.matcher(query)
        scored = []
        for number, info in enumerate(list(field.pages.values())):
            if number % 500 == 0:
                await asyncio.sleep(0)
            title = one_line(info.title, 80)
            candidate = f"{title}  {one_line(info.id or '', 80)}".strip()  # an id is page text too
            score = max(matcher.match(candidate), matcher.match(one_line(info.path)) * 0.9)
            if score > 0:
                scored.append((score, candidate, info.path))
        scored.sort(key=lambda item: -item[0])
        for score, candidate, path in scored[:MAX_PAGE_HITS]:
            prompt = _highlighted(matcher, candidate)
            prompt.append("\n")
            prompt.append(one_line(path), style="dim")
            yield Hit(score, prompt, partial(app.post_message, OpenPage(path)), text=f"open {one_line(path)}")


# (name, help, action string run on the app)
ACTIONS: list[tuple[str, str, str]] = [
    ("Browse pages", "the pages as a list or a folder tree", "switch_mode('browse')"),
    ("Search", "full-text search with kind:, subject:, tag:, status: filters", "open_search"),
    *((m.palette, m.palette_help, f"switch_mode('{m.name}')") for m in MODES),  # the numbered screens
    ("Claims", "every tagged line, with its citation, status and promotion", "open_claims"),
    ("Claims: agent ideas on decisions", "[suggested] and [inferred] claims on decision pages", "open_claims('ideas')"),
    ("Claims: uncited [stated]", "current claims said to be the user's that cite nothing", "open_claims('uncited')"),
    ("Claims: promoted", "claims whose tag rose from a weaker one", "open_claims('promoted')"),
    ("Open MEMORY.md", "the routing index", "open_named('MEMORY.md')"),
    ("Open IDENTITY.md", "the always-loaded identity layer", "open_named('IDENTITY.md')"),
    ("Rebuild search index", "delete and rebuild the index cache in the background", "rebuild_index"),
    ("Rescan the folder", "re-read every page that changed on disk", "rescan"),
    ("Keys and help", "the keys of this screen first, then every other key", "help"),
    ("Toggle git commit after save", "commit each save when the field is a git repository", "toggle_commit_after_save"),
    (
        "Editor: set updated: on save (ask, always, never)",
        "what saving does with a page's updated: key",
        "cycle_bump_updated",
    ),
]


class ActionsProvider(Provider):
    """Every app action by name."""

    async def discover(self) -> Hits:
        for name, help_text, action in ACTIONS:
            yield DiscoveryHit(name, partial(self.app.run_action, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, action in ACTIONS:
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, _highlighted(matcher, name), partial(self.app.run_action, action), help=help_text)


class ScreenActionsProvider(Provider):
    """The keys of the screen the palette was opened from, as commands run on that screen."""

    def _commands(self) -> list[tuple[str, str, str]]:
        screen = self.screen
        seen: set[str] = set()
        commands = []
        for binding in getattr(type(screen), "BINDINGS", []):
            if not isinstance(binding, Binding) or not binding.description or binding.action in ("back",):
                continue
            if binding.action.startswith("app.") or binding.description in seen:
                continue
            seen.add(binding.description)
            key = binding.key_display or binding.key.split(",")[0]
            commands.append((f"{screen.title or type(screen).__name__}: {binding.description}", key, binding.action))
        return commands

    async def _run(self, action: str) -> None:
        await self.screen.run_action(action)

    async def discover(self) -> Hits:
        for name, key, action in self._commands():
            yield DiscoveryHit(name, partial(self._run, action), help=f"key: {key}")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, key, action in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, _highlighted(matcher, name), partial(self._run, action), help=f"key: {key}")


class HistoryProvider(Provider):
    """History of a subject (every page and inline chain of it), as ``memtui history FIELD SUBJECT``."""

    async def startup(self) -> None:
        self._targets: list[tuple[str, str]] = []  # (shown name, what to look up)
        session = _session(self.app)
        field = session.model_field() if session is not None else None
        if field is None:
            return
        history = field.history
        self._targets = [(subject, subject) for subject in history.subjects()]
        for chain in history.all_inline_chains():
            path, _, key = chain.name.partition("#")
            self._targets.append((f"{key} (inline, {path})", chain.name))

    def _names(self) -> list[tuple[str, str]]:
        return getattr(self, "_targets", [])

    async def search(self, query: str) -> Hits:
        text = query.strip()
        if not text:
            return
        matcher = self.matcher(query)
        for number, (name, target) in enumerate(self._names()):
            if number % 500 == 0:
                await asyncio.sleep(0)
            candidate = f"History: {one_line(name, 80)}"
            score = matcher.match(candidate) * 0.7  # a page of the same name ranks first
            if score > 0:
                yield Hit(
                    score,
                    _highlighted(matcher, candidate),
                    partial(self.app.post_message, OpenHistory(target)),
                    help="every version, oldest first",
                )
        lowered = text.casefold()
        if lowered.startswith("history "):
            subject = text[len("history ") :].strip()
            if subject:
                yield Hit(
                    0.5,
                    Text(f"History: {one_line(subject, 80)} (as typed)"),
                    partial(self.app.post_message, OpenHistory(subject)),
                    help="look it up like memtui history FIELD SUBJECT",
                )
