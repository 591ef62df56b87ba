"""A memory folder ("field"): its pages and how they point at each other.

``scan`` lists every ``*.md`` page under the root, skipping ``.git/``, memtui's
own folders and every symlink (one that leaves the folder is reported).
``Field.load`` reads the pages, reusing the page cache for files whose size and
modification time have not changed, so re-opening a large field is stat-only.
"""

from __future__ import annotations

import copy as copy_mod
import fnmatch
import operator
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from os import (
    scandir,  # a name of this module's own, so a test can stand in for it here only
)
from pathlib import Path
from typing import Any, Protocol

from memtui.errors import FieldNotFoundError
from memtui.field import page as page_mod
from memtui.field import page_cache, trust
from memtui.field.body import lines_outside_fences, mask_code_spans
from memtui.field.history import History, slug  # noqa: F401 - slug is part of this module's API
from memtui.field.lookup import LookupTables, Tables, file_tables, lookup_key
from memtui.field.page import PageInfo, clean_ref, read_page
from memtui.field.shared_parts import PartPool
from memtui.store import locations
from memtui.store.files import read_bytes, sha256_bytes
from memtui.store.gc_pause import no_cycle_collection

READ_BATCH = 500
# A page modified this close before memtui read it may be modified again within the same
# timestamp tick, leaving size and mtime unchanged; such "racy" entries are not cached.
RACY_WINDOW_NS = 1_000_000_000
_BARE_MD_PATH_RE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.md)\b")


# Names editors use for swap, backup and lock files: never pages, even when they end in .md.
SCRATCH_NAMES = ("*.swp", "*.swx", "*~", "4913", ".#*", "*.tmp", "___jb_*___")


_SCRATCH_RE = re.compile("|".join(fnmatch.translate(pattern) for pattern in SCRATCH_NAMES))


def is_scratch_name(name: str) -> bool:
    return _SCRATCH_RE.match(name) is not None  # one pattern: called for every file of every scan


def is_page_name(name: str) -> bool:
    """Is a file with this name a page (a ``*.md`` that is not an editor's scratch file)?

    Of ``SCRATCH_NAMES``, only ``.#*`` (an Emacs lock) can end in ``.md``: tested alone,
    this runs for every file of every scan."""
    return name.endswith(".md") and not name.startswith(".#")


@dataclass(frozen=True, slots=True)
class Scope:
    """Which paths under hidden (dot) folders are pages too.

    Hidden folders at the top of a field are skipped (``.git``, ``.vscode``,
    caches ...), except where a memory format keeps memory in one (Claude Code's
    ``.claude/CLAUDE.md`` and ``.claude/rules/``). ``include`` holds such paths:
    a file, or a folder ending in ``/``. The dialects decide them.
    """

    include: tuple[str, ...] = ()

    def admits_dir(self, rel: str) -> bool:
        """Is the hidden folder ``rel`` on the way to an included path?"""
        prefix = rel + "/"
        return any(item.startswith(prefix) or prefix.startswith(item) for item in self.include)

    def admits_hidden(self, rel: str) -> bool:
        """Is ``rel`` (a path under a hidden top-level folder) included?"""
        return any(
            rel == item or (item.endswith("/") and rel.startswith(item)) or _by_suffix(item, rel)
            for item in self.include
        )

    def names_page(self, rel: str) -> bool:
        """Is ``rel`` a page though its name does not end in ``.md``? Only where a dialect says so:
        a file the scope names itself (Cursor's ``.cursorrules``), or a file with the suffix of a
        ``FOLDER/**/*SUFFIX`` item under that folder (Cursor's ``.cursor/rules/**/*.mdc``). Never
        an editor's scratch file."""
        name = rel.rsplit("/", 1)[-1]
        if is_scratch_name(name):
            return False
        return any(rel == item or _by_suffix(item, rel) for item in self.include)

    @property
    def names_pages(self) -> bool:
        """Does any item make pages of files not named ``*.md`` (``names_page`` can say yes)?"""
        return any(not item.endswith("/") and not item.endswith(".md") for item in self.include)


_ANY_BELOW = "/**/*"


def _by_suffix(item: str, rel: str) -> bool:
    """Does the scope item ``FOLDER/**/*SUFFIX`` take ``rel`` (a file below FOLDER, named ``*SUFFIX``)?"""
    folder, found, suffix = item.partition(_ANY_BELOW)
    if not found or not suffix or not rel.startswith(folder + "/"):
        return False
    name = rel.rsplit("/", 1)[-1]
    return name.endswith(suffix) and len(name) > len(suffix)


PLAIN_SCOPE = Scope()


def is_page_path(path: str, scope: Scope = PLAIN_SCOPE) -> bool:
    """Would ``scan`` list this relative POSIX path (if it is a regular file)?

    The one definition of "a page" by its path, shared by the field and the index.
    """
    parts = path.split("/")
    if not all(parts) or any(part in locations.SKIPPED_DIRS for part in parts[:-1]):
        return False
    if parts[0].startswith(".") and (len(parts) == 1 or not scope.admits_hidden(path)):
        return len(parts) == 1 and scope.names_page(path)  # a root file a dialect names (.cursorrules)
    return is_page_name(parts[-1]) or scope.names_page(path)


