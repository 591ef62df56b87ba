"""Readable colours: every text/background pair at least 4.5:1 (WCAG AA), in every bundled theme.

Textual draws ``dim`` text by blending its colour two thirds of the way towards
the background, which halves the contrast (dim grey on a dark surface measured
2.2:1). ``ReadableTruecolor`` replaces Textual's own true-colour filter (same
work, no extra pass over the segments) and dims only as far as 4.5:1 allows;
results are cached per colour pair, so a repaint costs what it did.

Under ``NO_COLOR`` memtui uses ``NO_COLOR_THEME``: greys chosen so that every
state colour stays readable once Textual turns colours to grey (a colour theme
in grey measured 1.3:1 on a selected row). States never depend on colour:
each has a glyph and a word.
"""

from __future__ import annotations

from functools import lru_cache

from rich.color import Color as RichColor
from rich.style import Style
from textual.filter import NO_DIM, ANSIToTruecolor
from textual.theme import Theme

from memtui.tui.compat import replace_truecolor_filter, terminal_theme

MINIMUM = 4.5
TARGET = 4.6  # a little above the minimum, so rounding to whole RGB values never drops below it
DIM_STEPS = (0.66, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0)  # 0.66 is Textual's own dim factor

NO_COLOR_THEME = Theme(
    name="memtui-nocolor",
    dark=True,
    primary="#FFFFFF",
    secondary="#D0D0D0",
    accent="#E8E8E8",
    warning="#E0E0E0",
    error="#FFFFFF",
    success="#C8C8C8",
    foreground="#F2F2F2",
    background="#000000",
    surface="#0A0A0A",
    panel="#1A1A1A",
    variables={
        "tag-stated": "#FFFFFF",
        "tag-observed": "#E0E0E0",
        "tag-inferred": "#D0D0D0",
        "tag-suggested": "#FFFFFF",
        "footer-key-foreground": "#FFFFFF",
        "block-cursor-background": "#FFFFFF",
        "block-cursor-foreground": "#000000",
    },
)


def _channel(value: float) -> float:
    c = value / 255
    return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4


def luminance(rgb: tuple[float, float, float]) -> float:
    r, g, b = rgb
    return 0.2126 * _channel(r) + 0.7152 * _channel(g) + 0.0722 * _channel(b)


def ratio(fg: tuple[float, float, float], bg: tuple[float, float, float]) -> float:
    """WCAG contrast ratio of two sRGB colours (1 to 21)."""
    a, b = luminance(fg), luminance(bg)
    return (max(a, b) + 0.05) / (min(a, b) + 0.05)


def _blend(background: tuple[int, int, int], color: tuple[int, int, int], factor: float) -> tuple[int, int, int]:
    return tuple(round(b + (c - b) * factor) for b, c in zip(background, color))  # type: ignore[return-value]


@lru_cache(4096)
def readable_dim(background: RichColor, color: RichColor) -> RichColor:
    """``color`` dimmed towards ``background`` as far as a 4.5:1 contrast allows."""
    bg = background.get_truecolor()
    fg = color.get_truecolor()
    for factor in DIM_STEPS:
        blended = _blend(bg, fg, factor)
        if ratio(blended, bg) >= TARGET:
            return RichColor.from_rgb(*blended)
    return color


class ReadableTruecolor(ANSIToTruecolor):
    """Textual's ANSI-to-true-colour filter, with ``dim`` that stays readable."""

    @lru_cache(1024)  # noqa: B019 - one filter per app, kept as long as the app
    def truecolor_style(self, style: Style, background: RichColor) -> Style:
        if not style.dim or style.color is None:
            return super().truecolor_style(style, background)
        resolved = super().truecolor_style(style + NO_DIM, background)
        bgcolor = resolved.bgcolor if resolved.bgcolor is not None else background
        color = resolved.color
        if color is None or color.triplet is None or bgcolor.triplet is None:
            return super().truecolor_style(style, background)
        return resolved + Style.from_color(readable_dim(bgcolor, color), None)


def use_readable_dim(app) -> None:
    """Swap the app's true-colour filter for ``ReadableTruecolor`` (call in ``App.__init__``)."""
    replace_truecolor_filter(app, lambda old: ReadableTruecolor(terminal_theme(old), enabled=old.enabled))
