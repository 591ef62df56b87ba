"""memtui's themes in the app: registered before the app starts, the user's choice remembered,
and the palette (the theme's semantic colours and the source tags') that screens draw with."""

from __future__ import annotations

from typing import Any

from textual.app import App

from memtui.resources import themes_dir
from memtui.tui import safe
from memtui.tui.contrast import NO_COLOR_THEME, use_readable_dim
from memtui.tui.settings import Settings
from memtui.tui.themes import load_themes, tag_colours

COLOUR_NAMES = ("primary", "secondary", "accent", "warning", "error", "success")


def keep_readable_dim(app: App[Any]) -> None:
    """Dim text stays at 4.5:1 or more (after Textual rebuilt its true-colour filter)."""
    use_readable_dim(app)


class Themes:
    """Register memtui's themes and choose one before the app starts: a theme set once it runs
    parses and applies the whole stylesheet again (a fifth of the CPU of starting)."""

    def __init__(self, app: App[Any], *, requested: str | None, settings: Settings | None = None) -> None:
        self.app = app
        use_readable_dim(app)
        self.problems: list[str] = []  # told once the app runs
        self.from_command_line: str | None = None  # --theme: for this run only
        self._palette: dict[str, str] = {}
        settings = settings if settings is not None else Settings()
        try:
            themes, problems = load_themes(themes_dir())
        except FileNotFoundError as exc:
            themes, problems = [], []
            self.problems.append(str(exc))
        for theme in themes:
            app.register_theme(theme)
        for problem in problems:
            self.problems.append(f"theme {problem.path.name} not loaded: {problem.message}")
        if app.no_color:
            # NO_COLOR: greys that stay readable once Textual turns every colour to grey.
            app.register_theme(NO_COLOR_THEME)
            self.from_command_line = NO_COLOR_THEME.name
            app.theme = NO_COLOR_THEME.name
        else:
            wanted = requested or settings.theme
            if wanted in app.available_themes:
                if requested and requested != app.theme:
                    self.from_command_line = requested
                app.theme = wanted
            elif themes:
                app.theme = themes[0].name
        self._palette = self._make_palette()

    def mounted(self) -> None:
        for problem in self.problems:
            safe.notify(self.app, problem, severity="warning")

    def palette(self) -> dict[str, str]:
        """Colours for Rich styles: the theme's semantic colours plus the source-tag colours
        (made once per theme: every render and the status bar's clock use them)."""
        return self._palette

    def changed(self, settings: Settings) -> None:
        """The theme changed: a new palette; a choice made in the app is remembered."""
        self._palette = self._make_palette()
        name = self.app.theme
        if self.from_command_line == name:
            if name != NO_COLOR_THEME.name:
                self.from_command_line = None  # --theme is for this run; only a choice in the app is remembered
        elif settings.theme != name and name != NO_COLOR_THEME.name:
            settings.theme = name
            settings.save()

    def _make_palette(self) -> dict[str, str]:
        variables = self.app.get_css_variables()
        colours = {name: variables.get(name, "") for name in COLOUR_NAMES}
        colours.update(tag_colours(variables))
        return {name: value if _is_colour(value) else "" for name, value in colours.items()}


def _is_colour(value: str) -> bool:
    return isinstance(value, str) and len(value) in (7, 9) and value.startswith("#")
