"""What the app tells its screens when the field, its analysis or the index changes."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class FieldEvent:
    """Published on ``app.field_signal``.

    kind: "progress" (loading), "preview" (the list as last shown, before loading),
    "loaded", "analysed", "changed" (pages on disk),
    "index" (index or watcher state), "theme", "error" (the field could not load).
    """

    kind: str
    paths: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


@dataclass
class LoadProgress:
    phase: str = "starting"
    done: int = 0
    total: int = 0
