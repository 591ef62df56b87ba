"""Small modal dialogs: confirm, choose, ask for text, show a link's real target."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static
from textual.widgets.button import ButtonVariant

from memtui.textsafety import one_line


class ChoiceDialog(ModalScreen[str | None]):
    """A question with a few labelled answers; dismisses with the chosen id (None on escape)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(
        self,
        title: str,
        body: RenderableType,
        choices: list[tuple[str, str]],
        *,
        variant_of: dict[str, ButtonVariant] | None = None,
        focus: str | None = None,
    ) -> None:
        """``focus``: the choice focused at first (Enter picks it); default the first one.
        Pass the safe choice (Cancel) for anything dangerous or done in bulk."""
        super().__init__(classes="dialog-screen")
        self.dialog_title = title
        self.body = Text(body) if isinstance(body, str) else body  # str: shown literally, never markup
        self.choices = choices
        self.variant_of = variant_of or {}
        self.initial_focus = focus

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(self.dialog_title, style="bold"), classes="dialog-title")
            with VerticalScroll(classes="dialog-body"):
                yield Static(self.body)
            with Horizontal(classes="dialog-buttons"):
                for choice_id, label in self.choices:
                    yield Button(
                        Text(label), id=f"choice-{choice_id}", variant=self.variant_of.get(choice_id, "default")
                    )

    def on_mount(self) -> None:
        if self.initial_focus is not None:
            self.query_one(f"#choice-{self.initial_focus}", Button).focus()
        else:
            self.query(Button).first().focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id.removeprefix("choice-") if event.button.id else None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmDialog(ChoiceDialog):
    """Yes or Cancel. ``danger``: the yes button is red and Cancel has the focus."""

    def __init__(
        self, title: str, body: RenderableType, *, yes: str = "Yes", no: str = "Cancel", danger: bool = False
    ) -> None:
        super().__init__(
            title,
            body,
            [("yes", yes), ("no", no)],
            variant_of={"yes": "error" if danger else "primary"},
            focus="no" if danger else "yes",
        )


class TextDialog(ModalScreen[str | None]):
    """Ask for one line of text (a reason, a folder, a commit message)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(
        self, title: str, prompt: str, *, value: str = "", placeholder: str = "", allow_empty: bool = False
    ) -> None:
        super().__init__(classes="dialog-screen")
        self.dialog_title = title
        self.prompt = prompt
        self.value = value
        self.placeholder = placeholder
        self.allow_empty = allow_empty

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(self.dialog_title, style="bold"), classes="dialog-title")
            yield Static(Text(self.prompt))
            yield Input(value=self.value, placeholder=self.placeholder, id="dialog-input")
            with Horizontal(classes="dialog-buttons"):
                yield Button("OK", id="ok", variant="primary")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def _submit(self) -> None:
        value = self.query_one(Input).value.strip()
        if not value and not self.allow_empty:
            self.notify("please write something first", severity="warning")
            return
        self.dismiss(value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "ok":
            self._submit()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)


class LinkDialog(ModalScreen[None]):
    """A link from a page is never opened without showing where it really goes."""

    BINDINGS = [Binding("escape", "dismiss_dialog", "Close")]

    def __init__(self, label: str, target: str) -> None:
        super().__init__(classes="dialog-screen")
        self.label = label
        self.target = target

    def compose(self) -> ComposeResult:
        body = Text()
        body.append("The page shows this link as:\n  ")
        body.append(one_line(self.label, 200), style="bold")
        body.append("\n\nIt really points to:\n  ")
        body.append(one_line(self.target, 400), style="bold underline")
        body.append("\n\nPage text is untrusted: check the address before opening it.", style="dim")
        with Vertical(classes="dialog"):
            yield Static(Text("Link target", style="bold"), classes="dialog-title")
            yield Static(body)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Open in browser", id="open", variant="warning")
                yield Button("Copy address", id="copy")
                yield Button("Close", id="close", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#close", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "open":
            self.app.open_url(self.target)
        elif event.button.id == "copy":
            self.app.copy_to_clipboard(self.target)
            self.notify("address copied", timeout=2)
        self.dismiss(None)

    def action_dismiss_dialog(self) -> None:
        self.dismiss(None)
