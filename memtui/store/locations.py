"""Where memtui keeps its own files for a field.

Records that belong with the memory live inside the field, under ``FIELD/.memtui/``:

    .memtui/ledger.jsonl  review decisions (never disposable)
    .memtui/blobs/        previous bytes of every page memtui overwrote
    .memtui/archive/      rejected and retired pages (moved, never deleted)
    .memtui/journal/      an apply in progress (crash recovery)

Caches (the page cache and the Whoosh index) live in the user's cache folder
(``$XDG_CACHE_HOME/memtui`` when that is absolute, else ``~/.cache/memtui``), one folder per field. They
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


def _xdg_base(variable: str, fallback: str) -> Path:
    """``$variable`` when it is an absolute path, else ``~/<fallback>``.

    The XDG Base Directory spec says a relative value is invalid and must be
    ignored. Honouring one would resolve it against the current folder: run
    ``memtui check`` inside a field with ``XDG_CONFIG_HOME=cfg`` and the signing
    key (and the caches memtui trusts because they are signed with it) would be
    written into the field, where the agent under audit can read the key and
    forge what it signs.
    """
    value = os.environ.get(variable, "")
    if value and os.path.isabs(value):
        return Path(value)
    return Path(_home(), fallback)


def _home() -> str:
    """The user's home folder; a relative ``$HOME`` (same hazard) gives way to the password database."""
    home = os.path.expanduser("~")
    if os.path.isabs(home):
        return home
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError, OSError):  # pragma: no cover - no such user or not POSIX
        return os.path.abspath(os.sep)


def user_cache_dir() -> Path:
    """memtui's cache folder: ``$XDG_CACHE_HOME/memtui`` (absolute only) or ``~/.cache/memtui``."""
    return _xdg_base("XDG_CACHE_HOME", ".cache") / "memtui"


def user_config_dir() -> Path:
    """memtui's settings and key folder: ``$XDG_CONFIG_HOME/memtui`` (absolute only) or ``~/.config/memtui``."""
    return _xdg_base("XDG_CONFIG_HOME", ".config") / "memtui"


def field_key(path: Path) -> str:
    """A short stable name for a field, used for per-field folders in the user cache."""
    return hashlib.sha256(os.fsencode(os.path.realpath(path))).hexdigest()[:16]


def state_dir(root: Path) -> Path:
    return root / STATE_DIR_NAME


def default_cache_dir(root: Path, *, readonly: bool = False, source: Path | None = None) -> Path:
    """The cache folder of a field (for a zip, ``source`` is the archive)."""
    return user_cache_dir() / "fields" / field_key(source or root) / "cache"
