"""The help screen (`?`): every key and what it does, in live and replay mode."""
from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

LIVE_KEYS = [
    ("l", "lock mode: single ↔ two-lock"),
    ("m", "mem_sync: device ↔ stream (device = cudaDeviceSynchronize + trim in mem)"),
    ("+ / -", "workers per GPU up / down"),
    ("p", "pre-stage on / off"),
    ("b", "b_g2 MSM on cpu ↔ gpu"),
    ("space", "pause / resume the prover"),
    ("n", "submit a new sector"),
]
REPLAY_KEYS = [
    ("space", "play / pause"),
    ("← / →", "seek 5 s back / forward (shift: 30 s)"),
    ("[ / ]", "slower / faster (0.25x … 16x)"),
    ("home / end", "jump to start / end"),
    ("click bar", "seek to that point"),
]
COMMON_KEYS = [
    ("t", "cycle theme (dark, light, high-contrast)"),
    ("?", "this help"),
    ("q", "quit"),
]
LEGEND = [
    ("█ phase", "a GPU phase on the timeline / a finished phase in a phase bar"),
    ("▒ wait", "waiting for the mem (orange) or compute (red) lock"),
    ("█ ▓ VRAM", "a worker's d_a and d_bc buffers;  ░ pool-cached, unused;  ┃ budget"),
]


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "close", show=True)]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical {
        width: 100; max-width: 96%; height: auto; max-height: 96%;
        border: thick $primary; background: $surface; padding: 0 1;
    }
    """

    def __init__(self, replay: bool) -> None:
        super().__init__()
        self.replay = replay

    def compose(self) -> ComposeResult:
        t = Table.grid(padding=(0, 2))
        t.add_column(style="bold")
        t.add_column()
        sections = [("Replay" if self.replay else "Controls (sent to the prover's controller)",
                     REPLAY_KEYS if self.replay else LIVE_KEYS), ("Always", COMMON_KEYS), ("Legend", LEGEND)]
        for title, rows in sections:
            t.add_row(Text(title, style="bold underline"), "")
            for k, d in rows:
                t.add_row(k, d)
            t.add_row("", "")
        t.add_row("", Text("A control is shown as changed only when the prover's ModeChange event comes back.", style="italic"))
        with Vertical():
            yield Static(t)
