"""Where memtui keeps its own files for a field.

Inside a writable field everything memtui writes lives under ``FIELD/.memtui/``:

    .memtui/cache/        disposable: the page cache and the Whoosh index
    .memtui/ledger.jsonl  review decisions (never disposable)
    .memtui/blobs/        previous bytes of every page memtui overwrote
    .memtui/archive/      rejected pages (moved, never deleted)

A read-only field (a ``.memoryfield.zip``) keeps its cache in the user's cache
folder instead (``$XDG_CACHE_HOME/memtui`` or ``~/.cache/memtui``).
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
    return hashlib.sha256(os.fsencode(os.path.abspath(path))).hexdigest()[:16]


def state_dir(root: Path) -> Path:
    return root / STATE_DIR_NAME


def default_cache_dir(root: Path, *, readonly: bool = False, source: Path | None = None) -> Path:
    if readonly:
        return user_cache_dir() / "fields" / field_key(source or root) / "cache"
    return state_dir(root) / "cache"
