"""A one-line prompt for a filter (`/` in the event log): enter applies, esc cancels,
an empty filter clears."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class FilterPrompt(ModalScreen["str | None"]):
    BINDINGS = [Binding("escape", "cancel", "cancel")]
    DEFAULT_CSS = """
    FilterPrompt { align: center middle; }
    FilterPrompt > Vertical {
        width: 60; max-width: 96%; height: auto;
        border: thick $accent; background: $surface; padding: 0 1;
    }
    """

    def __init__(self, title: str, value: str = "", placeholder: str = "text (empty: no filter)") -> None:
        super().__init__()
        self.title_text, self.value, self.placeholder = title, value, placeholder

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Label(self.title_text)
            yield Input(value=self.value, placeholder=self.placeholder)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)
