"""The overview's host level: one line per fleet host, for when a line per GPU does not fit
(8 hosts x 8 GPUs is 64 lines, the whole of a 200x60 screen). Each line is a cell per GPU
(its utilisation, bold while a partition holds compute; ⊘ while cordoned, and the cordoned GPUs
named after the cells), then the host's sums: compute held, lock waiters, VRAM, done / fallbacks / OOMs."""
from __future__ import annotations

from c2tui.widgets.alerts import oom_cell, oom_parts
from c2tui.widgets.common import SPARK, Line, gib
from prover import DashboardState

MAX_CELLS = 16  # GPU cells a host line shows; more are counted after them
CORDONED_CELL = "⊘"  # a cordoned GPU's cell (it takes no new work)


def gpu_cell(g) -> str:
    return SPARK[min(7, max(0, int((g.util or 0.0) * 7.999)))] if g.util is not None else "·"


def host_line(h, st: DashboardState, pal, width: int, where: str = "") -> Line:
    """`h` a prover.fold.hosts.HostState; its GPUs' states from `st.gpus`."""
    gs = [st.gpus[i] for i in h.gpus if i in st.gpus]
    ln = Line()
    ln.append(f"{h.host:<4}", style="bold " + pal["info"])
    span = f"GPU{h.gpus[0]}-{h.gpus[-1]}" if len(h.gpus) > 1 else (f"GPU{h.gpus[0]}" if h.gpus else "no GPU")
    ln.append(f"{span:<10} ", style=pal["dim"])
    if h.alive:
        ln.append_text(live_cells(gs, pal, st.jobs.cordoned))
    else:  # its process is gone: what it did, not the last utilisation it reported
        ln.append("lost" if h.lost else "left", style="bold " + pal["fail" if h.lost else "dim"])
        ln.append(f" ({h.reason or '?'}); {h.requeued} requeued ", style=pal["dim"])
    fb = sum(g.fallbacks for g in gs)
    n, retried, failed = [sum(x) for x in zip(*(oom_parts(st, g.gpu) for g in gs))] or [0, 0, 0]
    ln.append(f"done {sum(g.done for g in gs)} ", style=pal["dim"])
    ln.append(f"fb {fb} ", style=pal["warn"] if fb else pal["dim"])
    ln.append_text(oom_cell(n, retried, failed, pal))
    tail = Line(where, style=pal["dim"])
    ln.truncate(max(0, width - tail.cell_len - 1), overflow="ellipsis")
    pad = width - ln.cell_len - tail.cell_len
    if pad > 0:
        ln.append(" " * pad)
    return ln.append_text(tail)


def live_cells(gs: list, pal, cordoned: set[int]) -> Line:
    """A live host's GPUs: a cell each (a cordoned one in the warn colour), the mean
    utilisation, compute held, waiters, VRAM."""
    ln = Line()
    for g in gs[:MAX_CELLS]:
        busy = g.locks.get("compute") is not None and g.locks["compute"].holder is not None
        if g.gpu in cordoned:  # a mark, not a colour alone
            ln.append(CORDONED_CELL, style="bold " + pal["warn"])
            continue
        ln.append(gpu_cell(g), style=("bold " + pal["ntt_h"]) if busy else pal["dim"])
    if len(gs) > MAX_CELLS:
        ln.append(f"+{len(gs) - MAX_CELLS}", style=pal["dim"])
    mine = sorted(g.gpu for g in gs if g.gpu in cordoned)
    if mine:  # the GPUs by their numbers, as the GPU lines and panels name them
        ln.append(" cordoned " + ",".join(f"GPU{i}" for i in mine[:3]) + (" …" if len(mine) > 3 else ""),
                  style="bold " + pal["warn"])
    utils = [g.util for g in gs if g.util is not None]
    ln.append(f" {100 * sum(utils) / len(utils):4.0f}% " if utils else "    –% ", style="bold")
    held = sum(1 for g in gs if "compute" in g.locks and g.locks["compute"].holder)
    waiting = sum(len(lk.waiters) for g in gs for lk in g.locks.values())
    ln.append("compute ", style=pal["dim"])
    ln.append(f"{held}/{len(gs)}", style="bold")
    ln.append(f" +{waiting} " if waiting else "    ", style=pal["wait:compute"] if waiting else pal["dim"])
    used = sum(max(g.pool_reserved, g.live_bytes) for g in gs)
    budget = sum(g.budget or g.total or 0 for g in gs)
    ln.append("VRAM ", style=pal["dim"])
    return ln.append(f"{gib(used)}/{gib(budget)} ", style="bold")


def host_lines(st: DashboardState, pal, width: int, height: int, where: dict[str, str]) -> list[Line]:
    """A line per host, at most `height`; the hosts that do not get one are counted on the last."""
    hosts = sorted(st.hosts.values(), key=lambda h: (h.gpus[0] if h.gpus else 1 << 30, h.host))
    room = len(hosts) if len(hosts) <= height else max(0, height - 1)
    lines = [host_line(h, st, pal, width, where.get(h.host, "")) for h in hosts[:room]]
    if room < len(hosts):
        rest = hosts[room:]
        gpus = sum(len(h.gpus) for h in rest)
        lines.append(Line(f"+{len(rest)} more hosts ({rest[0].host}…{rest[-1].host}, {gpus} GPUs)",
                          style=pal["warn"]).truncate(width, overflow="ellipsis"))
    return lines
