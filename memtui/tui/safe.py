"""Untrusted text to display objects, never through markup.

A plain ``str`` given to ``Static``, ``Label``, ``Tree``, ``OptionList``,
``DataTable`` or ``notify`` is parsed as Textual markup, and ``[@click=...]`` in
it would run an action when clicked. Everything that comes from a page (text,
titles, paths, frontmatter values) goes through these helpers instead: they
return ``rich.text.Text`` objects (never parsed as markup) with control
characters, bidi overrides and zero-width characters made visible.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from memtui.textsafety import one_line, visible


def line(value: Any, style: str = "", *, limit: int | None = None) -> Text:
    """One line of untrusted text."""
    if value is None:
        return Text("", style=style)
    return Text(one_line(str(value), limit), style=style, no_wrap=True, overflow="ellipsis")


def block(value: Any, style: str = "") -> Text:
    """Multi-line untrusted text (newlines kept, everything else made visible)."""
    if value is None:
        return Text("", style=style)
    return Text(visible(str(value)), style=style)


def notify(app, message: Any, *, title: str = "", severity: str = "information", timeout: float | None = None) -> None:
    """``app.notify`` for messages that may contain page text (markup off, made visible)."""
    kwargs: dict[str, Any] = {"title": one_line(title), "severity": severity, "markup": False}
    if timeout is not None:
        kwargs["timeout"] = timeout
    app.notify(visible(str(message)), **kwargs)
