"""The detail view of one event-log note (`enter` on a selected line): the note as shown,
and every field of the event that made it, by name."""
from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


def detail_table(entry: tuple) -> Table:
    t, level, text = entry[0], entry[1], entry[2]
    event = entry[3] if len(entry) > 3 else None
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    table.add_row("note", Text(text))
    table.add_row("level", level)
    table.add_row("run time", f"{t:.3f} s")
    if event is None:
        table.add_row("event", Text("(a note with no event behind it)", style="italic"))
        return table
    table.add_row("event", type(event).__name__)
    for name, value in event.model_dump(mode="json").items():
        table.add_row(name, Text(repr(value) if isinstance(value, str) else str(value)))
    return table


class EventDetail(ModalScreen[None]):
    BINDINGS = [Binding("escape,enter,q", "dismiss", "close"),
                Binding("up", "scroll(-1)", "scroll", key_display="↑/↓", show=False),
                Binding("down", "scroll(1)", "scroll", show=False)]
    DEFAULT_CSS = """
    EventDetail { align: center middle; }
    EventDetail > VerticalScroll {
        width: 90; max-width: 96%; height: auto; max-height: 90%;
        border: thick $accent; background: $surface; padding: 0 1;
    }
    """

    def __init__(self, entry: tuple) -> None:
        super().__init__()
        self.entry = entry

    def compose(self) -> ComposeResult:
        with VerticalScroll() as box:
            box.border_title = "Event"
            box.border_subtitle = "esc close"
            yield Static(detail_table(self.entry))

    def action_scroll(self, step: int) -> None:
        self.query_one(VerticalScroll).scroll_relative(y=step, animate=False)