@dataclass(slots=True)
class ScanEntry:
    path: str
    size: int
    mtime_ns: int
    # ``page.side_stamp`` of ``<stem>.json`` beside the page, if any: size and mtime, and its
    # change time, inode and device (a same-size sidecar rewrite with the old mtime still differs).
    side: tuple[int, int, int, int, int] | None = None
    # Change time, inode, device (``page.stat_ident``): what the writer cannot set back, so a
    # same-size rewrite with the old mtime restored is still seen as a change.
    ident: tuple[int, int, int] | None = None


@dataclass(slots=True)
class ScanProblem:
    rule: str
    path: str
    message: str


@dataclass(slots=True)
class ScanResult:
    """What a scan found: the pages, the problems, the other files, the hidden folders skipped."""

    entries: list[ScanEntry]
    problems: list[ScanProblem]
    files: set[str]  # every other regular file (attachments an embed may show), relative paths
    skipped_dirs: list[str]  # folders not read: hidden ones at the top, dependency folders anywhere
    folders: dict[str, list[str]]  # folder ("" the root) -> the names of its pages, sorted
    # Markdown-like files that are not ``*.md`` pages (``.markdown``, ``.mdx``, ``README.MD``):
    # how many, and the first few, so that a scan never leaves them out without a word.
    unread_markdown: tuple[int, tuple[str, ...]] = (0, ())


def scan(root: Path, scope: Scope = PLAIN_SCOPE) -> tuple[list[ScanEntry], list[ScanProblem]]:
    """Every page under ``root`` (sorted), plus what was skipped and why."""
    result = scan_field(root, scope)
    return result.entries, result.problems


_QUIET_HIDDEN = frozenset({".git", locations.STATE_DIR_NAME, locations.DREAM_DIR_NAME})
# Extensions of Markdown that are not pages here (a page is ``*.md``; ``.MD`` is counted too).
MARKDOWN_LIKE = frozenset({"md", "markdown", "mdx", "mdown", "mkd", "mkdn", "mdc"})


def scan_field(root: Path, scope: Scope = PLAIN_SCOPE) -> ScanResult:
    """Every page under ``root`` (sorted), the other files, and what was skipped and why."""
    with no_cycle_collection():  # 100,000 entries, none of them garbage
        return _scan_field(root, scope)


def _scan_field(root: Path, scope: Scope) -> ScanResult:
    entries: list[ScanEntry] = []
    problems: list[ScanProblem] = []
    files: set[str] = set()
    skipped: list[str] = []
    folders: dict[str, list[str]] = {}
    unread = 0
    unread_examples: list[str] = []
    real_root = os.path.realpath(root)
    other_pages = scope.names_pages  # (asked once: the test above runs for every file)
    stack = [("", os.fspath(root), False)]
    while stack:
        rel_dir, abs_dir, hidden = stack.pop()
        try:
            iterator = scandir(abs_dir)
        except FileNotFoundError:
            continue  # removed while scanning
        except OSError as exc:
            problems.append(ScanProblem("folder-unreadable", rel_dir or ".", f"cannot list: {exc.strerror}"))
            continue
        prefix = f"{rel_dir}/" if rel_dir else ""
        pages: list[os.DirEntry[str]] = []
        others: dict[str, os.DirEntry[str]] = {}
        with iterator:
            for entry in iterator:
                name = entry.name
                try:
                    # Regular files first (not through a symlink): nearly every entry, so the
                    # fewest tests for them (``DirEntry`` answers from the listing, no stat).
                    if entry.is_file(follow_symlinks=False):
                        if is_page_name(name) and (not hidden or scope.admits_hidden(prefix + name)):
                            pages.append(entry)
                        elif other_pages and (hidden or not rel_dir) and scope.names_page(prefix + name):
                            pages.append(entry)  # a page by a dialect's word: .cursorrules, .cursor/rules/*.mdc
                        else:
                            others[name] = entry  # a sidecar of a page beside it, or an attachment
                            if not hidden:
                                files.add(prefix + name)
                                if name.rpartition(".")[2].lower() in MARKDOWN_LIKE:
                                    unread += 1
                                    if len(unread_examples) < 3:
                                        unread_examples.append(prefix + name)
                        continue
                    rel = prefix + name
                    if entry.is_symlink():
                        target = os.path.realpath(entry.path)
                        inside = target == real_root or target.startswith(real_root + os.sep)
                        if not inside:
                            problems.append(
                                ScanProblem("symlink-outside", rel, "symlink leaving the field: not followed")
                            )
                        elif name.endswith(".md"):
                            problems.append(ScanProblem("symlink-skipped", rel, "symlinked page: not followed"))
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        if name in locations.SKIPPED_DIRS:
                            if name not in _QUIET_HIDDEN:  # node_modules at any depth is said too
                                skipped.append(rel)
                            continue
                        if rel_dir == "" and name.startswith("."):
                            if scope.admits_dir(rel):
                                stack.append((rel, entry.path, True))
                            elif name not in _QUIET_HIDDEN:
                                skipped.append(name)
                            continue
                        stack.append((rel, entry.path, hidden))
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    problems.append(ScanProblem("page-unreadable", prefix + name, f"cannot stat: {exc.strerror}"))
                    continue
        names: list[str] = []
        for entry in pages:
            name = entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            except OSError as exc:
                problems.append(ScanProblem("page-unreadable", prefix + name, f"cannot stat: {exc.strerror}"))
                continue
            side = None
            companion = others.get(name[:-3] + ".json") if others else None
            if companion is not None:
                try:
                    side = page_mod.side_stamp(companion.stat(follow_symlinks=False))
                except OSError:
                    side = None
            entries.append(ScanEntry(prefix + name, st.st_size, st.st_mtime_ns, side, page_mod.stat_ident(st)))
            names.append(name)
        if names:
            names.sort()
            folders[rel_dir] = names
    entries.sort(key=_entry_path)
    skipped.sort()
    unread_examples.sort()
    return ScanResult(
        entries, problems, files, skipped, dict(sorted(folders.items())), (unread, tuple(unread_examples))
    )


