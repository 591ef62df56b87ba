"""A memory folder ("field"): its pages and how they point at each other.

``scan`` lists every ``*.md`` page under the root, skipping ``.git/``, memtui's
own folders and every symlink (one that leaves the folder is reported).
``Field.load`` reads the pages, reusing the page cache for files whose size and
modification time have not changed, so re-opening a large field is stat-only.
"""

from __future__ import annotations

import fnmatch
import os
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from os import (
    scandir,  # a name of this module's own, so a test can stand in for it here only
)
from pathlib import Path, PurePosixPath

from memtui.errors import FieldNotFoundError
from memtui.field import page_cache, trust
from memtui.field.history import History, slug
from memtui.field.page import PageInfo, read_page
from memtui.store import locations

READ_BATCH = 500
# A page modified this close before memtui read it may be modified again within the same
# timestamp tick, leaving size and mtime unchanged; such "racy" entries are not cached.
RACY_WINDOW_NS = 1_000_000_000
_BARE_MD_PATH_RE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.md)\b")


# Names editors use for swap, backup and lock files: never pages, even when they end in .md.
SCRATCH_NAMES = ("*.swp", "*.swx", "*~", "4913", ".#*", "*.tmp", "___jb_*___")


def is_scratch_name(name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in SCRATCH_NAMES)


def is_page_name(name: str) -> bool:
    """Is a file with this name a page (a ``*.md`` that is not an editor's scratch file)?"""
    return name.endswith(".md") and not is_scratch_name(name)


def is_page_path(path: str) -> bool:
    """Would ``scan`` list this relative POSIX path (if it is a regular file)?

    The one definition of "a page" by its path, shared by the field and the index.
    """
    parts = path.split("/")
    if not all(parts) or parts[0].startswith(".") or any(part in locations.SKIPPED_DIRS for part in parts[:-1]):
        return False
    return is_page_name(parts[-1])


@dataclass(slots=True)
class ScanEntry:
    path: str
    size: int
    mtime_ns: int


@dataclass(slots=True)
class ScanProblem:
    rule: str
    path: str
    message: str


def scan(root: Path) -> tuple[list[ScanEntry], list[ScanProblem]]:
    """Every page under ``root`` (sorted), plus what was skipped and why."""
    entries: list[ScanEntry] = []
    problems: list[ScanProblem] = []
    real_root = os.path.realpath(root)
    stack = [("", os.fspath(root))]
    while stack:
        rel_dir, abs_dir = stack.pop()
        try:
            iterator = scandir(abs_dir)
        except FileNotFoundError:
            continue  # removed while scanning
        except OSError as exc:
            problems.append(ScanProblem("folder-unreadable", rel_dir or ".", f"cannot list: {exc.strerror}"))
            continue
        with iterator:
            for entry in iterator:
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                try:
                    if entry.is_symlink():
                        target = os.path.realpath(entry.path)
                        inside = target == real_root or target.startswith(real_root + os.sep)
                        if not inside:
                            problems.append(
                                ScanProblem("symlink-outside", rel, "symlink leaving the field: not followed")
                            )
                        elif entry.name.endswith(".md"):
                            problems.append(ScanProblem("symlink-skipped", rel, "symlinked page: not followed"))
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name in locations.SKIPPED_DIRS or (rel_dir == "" and entry.name.startswith(".")):
                            continue
                        stack.append((rel, entry.path))
                        continue
                    if not is_page_name(entry.name) or not entry.is_file(follow_symlinks=False):
                        continue
                    st = entry.stat(follow_symlinks=False)
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    problems.append(ScanProblem("page-unreadable", rel, f"cannot stat: {exc.strerror}"))
                    continue
                entries.append(ScanEntry(rel, st.st_size, st.st_mtime_ns))
    entries.sort(key=lambda e: e.path)
    return entries, problems


