"""Start-up as rich progress bars for `c2tui record` on a TTY: a row per step (circuit, keys,
host kernels, gpu kernels, devices) with its bar, share, seconds and what it is doing, drawn
from the fold's StartupState until the first partition starts; later, a key of another size
loading (prover/pipeline/keys/key_ring.py) as a few words on the progress line."""
from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text
from prover import DashboardState


def startup_table(s: DashboardState, el: float) -> Group:
    t = Table.grid(padding=(0, 1))
    for name, step in s.startup.steps.items():
        running = step.t1 is None
        mark = Text("●", style="cyan") if running else (Text("✓", style="green") if step.ok else Text("✗", style="bold red"))
        took = (s.t - step.t0) if running else (step.seconds or 0.0)
        t.add_row(mark, Text(name.replace("_", " "), style="bold"),
                  ProgressBar(total=1.0, completed=step.frac, width=30),
                  Text(f"{step.frac:4.0%} {took:6.2f}s"), Text(step.detail, style="red" if not step.ok else ""))
    return Group(Text(f"{el:6.1f}s start-up", style="bold"), t)


def key_loads(s: DashboardState) -> tuple:
    """Text parts for the progress line: each key loading (its share and what it does) and
    the partitions waiting for a key."""
    parts: list = []
    for k in s.keys.loading:
        parts += ["  key ", (f"2^{k.log2} loading {k.frac:.0%}", "bold yellow"), f" {k.detail}"]
    if s.keys.waiters:
        parts += ["  ", (f"{len(s.keys.waiters)} waiting for a key", "yellow")]
    return tuple(parts)
