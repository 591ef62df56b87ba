"""Command palette providers: open a page by title, id or path; run any action.

Hit prompts are built as ``rich.text.Text`` (never markup): Textual's own
``Matcher.highlight`` parses its candidate as markup, and ``Hit.help`` is parsed
as markup too, so neither ever receives page text here.
"""

from __future__ import annotations

import asyncio
from functools import partial

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider

from memtui.textsafety import one_line

MAX_PAGE_HITS = 40


def _highlighted(matcher, candidate: str, style: str = "bold underline") -> Text:
    text = Text(candidate)
    score, offsets = matcher.fuzzy_search.match(matcher.query, candidate)
    if score:
        for offset in offsets:
            if offset < len(candidate) and not candidate[offset].isspace():
                text.stylize(style, offset, offset + 1)
    return text


class PagesProvider(Provider):
    """Open a page by its title, id or path."""

    async def search(self, query: str) -> Hits:
        app = self.app
        field = getattr(app, "field", None)
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
            yield Hit(score, prompt, partial(app.open_page, path), text=f"open {one_line(path)}")


# (name, help, action string run on the app)
ACTIONS: list[tuple[str, str, str]] = [
    ("Browse pages", "the pages as a list or a folder tree", "switch_mode('browse')"),
    ("Search", "full-text search with kind:, subject:, tag:, status: filters", "open_search"),
    ("Overview", "counts, findings, tags, index and watcher state", "switch_mode('overview')"),
    ("Quarantine queue", "review notes from tainted sessions", "switch_mode('quarantine')"),
    ("Proposals queue", "review maintenance (dream) proposals", "switch_mode('proposals')"),
    ("Open MEMORY.md", "the routing index", "open_named('MEMORY.md')"),
    ("Open IDENTITY.md", "the always-loaded identity layer", "open_named('IDENTITY.md')"),
    ("Rebuild search index", "delete and rebuild the index cache in the background", "rebuild_index"),
    ("Rescan the folder", "re-read every page that changed on disk", "rescan"),
    ("Keys and help", "every key binding", "help"),
    ("Toggle git commit after save", "commit each save when the field is a git repository", "toggle_commit_after_save"),
    ("Quit", "leave memtui", "quit"),
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