class Field:
    """The pages of one memory folder and the lookups between them.

    Not thread-safe: one thread owns a ``Field`` and applies changes to it.
    """

    def __init__(self, root: Path, *, readonly: bool = False, source: Path | None = None) -> None:
        self.root = Path(root)
        self.readonly = readonly
        self.source = source or self.root
        self.pages: dict[str, PageInfo] = {}
        self.scan_problems: list[ScanProblem] = []
        self.vanished: list[str] = []
        self.generation = 0
        self._lookup: dict[str, dict[str, str]] | None = None
        self._history = None
        self._backlinks: dict[str, list[tuple[str, int]]] | None = None
        self._read_at_ns: dict[str, int] = {}  # when each page was last read from disk
        self._cache_stale = False

    # ------------------------------------------------------------------ loading
    @classmethod
    def load(
        cls,
        root: str | os.PathLike[str],
        *,
        cache_dir: Path | None = None,
        use_cache: bool = True,
        readonly: bool = False,
        source: Path | None = None,
        progress=None,
    ) -> Field:
        """Scan the folder and read every page (unchanged pages come from the page cache)."""
        field, pending = cls.open_cached(
            root, cache_dir=cache_dir, use_cache=use_cache, readonly=readonly, source=source
        )
        total = len(pending)
        for start in range(0, total, READ_BATCH):
            batch = pending[start : start + READ_BATCH]
            field.add_pages(*field.read_entries(batch))
            if progress is not None:
                progress(min(start + READ_BATCH, total), total)
        if use_cache and (total or field._cache_stale):
            field.save_cache()
        return field

    @classmethod
    def open_cached(
        cls,
        root: str | os.PathLike[str],
        *,
        cache_dir: Path | None = None,
        use_cache: bool = True,
        readonly: bool = False,
        source: Path | None = None,
        scanned: tuple[list[ScanEntry], list[ScanProblem]] | None = None,
    ) -> tuple[Field, list[ScanEntry]]:
        """First half of a load: scan, and take every unchanged page from the cache.

        ``scanned`` is the result of a ``scan(root)`` the caller already made.

        Returns the field and the entries still to read (with ``read_entries``,
        possibly on another thread, then ``add_pages`` on the field's own thread).
        A user interface can show the list at once and fill it in as pages arrive.
        """
        path = Path(root)
        if not path.exists():
            raise FieldNotFoundError(f"no such folder: {path}", "give the path of a memory folder")
        if not path.is_dir():
            raise FieldNotFoundError(
                f"not a folder: {path}", "give a memory folder or a .memoryfield.zip file"
            )
        field = cls(path, readonly=readonly, source=source)
        if cache_dir is None:
            cache_dir = locations.default_cache_dir(path, readonly=readonly, source=source)
        field.cache_dir = cache_dir
        entries, field.scan_problems = scanned if scanned is not None else scan(path)
        cached = page_cache.read_entries(cache_dir) if use_cache else {}
        pending: list[ScanEntry] = []
        for entry in entries:
            info = page_cache.info_if_unchanged(cached.get(entry.path), entry.path, entry.size, entry.mtime_ns)
            if info is not None:
                field.pages[entry.path] = info
            else:
                pending.append(entry)
        field._cache_stale = len(cached) != len(field.pages)
        return field, pending

    def read_entries(self, entries: list[ScanEntry]) -> tuple[dict[str, PageInfo], list[str], dict[str, int]]:
        """Read and summarise pages. Touches no state, so it may run on another thread."""
        pages: dict[str, PageInfo] = {}
        vanished: list[str] = []
        read_at: dict[str, int] = {}
        for entry in entries:
            read_at[entry.path] = time.time_ns()
            info = read_page(self.root, entry.path)
            if info is None:
                vanished.append(entry.path)
            else:
                pages[entry.path] = info
        return pages, vanished, read_at

    def add_pages(self, pages: dict[str, PageInfo], vanished: list[str], read_at: dict[str, int]) -> None:
        """Second half of a load: take pages read by ``read_entries``."""
        self.pages.update(pages)
        self._read_at_ns.update(read_at)
        self.vanished.extend(vanished)
        if pages or vanished:
            self._cache_stale = True
            self._invalidate()

    cache_dir: Path

    def save_cache(self) -> None:
        """Write the page cache (best effort: the cache is disposable)."""
        if not getattr(self, "cache_dir", None):
            return
        page_cache.write(self.cache_dir, (info for info in self.pages.values() if not self._is_racy(info)))

    def _is_racy(self, info: PageInfo) -> bool:
        """Was the page modified so shortly before it was read that a same-size rewrite
        within the same timestamp tick would go unnoticed by the size+mtime test?"""
        read_at = self._read_at_ns.get(info.path)
        return read_at is not None and info.mtime_ns >= read_at - RACY_WINDOW_NS

    # ------------------------------------------------------------------ changes
    def refresh_page(self, path: str) -> str:
        """Re-read one page after a change on disk. Returns 'added', 'changed', 'removed' or 'same'."""
        before = self.pages.get(path)
        self._read_at_ns[path] = time.time_ns()
        info = read_page(self.root, path) if self._is_page_path(path) else None
        if info is None:
            if before is None:
                return "same"
            del self.pages[path]
            self._invalidate()
            return "removed"
        if before is not None and before.sha256 == info.sha256 and before.problems == info.problems:
            if before.mtime_ns != info.mtime_ns:
                self.pages[path] = info  # summaries are never mutated in place (snapshots share them)
            return "same"
        self.pages[path] = info
        self._invalidate()
        return "changed" if before is not None else "added"

    def _is_page_path(self, path: str) -> bool:
        return is_page_path(path) and not os.path.islink(os.path.join(self.root, *path.split("/")))

    def rescan(self) -> dict[str, list[str]]:
        """Bring the field in line with the disk; return the paths added, changed, removed."""
        entries, self.scan_problems = scan(self.root)
        seen = set()
        result: dict[str, list[str]] = {"added": [], "changed": [], "removed": []}
        for entry in entries:
            seen.add(entry.path)
            known = self.pages.get(entry.path)
            if known is not None and known.size == entry.size and known.mtime_ns == entry.mtime_ns:
                continue
            outcome = self.refresh_page(entry.path)
            if outcome in result:
                result[outcome].append(entry.path)
        for path in [p for p in self.pages if p not in seen]:
            del self.pages[path]
            result["removed"].append(path)
        if any(result.values()):
            self._invalidate()
        return result

    def snapshot(self) -> Field:
        """A copy sharing the (immutable) page summaries, for analysis on another thread."""
        copy = Field(self.root, readonly=self.readonly, source=self.source)
        copy.pages = dict(self.pages)
        copy.scan_problems = list(self.scan_problems)
        copy.vanished = list(self.vanished)
        copy.generation = self.generation
        copy._read_at_ns = dict(self._read_at_ns)
        if hasattr(self, "cache_dir"):
            copy.cache_dir = self.cache_dir
        return copy

    def _invalidate(self) -> None:
        self.generation += 1
        self._lookup = None
        self._history = None
        self._backlinks = None

    # ------------------------------------------------------------------ lookups
    def __len__(self) -> int:
        return len(self.pages)

    def __iter__(self) -> Iterator[PageInfo]:
        return iter(self.pages.values())

    def get(self, path: str) -> PageInfo | None:
        return self.pages.get(path)

    def _tables(self) -> dict[str, dict[str, str]]:
        if self._lookup is None:
            by_id: dict[str, str] = {}
            by_title: dict[str, str] = {}
            by_stem: dict[str, str] = {}
            by_slug: dict[str, str] = {}
            by_path: dict[str, str] = {}
            for path in sorted(self.pages):  # sorted: the first of equal titles wins, whatever the load order
                info = self.pages[path]
                by_path[path.casefold()] = path
                by_path[path[:-3].casefold()] = path
                for ident in (info.id, info.uuid):
                    if ident:
                        by_id.setdefault(ident, path)
                title = info.meta.get("title")
                if isinstance(title, str) and title.strip():
                    by_title.setdefault(title.strip().casefold(), path)
                    by_slug.setdefault(slug(title), path)
                by_stem.setdefault(info.stem.casefold(), path)
                by_slug.setdefault(slug(info.stem), path)
            self._lookup = {"id": by_id, "title": by_title, "stem": by_stem, "slug": by_slug, "path": by_path}
        return self._lookup

    def resolve(self, target: str, *, near: str | None = None) -> PageInfo | None:
        """Find the page a reference means: path, id, uuid, title, file stem or slug.

        ``near`` is the referring page's path; relative paths are tried against
        its folder first.
        """
        target = target.strip()
        if not target:
            return None
        tables = self._tables()
        cleaned = target.split("#", 1)[0].strip()
        for candidate in self._path_candidates(cleaned, near):
            hit = tables["path"].get(candidate.casefold())
            if hit:
                return self.pages[hit]
        hit = tables["id"].get(cleaned)
        if hit:
            return self.pages[hit]
        key = cleaned.casefold()
        for table in ("title", "stem"):
            hit = tables[table].get(key)
            if hit:
                return self.pages[hit]
        hit = tables["slug"].get(slug(cleaned))
        return self.pages[hit] if hit else None

    @staticmethod
    def _path_candidates(target: str, near: str | None) -> Iterable[str]:
        target = target.replace("\\", "/")
        if target.startswith("./"):
            target = target[2:]
        if near and "/" in near:
            folder = PurePosixPath(near).parent
            joined = os.path.normpath((folder / target).as_posix()).replace(os.sep, "/")
            if not joined.startswith(".."):
                yield joined
        normal = os.path.normpath(target).replace(os.sep, "/").lstrip("/")
        if not normal.startswith(".."):
            yield normal

    def resolve_source(self, source: str, *, near: str | None = None) -> PageInfo | None:
        """The page a ``sources:`` entry points at, if it is inside the field."""
        text = source.strip()
        if re.match(r"^[a-z][a-z0-9+.-]*://", text, re.IGNORECASE):
            return None  # nas://, pplx://, connector://, https:// ... are outside
        text = text.split("#", 1)[0].split("@", 1)[0].strip()
        if not text:
            return None
        return self.resolve(text, near=near)

    def trust(self, path: str) -> str:
        info = self.pages[path]
        return trust.trust_state(info.meta, path)

    def backlinks(self, path: str) -> list[tuple[str, int]]:
        """Pages linking to ``path`` by ``[[wikilink]]`` or citing it as a source."""
        if self._backlinks is None:
            table: dict[str, list[tuple[str, int]]] = {}
            for info in self.pages.values():
                for target, line in info.links:
                    hit = self.resolve(target, near=info.path)
                    if hit is not None and hit.path != info.path:
                        table.setdefault(hit.path, []).append((info.path, line))
                for source in info.sources:
                    hit = self.resolve_source(source, near=info.path)
                    if hit is not None and hit.path != info.path:
                        table.setdefault(hit.path, []).append((info.path, 0))
            self._backlinks = table
        return self._backlinks.get(path, [])

    def memory_pointers(self) -> list[tuple[str, int]]:
        """What ``MEMORY.md`` points at: wikilinks, Markdown links and bare ``*.md`` paths."""
        info = self.pages.get("MEMORY.md")
        if info is None:
            return []
        found: list[tuple[str, int]] = list(info.links)
        try:
            text = (self.root / "MEMORY.md").read_text("utf-8", "surrogateescape")
        except OSError:
            return found
        for number, line in enumerate(text.splitlines(), start=1):
            for match in re.finditer(r"\]\(([^)\s]+\.md)(?:#[^)]*)?\)", line):
                found.append((match.group(1), number))
            stripped = re.sub(r"\[[^\]]*\]\([^)]*\)", "", line)
            stripped = re.sub(r"\[\[[^\]]*\]\]", "", stripped)
            for match in _BARE_MD_PATH_RE.finditer(stripped):
                if "://" not in match.group(1):
                    found.append((match.group(1), number))
        return found

    @property
    def history(self):
        """The supersede graph over every page (built on first use)."""
        if self._history is None:
            self._history = History(self)
        return self._history


