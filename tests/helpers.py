"""Small helpers shared by the tests."""

from __future__ import annotations

from pathlib import Path


def write_page(root: Path, rel: str, text: str | bytes) -> Path:
    """Write a page for a test (creating folders)."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8", newline="")
    else:
        path.write_bytes(text)
    return path
