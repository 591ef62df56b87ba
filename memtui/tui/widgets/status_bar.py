"""One line under every screen: what is loaded, what needs review, index and watcher state."""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import ProgressBar, Static

from memtui.textsafety import plural
from memtui.tui.events import FieldEvent

WATCH_GLYPHS = {
    "watching": ("●", "watching", "success"),
    "polling": ("◐", "polling", "warning"),
    "rescanning": ("↻", "rescanning", "warning"),
    "starting": ("↻", "index writer starting", "warning"),
    "read-only": ("◇", "read-only", "secondary"),
    "down": ("✖", "down", "error"),
    "gone": ("✖", "field folder gone", "error"),
    "stopped": ("○", "stopped", "secondary"),
}


def index_state(app) -> tuple[str, str, str]:
    """(glyph, word, colour variable) for the index/watcher, plus nothing else."""
    service = getattr(app, "index", None)
    if not getattr(app, "use_index", True):
        return ("○", "index off", "secondary")
    if getattr(app, "index_error", None):
        return ("✖", "index down", "error")
    if service is None:
        progress = app.index_progress
        if progress.total:
            return ("↻", f"indexing {progress.done:,}/{progress.total:,}", "warning")
        return ("…", "index opening", "secondary")
    state = service.state
    glyph, word, colour = WATCH_GLYPHS.get(state.mode, ("?", state.mode, "secondary"))
    return glyph, word, colour


def describe_sync(app) -> str:
    if not getattr(app, "show_timings", True):
        return ""  # snapshot tests: nothing that changes from run to run
    service = getattr(app, "index", None)
    last = None
    if service is not None:
        last = getattr(service.state, "last_sync", None)
    last = last or app.last_sync
    if not last:
        return "never synced"
    seconds = max(0, int(time.time() - last))
    if seconds < 60:
        return f"last update {seconds}s ago"
    return f"last update {time.strftime('%H:%M:%S', time.localtime(last))}"


class StatusBar(Horizontal):
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; }
    StatusBar > #status-text { width: 1fr; height: 1; }
    StatusBar > ProgressBar { width: 30; height: 1; display: none; }
    StatusBar > ProgressBar.-busy { display: block; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="status-text")
        yield ProgressBar(total=100, show_eta=False, show_percentage=True, id="status-progress")

    def on_mount(self) -> None:
        self.app.field_signal.subscribe(self, self._on_field)
        self.set_interval(1.0, self.refresh_status)
        self.refresh_status()

    def _on_field(self, event: FieldEvent) -> None:
        self.refresh_status()

    def _colour(self, name: str) -> str:
        return self.app.palette().get(name) or "default"

    def refresh_status(self) -> None:
        app = self.app
        text = Text()
        bar = self.query_one(ProgressBar)
        busy = False
        if app.load_error is not None:
            text.append("✖ cannot open the field", style=f"bold {self._colour('error')}")
        elif app.field is None:
            progress = app.load_progress
            text.append(f"… {progress.phase} {progress.done:,}/{progress.total:,}" if progress.total else "… opening")
            busy = bool(progress.total)
            if busy:
                bar.update(total=progress.total, progress=progress.done)
        else:
            counts = app.analysis.counts if app.analysis else {}
            text.append(plural(len(app.field), "page"), style="bold")
            if app.pending_paths:
                progress = app.load_progress
                text.append(f"  … reading {progress.done:,}/{progress.total:,}", style=self._colour("warning"))
                busy = True
                bar.update(total=progress.total or 1, progress=progress.done)
            if app.field.readonly:
                text.append("  ◇ read-only", style=self._colour("secondary"))
            quarantined = counts.get("quarantined", 0)
            unreviewed = counts.get("unreviewed", 0)
            if app.analysis is None:
                text.append("  … checking")
            else:
                text.append(f"  ⛔ {quarantined} quarantined", style=self._colour("error") if quarantined else "")
                text.append(f"  ◌ {unreviewed} unreviewed", style=self._colour("warning") if unreviewed else "")
                text.append(
                    f"  ✖ {plural(counts.get('errors', 0), 'error')} ▲ {plural(counts.get('warnings', 0), 'warning')}"
                )
                if counts.get("proposals"):
                    text.append(f"  ✎ {plural(counts['proposals'], 'proposal')}", style=self._colour("accent"))
            glyph, word, colour = index_state(app)
            text.append(f"  │ {glyph} {word}", style=self._colour(colour))
            text.append(f"  {describe_sync(app)}", style="dim")
            progress = app.index_progress
            if app.index is None and progress.total and progress.done < progress.total:
                busy = True
                bar.update(total=progress.total, progress=progress.done)
        line = self.query_one("#status-text", Static)
        if text != line.content:
            # Its size is fixed (1fr by one line): a repaint, not a layout of the screen (while an
            # agent writes, this line changed several times a second, each a whole layout).
            line.update(text, layout=False)
        bar.set_class(busy, "-busy")
