"""Contrast of what is on screen: every text/background pair, measured from the rendered segments.

The segments come from the compositor after Textual's line filters (themes
resolved to true colour, ``dim`` blended, NO_COLOR turned to grey), so this
measures what the terminal is asked to draw. Ratios follow WCAG 2.x: relative
luminance of sRGB colours, (L1 + 0.05) / (L2 + 0.05).

While a modal dialog is open, only the dialog is measured: the screen behind it
is inactive and faded on purpose (WCAG exempts inactive components).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.color import Color

from memtui.tui.contrast import ratio

MINIMUM = 4.5
# Lines, boxes, blocks, scrollbars and guides: drawing, not text.
DECORATION = set(range(0x2500, 0x2600)) | {
    0x2581,
    0x2594,
    0x258F,
    0x2595,
    0x25B6,
    0x25BC,
    0x25B8,
    0x25BE,
    0x2B58,
    0x25CF,
}


@dataclass(frozen=True)
class Pair:
    fg: tuple[int, int, int]
    bg: tuple[int, int, int]
    ratio: float
    sample: str
    y: int


def _rgb(color: Color | None, default: tuple[int, int, int]) -> tuple[int, int, int]:
    if color is None or color.is_default:
        return default
    triplet = color.get_truecolor()
    return (triplet.red, triplet.green, triplet.blue)


def is_text(text: str) -> bool:
    return any(not ch.isspace() and ord(ch) not in DECORATION for ch in text)


def screen_pairs(app) -> list[Pair]:
    """Every text segment on screen with its colours and contrast ratio."""
    from textual._compositor import visible_screen_stack

    visible_screen_stack.set(app._background_screens)
    strips = app.screen._compositor.render_strips()
    background = app.screen.styles.background
    default_bg = (background.r, background.g, background.b)
    foreground = app.screen.styles.color
    default_fg = (foreground.r, foreground.g, foreground.b)
    from textual.geometry import Region
    from textual.screen import ModalScreen

    area = None
    if isinstance(app.screen, ModalScreen):
        area = Region.from_union([child.region for child in app.screen.children]) if app.screen.children else None
    pairs = []
    for y, strip in enumerate(strips):
        x = 0
        for segment in strip:
            text, style = segment.text, segment.style
            start, x = x, x + segment.cell_length
            if style is None or not is_text(text):
                continue
            if area is not None and not (area.contains(start, y) or area.contains(x - 1, y)):
                continue
            fg = _rgb(style.color, default_fg)
            bg = _rgb(style.bgcolor, default_bg)
            if style.reverse:
                fg, bg = bg, fg
            pairs.append(Pair(fg, bg, ratio(fg, bg), text.strip()[:40], y))
    return pairs


def failures(app, minimum: float = MINIMUM) -> list[Pair]:
    seen = set()
    out = []
    for pair in screen_pairs(app):
        key = (pair.fg, pair.bg)
        if pair.ratio < minimum and key not in seen:
            seen.add(key)
            out.append(pair)
    return out
