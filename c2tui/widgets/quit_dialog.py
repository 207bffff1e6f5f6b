"""The quit dialog (`q` with partitions in flight): drain then quit, quit now, or cancel.

Quitting now records each in-flight partition as abandoned (a warn Note naming it and the
phase it was in), so a recording of the session says what was dropped, not just that
something was.
"""
from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static
from prover import EngineHandle
from prover import DashboardState

DRAIN, NOW, CANCEL = "drain", "now", "cancel"


def in_flight(st: DashboardState) -> list[Any]:
    """Partitions started and not done (queued ones are not in flight: nothing is lost)."""
    if st is None:
        return []
    return sorted((p for p in st.partitions.values() if p.done_t is None and p.phases),
                  key=lambda p: (p.sector, p.index))


def record_abandoned(engine: EngineHandle, st: DashboardState, why: str) -> int:
    """Emit one Note per in-flight partition before the engine stops; returns how many."""
    from prover import events as ev

    parts = in_flight(st)
    for p in parts:
        where = f" in {p.current}" if p.current else ""
        on = f" on gpu{p.gpu}" if p.gpu is not None else ""
        engine.emit(ev.Note, level="warn", text=f"partition {p.part} abandoned{where}{on} ({why})")
    return len(parts)


class QuitDialog(ModalScreen[str]):
    BINDINGS = [
        Binding("d", "choose('drain')", "drain then quit"),
        Binding("x", "choose('now')", "quit now"),
        Binding("escape,c", "choose('cancel')", "cancel"),
    ]
    DEFAULT_CSS = """
    QuitDialog { align: center middle; }
    QuitDialog > Vertical {
        width: 64; max-width: 96%; height: auto; border: thick $warning; background: $surface; padding: 0 1;
    }
    QuitDialog Horizontal { height: auto; align: center middle; }
    QuitDialog Button { margin: 0 1; }
    """

    def __init__(self, parts: list[str]) -> None:
        super().__init__()
        self.parts = parts

    def compose(self) -> ComposeResult:
        n = len(self.parts)
        names = ", ".join(self.parts[:6]) + (" …" if n > 6 else "")
        with Vertical():
            yield Static(f"{n} partition(s) in flight: {names}\n\n"
                         "d  drain: let them finish, then quit\n"
                         "x  quit now: record them as abandoned\n"
                         "esc  cancel", id="quit-text")
            with Horizontal():
                yield Button("drain then quit (d)", id=DRAIN, variant="primary")
                yield Button("quit now (x)", id=NOW, variant="error")
                yield Button("cancel (esc)", id=CANCEL)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id or CANCEL)

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)
