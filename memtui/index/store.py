"""Where the index lives on disk, which copy is in use, and whether it can be trusted.

Layout of an index folder (default ``FIELD/.memtui/cache/index``)::

    CURRENT                 name of the generation in use (replaced atomically)
    writer.lock             held (flock) by the one process that may write
    gen-20261129T101500-3fa2/
        _MAIN_7.toc, MAIN_*.seg     Whoosh's files
        memtui-manifest.json        recipe + every Whoosh file's size and mtime, signed

A rebuild writes a new generation folder next to the one in use and only then
points ``CURRENT`` at it, so the old index serves searches until the new one is
complete; a crash mid-build leaves a stray folder that the next writer removes.

Whoosh stores its table of contents and posting blocks with ``pickle``, so
loading an index someone else wrote could run their code. The manifest is
therefore signed with a per-user key (``~/.config/memtui/index-signing.key``)
and lists exactly the files the index may contain; an index whose manifest is
missing, unsigned, signed by another key, or does not match the files on disk
is never opened, only rebuilt. That also catches truncated files and an index
left behind by a writer that crashed between writing segments and the manifest.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from memtui.store import locations, signing
from memtui.store.safe_write import write_internal_file

POINTER_FILE = "CURRENT"
LOCK_FILE = "writer.lock"
MANIFEST_FILE = "memtui-manifest.json"
GENERATION_PREFIX = "gen-"
MANIFEST_FORMAT = 1

try:  # POSIX
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


def default_index_dir(root: Path, *, readonly: bool = False, source: Path | None = None) -> Path:
    return locations.default_cache_dir(root, readonly=readonly, source=source) / "index"


class UntrustedIndex(Exception):
    """An index generation that must not be opened; the message says why."""


def _is_scratch(name: str) -> bool:
    """Files that come and go around a write (Whoosh's lock, our temp files), never part of an index."""
    return name.endswith("LOCK") or name.startswith(".memtui-")


def index_files(gen_dir: Path) -> dict[str, list[int]]:
    """Every committed file in a generation folder with its [size, mtime_ns]."""
    files: dict[str, list[int]] = {}
    with os.scandir(gen_dir) as entries:
        for entry in entries:
            if entry.name == MANIFEST_FILE or _is_scratch(entry.name):
                continue
            if not entry.is_file(follow_symlinks=False):
                continue
            st = entry.stat(follow_symlinks=False)
            files[entry.name] = [st.st_size, st.st_mtime_ns]
    return files


@dataclass(slots=True)
class Manifest:
    recipe: dict
    generation: str
    files: dict[str, list[int]]
    status_day: str
    pages: int
    written: float

    def payload(self) -> dict:
        return {
            "format": MANIFEST_FORMAT,
            "recipe": self.recipe,
            "generation": self.generation,
            "files": self.files,
            "status_day": self.status_day,
            "pages": self.pages,
            "written": self.written,
        }


def write_manifest(gen_dir: Path, recipe: dict, *, status_day: str, pages: int) -> Manifest:
    manifest = Manifest(recipe, gen_dir.name, index_files(gen_dir), status_day, pages, time.time())
    payload = manifest.payload()
    data = json.dumps({"payload": payload, "hmac": signing.sign_json(payload)}, indent=1).encode()
    replace_file(gen_dir / MANIFEST_FILE, data)
    return manifest


def replace_file(path: Path, data: bytes) -> None:
    """Atomic replace (temp file + rename) without fsync: the index is a cache.

    After a crash the worst case is a manifest that does not match the files,
    and that index is rebuilt; waiting for the disk on every small commit would
    add its latency to every change the watcher reports.
    """
    tmp = path.with_name(f".memtui-{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_manifest(gen_dir: Path) -> Manifest:
    """The signed manifest of a generation, or ``UntrustedIndex`` saying what is wrong."""
    try:
        raw = (gen_dir / MANIFEST_FILE).read_bytes()
    except FileNotFoundError:
        raise UntrustedIndex("the index has no manifest (an unfinished or foreign index)") from None
    except OSError as exc:
        raise UntrustedIndex(f"cannot read the index manifest: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw)
        payload = data["payload"]
        signature = data["hmac"]
        if not isinstance(payload, dict) or not isinstance(signature, str):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        raise UntrustedIndex("the index manifest is damaged") from None
    if not signing.verify_json(payload, signature):
        raise UntrustedIndex("the index manifest is not signed by this user's key (a foreign or altered index)")
    try:
        manifest = Manifest(
            recipe=dict(payload["recipe"]),
            generation=str(payload["generation"]),
            files={str(k): [int(v[0]), int(v[1])] for k, v in payload["files"].items()},
            status_day=str(payload["status_day"]),
            pages=int(payload["pages"]),
            written=float(payload["written"]),
        )
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        raise UntrustedIndex("the index manifest is damaged") from None
    if manifest.generation != gen_dir.name:
        raise UntrustedIndex("the index manifest belongs to another folder")
    return manifest


def check_files(gen_dir: Path, manifest: Manifest) -> None:
    """Raise ``UntrustedIndex`` unless the folder holds exactly the manifest's files, unchanged."""
    try:
        present = index_files(gen_dir)
    except FileNotFoundError:
        raise UntrustedIndex("the index folder was deleted") from None
    except OSError as exc:
        raise UntrustedIndex(f"cannot list the index folder: {exc.strerror or exc}") from None
    if present == manifest.files:
        return
    missing = sorted(set(manifest.files) - set(present))
    extra = sorted(set(present) - set(manifest.files))
    if missing:
        raise UntrustedIndex(f"index file missing: {missing[0]}")
    if extra:
        raise UntrustedIndex(f"unexpected file in the index folder: {extra[0]}")
    changed = sorted(name for name in present if present[name] != manifest.files[name])
    raise UntrustedIndex(f"index file changed or truncated: {changed[0]}")


class IndexStore:
    """The index folder: generations, the pointer to the one in use, and the writer lock."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._lock_fd: int | None = None
        self._lock_ino: int | None = None

    # ------------------------------------------------------------ generations
    def current(self) -> Path | None:
        """The generation folder ``CURRENT`` names, if it names a sane one."""
        try:
            name = (self.root / POINTER_FILE).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            return None
        if not name.startswith(GENERATION_PREFIX) or "/" in name or "\\" in name or name in (".", ".."):
            return None
        return self.root / name

    def pointer_stamp(self) -> tuple[int, int] | None:
        """Changes whenever ``CURRENT`` is replaced (readers use it to notice a swap)."""
        try:
            st = os.stat(self.root / POINTER_FILE)
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns)

    def new_generation(self) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        name = f"{GENERATION_PREFIX}{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}"
        path = self.root / name
        path.mkdir()
        return path

    def point_at(self, gen_dir: Path) -> None:
        """Make ``gen_dir`` the generation in use (atomic rename of the pointer file)."""
        write_internal_file(self.root / POINTER_FILE, (gen_dir.name + "\n").encode())

    def remove_generations(self, keep: Path | None) -> None:
        """Delete every generation folder but ``keep`` (stray builds, replaced indexes)."""
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.root):
                if entry.name.startswith(GENERATION_PREFIX) and (keep is None or entry.name != keep.name):
                    shutil.rmtree(entry.path, ignore_errors=True)

    # ------------------------------------------------------------ the writer lock
    def acquire_writer(self) -> bool:
        """Try (without waiting) to become the one process that writes this index."""
        if self._lock_fd is not None:
            return True
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.root / LOCK_FILE, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
        except OSError:
            return False
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            else:  # pragma: no cover - Windows
                import msvcrt

                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            os.close(fd)
            return False
        self._lock_fd = fd
        self._lock_ino = os.fstat(fd).st_ino
        return True

    def holds_writer(self) -> bool:
        """Still the writer? False if the lock file was deleted or replaced under us."""
        if self._lock_fd is None:
            return False
        try:
            return os.stat(self.root / LOCK_FILE).st_ino == self._lock_ino
        except OSError:
            return False

    def release_writer(self) -> None:
        if self._lock_fd is None:
            return
        with contextlib.suppress(OSError):
            if fcntl is not None:
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
        with contextlib.suppress(OSError):
            os.close(self._lock_fd)
        self._lock_fd = None
        self._lock_ino = None
