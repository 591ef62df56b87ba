"""``memtui index``, ``memtui search`` and ``memtui recall-test``: the search index from the shell.

    memtui index FIELD [--rebuild [--force]] [--info] [--json] [--index-dir DIR]
    memtui search FIELD QUERY... [--json] [--limit N] [--index-dir DIR]
    memtui recall-test FIELD [GOLDEN.yaml] [--k N] [--json] [--index-dir DIR]

Each command brings the index in line with the folder first (stat only when
nothing changed). A second memtui on the same field searches read-only and
says so on stderr.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from memtui.cli.options import add_field_options, examples, field_options
from memtui.cli.output import cell, console, error_console, print_json
from memtui.dialects.open import reader_for
from memtui.errors import FieldNotFoundError, MemtuiError
from memtui.index import IndexService
from memtui.index.analysis import RECIPE
from memtui.index.recall import load_golden
from memtui.index.store import (
    IndexStore,
    UntrustedIndex,
    check_files,
    default_index_dir,
    read_manifest,
)
from memtui.render.glyphs import STATUS, TRUST, cli_style

PROGRESS_MIN_PAGES = 200
EXIT_RECALL_FAILED = 1


def register(sub: argparse._SubParsersAction) -> list[str]:
    index = sub.add_parser(
        "index",
        help="build or update the search index of a field",
        **examples(
            "memtui index sample-field", "memtui index sample-field --info", "memtui index sample-field --rebuild"
        ),
    )
    index.add_argument("field", help="memory folder or .memoryfield.zip")
    index.add_argument("--rebuild", action="store_true", help="build a fresh index (the old one serves until done)")
    index.add_argument("--force", action="store_true", help="with --rebuild: swap in even if golden.yaml fails")
    index.add_argument("--info", action="store_true", help="show where the index is and what it holds; change nothing")
    index.add_argument("--json", action="store_true", help="print the result as JSON")
    add_field_options(index, index=True)
    index.set_defaults(handler=run_index)

    search = sub.add_parser(
        "search",
        help="search a field's pages",
        **examples(
            "memtui search sample-field 'public API decision'",
            "memtui search sample-field 'tag:suggested status:current'",
            "memtui search sample-field postgres --limit 50 --json",
        ),
    )
    search.add_argument("field", help="memory folder or .memoryfield.zip")
    search.add_argument("query", nargs="+", help="words and filters (kind: subject: tag: status: origin: path: ...)")
    search.add_argument("--json", action="store_true", help="print hits as JSON")
    search.add_argument("--limit", type=int, default=20, metavar="N", help="at most N hits (default 20)")
    add_field_options(search, index=True)
    search.set_defaults(handler=run_search)

    recall = sub.add_parser(
        "recall-test",
        help="check search against golden questions (golden.yaml)",
        **examples("memtui recall-test sample-field", "memtui recall-test sample-field my-golden.yaml --k 3"),
    )
    recall.add_argument("field", help="memory folder or .memoryfield.zip")
    recall.add_argument("golden", nargs="?", help="golden file (default: FIELD/golden.yaml)")
    recall.add_argument("--k", type=int, metavar="N", help="look at the top N hits (default: the file's k, else 5)")
    recall.add_argument("--json", action="store_true", help="print results as JSON")
    add_field_options(recall, index=True)
    recall.set_defaults(handler=run_recall_test)
    return ["index", "search", "recall-test"]


# ---------------------------------------------------------------------- opening
def _resolve_field(arg: str) -> tuple[Path, bool, Path | None]:
    """(folder to index, read-only field?, zip it came from)."""
    path = Path(arg)
    if path.is_file() and path.name.endswith(".zip"):
        from memtui.store.archive import extract_for_reading

        return extract_for_reading(path), True, path
    if not path.exists():
        raise FieldNotFoundError(f"no such folder: {path}", "give the path of a memory folder")
    if not path.is_dir():
        raise FieldNotFoundError(f"not a folder: {path}", "give a memory folder or a .memoryfield.zip file")
    return path, False, None


def _service(args: argparse.Namespace) -> IndexService:
    root, readonly, source = _resolve_field(args.field)
    options = field_options(args)
    return IndexService(
        root, index_dir=options.index_dir, readonly_field=readonly, source=source, dialect=options.dialect
    )


class _ProgressBar:
    """A Rich progress bar on stderr, shown only for long work (many pages)."""

    def __init__(self) -> None:
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def __call__(self, done: int, total: int, phase: str) -> None:
        if self._progress is None:
            if total < PROGRESS_MIN_PAGES:
                return
            self._progress = Progress(
                TextColumn("{task.description:<12}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=error_console(),
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task(phase, total=total)
        assert self._task is not None  # added with the progress bar
        self._progress.update(self._task, completed=done, total=max(total, 1), description=phase)

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()


def _open(svc: IndexService, *, rebuild: bool = False, force: bool = False):
    bar = _ProgressBar()
    try:
        report = svc.open(progress=bar)
        if rebuild and not report.rebuilt:
            report = svc.rebuild(progress=bar, force=force)
    finally:
        bar.close()
    if svc.read_only and not svc.readonly_field:
        error_console().print(Text(f"note: {svc.state.message or 'searching read-only'}", style="yellow"))
    return report


# ---------------------------------------------------------------------- index
def run_index(args: argparse.Namespace) -> int:
    if args.info:
        return _show_info(args)
    with _service(args) as svc:
        report = _open(svc, rebuild=args.rebuild, force=args.force)
        if args.json:
            print_json(report.to_json())
            return 0
        out = console()
        if report.rebuilt:
            line = Text(f"built the index of {report.pages:,} pages in {report.seconds:.2f} s ", style="bold")
            line.append(f"({report.rebuild_reason})", style="dim")
        elif report.up_to_date:
            line = Text(f"the index is current: {report.pages:,} pages (checked in {report.seconds:.2f} s)")
        else:
            line = Text(
                f"updated the index in {report.seconds:.2f} s: {report.added} added, {report.changed} changed, "
                f"{report.removed} removed, {report.status_updates} status changes; {report.pages:,} pages"
            )
        out.print(line)
        if report.golden is not None:
            golden = report.golden
            style = "green" if golden["passed"] else "bold red"
            out.print(
                Text(
                    f"golden.yaml: recall@{golden['k']} {golden['recall']:.2f} (needs {golden['min_recall']:.2f})",
                    style=style,
                )
            )
        for note in report.notes:
            out.print(Text(note, style="yellow"))
        out.print(Text(f"index at {svc.location}", style="dim"))
    return 0


def _show_info(args: argparse.Namespace) -> int:
    root, readonly, source = _resolve_field(args.field)
    location = Path(args.index_dir) if args.index_dir else default_index_dir(root, readonly=readonly, source=source)
    store = IndexStore(location)
    info: dict = {"field": str(root), "location": str(location), "generation": None, "state": "not built yet"}
    reader = reader_for(root, dialect=field_options(args).dialect)[0]
    current = {**RECIPE, "reader": reader.signature}  # what a build now would record
    gen = store.current()
    if gen is not None:
        info["generation"] = gen.name
        try:
            manifest = read_manifest(gen)
            check_files(gen, manifest)
            info.update(
                state="ready" if manifest.recipe == current else "built with another recipe: will be rebuilt",
                pages=manifest.pages,
                recipe=manifest.recipe,
                files=len(manifest.files),
                bytes=sum(entry[0] for entry in manifest.files.values()),
                written=time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(manifest.written)),
            )
        except UntrustedIndex as exc:
            info["state"] = f"will be rebuilt: {exc}"
    if location.is_dir():
        holder = IndexStore(location)
        try:
            free = holder.acquire_writer()
        except OSError as exc:
            info["writer"] = f"nobody can write this index folder ({exc.strerror or exc})"
        else:
            if free:
                holder.release_writer()
            info["writer"] = "none" if free else "another memtui is writing this index"
    info["current_recipe"] = current
    if args.json:
        print_json(info)
        return 0
    table = Table(show_header=False, box=None)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for key in ("field", "location", "generation", "state", "pages", "files", "bytes", "written", "writer"):
        if info.get(key) is not None:
            value = f"{info[key]:,}" if isinstance(info[key], int) else str(info[key])
            table.add_row(key, cell(value))
    recipe = info.get("recipe") or current
    table.add_row("recipe", cell(", ".join(f"{k} {v}" for k, v in recipe.items())))
    console().print(table)
    return 0


# ---------------------------------------------------------------------- search
PARTIAL_CELL = "≈ some words"


def run_search(args: argparse.Namespace) -> int:
    query = " ".join(args.query)
    if args.limit < 1:
        raise MemtuiError(f"--limit must be at least 1 (got {args.limit})", "for example --limit 20")
    with _service(args) as svc:
        _open(svc)
        started = time.perf_counter()
        hits = svc.search(query, limit=args.limit + 1)  # one more: whether --limit cut the list
        elapsed = time.perf_counter() - started
    if len(hits) > args.limit:
        del hits[args.limit :]
        hits.notes.insert(0, f"more pages match: only the first {args.limit} are shown (--limit N shows more)")
    if args.json:
        print_json([hit.to_json() for hit in hits])
        for note in hits.notes:
            error_console().print(Text(f"memtui: {note}"))
        return 0
    out = console()
    if not hits:
        out.print(Text(f"no pages match {query!r}", style="dim"))
        return 0
    table = Table(title=cell(f"search: {query}"), title_justify="left")
    table.add_column("#", justify="right", style="dim")
    table.add_column("score", justify="right")
    table.add_column("status", no_wrap=True)
    table.add_column("page", overflow="fold")
    table.add_column("snippet", overflow="fold", ratio=2)
    for number, hit in enumerate(hits, start=1):
        glyph = STATUS.get(hit.status)
        status = Text(glyph.label(), style=cli_style(glyph)) if glyph else Text(hit.status)
        if hit.trust in ("quarantined", "unreviewed"):
            badge = TRUST[hit.trust]
            status.append("\n" + badge.label(), style=cli_style(badge))
        if hit.partial:
            status.append("\n" + PARTIAL_CELL, style="yellow")
        page = cell(hit.title, style="bold" if hit.status == "current" else "")
        page.append("\n")
        page.append_text(cell(f"{hit.path}:{hit.line}" if hit.line else hit.path, style="dim"))
        snippet = Text(hit.snippet, style="dim" if hit.status != "current" else "")
        for start, end in hit.highlights:
            snippet.stylize("bold reverse", start, end)
        table.add_row(str(number), f"{hit.score:.2f}", status, page, snippet)
    out.print(table)
    note = f"{len(hits)} hit{'s' if len(hits) != 1 else ''} in {elapsed * 1000:.0f} ms"
    partial = sum(1 for hit in hits if hit.partial)
    if partial:
        note += f"; {partial} of them hold some of the words, not all ({PARTIAL_CELL})"
    if hits.timed_out:
        note += " (stopped at the time limit: narrow the query for complete results)"
    out.print(Text(note, style="dim"))
    for extra in hits.notes:
        out.print(Text(f"▲ {extra}", style="dim"))
    return 0


# ---------------------------------------------------------------------- recall-test
def run_recall_test(args: argparse.Namespace) -> int:
    with _service(args) as svc:
        golden_path = Path(args.golden) if args.golden else svc.root / "golden.yaml"
        golden = load_golden(golden_path)
        if args.k is not None and args.k < 1:
            raise MemtuiError(f"--k must be at least 1 (got {args.k})", "for example --k 5")
        _open(svc)
        result = svc.recall_test(golden, k=args.k)
    if args.json:
        print_json(result.to_json())
        return 0 if result.passed else EXIT_RECALL_FAILED
    out = console()
    table = Table(title=cell(f"recall@{result.k}: {golden_path}"), title_justify="left")
    table.add_column("recall", justify="right", no_wrap=True)
    table.add_column("question", overflow="fold")
    table.add_column("expected page (rank)", overflow="fold")
    for q in result.questions:
        style = "green" if q.recall >= 1.0 else ("yellow" if q.recall > 0 else "bold red")
        expected = Text()
        for page, rank in q.ranks.items():
            if expected:
                expected.append("\n")
            expected.append_text(cell(page))
            expected.append(f"  #{rank}" if rank else "  missing", style="green" if rank else "bold red")
        table.add_row(Text(f"{q.recall:.2f}", style=style), cell(q.question), expected)
    out.print(table)
    verdict = "passed" if result.passed else "FAILED"
    out.print(
        Text(
            f"overall recall@{result.k} {result.recall:.3f} (min_recall {result.min_recall:.2f}): {verdict}",
            style="bold green" if result.passed else "bold red",
        )
    )
    return 0 if result.passed else EXIT_RECALL_FAILED
