"""Where the index lives on disk, which copy is in use, and whether it can be trusted.

Layout of an index folder (default ``FIELD/.memtui/cache/index``)::

    CURRENT                 name of the generation in use (replaced atomically)
    writer.lock             held (flock) by the one process that may write
    gen-20261129T101500-3fa2/
        _MAIN_7.toc, MAIN_*.seg     Whoosh's files
        memtui-manifest.json        recipe + every Whoosh file's content hash and stamp, signed

A rebuild writes a new generation folder next to the one in use and only then
points ``CURRENT`` at it, so the old index serves searches until the new one is
complete; a crash mid-build leaves a stray folder that the next writer removes.

Whoosh stores its table of contents and posting blocks with ``pickle``, so
loading an index someone else wrote could run their code. The manifest is
therefore signed with a per-user key (``store.signing``) and lists exactly the
files the index may contain, each with the SHA-256 of its content; an index
whose manifest is missing, unsigned, signed by another key, or does not match
the files on disk is never opened, only rebuilt. That also catches truncated
files and an index left behind by a writer that crashed between writing
segments and the manifest.

Hashing every file on every open would cost a warm open its speed, so each
entry also records the file's stamp when it was hashed: size, mtime, *ctime*
and inode. A write to a file, or setting its mtime back, moves its ctime to
"now", and no unprivileged process can set a ctime: a file whose stamp still
matches is the file that was hashed. A file whose stamp differs (a forged
segment of the same size with its mtime restored, or a copy restored from a
backup) is hashed before anything opens it, and refused unless the hash
matches. Whoosh's files are never rewritten in place, so a writer hashes only
the files each commit adds.

A reader (a second memtui) opens the table of contents the manifest names
(``engine.segments.PinnedIndex``), not the newest one in the folder, and tolerates files the
manifest does not list: they belong to a commit in progress and are never read.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import shutil
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from memtui.store import locations, signing
from memtui.store.safe_write import write_internal_file

POINTER_FILE = "CURRENT"
LOCK_FILE = "writer.lock"
MANIFEST_FILE = "memtui-manifest.json"
GENERATION_PREFIX = "gen-"
MANIFEST_FORMAT = 2
HASH_CHUNK = 1 << 20
_TOC_RE = re.compile(r"_MAIN_(\d+)\.toc")

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


# Files whose content was hashed in this process, by their full stamp (a copied index is hashed once).
_hashed: dict[tuple, str] = {}


def _stamp(st: os.stat_result) -> list[int]:
    """What changes whenever a file's content (or its mtime) is changed: size, mtime, ctime, inode."""
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _hash_file(path: Path) -> tuple[str, os.stat_result]:
    """SHA-256 of a regular file's content (never through a symlink), and its stamp while hashed."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(f"not a regular file: {path.name}")
        key = (st.st_dev, *_stamp(st))
        if key in _hashed:
            return _hashed[key], st
        digest = hashlib.sha256()
        while chunk := os.read(fd, HASH_CHUNK):
            digest.update(chunk)
        _hashed[key] = digest.hexdigest()
        return _hashed[key], st
    finally:
        os.close(fd)


def _listing(gen_dir: Path) -> dict[str, os.stat_result]:
    """Every committed file in a generation folder (not the manifest, not scratch files) with its lstat."""
    files: dict[str, os.stat_result] = {}
    with os.scandir(gen_dir) as entries:
        for entry in entries:
            if entry.name == MANIFEST_FILE or _is_scratch(entry.name):
                continue
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(st.st_mode):
                files[entry.name] = st
            elif stat.S_ISLNK(st.st_mode):
                raise UntrustedIndex(f"a symlink in the index folder: {entry.name}")
    return files


def link_generation(source: Path, target: Path) -> None:
    """Make ``target`` (an empty generation folder) hold the committed files of ``source``.

    Hard links: Whoosh never changes a committed file, it writes new ones (a copy
    would cost the index's size in time and disk).
    """
    for name in _listing(source):
        try:
            os.link(source / name, target / name, follow_symlinks=False)
        except OSError:
            shutil.copy2(source / name, target / name, follow_symlinks=False)


def index_files(gen_dir: Path, previous: Manifest | None = None) -> dict[str, list]:
    """Every committed file with ``[size, mtime_ns, ctime_ns, inode, sha256]``.

    Files ``previous`` (the manifest of the last commit) already vouches for,
    with an unchanged stamp, are not hashed again.
    """
    files: dict[str, list] = {}
    for name, st in _listing(gen_dir).items():
        known = previous.files.get(name) if previous is not None else None
        if known is not None and known[:4] == _stamp(st):
            files[name] = known
            continue
        digest, hashed = _hash_file(gen_dir / name)
        files[name] = [*_stamp(hashed), digest]
    return files


def toc_generation(files: dict[str, list]) -> int | None:
    """The Whoosh table-of-contents generation a set of files holds (the newest, if several)."""
    found = [int(match.group(1)) for name in files if (match := _TOC_RE.fullmatch(name))]
    return max(found) if found else None


@dataclass(slots=True)
class Manifest:
    recipe: dict
    generation: str
    files: dict[str, list]
    status_day: str
    pages: int
    written: float

    @property
    def toc(self) -> int | None:
        return toc_generation(self.files)

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


def write_manifest(
    gen_dir: Path, recipe: dict, *, status_day: str, pages: int, previous: Manifest | None = None
) -> Manifest:
    """Hash what is new since ``previous`` and sign the list of files."""
    manifest = Manifest(recipe, gen_dir.name, index_files(gen_dir, previous), status_day, pages, time.time())
    _sign_into(gen_dir, manifest)
    return manifest


def _sign_into(gen_dir: Path, manifest: Manifest) -> None:
    payload = manifest.payload()
    data = json.dumps({"payload": payload, "hmac": signing.sign_json(payload)}, indent=1).encode()
    replace_file(gen_dir / MANIFEST_FILE, data)


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
    if payload.get("format") != MANIFEST_FORMAT:
        raise UntrustedIndex("the index was written by another version of memtui")
    try:
        manifest = Manifest(
            recipe=dict(payload["recipe"]),
            generation=str(payload["generation"]),
            files={str(k): [*(int(n) for n in v[:4]), str(v[4])] for k, v in payload["files"].items()},
            status_day=str(payload["status_day"]),
            pages=int(payload["pages"]),
            written=float(payload["written"]),
        )
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        raise UntrustedIndex("the index manifest is damaged") from None
    if manifest.generation != gen_dir.name:
        raise UntrustedIndex("the index manifest belongs to another folder")
    return manifest


def check_files(gen_dir: Path, manifest: Manifest, *, extra_ok: bool = False) -> dict[str, list]:
    """Raise ``UntrustedIndex`` unless every file the manifest lists is there with its content.

    A file whose stamp moved is hashed (before anything opens it) and must
    still have the manifest's hash. ``extra_ok``: files the manifest does not
    list are allowed (a reader, while the writer commits); otherwise the folder
    must hold exactly the manifest's files.

    Returns the manifest entries of the files that were hashed, under the stamp
    they had while hashed (their content is the indexed one but their stamp
    moved: a copy, a restore, a new hard link), for ``restamp`` by a writer, so
    that the next open does not hash them again.
    """
    try:
        present = _listing(gen_dir)
    except FileNotFoundError:
        raise UntrustedIndex("the index folder was deleted") from None
    except OSError as exc:
        raise UntrustedIndex(f"cannot list the index folder: {exc.strerror or exc}") from None
    missing = sorted(set(manifest.files) - set(present))
    if missing:
        raise UntrustedIndex(f"index file missing: {missing[0]}")
    extra = sorted(set(present) - set(manifest.files))
    if extra and not extra_ok:
        raise UntrustedIndex(f"unexpected file in the index folder: {extra[0]}")
    rehashed: dict[str, list] = {}
    for name, entry in sorted(manifest.files.items()):
        st = present[name]
        if _stamp(st) == entry[:4]:
            continue  # the very file that was hashed: nothing can have changed it without moving its ctime
        if st.st_size != entry[0]:
            raise UntrustedIndex(f"index file changed or truncated: {name}")
        try:
            digest, hashed = _hash_file(gen_dir / name)
        except OSError:
            raise UntrustedIndex(f"index file cannot be read: {name}") from None
        if digest != entry[4]:
            raise UntrustedIndex(f"index file changed (its content is not what was indexed): {name}")
        rehashed[name] = [*_stamp(hashed), digest]
    return rehashed


def restamp(gen_dir: Path, manifest: Manifest, rehashed: dict[str, list]) -> Manifest:
    """Sign again a manifest whose files ``check_files`` verified by content under new stamps.

    Only the stamps taken while those very bytes were hashed are recorded, so a
    file changed after the check has moved its ctime again and is hashed next time.
    """
    files = {**manifest.files, **rehashed}
    updated = Manifest(
        manifest.recipe, manifest.generation, files, manifest.status_day, manifest.pages, manifest.written
    )
    _sign_into(gen_dir, updated)
    return updated


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
        """Try (without waiting) to become the one process that writes this index.

        False when another process holds the lock; ``OSError`` when the folder
        or its lock file cannot be written at all (a read-only cache folder is
        not "another memtui").
        """
        if self._lock_fd is not None:
            return True
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / LOCK_FILE, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
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
