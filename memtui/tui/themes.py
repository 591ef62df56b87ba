"""memtui's own themes (``themes/*.toml``) and the source-tag colours of any theme.

A theme file holds Textual ``Theme`` fields plus a ``[variables]`` table; the
variables ``tag-stated``, ``tag-observed``, ``tag-inferred`` and
``tag-suggested`` colour the source tags. Built-in Textual themes have no such
variables, so the tags fall back to the theme's own semantic colours, which each
theme already makes readable on its background.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from textual.theme import Theme

from memtui.field.body import SOURCE_TAGS

TAG_FALLBACK = {
    "stated": "success",
    "observed": "primary",
    "inferred": "warning",
    "suggested": "error",
}
THEME_FIELDS = (
    "primary",
    "secondary",
    "warning",
    "error",
    "success",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)


@dataclass(frozen=True)
class ThemeLoadProblem:
    path: Path
    message: str


def load_theme_file(path: Path) -> Theme:
    with open(path, "rb") as handle:
        data = tomllib.load(handle)
    name = data.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError("theme has no 'name'")
    if not isinstance(data.get("primary"), str):
        raise ValueError("theme has no 'primary' colour")
    kwargs = {key: data[key] for key in THEME_FIELDS if isinstance(data.get(key), str)}
    variables = data.get("variables", {})
    if not isinstance(variables, dict):
        raise ValueError("[variables] must be a table")
    return Theme(
        name=name.strip(),
        dark=bool(data.get("dark", True)),
        variables={str(k): str(v) for k, v in variables.items()},
        **kwargs,
    )


def load_themes(folder: Path) -> tuple[list[Theme], list[ThemeLoadProblem]]:
    themes: list[Theme] = []
    problems: list[ThemeLoadProblem] = []
    for path in sorted(folder.glob("*.toml")):
        try:
            themes.append(load_theme_file(path))
        except (OSError, ValueError, tomllib.TOMLDecodeError, TypeError) as exc:
            problems.append(ThemeLoadProblem(path, str(exc)))
    return themes, problems


def tag_colours(variables: dict[str, str]) -> dict[str, str]:
    """Colour of each source tag under the current theme's CSS variables."""
    colours = {}
    for tag in SOURCE_TAGS:
        colours[tag] = variables.get(f"tag-{tag}") or variables.get(TAG_FALLBACK[tag]) or "default"
    return colours
