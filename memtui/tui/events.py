"""What the app tells its screens when the field, its analysis or the index changes."""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.message import Message


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


class IndexCommitted(Message):
    """Posted from the index writer's thread after each commit. Posted, not called: the writer
    goes on with the next change at once instead of waiting for the app to take this one
    (``call_from_thread`` held it for up to 115 ms a commit while an agent wrote)."""

    def __init__(self, batch, reads=None, field=None) -> None:  # noqa: ANN001 - see MemtuiApp.read_changes
        super().__init__()
        self.batch = batch  # memtui.index.ChangeBatch
        self.reads = reads  # its pages read already: (changed, gone), lists of (path, PageRead)
        self.field = field  # the Field they were read for
