"""What every dialect has: detection evidence, the instance applied to a folder, the reading hooks."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.dialects.loading import LoadedFile, Outside
from memtui.field.checks import Finding
from memtui.field.field import FieldView, ScanResult
from memtui.field.page import PageInfo
from memtui.store.files import read_bytes, read_head

MAX_SIDE_FILE_BYTES = 1024 * 1024  # a sidecar or config file bigger than this is not read
SAMPLE_BYTES = 4096  # detection reads at most this much of a page


@dataclass(slots=True)
class Applied:
    """One dialect applied to one folder of the field (``root`` is relative; "" is the field root)."""

    name: str
    root: str
    evidence: list[str]
    params: dict[str, Any] = field(default_factory=dict)
    pages: int = 0  # how many pages it read (filled in after loading)

    def covers(self, path: str) -> bool:
        return not self.root or path == self.root or path.startswith(self.root + "/")

    def local(self, path: str) -> str:
        """``path`` relative to this instance's root."""
        return path[len(self.root) + 1 :] if self.root else path

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "root": self.root, "evidence": list(self.evidence), "params": self.params}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Applied:
        return cls(str(data["name"]), str(data["root"]), [str(e) for e in data["evidence"]], dict(data["params"]))


@dataclass(slots=True)
class Skipped:
    """A folder memtui did not read, and how to read it."""

    path: str
    what: str  # e.g. "hidden folder with 12 Markdown files"
    command: str  # the command that opens it

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "what": self.what, "command": self.command}

    def words(self) -> str:
        """What was not read and how to read it, as every surface says it after "not read: "
        (``command`` empty: files no command opens; ``what`` says what to do)."""
        if not self.command:
            return self.what
        return f"{self.path}/ ({self.what}); open it with: {self.command}"


class DetectContext:
    """What detection may look at: the field root, its scan, and small reads of files."""

    def __init__(self, root: Path, scanned: ScanResult) -> None:
        self.root = Path(root)
        self.scanned = scanned
        self.pages = [entry.path for entry in scanned.entries]
        self.page_set = set(self.pages)

    def folders(self) -> dict[str, list[str]]:
        """Folder -> the page names in it (sorted, as the folders are)."""
        return self.scanned.folders

    def holds_folder(self, folder: str) -> bool:
        """Does ``folder`` (a relative path) or a folder under it hold pages?"""
        below = folder + "/"
        return any(name == folder or name.startswith(below) for name in self.scanned.folders)

    def head(self, rel: str, size: int = SAMPLE_BYTES) -> str:
        """The first ``size`` bytes of a file, decoded leniently ('' when unreadable)."""
        try:
            found = read_head(os.path.join(self.root, *rel.split("/")), size, under=self.root)  # no link, no FIFO
            return found[0].decode("utf-8", "replace") if found is not None else ""
        except OSError:
            return ""

    def is_dir(self, rel: str) -> bool:
        return os.path.isdir(os.path.join(self.root, *rel.split("/"))) and not os.path.islink(
            os.path.join(self.root, *rel.split("/"))
        )

    def exists(self, rel: str) -> bool:
        return os.path.lexists(os.path.join(self.root, *rel.split("/")))


def read_json_file(path: Path) -> Any:
    """A small JSON file from the field, or None: never follows a symlink, never reads a huge file."""
    try:
        result = read_bytes(path, max_bytes=MAX_SIDE_FILE_BYTES)  # a bigger file is never read
    except OSError:
        return None
    if result is None:
        return None
    data, _ = result
    if len(data) > MAX_SIDE_FILE_BYTES:
        return None
    try:
        return json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return None


class Dialect:
    """A memory format. Subclasses set ``name`` and ``title`` and override what they need."""

    name = ""
    title = ""
    reads_sidecars = False

    def detect(self, ctx: DetectContext) -> list[Applied]:
        return []

    def scope_paths(self, ctx_root: Path, names: set[str]) -> list[str]:
        """Hidden paths (under the field root) that hold this format's memory: read them too."""
        return []

    def skipped_label(self, rel: str) -> str | None:
        """What a folder this format's scope leaves out is (``.claude/agents``: instructions), if it knows."""
        return None

    def claims(self, applied: Applied, path: str) -> bool:
        return applied.covers(path)

    def read(self, applied: Applied, info: PageInfo, root: Path, text: str) -> None:
        """Fill ``info.norm`` (and ``info.dialect``) for a page this instance claims; ``text`` is the page."""
        info.dialect = self.name

    def page_checks(self, applied: Applied, field: FieldView, info: PageInfo) -> list[Finding]:
        """Findings only this format knows how to make, for one page it read (the field is loaded)."""
        return []

    def link_prefixes(self, applied: Applied, root: Path) -> list[str]:
        return []

    def context(
        self, applied: Applied, field: FieldView, *, all_files: bool = True
    ) -> tuple[list[LoadedFile], list[Outside]]:
        """The files of this instance an agent loads and how (``dialects.loading``), and the
        sources it loads from outside the field (named, never read). ``all_files=False``: only
        what the agent loads by itself (``loading.AUTOMATIC``), not what it may read on demand.
        Nothing: no agent is known to load this format by itself."""
        return [], []
