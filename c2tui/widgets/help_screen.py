"""The help screen (`?`): every key and what it does, in live and replay mode; it scrolls
(↑/↓, PgUp/PgDn, the wheel) when it is taller than the terminal.

Each section's title stands on a line of its own above a two-column grid, and every grid's
key column is as wide as the widest key (at most KEY_MAX): a title in the key column made it
~35 columns wide, so at 80x24 the descriptions wrapped every few words."""
from __future__ import annotations

from typing import Sequence

from rich.cells import cell_len
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from prover import KNOBS, Phase, disciplines


def live_keys() -> list[tuple[str, str]]:
    """The knobs' keys and help (prover.knobs, read when the screen opens), then submitting."""
    return [k.key_row() for k in KNOBS.values() if k.keys] + [("n", "submit a new sector"),
                                                                  ("W", "submit a WinningPoSt sector (served first)"),
                                                                  ("a", "job action (cancel s3p2 / s3, requeue s3p2, "
                                                                        "cordon / uncordon 1) or knob set "
                                                                        "(lock_mode=two-lock,mem_sync=stream)")]


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
    ("e", "the event log on its own screen (all of it; same keys as the panel)"),
    ("h", "the history in the partitions' place, and back (under 150 columns)"),
    ("X", "the experiment panel: arms, cycles, rates with intervals, ratios (n starts one, s stops it)"),
    ("q", "quit (asks first when partitions are in flight; attached: detach)"),
    ("ctrl+c", "quit now (in-flight partitions recorded as abandoned)"),
]


def binding_rows(bindings) -> list[tuple[str, str]]:
    """(keys, what) for a widget's own bindings: read from the widget, never listed twice."""
    rows: dict[str, list[str]] = {}
    for b in bindings:
        keys = rows.setdefault(b.tooltip or b.description, [])
        if (b.key_display or b.key) not in keys:  # one key bound twice (o: cordon / uncordon) is one row
            keys.append(b.key_display or b.key)
    return [(" ".join(keys), what) for what, keys in rows.items()]


def panel_sections() -> list[tuple[str, list[tuple[str, str]]]]:
    from c2tui.widgets.event_log import EventLog
    from c2tui.widgets.gpu_overview import GpuOverview
    from c2tui.widgets.partition_table import PartitionTable

    return [
        ("Moving around", [("tab / shift+tab", "move focus: GPU overview, GPU panels, partitions, events (the focused one's keys show in "
                                               "the footer)"),
                           ("↑ ↓ PgUp PgDn, wheel", "scroll the focused panel (GPU panels, event log, this help)"),
                           ("click a GPU line", "bring that GPU's panel into view (the overview shows when panels do not fit)")]),
        ("Partitions (s f g w from anywhere; esc when focused)", binding_rows(PartitionTable.BINDINGS)),
        ("Event log (when focused)", binding_rows(EventLog.BINDINGS)),
        ("GPUs (a focused GPU panel, or ↑ ↓ on the overview's GPU lines; not a fleet's host lines)",
         binding_rows(GpuOverview.BINDINGS)),
    ]


def key_table() -> str:
    """The README's key table (markdown), from the same rows the help screen shows;
    tests/unit/test_knobs.py checks the README carries it."""
    rows = ["| key | live run | replay |", "| --- | --- | --- |"]
    rows += [f"| `{k}` | {d} | |" for k, d in live_keys()]
    rows += [f"| `{k}` | | {d} |" for k, d in REPLAY_KEYS]
    rows += [f"| `{k}` | {d} | same |" for k, d in COMMON_KEYS]
    return "\n".join(rows)


def _lock_words(pal) -> list[tuple[str, str] | str]:
    out: list[tuple[str, str] | str] = []
    for i, n in enumerate(disciplines.lock_order()):
        out += [", "] if i else []
        out.append((n, "bold " + pal[f"wait:{n}"]))
    return out


def discipline_rows() -> list[tuple[str, str]]:
    """What each lock_mode value does (the disciplines' registry), and where cuzk ended."""
    rows = [(name, text) for name, text in disciplines.summaries().items()]
    rows.append(("", "single with b_g2 on cpu is close to where Curio's cuzk ended (one mutex per GPU)"))
    return rows