_entry_path = operator.attrgetter("path")


def _unkeyed(info: PageInfo) -> PageInfo:
    """A racy page's summary as the cache keeps it: without its ident, so it never passes for
    unchanged (the page is read again at the next load) while the cache still lists it. Its
    sidecar stamp loses its ident too (size and mtime only never match a scan's stamp): a
    sidecar rewritten within the same tick keeps its change time, and re-hashing the page
    (``Field._rehashed``) says nothing about the sidecar."""
    kept = copy_mod.copy(info)
    kept.ident = None
    if kept.side is not None and len(kept.side) > 3:
        kept.side = kept.side[:3]
    return kept


def _changed_ns(info: PageInfo) -> int:
    """When the page last changed, as far as the writer cannot hide it: the later of its change
    time and its mtime (the mtime alone when it was not read from disk), and of its sidecar's
    (a sidecar rewritten just before the page was read is as racy as the page itself)."""
    changed = max(info.ident[0], info.mtime_ns) if info.ident is not None else info.mtime_ns
    side = info.side
    if side is not None and len(side) == 6 and side[0]:
        changed = max(changed, side[2], side[3])  # [path, size, mtime_ns, ctime_ns, inode, device]
    return changed


class PageReader(Protocol):
    """How the pages of a field are read: memtui's own format, or the dialects a field holds.

    ``signature`` names the reading (a cached page read differently is read
    again); ``scope`` says which hidden paths are pages; ``link_prefixes`` are
    path prefixes that mean the field root in links (an Obsidian vault whose root
    is above the field writes ``[[Vault Folder/Notes/x]]``).
    """

    signature: str
    scope: Scope
    link_prefixes: tuple[str, ...]

    def read(self, root: Path, path: str) -> PageInfo | None:
        """Read one page from disk (``None`` if it vanished)."""

    def from_bytes(self, root: Path, path: str, data: bytes, mtime_ns: int) -> PageInfo:
        """Read a page from bytes already in hand (a proposed version, what the index read)."""

    def checks(self, field: FieldView) -> list[Any]:
        """Findings only the page's format knows how to make (``checks.Finding``, which this module
        cannot name: ``checks`` imports it)."""


class FieldView(Protocol):
    """What a reader's ``checks`` may ask of a field: a ``Field``, or a view of it holding one page
    (``checks.check_page``)."""

    @property
    def root(self) -> Path: ...

    @property
    def content_root(self) -> Path: ...

    @property
    def pages(self) -> Mapping[str, PageInfo]: ...

    @property
    def reader(self) -> PageReader: ...

    def trust(self, path: str) -> str:
        """The page's trust state (``field.trust``), its ledger approvals counted."""
        ...


class PlainReader:
    """Every page in memtui's own format (the reading when no dialect is known)."""

    signature = "memtui"
    scope = PLAIN_SCOPE
    link_prefixes: tuple[str, ...] = ()

    def read(self, root: Path, path: str) -> PageInfo | None:
        return read_page(root, path)

    def from_bytes(self, root: Path, path: str, data: bytes, mtime_ns: int) -> PageInfo:
        return page_mod.info_from_bytes(path, data, len(data), mtime_ns)

    def checks(self, field: FieldView) -> list[Any]:
        return []


PLAIN_READER = PlainReader()


def side_matches(info: PageInfo, side: tuple[int, int, int, int, int] | None) -> bool:
    """Does the sidecar a page was read with still have this stamp (``page.side_stamp``: size,
    mtime, change time, inode, device), or still not exist?"""
    return sidecar_unchanged(info.side, side)


def sidecar_unchanged(read_with: list[Any] | None, side: tuple[int, int, int, int, int] | None) -> bool:
    """``side_matches`` for the sidecar a page was read with (``PageInfo.side``). A stamp of size
    and mtime alone (an older cache, a racy reading) never matches a sidecar that exists: both
    are the writer's to set back."""
    if read_with is None:
        return True  # the page's format has no sidecar
    recorded = tuple(read_with[1:]) if read_with[0] else None
    return recorded == (tuple(side) if side is not None else None)


@dataclass(frozen=True, slots=True)
class PageRead:
    """A page as ``Field.read_page`` read it (None: no page there now), to install later."""

    path: str
    info: PageInfo | None
    read_at_ns: int  # wall clock, compared with the file's mtime (``_is_racy``)
    order: int  # monotonic: which of two reads of a page is the newer


