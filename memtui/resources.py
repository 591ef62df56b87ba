"""Files shipped with memtui: the sample field and the themes.

From a checkout they sit at the top of the repository; an installed wheel
carries them inside the package under ``memtui/_bundled/``.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def _find(name: str) -> Path:
    for candidate in (_PACKAGE / "_bundled" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"memtui's bundled {name}/ folder is missing from this installation")


def sample_field_dir() -> Path:
    return _find("sample-field")


def themes_dir() -> Path:
    return _find("themes")
