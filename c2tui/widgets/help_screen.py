"""The help screen (`?`): every key and what it does, in live and replay mode."""
from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from prover.events import Phase
from prover.knobs import KNOBS


def live_keys() -> list[tuple[str, str]]:
    """The knobs' keys and help (prover.knobs, read when the screen opens), then submit."""
    return [k.key_row() for k in KNOBS.values()] + [("n", "submit a new sector")]


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


def key_table() -> str:
    """The README's key table (markdown), from the same rows the help screen shows;
    tests/unit/test_knobs.py checks the README carries it."""
    rows = ["| key | live run | replay |", "| --- | --- | --- |"]
    rows += [f"| `{k}` | {d} | |" for k, d in live_keys()]
    rows += [f"| `{k}` | | {d} |" for k, d in REPLAY_KEYS]
    rows += [f"| `{k}` | {d} | same |" for k, d in COMMON_KEYS]
    return "\n".join(rows)


def legend(pal) -> list[tuple[Text, Text]]:
    phases = Text()
    for ph in Phase:
        phases.append(f" {ph.value} ", style=f"reverse {pal[ph.value]}")
    return [
        (Text.assemble(("███", pal["ntt_h"]), " phase"), phases),
        (Text.assemble(("▒▒", pal["wait:mem"]), ("▒", pal["wait:compute"]), " wait"),
         Text.assemble("waiting for the ", ("mem", "bold " + pal["wait:mem"]), " or the ",
                       ("compute", "bold " + pal["wait:compute"]), " lock;  ", ("···", pal["idle"]), " idle")),
        (Text.assemble(("█", pal.worker(0)), ("▓", pal.worker(0, alt=True)), ("░", pal["pool"]), " VRAM"),
         Text.assemble("a worker's d_a █ and d_bc ▓ (a colour per worker);  ", ("░", pal["pool"]),
                       " pool-cached, unused;  ┃ the budget")),
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
                     REPLAY_KEYS if self.replay else live_keys()), ("Always", COMMON_KEYS),
                    ("Legend", legend(self.app.palette))]  # type: ignore[attr-defined]
        for title, rows in sections:
            t.add_row(Text(title, style="bold underline"), "")
            for k, d in rows:
                t.add_row(k, d)
            t.add_row("", "")
        t.add_row("", Text("A control is shown as changed only when the prover's ModeChange event comes back.", style="italic"))
        with Vertical():
            yield Static(t)
