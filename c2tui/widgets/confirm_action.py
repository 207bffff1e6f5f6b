"""The confirmation a row action asks for (c2tui/widgets/row_actions.py): what it will do, in full, and
a warning where there is one (the last GPU taking work); `y` does it, `n` or esc goes back."""
from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static


class ConfirmAction(ModalScreen[bool]):
    BINDINGS = [Binding("y", "answer(True)", "do it"), Binding("n,escape", "answer(False)", "back")]
    DEFAULT_CSS = """
    ConfirmAction { align: center middle; }
    ConfirmAction > Vertical {
        width: 72; max-width: 96%; height: auto; border: thick $warning; background: $surface; padding: 0 1;
    }
    ConfirmAction #confirm-warn { color: $error; text-style: bold; }
    """

    def __init__(self, words: str, warn: str = "") -> None:
        super().__init__()
        self.words, self.warn = words, warn

    def compose(self) -> ComposeResult:
        with Vertical():
            if self.warn:
                yield Static(f"⚠ {self.warn}", id="confirm-warn")
            yield Static(f"{self.words[0].upper()}{self.words[1:]}?\n\ny  do it (through the controller, "
                         "recorded as key)\nn  back", id="confirm-text")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