def legend(pal) -> list[tuple[Text, Text]]:
    phases = Text()
    for ph in Phase:
        phases.append(f" {ph.value} ", style=f"reverse {pal[ph.value]}")
    return [
        (Text.assemble(("███", pal["ntt_h"]), " phase"), phases),
        (Text.assemble(*((("▒", pal[f"wait:{n}"]) for n in disciplines.lock_order())), " wait"),
         Text.assemble("waiting for a lock: ", *_lock_words(pal), ";  ", ("···", pal["idle"]), " idle")),
        (Text.assemble(("▚▚", pal["device_sync"]), " sync"),
         Text.assemble("a mem holder in a device-global sync (mem_sync=device): it waits for the ",
                       ("compute", "bold " + pal["wait:compute"]), " holder's kernels, named on the mem lane")),
        (Text.assemble(("█", pal.worker(0)), ("▓", pal.worker(0, alt=True)), ("░", pal["pool"]), " VRAM"),
         Text.assemble("a worker's d_a █ and d_bc ▓ (a colour per worker), z ▒ where the GPU makes a, b, c;  ",
                       ("▞", pal["r1cs"]), " a circuit's matrices, resident;  ", ("░", pal["pool"]),
                       " pool-cached, unused;  ┃ the budget")),
    ]


def kernel_section(kernels: dict) -> list[tuple[str, list[tuple[str, str]]]]:
    """The kernel settings in force (the run's RunStarted config, `[kernels]`: c2tui config --show
    says what each means); none before the run has said."""
    if not kernels:
        return []
    from prover import on_off

    # the names bare, the table named in the title: "kernels.msm_affine_rounds" is 25 cells, past
    # KEY_MAX, and folded as "kernels.msm_affine_round" / "s"
    rows = [(k, "none" if v is None or v == "" else on_off(v)) for k, v in kernels.items()]
    return [("Kernel settings in force (this run; [kernels] in the TOML, c2tui config --show)", rows)]


KEY_MAX = 24  # a longer key folds; wider would starve the descriptions at 80 columns

Rows = Sequence[tuple["str | Text", "str | Text"]]


def key_width(sections: Sequence[tuple[str, Rows]]) -> int:
    """The key column's width: the widest key of any section, at most KEY_MAX."""
    keys = [cell_len(k.plain if isinstance(k, Text) else k) for _, rows in sections for k, _ in rows]
    return min(KEY_MAX, max(keys, default=1))


def help_body(sections: Sequence[tuple[str, Rows]], footnote: str) -> RenderableType:
    """The sections one under another, each a title and a grid whose key column is key_width."""
    width, parts = key_width(sections), list[RenderableType]()
    for title, rows in sections:
        t = Table.grid(padding=(0, 2))
        t.add_column(style="bold", width=width, overflow="fold")
        t.add_column(ratio=1)
        for k, d in rows:
            t.add_row(k, d)
        parts += [Text(title, style="bold underline"), t, Text("")]
    return Group(*parts, Text(footnote, style="italic"))


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "dismiss", "close", show=True),
                Binding("up", "scroll(-1)", "scroll up", key_display="↑"),
                Binding("down", "scroll(1)", "scroll down", key_display="↓"),
                Binding("pageup", "page(-1)", "page up", key_display="PgUp"),
                Binding("pagedown", "page(1)", "page down", key_display="PgDn")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    /* 132: from 160 columns on every key's description fits one line (a legend line wraps once); 96% below */
    HelpScreen > VerticalScroll {
        width: 132; max-width: 96%; height: auto; max-height: 96%;
        border: thick $primary; background: $surface; padding: 0 1;
    }
    """

    def __init__(self, replay: bool, kernels: dict | None = None) -> None:
        super().__init__()
        self.replay = replay
        self.kernels = kernels or {}

    def compose(self) -> ComposeResult:
        sections: list[tuple[str, Rows]] = [("Replay" if self.replay else "Controls (sent to the prover's controller)",
                     REPLAY_KEYS if self.replay else live_keys()), ("Always", COMMON_KEYS),
                    ("Lock disciplines (l)", discipline_rows()),
                    *panel_sections(), ("Legend", legend(self.app.palette)),  # type: ignore[attr-defined]
                    *kernel_section(self.kernels)]
        with VerticalScroll() as box:
            box.border_subtitle = "↑↓ PgUp PgDn scroll · esc close"
            yield Static(help_body(sections, "A control is shown as changed only when the prover's ModeChange "
                                             "event comes back."))

    def action_scroll(self, step: int) -> None:
        self.query_one(VerticalScroll).scroll_relative(y=step, animate=False)

    def action_page(self, step: int) -> None:
        box = self.query_one(VerticalScroll)
        box.scroll_relative(y=step * max(1, box.scrollable_content_region.height - 1), animate=False)
