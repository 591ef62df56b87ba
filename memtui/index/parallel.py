"""A full build on two cores: two helper processes each read and index half of the pages.

Each helper (``buildworker``) reads and parses its share and sends back the page
records; this process computes every page's status from all of them (the
supersede graph spans both shares) and sends the statuses back; each helper
then writes its share as one Whoosh segment into the new generation folder,
and this process commits a table of contents naming both segments.

The helpers are plain Python subprocesses running
``memtui.index.buildworker`` and talking over pipes (not ``multiprocessing``:
forking a process that runs threads, such as the TUI, is unsafe, and its
"spawn" mode would re-run a ``python -m memtui`` entry point). Anything going
wrong returns ``None`` and the caller builds in one process instead.

A helper imports nothing from the folder it was started in: memtui is usually
run inside the field (``cd FIELD && memtui``), and ``python -m`` puts the
working folder first on ``sys.path``, so a ``pickle.py`` among the pages would
run. Helpers are started isolated (``-I``: no working folder, no
``PYTHON*`` variables, no user site-packages) from the root folder, with an
explicit ``sys.path``: where memtui and its libraries live, never the working
folder or the field.
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, cast

from memtui.field.field import PLAIN_READER, PageReader, ScanEntry
from memtui.index.analysis import codec
from memtui.index.buildworker import (
    Failed,
    Index,
    Optimize,
    Optimized,
    Progressed,
    Read,
    Records,
    Segments,
    receive,
    send,
)
from memtui.index.engine.fastwrite import FastSegmentWriter
from memtui.index.engine.segments import commit_segments, open_index
from memtui.index.records import PageRecord, compute_statuses

Progress = Callable[[int, int, str], None]

PARALLEL_MIN_PAGES = 1000  # below this, starting the helpers costs about what it saves
WORKER_TIMEOUT = 600.0


# A helper writes a segment whenever it has indexed this much text: the segment's postings
# wait in memory until then (about 2.5 bytes for each byte of text). At 100,000 pages one
# segment per helper held 464 MB; the background merge after the build joins them.
SEGMENT_TEXT_BYTES = 48 << 20


def worker_count() -> int:
    return min(2, os.cpu_count() or 1)


def should_run_parallel(pages: int) -> bool:
    return pages >= PARALLEL_MIN_PAGES and worker_count() > 1 and not os.environ.get("MEMTUI_SERIAL_BUILD")


# Run by ``python -I -c``: set sys.path from argv, then run the helper's main().
_BOOT = (
    "import sys; sys.path[:0] = sys.argv[2:]; import importlib; sys.exit(importlib.import_module(sys.argv[1]).run())"
)


def _absolute(path: Path) -> str:
    """Helpers run in another working folder: every path they are sent is absolute."""
    return os.path.abspath(path)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def helper_sys_path(root: Path | None = None) -> list[str]:
    """The import path a helper gets: this process's, minus the working folder and the field.

    Relative entries ("" stands for the working folder under ``python -m`` and
    ``-c``), the working folder itself and anything inside the field ``root``
    are dropped; what remains is where memtui and its libraries were imported
    from (memtui's own folder always stays).
    """
    cwd = os.path.realpath(os.getcwd()) if os.path.isdir(os.curdir) else None
    field = os.path.realpath(root) if root is not None else None
    package_home = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # holds memtui/
    out: list[str] = [package_home]
    for entry in sys.path:
        if not entry or not os.path.isabs(entry):
            continue
        real = os.path.realpath(entry)
        if real == cwd or (field and _inside(real, field)) or entry in out:
            continue
        out.append(entry)
    return out


class HelperProcess:
    MODULE = "memtui.index.buildworker"

    def __init__(self, index: int, root: Path | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-c", _BOOT, self.MODULE, *helper_sys_path(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=os.path.abspath(os.sep),  # a folder nobody plants modules in; -I keeps it off sys.path anyway
        )
        # Its pipes (both asked for: never None): what it is told, what it says.
        self.to_helper = cast(IO[bytes], self.proc.stdin)
        self.from_helper = cast(IO[bytes], self.proc.stdout)
        self.index = index
        self.messages: queue.Queue = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True, name=f"memtui-build-reader-{index}")
        self.reader.start()

    def _read(self) -> None:
        try:
            while True:
                self.messages.put(receive(self.from_helper))
        except Exception as exc:  # noqa: BLE001 - EOF or garbage: the worker is gone
            self.messages.put(Failed(f"{type(exc).__name__}: {exc}"))

    def send(self, message) -> None:
        send(self.to_helper, message)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            pass
        for stream in (self.to_helper, self.from_helper):
            try:
                stream.close()
            except OSError:
                pass


def reader_spec(reader: PageReader) -> dict | None:
    """How a helper process rebuilds ``reader`` (None: memtui's own format)."""
    spec = getattr(reader, "spec", None)
    return spec() if callable(spec) else None


class BuildFailed(Exception):
    pass


def _await(
    workers: list[HelperProcess],
    kind: type[tuple[Any, ...]],
    done: list[int],
    total: int,
    phase: str,
    progress: Progress | None,
) -> list:
    """Wait for one ``kind`` message from every worker (its first field), passing progress along."""
    answers: list = [None] * len(workers)
    pending = set(range(len(workers)))
    while pending:
        for number in list(pending):
            try:
                message = workers[number].messages.get(timeout=0.05)
            except queue.Empty:
                continue
            if isinstance(message, Progressed):
                done[number] = message.done
                if progress is not None:
                    progress(min(sum(done), total), total, phase)
            elif isinstance(message, kind):
                answers[number] = message[0] if len(message) else None
                pending.discard(number)
            else:
                raise BuildFailed(message.text if isinstance(message, Failed) else repr(message))
    return answers


def build_parallel(
    root: Path,
    gen_dir: Path,
    entries: list[ScanEntry],
    progress: Progress | None = None,
    *,
    page_cache_dir: Path | None = None,
    reader: PageReader = PLAIN_READER,
) -> dict[str, PageRecord] | None:
    """Build ``gen_dir`` (an empty, created index) from ``entries``; the records, or None on failure.

    Each helper takes the pages the field has already read from the page cache
    in ``page_cache_dir`` instead of parsing them again.
    """
    count = worker_count()
    shares: list[list[str]] = [[] for _ in range(count)]
    loads = [0] * count
    for entry in sorted(entries, key=lambda e: -e.size):  # balance bytes, not page counts
        lightest = loads.index(min(loads))
        shares[lightest].append(entry.path)
        loads[lightest] += entry.size + 512
    workers: list[HelperProcess] = []
    total = len(entries)
    try:
        for number in range(count):
            workers.append(HelperProcess(number, root))
            cache = _absolute(page_cache_dir) if page_cache_dir else None
            workers[-1].send(Read(_absolute(root), shares[number], cache, reader_spec(reader)))
        parts = _await(workers, Records, [0] * count, total, "reading", progress)
        records = {record.path: record for part in parts for record in part}
        statuses = compute_statuses(root, records, reader)
        for record in records.values():
            record.status, record.successors = statuses[record.path]
        for worker, part in zip(workers, parts):
            worker.send(Index(_absolute(gen_dir), {r.path: statuses[r.path] for r in part}, SEGMENT_TEXT_BYTES))
        segments = _await(workers, Segments, [0] * count, total, "indexing", progress)
        if progress is not None:
            progress(total, total, "committing")
        ix = open_index(gen_dir)
        commit_segments(FastSegmentWriter(ix, codec=codec()), [segment for part in segments for segment in part])
        return records
    except (BuildFailed, OSError, EOFError, ValueError) as exc:
        _last_failure[0] = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return None
    finally:
        for worker in workers:
            worker.stop()


_last_failure = [""]


def last_failure() -> str:
    return _last_failure[0]


class BackgroundOptimize:
    """Merge every segment of ``gen_dir`` into one in a helper process, without waiting for it."""

    def __init__(self, gen_dir: Path) -> None:
        self.worker = HelperProcess(0)
        _lower_priority(self.worker.proc.pid)
        self.worker.send(Optimize(_absolute(gen_dir)))

    def result(self) -> bool | None:
        """True once merged, None while the helper works; raises ``BuildFailed`` if it failed."""
        while True:
            try:
                message = self.worker.messages.get_nowait()
            except queue.Empty:
                return None
            if isinstance(message, Optimized):
                return True
            if not isinstance(message, Progressed):
                raise BuildFailed(message.text if isinstance(message, Failed) else repr(message))

    def stop(self) -> None:
        self.worker.stop()


BACKGROUND_NICENESS = 10


def _lower_priority(pid: int) -> None:
    """A merge nobody waits for yields the processor to the one that commits what agents write
    and answers searches (on two cores, a 10,000-page CJK merge beside put the p95 of
    write-to-searchable at 405 ms instead of under 100 ms)."""
    try:
        os.setpriority(os.PRIO_PROCESS, pid, os.getpriority(os.PRIO_PROCESS, pid) + BACKGROUND_NICENESS)
    except (AttributeError, OSError):
        pass  # no priorities here (Windows), or not allowed: the merge runs as it is


def optimize_in_helper(gen_dir: Path) -> bool:
    """Merge every segment of ``gen_dir`` into one in a helper process (its memory, not ours)."""
    worker = HelperProcess(0)
    try:
        worker.send(Optimize(_absolute(gen_dir)))
        _await([worker], Optimized, [0], 1, "merging", None)
        return True
    except (BuildFailed, OSError, EOFError, ValueError) as exc:
        _last_failure[0] = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return False
    finally:
        worker.stop()