class Field:
    """The pages of one memory folder and the lookups between them.

    Not thread-safe: one thread owns a ``Field`` and applies changes to it.
    """

    def __init__(
        self,
        root: Path,
        *,
        readonly: bool = False,
        source: Path | None = None,
        reader: PageReader | None = None,
    ) -> None:
        self.root = Path(root)
        self.readonly = readonly
        self.source = source or self.root
        self.reader: PageReader = reader or PLAIN_READER
        self.content_root = self.root  # where files other than pages are (an overlay's is its field's)
        self.page_root = self.root  # where the pages' bytes are (an overlay's unchanged ones: its field's)
        self.page_overrides: dict[str, bytes] = {}  # bytes of pages not on disk (an overlay's proposed ones)
        self.pages: dict[str, PageInfo] = {}
        self.files: set[str] = set()  # other files (attachments), for embeds
        self.skipped_dirs: list[str] = []
        self.scan_problems: list[ScanProblem] = []
        self.vanished: list[str] = []
        # Review decisions recorded outside the pages: path -> (sha256 approved, who).
        self.approvals: dict[str, tuple[str, str]] = {}
        self.generation = 0
        self._lookup: Tables | None = None
        self._history: History | None = None
        self._backlinks: dict[str, list[tuple[str, int]]] | None = None
        self._trusts: dict[str, tuple[PageInfo, bool, str]] | None = None
        # When a page was last read from disk, kept only where it was modified within
        # RACY_WINDOW_NS of that (``_is_racy``): 100,000 readings held 8 MB.
        self._read_at_ns: dict[str, int] = {}
        self._read_order: dict[str, int] = {}  # of the reads ``take_read`` installed (monotonic)
        self._cache_stale = False
        # Pages whose summary came from the page cache, not from bytes read in this run: a ledger
        # approval of one holds only once its bytes are read and hashed now (``_approval_holds``).
        self._from_cache: set[str] = set()
        self._approval_reads: dict[str, tuple[PageInfo, str]] = {}  # path -> (summary, sha256 read for it)
        self.cache_dir: Path | None = None  # where the page cache is (None: not cached)

    @property
    def scope(self) -> Scope:
        return self.reader.scope

    # ------------------------------------------------------------------ loading
    @staticmethod
    def check_folder(path: Path) -> None:
        """Refuse what is not a folder, with a hint."""
        if not path.exists():
            raise FieldNotFoundError(f"no such folder: {path}", "give the path of a memory folder")
        if not path.is_dir():
            if path.suffix.lower() in (".md", ".mdc", ".markdown"):
                where = path.parent.as_posix() or "."
                raise FieldNotFoundError(
                    f"not a folder: {path} is one page", f"open the folder it is in: memtui {where}"
                )
            raise FieldNotFoundError(f"not a folder: {path}", "give a memory folder or a .memoryfield.zip file")

    @classmethod
    def load(
        cls,
        root: str | os.PathLike[str],
        *,
        cache_dir: Path | None = None,
        use_cache: bool = True,
        readonly: bool = False,
        source: Path | None = None,
        progress: Callable[[int, int], object] | None = None,
        reader: PageReader | None = None,
        scanned: ScanResult | None = None,
    ) -> Field:
        """Scan the folder and read every page (unchanged pages come from the page cache)."""
        field, pending = cls.open_cached(
            root,
            cache_dir=cache_dir,
            use_cache=use_cache,
            readonly=readonly,
            source=source,
            reader=reader,
            scanned=scanned,
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
        scanned: ScanResult | None = None,
        reader: PageReader | None = None,
    ) -> tuple[Field, list[ScanEntry]]:
        """First half of a load: scan, and take every unchanged page from the cache.

        ``scanned`` is the result of a ``scan_field(root, scope)`` the caller already made.

        Returns the field and the entries still to read (with ``read_entries``,
        possibly on another thread, then ``add_pages`` on the field's own thread).
        A user interface can show the list at once and fill it in as pages arrive.
        """
        path = Path(root)
        cls.check_folder(path)
        field = cls(path, readonly=readonly, source=source, reader=reader)
        if cache_dir is None:
            cache_dir = locations.default_cache_dir(path, readonly=readonly, source=source)
        field.cache_dir = cache_dir
        result = scanned if scanned is not None else scan_field(path, field.scope)
        field.scan_problems = result.problems
        field.files = result.files
        field.skipped_dirs = result.skipped_dirs
        cached = page_cache.read_infos(cache_dir, signature=field.reader.signature) if use_cache else {}
        pending: list[ScanEntry] = []
        rehashed = False
        for entry in result.entries:
            held = cached.get(entry.path)
            info = page_cache.info_if_unchanged(held, entry.path, entry.size, entry.mtime_ns, entry.ident)
            if info is None and held is not None and held.ident is None:
                info = field._rehashed(held, entry)
                rehashed = rehashed or info is not None  # the cache is written again with its ident
            if info is not None and side_matches(info, entry.side):
                field.pages[entry.path] = info
                field._from_cache.add(entry.path)
            else:
                pending.append(entry)
        field._cache_stale = rehashed or len(cached) != len(field.pages)
        return field, pending

    def _rehashed(self, info: PageInfo, entry: ScanEntry) -> PageInfo | None:
        """A summary cached without its ident (the page had just changed when it was read: racy)
        taken again only if the bytes on disk now hash to the same sha256, as git re-hashes a
        racy entry: a same-tick rewrite keeps every stat field, not the hash. None: read it."""
        if not info.sha256 or info.path != entry.path or info.size != entry.size or info.mtime_ns != entry.mtime_ns:
            return None
        read_at = time.time_ns()
        try:
            found = read_bytes(os.path.join(self.page_root, *entry.path.split("/")), max_bytes=page_mod.MAX_PARSE_BYTES)
        except OSError:
            return None
        if found is None:
            return None
        data, st = found
        if st.st_size != info.size or st.st_mtime_ns != info.mtime_ns or sha256_bytes(data) != info.sha256:
            return None
        kept = copy_mod.copy(info)
        kept.ident = page_mod.stat_ident(st)
        self._note_read(entry.path, kept, read_at)
        return kept

    def read_entries(self, entries: list[ScanEntry]) -> tuple[dict[str, PageInfo], list[str], dict[str, int]]:
        """Read and summarise pages. Touches no state, so it may run on another thread."""
        pages: dict[str, PageInfo] = {}
        vanished: list[str] = []
        read_at: dict[str, int] = {}
        pool = PartPool()
        for entry in entries:
            read_at[entry.path] = time.time_ns()
            info = self.reader.read(self.root, entry.path)
            if info is None:
                vanished.append(entry.path)
            else:
                pages[entry.path] = pool.share(info)
        return pages, vanished, read_at

    def add_pages(self, pages: dict[str, PageInfo], vanished: list[str], read_at: dict[str, int]) -> None:
        """Second half of a load: take pages read by ``read_entries``."""
        self.pages.update(pages)
        self._from_cache.difference_update(pages)
        for path, info in pages.items():
            self._note_read(path, info, read_at.get(path))
        self.vanished.extend(vanished)
        if pages or vanished:
            self._cache_stale = True
            self._invalidate()

    @property
    def cache_stale(self) -> bool:
        """Does the page cache on disk hold other pages than this field (``save_cache`` would change it)?"""
        return self._cache_stale

    def save_cache(self) -> None:
        """Write the page cache (best effort: the cache is disposable)."""
        if self.cache_dir is None:
            return
        page_cache.write(
            self.cache_dir,
            (_unkeyed(info) if self._is_racy(info) else info for info in self.pages.values()),
            signature=self.reader.signature,
        )

    def _note_read(self, path: str, info: PageInfo | None, read_at_ns: int | None) -> None:
        """Remember when ``path`` was read, if ``_is_racy`` will need it (else forget an older reading)."""
        if info is not None and read_at_ns is not None and _changed_ns(info) >= read_at_ns - RACY_WINDOW_NS:
            self._read_at_ns[path] = read_at_ns
        else:
            self._read_at_ns.pop(path, None)

    def _is_racy(self, info: PageInfo) -> bool:
        """Was the page modified so shortly before it was read that a same-size rewrite
        within the same timestamp tick would go unnoticed by the stat test? Measured on the change
        time (``_changed_ns``): the mtime is the writer's to set back."""
        read_at = self._read_at_ns.get(info.path)
        return read_at is not None and _changed_ns(info) >= read_at - RACY_WINDOW_NS

    # ------------------------------------------------------------------ changes
    def refresh_page(self, path: str) -> str:
        """Re-read one page after a change on disk (of the page, or of its sidecar).

        Returns 'added', 'changed', 'removed' or 'same'.
        """
        return self.take_read(self.read_page(path))

    def read_page(self, path: str) -> PageRead:
        """The first half of ``refresh_page``: read the page from disk, change nothing here (any
        thread may call it: at 100,000 pages an agent writing 50 pages a second had the app's UI
        thread read pages for 1.5 s of every 10). ``take_read`` installs what it read."""
        if path.endswith(".json"):
            page = path[:-5] + ".md"
            if page in self.pages or self._is_page_path(page):
                path = page
        read_at, order = time.time_ns(), time.monotonic_ns()
        info = self.reader.read(self.root, path) if self._is_page_path(path) else None
        return PageRead(path, info, read_at, order)

    def take_read(self, read: PageRead) -> str:
        """The second half of ``refresh_page``: install a page read by ``read_page``. A read older
        than the one this field has of that page changes nothing (it returns 'same')."""
        path, info = read.path, read.info
        if self._read_order.get(path, 0) > read.order:
            return "same"  # read again since (memtui's own write): that reading stays
        before = self.pages.get(path)
        self._note_read(path, info, read.read_at_ns)
        self._read_order[path] = read.order
        self._from_cache.discard(path)
        if info is None:
            if before is None:
                return "same"
            del self.pages[path]
            self._invalidate()
            return "removed"
        PartPool().share(info)  # held as every other summary is (empty lists as ())
        if (
            before is not None
            and before.sha256 == info.sha256
            and tuple(before.problems) == tuple(info.problems)  # a summary from elsewhere may hold a list
            and before.norm == info.norm
        ):
            if before.mtime_ns != info.mtime_ns or before.side != info.side or before.ident != info.ident:
                self.pages[path] = info  # summaries are never mutated in place (snapshots share them)
            return "same"
        self.pages[path] = info
        self._invalidate()
        return "changed" if before is not None else "added"

    def _is_page_path(self, path: str) -> bool:
        return is_page_path(path, self.scope) and not os.path.islink(os.path.join(self.root, *path.split("/")))

    def rescan(self) -> dict[str, list[str]]:
        """Bring the field in line with the disk; return the paths added, changed, removed."""
        result_scan = scan_field(self.root, self.scope)
        self.scan_problems = result_scan.problems
        if result_scan.files != self.files:
            self.files = result_scan.files
            self._invalidate()
        self.skipped_dirs = result_scan.skipped_dirs
        seen = set()
        result: dict[str, list[str]] = {"added": [], "changed": [], "removed": []}
        for entry in result_scan.entries:
            seen.add(entry.path)
            known = self.pages.get(entry.path)
            if (
                known is not None
                and known.size == entry.size
                and known.mtime_ns == entry.mtime_ns
                and entry.ident is not None
                and known.ident == entry.ident
                and side_matches(known, entry.side)
            ):
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
        copy = Field(self.root, readonly=self.readonly, source=self.source, reader=self.reader)
        copy.content_root = self.content_root
        copy.page_root = self.page_root
        copy.page_overrides = dict(self.page_overrides)
        copy.pages = dict(self.pages)
        copy.files = set(self.files)
        copy.skipped_dirs = list(self.skipped_dirs)
        copy.approvals = dict(self.approvals)
        copy.scan_problems = list(self.scan_problems)
        copy.vanished = list(self.vanished)
        copy.generation = self.generation
        copy._read_at_ns = dict(self._read_at_ns)
        copy._read_order = dict(self._read_order)
        copy._from_cache = set(self._from_cache)
        copy._approval_reads = self._approval_reads  # shared: an entry holds for the summary it names
        copy.cache_dir = self.cache_dir
        return copy

    def release(self) -> None:
        """Drop what this snapshot built (history, lookups, claims): the history refers back
        to the field, a cycle only the cycle collector would otherwise free."""
        self._lookup = None
        self._history = None
        self._backlinks = None

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

    def page_bytes(self, path: str) -> bytes | None:
        """The bytes of a page as this field holds it now (None: gone or unreadable); never
        through a symlink. An overlay answers its proposed versions from memory."""
        data = self.page_overrides.get(path)
        if data is not None:
            return data
        try:
            result = read_bytes(os.path.join(self.page_root, *path.split("/")))
        except OSError:
            return None
        return result[0] if result is not None else None

    def get(self, path: str) -> PageInfo | None:
        return self.pages.get(path)

    def _tables(self) -> Tables:
        """Lookup tables, keys compared with ``lookup_key`` (NFC, case-folded), made from every
        page (``LookupTables.of``) unless an analysis installed its own (``adopt_lookup``).

        Names that several pages share (a title, a file stem) keep every page, so the one
        closest to the linking page can win.
        """
        if self._lookup is None:
            self._lookup = {**LookupTables.of(self.pages).tables, **file_tables(self.files)}
        return self._lookup

    def has_lookup(self, tables: Tables) -> bool:
        """Are ``tables`` (exactly these) this field's lookup tables?"""
        return self._lookup is not None and self._lookup is tables

    def adopt_lookup(self, tables: Tables) -> None:
        """Take lookup tables kept up to date elsewhere for exactly these pages (``CheckMemo``)."""
        self._lookup = tables

    def resolve(self, target: str, *, near: str | None = None) -> PageInfo | None:
        """Find the page a reference means: path, id, file stem, title, then alias (a file's own
        name outranks what a page says of itself: an agent's ``aliases: [Budget]`` or ``title:
        Budget`` never takes ``[[Budget]]`` from ``Budget.md``; ``name_claims`` reports the clash).

        Names are compared after Unicode normalisation (NFC) and case folding,
        never after a lossy slug. ``near`` is the referring page's path: relative
        paths are tried against its folder first, and when a name belongs to
        several pages the closest wins (same folder, then same top-level folder).
        ``[[Page#Heading]]``, ``[[Page|label]]`` and ``[[Page#^block]]`` name ``Page``;
        ``[[#Heading]]`` is the referring page itself.
        """
        cleaned = clean_ref(target).split("#", 1)[0].strip()
        if not cleaned:
            return self.pages.get(near) if near and "#" in target else None
        tables = self._tables()
        for candidate in self._path_candidates(cleaned, near):
            hit = tables["path"].get(lookup_key(candidate))
            if hit:
                return self.pages[hit]
        hit = tables["id"].get(cleaned) or tables["id_folded"].get(lookup_key(cleaned))
        if hit:
            return self.pages[hit]
        key = lookup_key(cleaned)
        # A file's own name first: a title is what a page says of itself, as an alias is.
        found = self._closest(tables["stem"].get(key.removesuffix(".md")), near) if "/" not in cleaned else None
        if found is None:
            found = self._closest(tables["title"].get(key), near)
        if found is None and "/" in cleaned:
            # A partial path ("Sub/Note") names a page whose path ends with it.
            tail = key.removesuffix(".md")
            stems = tables["stem"].get(tail.rsplit("/", 1)[-1]) or []
            found = self._closest([p for p in stems if lookup_key(p)[:-3].endswith("/" + tail)], near)
        if found is None:
            # Last: a name a page gives itself (aliases:) never outranks a file's own name.
            found = self._closest(tables["alias"].get(key), near)
        return self.pages[found] if found else None

    def name_claims(self, target: str) -> dict[str, str]:
        """Every page a link name ``target`` may mean, and how it claims it (``file name``,
        ``title``, ``alias``, ``id``): more than one page is a finding (``link-ambiguous``),
        so that no page takes a link from another unseen. Paths and partial paths are not names."""
        cleaned = clean_ref(target).split("#", 1)[0].strip()
        if not cleaned or "/" in cleaned:
            return {}
        tables = self._tables()
        key = lookup_key(cleaned)
        out: dict[str, str] = {}
        for table, how, name in (
            ("stem", "file name", key.removesuffix(".md")),
            ("title", "title", key),
            ("alias", "alias", key),
        ):
            for path in tables[table].get(name) or ():
                out.setdefault(path, how)
        for table, name in (("id", cleaned), ("id_folded", key)):
            hit = tables[table].get(name)
            if hit:
                out.setdefault(hit, "id")
        return out

    def reference_keys(self, target: str, *, near: str | None = None) -> frozenset[tuple[str, str]]:
        """Every ``(table, key)`` that ``resolve(target, near=near)`` may look up (more, never fewer),
        as ``table_entries`` names a page's: a page whose entries share none is never what the
        reference means. ``("self", near)`` stands for ``[[#Heading]]``. Depends on the reference
        and the reading alone, not on the pages, so it can be kept while pages change."""
        cleaned = clean_ref(target).split("#", 1)[0].strip()
        if not cleaned:
            return frozenset({("self", near)}) if near and "#" in target else frozenset()
        keys = {("path", lookup_key(candidate)) for candidate in self._path_candidates(cleaned, near)}
        key = lookup_key(cleaned)
        keys.update({("id", cleaned), ("id_folded", key), ("title", key), ("alias", key)})
        if "/" not in cleaned:
            keys.add(("stem", key.removesuffix(".md")))
        else:
            keys.add(("stem", key.removesuffix(".md").rsplit("/", 1)[-1]))
        return frozenset(keys)

    def resolve_file(self, target: str, *, near: str | None = None) -> str | None:
        """The path of the page or other file an embed (``![[file.png]]``) shows, or None."""
        cleaned = clean_ref(target).split("#", 1)[0].strip()
        if not cleaned:
            return None
        page = self.resolve(cleaned, near=near)
        if page is not None:
            return page.path
        tables = self._tables()
        for candidate in self._path_candidates(cleaned, near):
            hit: str | None = tables["file"].get(lookup_key(candidate))
            if hit:
                return hit
        if "/" not in cleaned:
            return self._closest(tables["file_name"].get(lookup_key(cleaned)), near)
        return None

    @staticmethod
    def _closest(paths: Sequence[str] | None, near: str | None) -> str | None:
        if not paths:
            return None
        if len(paths) == 1 or not near:
            return paths[0]
        folder = near.rsplit("/", 1)[0] if "/" in near else ""
        for path in paths:
            if (path.rsplit("/", 1)[0] if "/" in path else "") == folder:
                return path
        top = near.split("/", 1)[0] if "/" in near else ""
        for path in paths:
            if top and path.startswith(top + "/"):
                return path
        return paths[0]

    def _path_candidates(self, target: str, near: str | None) -> Iterable[str]:
        # A backslash is a Windows folder separator, or (rarely) part of a POSIX file name.
        for form in (target, target.replace("\\", "/")) if "\\" in target else (target,):
            yield from self._path_forms(form, near)

    def _path_forms(self, target: str, near: str | None) -> Iterable[str]:
        if target.startswith("./"):
            target = target[2:]
        if near and "/" in near:
            # PurePosixPath(near).parent / target, in strings (this runs for every link of every
            # page): an absolute target stands alone, as in a join.
            joined = target if target.startswith("/") else near.rsplit("/", 1)[0] + "/" + target
            joined = os.path.normpath(joined).replace(os.sep, "/")
            if not joined.startswith(".."):
                yield joined
        normal = os.path.normpath(target).replace(os.sep, "/").lstrip("/")
        if not normal.startswith(".."):
            yield normal
            folded = lookup_key(normal)
            for prefix in self.reader.link_prefixes:
                if folded.startswith(lookup_key(prefix)):
                    yield normal[len(prefix) :].lstrip("/")

    def resolve_source(self, source: str, *, near: str | None = None) -> PageInfo | None:
        """The page a ``sources:`` entry points at, if it is inside the field."""
        text = clean_ref(source)
        if re.match(r"^[a-z][a-z0-9+.-]*://", text, re.IGNORECASE):
            return None  # nas://, pplx://, connector://, https:// ... are outside
        text = text.split("#", 1)[0].split("@", 1)[0].strip()
        if not text:
            return None
        return self.resolve(text, near=near)

    def approved(self, path: str) -> str:
        """Who approved exactly the bytes this page has now, in memtui's ledger ('' if nobody)."""
        info = self.pages.get(path)
        record = self.approvals.get(path)
        if info is None or record is None or not self._approval_holds(path, info, record[0]):
            return ""
        return record[1] or "a reviewer"

    def _approval_holds(self, path: str, info: PageInfo, approved_sha: str) -> bool:
        """Does the approval of ``approved_sha`` hold for ``info``? Only for the hash of bytes read in
        this run: a summary from the page cache is keyed on the file's stat, and an approval shown
        for bytes nobody approved is the one lie a review tool must not tell, so such a page's
        bytes are read and hashed once (per summary) before its approval counts."""
        if not approved_sha or approved_sha != info.sha256:
            return False
        if path not in self._from_cache:
            return True  # this summary was made from bytes read in this run
        held = self._approval_reads.get(path)
        if held is None or held[0] is not info:
            held = (info, self._sha256_now(path))
            self._approval_reads[path] = held
        return held[1] == approved_sha

    def _sha256_now(self, path: str) -> str:
        """The hash of the page's bytes as they are now ('' when they cannot be read whole)."""
        data = self.page_overrides.get(path)
        if data is None:
            try:
                found = read_bytes(os.path.join(self.page_root, *path.split("/")), max_bytes=page_mod.MAX_PARSE_BYTES)
            except OSError:
                return ""
            if found is None:
                return ""
            data = found[0]
        return sha256_bytes(data)

    def trust(self, path: str) -> str:
        info = self.pages[path]
        record = self.approvals.get(path)
        approved = record is not None and self._approval_holds(path, info, record[0])  # bool(self.approved(path))
        kept = self._trusts
        if kept is not None:
            held = kept.get(path)
            if held is not None and held[0] is info and held[1] is approved:
                return held[2]
        state = trust.trust_of(info, approved=approved)
        if kept is not None:
            kept[path] = (info, approved, state)
        return state

    def keep_trusts(self, table: dict[str, tuple[PageInfo, bool, str]]) -> None:
        """Keep each page's trust state in ``table`` (shared by the snapshots ``CheckMemo`` analyses:
        an entry holds for the page version and review verdict it was found for)."""
        self._trusts = table

    def adopt_history(self, history: History) -> None:
        """Take a history made elsewhere for exactly these pages (``CheckMemo``)."""
        self._history = history

    def adopt_backlinks(self, table: dict[str, list[tuple[str, int]]]) -> None:
        """Take a backlink table built elsewhere from this field's pages (``CheckMemo``)."""
        self._backlinks = table

    def outgoing(self, info: PageInfo) -> list[tuple[str, str, int, PageInfo | None]]:
        """A page's references and the page each leads to (or None), in order:
        ``("link" | "embed" | "source", target, line, page)`` (a source's line is 0)."""
        near = info.path
        out = [("link", target, line, self.resolve(target, near=near)) for target, line in info.links]
        out += [("embed", target, line, self.resolve(target, near=near)) for target, line in info.embeds]
        out += [("source", source, 0, self.resolve_source(source, near=near)) for source in info.sources]
        return out

    @staticmethod
    def backlinks_given(
        info: PageInfo, outgoing: Iterable[tuple[str, str, int, PageInfo | None]]
    ) -> list[tuple[str, int]]:
        """(page, line) of each of ``outgoing`` (``Field.outgoing(info)``) that leads to another page."""
        return [(hit.path, line) for _, _, line, hit in outgoing if hit is not None and hit.path != info.path]

    def backlinks(self, path: str) -> list[tuple[str, int]]:
        """Pages linking to ``path`` by ``[[wikilink]]`` or an embed, or citing it as a source."""
        if self._backlinks is None:
            table: dict[str, list[tuple[str, int]]] = {}
            for info in self.pages.values():
                for target, line in self.backlinks_given(info, self.outgoing(info)):
                    table.setdefault(target, []).append((info.path, line))
            for entries in table.values():
                entries.sort()  # by page and line, as CheckMemo keeps them
            self._backlinks = table
        return self._backlinks.get(path, [])

    def memory_pointers(self, index: str = "MEMORY.md", *, bare_paths: bool = True) -> list[tuple[str, int]]:
        """What a routing index (``MEMORY.md``) points at: wikilinks, Markdown links and (in
        memtui's format, where an index holds nothing else) bare ``*.md`` paths.

        Links inside code spans and fenced code blocks are examples, not pointers.
        """
        info = self.pages.get(index)
        if info is None:
            return []
        found: list[tuple[str, int]] = list(info.links)
        try:
            text = (self.root / index).read_text("utf-8", "surrogateescape")
        except OSError:
            return found
        for number, line in lines_outside_fences(text):
            line = mask_code_spans(line) if "`" in line else line
            for match in re.finditer(r"\]\(([^)\s]+\.md)(?:#[^)]*)?\)", line):
                found.append((match.group(1), number))
            if not bare_paths:
                continue
            stripped = re.sub(r"\[[^\]]*\]\([^)]*\)", "", line)
            stripped = re.sub(r"\[\[[^\]]*\]\]", "", stripped)
            for match in _BARE_MD_PATH_RE.finditer(stripped):
                if "://" not in match.group(1):
                    found.append((match.group(1), number))
        return found

    @property
    def history(self) -> History:
        """The supersede graph over every page (built on first use)."""
        if self._history is None:
            self._history = History(self)
        return self._history


def zip_root(p: Path) -> Path | None:
    """The safe extraction of a ``*.memoryfield.zip`` (None for anything else)."""
    if p.is_file() and p.name.endswith(".zip"):
        from memtui.store.archive import extract_for_reading

        return extract_for_reading(p)
    return None
