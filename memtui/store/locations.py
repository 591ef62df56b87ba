"""Where memtui keeps its own files for a field.

Records that belong with the memory live inside the field, under ``FIELD/.memtui/``:

    .memtui/ledger.jsonl  review decisions (never disposable)
    .memtui/blobs/        previous bytes of every page memtui overwrote
    .memtui/archive/      rejected and retired pages (moved, never deleted)
    .memtui/journal/      an apply in progress (crash recovery)

Caches (the page cache and the Whoosh index) live in the user's cache folder
(``$XDG_CACHE_HOME/memtui`` or ``~/.cache/memtui``), one folder per field. They
are disposable, and keeping them out of the field means an agent that writes to
the field cannot plant a forged cache that makes memtui show something other than
what is on disk.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

STATE_DIR_NAME = ".memtui"
DREAM_DIR_NAME = ".dream"
# Folders under a field that are never pages.
SKIPPED_DIRS = frozenset({".git", STATE_DIR_NAME, DREAM_DIR_NAME, ".obsidian", ".trash", "node_modules"})
SESSIONS_DIR = "sessions"


def user_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "memtui"


def user_config_dir() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "memtui"


def field_key(path: Path) -> str:
    """A short stable name for a field, used for per-field folders in the user cache."""
    return hashlib.sha256(os.fsencode(os.path.realpath(path))).hexdigest()[:16]


def state_dir(root: Path) -> Path:
    return root / STATE_DIR_NAME


def default_cache_dir(root: Path, *, readonly: bool = False, source: Path | None = None) -> Path:
    """The cache folder of a field (for a zip, ``source`` is the archive)."""
    return user_cache_dir() / "fields" / field_key(source or root) / "cache"