def _zip_root(p: Path) -> Path | None:
    if p.is_file() and p.name.endswith(".zip"):
        from memtui.store.archive import extract_for_reading

        return extract_for_reading(p)
    return None


def open_field(
    path: str | os.PathLike[str], *, cache_dir: Path | None = None, use_cache: bool = True, progress=None
) -> Field:
    """Open a folder, or a ``*.memoryfield.zip`` read-only through a safe extraction."""
    p = Path(path)
    root = _zip_root(p)
    if root is not None:
        return Field.load(
            root, cache_dir=cache_dir, use_cache=use_cache, readonly=True, source=p, progress=progress
        )
    return Field.load(p, cache_dir=cache_dir, use_cache=use_cache, progress=progress)


def open_field_cached(
    path: str | os.PathLike[str],
    *,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    scanned: tuple[list[ScanEntry], list[ScanProblem]] | None = None,
) -> tuple[Field, list[ScanEntry]]:
    """Like ``open_field``, but stop after the cached pages (see ``Field.open_cached``)."""
    p = Path(path)
    root = _zip_root(p)
    if root is not None:
        return Field.open_cached(root, cache_dir=cache_dir, use_cache=use_cache, readonly=True, source=p)
    return Field.open_cached(p, cache_dir=cache_dir, use_cache=use_cache, scanned=scanned)
