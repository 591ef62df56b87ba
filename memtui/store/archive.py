"""``*.memoryfield.zip``: a field in one file, opened read-only, written by export.

Extraction is defensive: member names that are absolute, contain ``..``, drive
letters or NUL are refused, symlinks and special files are refused, and sizes
are counted as bytes are actually read (a zip bomb's header can lie), against a
per-file and a total cap.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import struct
import tempfile
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from memtui.errors import ArchiveError
from memtui.store import locations
from memtui.store.safe_write import has_control_characters
from memtui.textsafety import visible

MAX_MEMBER_BYTES = 64 * 1024 * 1024
MAX_TOTAL_BYTES = 512 * 1024 * 1024
MAX_MEMBERS = 200_000
SUFFIX = ".memoryfield.zip"
# What zipfile raises for a damaged archive (beyond BadZipFile), e.g. a bad version field.
_DAMAGED = (zipfile.BadZipFile, EOFError, NotImplementedError, ValueError, zlib.error, struct.error)


def _safe_member_name(name: str) -> str:
    if "\x00" in name:
        raise ArchiveError(f"zip member name contains NUL: {name!r}", "the archive is malformed")
    if has_control_characters(name):
        # memtui gives no file a name with a control character (a newline in a name injects lines).
        raise ArchiveError(
            f"zip member name holds a control character: {visible(name, keep_newlines=False)}",
            "refusing to extract this archive",
        )
    text = name.replace("\\", "/")
    if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
        raise ArchiveError(f"zip member has an absolute path: {name}", "refusing to extract this archive")
    parts = [p for p in PurePosixPath(text).parts if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise ArchiveError(f"zip member leaves the folder: {name}", "refusing to extract this archive")
    return "/".join(parts)


def _make_folder(folder: Path, member: str) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file member already holds that name, or the name is too long
        raise ArchiveError(f"cannot extract {member}: {exc.strerror or exc}", "the archive is malformed") from None


def _archive_key(path: Path) -> str:
    st = path.stat()
    raw = f"{os.path.abspath(path)}|{st.st_size}|{st.st_mtime_ns}".encode()
    return hashlib.sha256(raw).hexdigest()[:16]


def extract_safely(zip_path: Path, dest: Path) -> int:
    """Extract ``zip_path`` into the empty folder ``dest``; return the file count."""
    try:
        archive = zipfile.ZipFile(zip_path)
    except (*_DAMAGED, OSError, zipfile.LargeZipFile) as exc:
        raise ArchiveError(f"cannot open {zip_path.name}: {exc}", "is it a complete .zip file?") from None
    total = 0
    count = 0
    with archive:
        members = archive.infolist()
        if len(members) > MAX_MEMBERS:
            raise ArchiveError(f"archive has {len(members):,} members", f"the limit is {MAX_MEMBERS:,}")
        for info in members:
            name = _safe_member_name(info.filename)
            if not name:
                continue
            mode = info.external_attr >> 16
            kind = stat.S_IFMT(mode)  # 0 when the archiver stored permission bits only
            if stat.S_ISLNK(mode):
                raise ArchiveError(f"zip member is a symlink: {info.filename}", "links are not extracted")
            if info.is_dir():
                _make_folder(dest / name, info.filename)
                continue
            if kind and kind != stat.S_IFREG:
                raise ArchiveError(f"zip member is not a regular file: {info.filename}", "refusing it")
            target = dest / name
            _make_folder(target.parent, info.filename)
            written = 0
            try:
                with archive.open(info) as source, open(target, "xb") as out:
                    while True:
                        chunk = source.read(1 << 16)
                        if not chunk:
                            break
                        written += len(chunk)
                        total += len(chunk)
                        if written > MAX_MEMBER_BYTES:
                            raise ArchiveError(
                                f"{info.filename} is over {MAX_MEMBER_BYTES // (1024 * 1024)} MB",
                                "the archive may be a zip bomb",
                            )
                        if total > MAX_TOTAL_BYTES:
                            raise ArchiveError(
                                f"archive expands past {MAX_TOTAL_BYTES // (1024 * 1024)} MB",
                                "the archive may be a zip bomb",
                            )
                        out.write(chunk)
            except FileExistsError:
                raise ArchiveError(f"zip member appears twice: {info.filename}", "the archive is malformed") from None
            except (*_DAMAGED, RuntimeError) as exc:  # RuntimeError: an encrypted member
                raise ArchiveError(f"cannot read {info.filename}: {exc}", "the archive is damaged") from None
            except OSError as exc:
                raise ArchiveError(
                    f"cannot extract {info.filename}: {exc.strerror or exc}", "the archive is malformed"
                ) from None
            os.chmod(target, 0o444)
            count += 1
    return count


def extract_for_reading(zip_path: Path) -> Path:
    """A read-only extracted copy of the archive in the user cache (reused while unchanged)."""
    if not zip_path.is_file():
        raise ArchiveError(f"no such file: {zip_path}", "give the path of a .memoryfield.zip")
    base = locations.user_cache_dir() / "fields" / locations.field_key(zip_path)
    final = base / f"pages-{_archive_key(zip_path)}"
    if (final / ".memtui-extracted").exists():
        return final
    base.mkdir(parents=True, exist_ok=True)
    for old in base.glob("pages-*"):
        shutil.rmtree(old, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix=".extract-", dir=base))
    try:
        extract_safely(zip_path, staging)
        (staging / ".memtui-extracted").write_text("ok\n")
        os.replace(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final


def export_field(root: Path, out: Path) -> int:
    """Write every regular file of the field (not .git/, .memtui/, .dream/ or symlinks) to a zip.

    A file deleted while exporting is left out; any other problem raises ``ArchiveError``
    and leaves no partial archive behind.
    """
    root = Path(root)
    out = Path(out)
    if not out.name.endswith(SUFFIX):
        raise ArchiveError(f"output must end with {SUFFIX}: {out.name}", f"name it like notes{SUFFIX}")
    if not root.is_dir():
        raise ArchiveError(f"not a folder: {root}", "give the memory folder to export")
    out_real = os.path.realpath(out)
    files: list[tuple[str, Path]] = []
    for folder, dirs, names in os.walk(root):
        rel_folder = os.path.relpath(folder, root)
        dirs[:] = sorted(
            d for d in dirs if d not in locations.SKIPPED_DIRS and not os.path.islink(os.path.join(folder, d))
        )
        for name in sorted(names):
            path = Path(folder) / name
            if path.is_symlink() or not path.is_file() or os.path.realpath(path) == out_real:
                continue
            rel = name if rel_folder == "." else f"{rel_folder}/{name}".replace(os.sep, "/")
            if any("\ud800" <= ch <= "\udfff" for ch in rel):
                raise ArchiveError(
                    f"file name is not valid UTF-8: {visible(rel)}", "rename the file, then export again"
                )
            if has_control_characters(rel):
                raise ArchiveError(
                    f"file name holds a control character: {visible(rel, keep_newlines=False)}",
                    "rename the file, then export again",
                )
            files.append((rel, path))
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=".memtui-", suffix=".zip.tmp")
    os.close(fd)
    count = 0
    try:
        # strict_timestamps=False: files dated before 1980 are stored as 1980, not refused.
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED, strict_timestamps=False) as archive:
            for rel, path in files:
                try:
                    archive.write(path, rel)
                except FileNotFoundError:
                    continue  # deleted between listing and reading
                except OSError as exc:
                    message = f"cannot read {visible(rel)}: {exc.strerror or exc}"
                    raise ArchiveError(message, "nothing was exported") from None
                count += 1
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return count
