"""The memtui Textual application: a session on screen.

The app owns a ``Session`` (``memtui.session``: the field, its analysis, its index, kept
current while agents write) and routes between screens. It turns the session's events into
a Textual signal its screens listen to, hands each screen a ``Context`` (attributes down)
and opens what screens ask for with messages (``memtui.tui.messages``: messages up).
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any, Unpack

from textual.app import App, ScreenStackError, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.signal import Signal
from textual.worker import WorkerFailed

from memtui.errors import MemtuiError
from memtui.session.events import AnalysisReady, IndexStateChanged, LoadFailed, Notice, SessionEvent
from memtui.session.opening import FieldOptions
from memtui.session.session import Session
from memtui.tui import safe, theming, unsaved
from memtui.tui.commands import ActionsProvider, HistoryProvider, PagesProvider, ScreenActionsProvider
from memtui.tui.context import AppEvent, Context, ThemeChanged
from memtui.tui.messages import Invoke, Landing, OpenClaims, OpenEditor, OpenHistory, OpenPage, OpenProvenance
from memtui.tui.modes import MODES
from memtui.tui.screens.browse import BrowseScreen
from memtui.tui.settings import Settings


class MemtuiApp(App[int]):
    """Browse, search, trace and review an agent's memory folder."""

    CSS_PATH = "styles/app.tcss"
    TITLE = "memtui"
    COMMANDS = App.COMMANDS | {ScreenActionsProvider, PagesProvider, ActionsProvider, HistoryProvider}
    ENABLE_COMMAND_PALETTE = True
    # Screens other than browse are imported when first opened (start-up time).
    SCREENS_OF_MODES = {"search": ("search", "SearchScreen"), **{m.name: (m.module, m.screen) for m in MODES}}

    BINDINGS = [
        *sorted(
            [
                Binding("1", "switch_mode('browse')", "Browse", tooltip="The pages, by folder or as a list"),
                Binding("/,2", "open_search", "Search", tooltip="Full-text search with filters"),
                Binding("6", "open_claims", "Claims", tooltip="Every tagged line: whose idea is this fact?"),
                *(Binding(m.key, f"switch_mode('{m.name}')", m.title, tooltip=m.tooltip) for m in MODES),
            ],
            key=lambda binding: binding.key.rsplit(",", 1)[-1],  # by number key
        ),
        Binding("question_mark,f1", "help", "Help", key_display="?"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    def __init__(
        self,
        field_path: Path,
        *,
        index_dir: Path | None = None,
        theme: str | None = None,
        watch: bool = True,
        use_index: bool = True,
        settings: Settings | None = None,
        dialect: str | None = None,
    ) -> None:
        from memtui.tui.host import AppHost

        self.settings = settings or Settings.load()
        self.session = Session(
            field_path,
            AppHost(self, self._session_event),
            options=FieldOptions(dialect=dialect, index_dir=index_dir),
            use_index=use_index,
            watch=watch,
        )
        self.ready = asyncio.Event()  # the first analysis is done (or the field failed to open)
        self.index_ready = asyncio.Event()
        super().__init__()
        self.events: Signal[AppEvent] = Signal(self, "session")
        self.themes = theming.Themes(self, requested=theme, settings=self.settings)
        self.ctx = Context(self.session, self.events, self.settings, self.themes.palette)
        self.add_mode("browse", lambda: BrowseScreen(self.ctx))
        for mode, (module, name) in self.SCREENS_OF_MODES.items():
            self.add_mode(mode, self._mode_screen(module, name))
        self._claims: Any = None  # the claims screen, once made: a request goes to it
        self.add_mode("claims", self._claims_screen)
        root = self.session.root
        self.sub_title = safe.line(root.resolve().name or str(root)).plain

    DEFAULT_MODE = "browse"

    def _mode_screen(self, module: str, name: str) -> Callable[[], Screen[Any]]:
        """What makes a mode's screen when the mode is first entered."""
        return lambda: _screen(module, name, self.ctx)

    # ------------------------------------------------------------------ start and end
    def on_mount(self) -> None:
        self.themes.mounted()
        self.theme_changed_signal.subscribe(self, lambda theme: self._theme_changed())
        self.session.start()
        if not self.is_headless:
            self._catch_hangup()

    def clear_selection(self) -> None:
        """Clear text selection on the active screen, also before the first screen is on its stack.

        On Python 3.12+ ``App.run`` starts tasks eagerly, so the browse screen's filter box is
        mounted before its mode's stack holds the screen, and Textual's own ``clear_selection``
        raises ``ScreenStackError`` there (Textual issue #6444; ``run_test`` does not start
        tasks eagerly, so only a real launch showed it). Nothing is selected yet then.
        """
        try:
            super().clear_selection()
        except ScreenStackError:
            pass

    _hangup_guard: unsaved.HangupGuard | None = None  # watching the terminal (a real one only)

    def _catch_hangup(self) -> None:
        """Closing the terminal window (SIGHUP) keeps unsaved edits under .memtui/unsaved/ first.

        The guard also watches the terminal itself and ends the process if exiting gets
        stuck, so a closed terminal never leaves memtui running with the writer lock
        (``unsaved.HangupGuard``)."""
        self._hangup_guard = unsaved.HangupGuard(self, self._hang_up)
        self._hangup_guard.start()
        try:
            loop = asyncio.get_running_loop()
            for number in (signal.SIGHUP, signal.SIGTERM):
                loop.add_signal_handler(number, self._hang_up)
        except (NotImplementedError, RuntimeError, AttributeError, ValueError):
            pass  # no such signals here (Windows); Textual's own handling applies

    def _hang_up(self) -> None:
        unsaved.hang_up(self, self._hangup_guard)

    async def action_quit(self) -> None:
        """Quit, but never drop unsaved edits without asking."""
        await unsaved.quit_asking(self)

    def on_unmount(self) -> None:
        self.session.close()

    def _handle_exception(self, error: Exception) -> None:
        """Textual's, except for a thread worker asked for as the app closed (a timer or a
        finishing worker started it after the thread pool had shut down). That is no failure
        of the user's work, and Textual's report of it rendered every local of the failing
        frames: at 100,000 pages the app took minutes and 11 GB to quit."""
        closing = self._closing or self._closed or not self.is_running
        if isinstance(error, WorkerFailed) and isinstance(error.error, RuntimeError) and closing:
            return
        super()._handle_exception(error)

    # ------------------------------------------------------------------ the session's events
    def _session_event(self, event: SessionEvent) -> None:
        """On the UI thread: tell the screens; a notice is shown here."""
        if isinstance(event, Notice):
            safe.notify(self, event.message, title=event.title, severity=event.severity, timeout=event.timeout)
            return
        if isinstance(event, AnalysisReady | LoadFailed):
            self.ready.set()
        elif isinstance(event, IndexStateChanged) and self.session.index_ready:
            self.index_ready.set()
        self.events.publish(event)

    def on_invoke(self, message: Invoke) -> None:
        message.callback(*message.args)

    def _theme_changed(self) -> None:
        self.themes.changed(self.settings)
        self.events.publish(ThemeChanged())

    # ------------------------------------------------------------------ routing
    def action_open_search(self) -> None:
        self.switch_mode("search")
        focus_query = getattr(self.screen, "focus_query", None)
        if focus_query is not None:
            focus_query()

    def action_open_claims(self, preset: str = "all", tag: str | None = None) -> None:
        """The claims screen, showing ``preset`` narrowed to ``tag``."""
        self._claims_screen().request(preset, tag)
        if self.current_mode != "claims":
            self.switch_mode("claims")

    def _claims_screen(self) -> Any:
        if self._claims is None:
            self._claims = _screen("claims", "ClaimsScreen", self.ctx)
        return self._claims

    def action_help(self) -> None:
        from memtui.tui.screens.help import HelpScreen

        self.push_screen(HelpScreen(self.screen))

    def open_page(self, path: str, **landing: Unpack[Landing]) -> None:
        """Open a page where ``landing`` says (``memtui.tui.messages.Landing``)."""
        from memtui.tui.screens.page import PageScreen

        if self._can_open(path):
            self.push_screen(PageScreen(self.ctx, path, **landing))

    def on_open_page(self, message: OpenPage) -> None:
        self.open_page(message.path, **message.landing)

    def on_open_provenance(self, message: OpenProvenance) -> None:
        from memtui.tui.screens.provenance import ProvenanceScreen

        if self._can_open(message.path):
            screen = ProvenanceScreen(
                self.ctx,
                message.path,
                lines=message.lines,
                claim_path=message.claim_path,
                claim_line=message.claim_line,
                claim_rows=message.claim_rows,
                label=message.label,
            )
            self.push_screen(screen)

    def _can_open(self, path: str) -> bool:
        field = self.session.field
        if field is None or path in self.session.pending_paths:
            safe.notify(self, f"{path} is still being read; try again in a moment", timeout=3)
            return False
        if path not in field.pages:
            safe.notify(self, f"no such page: {path}", severity="warning")
            return False
        return True

    def open_editor(self, path: str, *, line: int | None = None) -> None:
        from memtui.tui.screens.editor import EditorScreen

        field = self.session.field
        if field is None or path not in field.pages:
            safe.notify(self, f"no such page: {path}", severity="warning")
            return
        if field.readonly:
            safe.notify(self, "this field is read-only (opened from a zip)", severity="warning")
            return
        self.push_screen(EditorScreen(self.ctx, path, line=line))

    def on_open_editor(self, message: OpenEditor) -> None:
        self.open_editor(message.path, line=message.line)

    def open_history(self, target: str) -> None:
        from memtui.tui.screens.history import HistoryScreen

        self.push_screen(HistoryScreen(self.ctx, target))

    def on_open_history(self, message: OpenHistory) -> None:
        self.open_history(message.target)

    def on_open_claims(self, message: OpenClaims) -> None:
        self.action_open_claims(message.preset, message.tag)

    def action_open_named(self, path: str) -> None:
        self.open_page(path)

    # ------------------------------------------------------------------ actions
    def action_rescan(self) -> None:
        if self.session.field is not None:
            self.session.rescan()
            self.notify("folder rescanned", timeout=2)

    def action_rebuild_index(self) -> None:
        self.session.rebuild_index()

    def action_cycle_bump_updated(self) -> None:
        from memtui.tui.settings import BUMP_CHOICES

        current = self.settings.bump_updated
        following = BUMP_CHOICES[(BUMP_CHOICES.index(current) + 1) % len(BUMP_CHOICES)]
        self.settings.bump_updated = following if current in BUMP_CHOICES else "ask"
        self.settings.save()
        safe.notify(self, f"on save, set updated: to now: {self.settings.bump_updated}", timeout=3)

    def action_toggle_commit_after_save(self) -> None:
        self.settings.commit_after_save = not self.settings.commit_after_save
        self.settings.save()
        state = "on" if self.settings.commit_after_save else "off"
        safe.notify(self, f"git commit after save: {state}", timeout=3)

    def get_system_commands(self, screen: Screen[Any]) -> Any:
        """Textual's system commands without duplicates of memtui's own (Keys: ``?`` is the help)
        and without Screenshot when there is nowhere to save it."""
        command: SystemCommand
        for command in super().get_system_commands(screen):
            if command.title == "Keys":
                continue
            if command.title == "Screenshot" and not _screenshot_possible():
                continue
            yield command

    def _refresh_truecolor_filter(self, theme: Any) -> None:
        # Textual rebuilds its true-colour filter on every theme change; keep memtui's readable dim.
        super()._refresh_truecolor_filter(theme)
        theming.keep_readable_dim(self)


def _screen(module: str, name: str, ctx: Context) -> Screen[Any]:
    import importlib

    screen: Screen[Any] = getattr(importlib.import_module(f"memtui.tui.screens.{module}"), name)(ctx)
    return screen


def _screenshot_possible() -> bool:
    """Textual saves screenshots in the user's downloads folder: only offer it when that folder is writable."""
    try:
        from textual.app import user_downloads_path  # where Textual's deliver_screenshot saves

        folder = user_downloads_path()
    except Exception:
        return False
    return folder.is_dir() and os.access(folder, os.W_OK)


def run_app(
    field_path: Path, *, index_dir: Path | None = None, theme: str | None = None, dialect: str | None = None
) -> int:
    app = MemtuiApp(field_path, index_dir=index_dir, theme=theme, dialect=dialect)
    app.run()
    error: MemtuiError | None = app.session.load_error
    if error is not None:
        raise error
    return app.return_code or 0
