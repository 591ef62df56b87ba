"""One line under every screen: what is loaded, what needs review, index and watcher state."""

from __future__ import annotations

import time

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import ProgressBar, Static

from memtui.field.rule_settings import RuleSettings
from memtui.session.session import Session
from memtui.textsafety import plural
from memtui.tui.context import AppEvent, Context


def describe_sync(session: Session, show_timings: bool = True) -> str:
    if not show_timings:
        return ""  # snapshot tests: nothing that changes from run to run
    last = session.last_synced()
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

    def __init__(self, ctx: Context) -> None:
        super().__init__()
        self.ctx = ctx
        self.session = ctx.session

    def compose(self) -> ComposeResult:
        yield Static(id="status-text")
        yield ProgressBar(total=100, show_eta=False, show_percentage=True, id="status-progress")

    def on_mount(self) -> None:
        self.ctx.events.subscribe(self, self._on_event)
        self.set_interval(1.0, self.refresh_status)
        self.refresh_status()

    def _on_event(self, event: AppEvent) -> None:
        self.refresh_status()

    def _colour(self, name: str) -> str:
        return self.ctx.palette().get(name) or "default"

    def refresh_status(self) -> None:
        session = self.session
        field = session.field
        text = Text()
        bar = self.query_one(ProgressBar)
        busy = False
        if session.load_error is not None:
            text.append("✖ cannot open the field", style=f"bold {self._colour('error')}")
        elif field is None:
            progress = session.load_progress
            text.append(f"… {progress.phase} {progress.done:,}/{progress.total:,}" if progress.total else "… opening")
            busy = bool(progress.total)
            if busy:
                bar.update(total=progress.total, progress=progress.done)
        else:
            counts = session.analysis.counts if session.analysis else {}
            text.append(plural(len(field), "page"), style="bold")
            if session.pending_paths:
                progress = session.load_progress
                text.append(f"  … reading {progress.done:,}/{progress.total:,}", style=self._colour("warning"))
                busy = True
                bar.update(total=progress.total or 1, progress=progress.done)
            if field.readonly:
                text.append("  ◇ read-only", style=self._colour("secondary"))
            quarantined = counts.get("quarantined", 0)
            unreviewed = counts.get("unreviewed", 0)
            if session.analysis is None:
                text.append("  … checking")
            else:
                text.append(f"  ⛔ {quarantined} quarantined", style=self._colour("error") if quarantined else "")
                text.append(f"  ◌ {unreviewed} unreviewed", style=self._colour("warning") if unreviewed else "")
                text.append(
                    f"  ✖ {plural(counts.get('errors', 0), 'error')} ▲ {plural(counts.get('warnings', 0), 'warning')}"
                )
                if counts.get("hidden_by_settings"):  # a field's own file never hides findings unsaid
                    text.append(
                        f" ({RuleSettings.hidden_note(counts['hidden_by_settings'])})", style=self._colour("warning")
                    )
                if counts.get("proposals"):
                    text.append(f"  ✎ {plural(counts['proposals'], 'proposal')}", style=self._colour("accent"))
            glyph, word, colour = session.index_state()
            text.append(f"  │ {glyph} {word}", style=self._colour(colour))
            text.append(f"  {describe_sync(session, self.ctx.show_timings)}", style="dim")
            progress = session.index_progress
            if session.index is None and progress.total and progress.done < progress.total:
                busy = True
                bar.update(total=progress.total, progress=progress.done)
        line = self.query_one("#status-text", Static)
        if text != line.content:
            # Its size is fixed (1fr by one line): a repaint, not a layout of the screen (while an
            # agent writes, this line changed several times a second, each a whole layout).
            line.update(text, layout=False)
        bar.set_class(busy, "-busy")
