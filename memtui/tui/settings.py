"""User settings, remembered between runs (``~/.config/memtui/settings.json``)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from memtui.store.locations import user_config_dir
from memtui.store.safe_write import write_internal_file

BUMP_CHOICES = ("ask", "always", "never")


@dataclass
class Settings:
    theme: str = "memtui-dusk"
    commit_after_save: bool = False  # when the field is a git repository
    soft_wrap: bool = True
    bump_updated: str = "ask"  # on save, set updated: to now: "ask" | "always" | "never"

    @classmethod
    def path(cls) -> Path:
        return user_config_dir() / "settings.json"

    @classmethod
    def load(cls) -> Settings:
        try:
            data = json.loads(cls.path().read_text("utf-8"))
        except (OSError, ValueError):
            return cls()
        if not isinstance(data, dict):
            return cls()
        known = {f.name: f.type for f in fields(cls)}
        values = {}
        for key, value in data.items():
            if key in known and isinstance(value, type(getattr(cls(), key))):
                values[key] = value
        settings = cls(**values)
        if settings.bump_updated not in BUMP_CHOICES:
            settings.bump_updated = "ask"
        return settings

    def save(self) -> None:
        try:
            write_internal_file(self.path(), json.dumps(asdict(self), indent=2).encode())
        except OSError:
            pass  # settings are a convenience; never fail the app over them
