"""Messages screens and widgets send up to the app: where to go next (the app routes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypedDict, Unpack

from textual.message import Message


class Landing(TypedDict, total=False):
    """Where a page opens: scrolled to file ``line``; ``highlight``: file lines (first, last) lit
    up and scrolled to; ``matches``: file lines n/N walk; ``terms``: words of a query whose
    lines join them."""

    line: int | None
    highlight: tuple[int, int] | None
    matches: list[int] | None
    terms: list[str] | None


class OpenPage(Message):
    def __init__(self, path: str, **landing: Unpack[Landing]) -> None:
        super().__init__()
        self.path = path
        self.landing = landing


class OpenEditor(Message):
    def __init__(self, path: str, *, line: int | None = None) -> None:
        super().__init__()
        self.path = path
        self.line = line


class OpenHistory(Message):
    def __init__(self, target: str) -> None:
        super().__init__()
        self.target = target


class OpenProvenance(Message):
    """The page ``path`` a claim cites, beside the claim (``claim_path``:``claim_line``)."""

    def __init__(
        self,
        path: str,
        *,
        lines: tuple[int, int] | None,
        claim_path: str,
        claim_line: int,
        claim_rows: Any = None,
        label: str = "",
    ) -> None:
        super().__init__()
        self.path = path
        self.lines = lines
        self.claim_path = claim_path
        self.claim_line = claim_line
        self.claim_rows = claim_rows
        self.label = label


class OpenClaims(Message):
    def __init__(self, preset: str = "all", tag: str | None = None) -> None:
        super().__init__()
        self.preset = preset
        self.tag = tag


class Invoke(Message):
    """Run ``callback(*args)`` on the UI thread (posted from another thread, not waited for)."""

    def __init__(self, callback: Callable[..., Any], args: tuple[Any, ...]) -> None:
        super().__init__()
        self.callback = callback
        self.args = args


class Navigation:
    """For screens and widgets (mixed in before the Textual class): ask the app to open
    something (messages up, the app routes)."""

    post_message: Callable[[Message], bool]  # a Textual MessagePump's

    def open_page(self, path: str, **landing: Unpack[Landing]) -> None:
        self.post_message(OpenPage(path, **landing))

    def open_editor(self, path: str, *, line: int | None = None) -> None:
        self.post_message(OpenEditor(path, line=line))

    def open_history(self, target: str) -> None:
        self.post_message(OpenHistory(target))

    def open_claims(self, preset: str = "all", tag: str | None = None) -> None:
        self.post_message(OpenClaims(preset, tag))
