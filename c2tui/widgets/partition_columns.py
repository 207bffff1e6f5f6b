"""The partition table's columns, declared once (name, width, cell): part, GPU, worker, the
phase bar (the width the others leave), what it does now, its total time, pre-staged or
fallback, its proof; the header and a row drawn from them, and what a row's cells read of the
state (a lock waited for or held, a device sync, the time so far)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from c2tui.widgets.common import Line, PHASE_SHORT, fmt_secs, worker_index
from c2tui.widgets.phase_bar import render_phase_bar, segment_widths
from prover import CANCELLED
from prover import DashboardState, PartitionState

if TYPE_CHECKING:
    from themes import Palette

BAR_MAX = 64


def lock_status(st: DashboardState, p) -> tuple[str, str, float] | None:
    """('wait' | 'hold', lock name, since) for a partition between phases, if any."""
    for g in st.gpus.values():
        for name, lk in g.locks.items():
            w = lk.waiters.get(p.worker or "")
            if w is not None and w[0] == p.part:
                return "wait", name, w[1]
    for g in st.gpus.values():
        for name, lk in g.locks.items():
            if lk.holder_part == p.part:
                return "hold", name, lk.since
    return None


def lock_gpu(st: DashboardState, p) -> int | None:
    for i, g in st.gpus.items():
        for lk in g.locks.values():
            if lk.holder_part == p.part or any(w[0] == p.part for w in lk.waiters.values()):
                return i
    return None


def device_sync_of(st: DashboardState, p):
    """The device sync this partition's worker waits in now, if any."""
    g = st.gpus.get(p.gpu) if p.gpu is not None else None
    ds = getattr(g, "device_sync", None)
    return ds if ds is not None and ds.part == p.part else None


def sync_note(st: DashboardState, p, sync) -> str:
    """"device sync behind g0w0 s3p1 41 ms": now, or what this partition's syncs cost."""
    if sync is not None:
        return f"device sync behind {sync.behind} {sync.waited(st.t) * 1000:.0f} ms"
    if p.device_sync_s > 0.0005:
        return f"device sync {p.device_sync_s * 1000:.0f} ms behind {p.device_sync_behind or 'nobody'}"
    return ""


def failed(p) -> bool:
    return p.ok is False or p.verified is False


def total_time(p, now: float) -> float | None:
    start = min((s[0] for s in p.phases.values() if s[0] is not None), default=None)
    return None if start is None else (p.done_t if p.done_t is not None else now) - start


def fit(text: str, width: int) -> str:
    """`text` in a column of `width` cells, at least one of them blank: cells never run
    together, a long value ends in an ellipsis."""
    return f"{text if len(text) < width else text[:width - 2] + '…':<{width}}"


def column_room(width: int) -> tuple[int, bool, bool]:
    """(phase bar width, show 'now' column, show total time column), from COLUMNS' widths."""
    fixed = sum(c.width for c in COLUMNS if c.width and not c.needs)  # part, gpu, worker, stage, proof
    now_w, tot_w = (next(c.width for c in COLUMNS if c.needs == need) for need in ("now", "total"))
    show_now = width - fixed - now_w >= 24
    show_tot = width - fixed - now_w - tot_w >= 32
    bar = width - fixed - (now_w if show_now else 0) - (tot_w if show_tot else 0) - 2
    # 8 cells a phase is enough to read; past it the row's width goes to why it waited
    return max(8, min(BAR_MAX, bar)), show_now, show_tot


def phase_labels(bar_w: int) -> str:
    """Each phase's short name over its segment of the bar, cut to the segment (never dropped:
    "syn pre sta" at 4 cells a phase, "sy pr st" at 3, "s p s" at 2)."""
    out = ""
    for phase, w in zip(PHASE_SHORT, segment_widths(bar_w)):
        out += f"{PHASE_SHORT[phase][:max(1, min(3, w - 1))]:<{w}}"
    return out[:bar_w]


def current_cell(r: Line, st: DashboardState, p, pal, sync) -> None:
    """The 'current' column (15 cells): the phase and its time, a device sync, a lock wait
    or hold, done / FAILED, queued."""
    if sync is not None:  # in the pre-stage, waiting in a device-global sync
        r.append(f"{'sync':<6}", style="bold reverse " + pal["device_sync"])
        r.append(f"{fmt_secs(sync.waited(st.t)):>7}  ", style="bold " + pal["device_sync"])
    elif p.current:
        t0 = p.phases.get(p.current, [st.t])[0] or st.t
        r.append(f"{PHASE_SHORT.get(p.current, p.current):<6}", style="bold " + pal[p.current])
        r.append(f"{fmt_secs(st.t - t0):>7}  ")
    elif p.done_t is not None and p.reason == CANCELLED:  # a job action: not a failure
        r.append(f"{'cancelled':<15}", style=pal["warn"])
    elif p.done_t is not None:
        r.append(f"{'done' if p.ok else 'FAILED':<15}", style=pal["ok"] if p.ok else "bold " + pal["fail"])
    elif not p.phases:
        r.append(f"{'queued':<15}", style=pal["dim"])
    else:
        lk = lock_status(st, p)
        if lk is not None:
            what, name, since = lk
            style = pal[f"wait:{name}"] if what == "wait" else pal["dim"]
            r.append(f"{what} {name[:3]:<3}", style=style)          # 8 cells, like a phase's 6 + 2
            # a space before the time keeps "wait com 4.73s" apart, one after keeps
            # it from the next column (15 cells in all)
            r.append(f" {fmt_secs(st.t - since):>5}", style=style if what == "wait" else "")
            r.append(" ")
        else:
            r.append(f"{'cpu/queue':<15}", style=pal["dim"])


@dataclass(frozen=True)
class Row:
    """What a row's cells read: the state, the partition, the palette, the phase bar's width and
    the device sync its worker waits in now (if any)."""

    st: DashboardState
    p: PartitionState
    pal: Palette
    bar_w: int
    sync: Any


@dataclass(frozen=True)
class Column:
    """A column of the table: its name (the header), its width in cells with the blank after it
    (0: the phase bar, which takes the width the others leave), how a row draws its cell, and
    the room it needs to be shown ("now", "total": where column_room finds it; "": always)."""

    name: str
    width: int
    cell: Callable[[Line, Row], None]
    needs: str = ""
    right: bool = False

    def head(self, bar_w: int) -> list[str]:
        if not self.width:
            return [phase_labels(bar_w), "  "]
        return [f"{self.name:>{self.width - 1}} " if self.right else f"{self.name:<{self.width}}"]


def _part(r: Line, x: Row) -> None:
    r.append(fit(x.p.part, 7), style="bold " + (x.pal["fail"] if failed(x.p) else ""))


def _gpu(r: Line, x: Row) -> None:
    gpu = x.p.gpu if x.p.gpu is not None else lock_gpu(x.st, x.p)
    r.append(fit('' if gpu is None else str(gpu), 4))


def _worker(r: Line, x: Row) -> None:
    w = x.p.worker or ""
    r.append(f"{w[-6:]:<7}", style=x.pal.worker(worker_index(w)) if w else "")


def _phases(r: Line, x: Row) -> None:
    r.append_text(render_phase_bar(x.p, x.st.t, x.pal, x.bar_w, x.st.phase_stats))
    r.append("  ")


def _current(r: Line, x: Row) -> None:
    current_cell(r, x.st, x.p, x.pal, x.sync)


def _total(r: Line, x: Row) -> None:
    tot = total_time(x.p, x.st.t)
    r.append(f"{fmt_secs(tot) if tot is not None else '':>7} ")


def _stage(r: Line, x: Row) -> None:
    p, pal = x.p, x.pal
    if p.fallback:
        r.append(f"{'fallback':<10}", style="bold " + pal["warn"])
    elif p.prestaged:
        r.append(f"{'prestaged':<10}", style=pal["ok"])
    else:
        r.append(f"{'–':<10}", style=pal["dim"])


def _proof(r: Line, x: Row) -> None:
    p, pal = x.p, x.pal
    if p.verified is True:
        r.append("✓ ok", style="bold " + pal["ok"])
    elif p.verified is False:
        r.append("✗ FAIL", style="bold reverse " + pal["fail"])
    elif p.ok is False:
        r.append("✗ err", style="bold " + pal["fail"])
    elif p.done_t is not None and p.reason == CANCELLED:
        r.append("– cancelled", style=pal["dim"])
    elif p.done_t is not None:  # finished, proof never verified
        r.append("? unchecked", style="bold " + pal["warn"])
    else:
        r.append("…", style=pal["dim"])


COLUMNS = (
    Column("part", 7, _part), Column("gpu", 4, _gpu), Column("worker", 7, _worker), Column("phases", 0, _phases),
    Column("current", 15, _current, needs="now"), Column("total", 8, _total, needs="total", right=True),
    Column("stage", 10, _stage), Column("proof", 7, _proof),
)


def header(cols: list[Column], bar_w: int, pal: Palette) -> Line:
    """The columns' names; neighbours shown always share a part, as the row's cells are drawn."""
    head = Line(no_wrap=True, style="bold " + pal["dim"])
    run = ""
    for c in cols:
        if c.width and not c.needs:
            run += c.head(bar_w)[0]
            continue
        head.append(run)
        run = ""
        for text in c.head(bar_w):
            head.append(text)
    head.append(run)
    return head


def row_line(x: Row, cols: list[Column], width: int, selected: bool) -> Line:
    """One partition's row: its cells, then (where the width leaves room) why it waited."""
    r = Line(style="reverse") if selected else Line()  # the row a row action acts on
    for c in cols:
        c.cell(r, x)
    cause = sync_note(x.st, x.p, x.sync)
    if cause and r.cell_len + 2 + len(cause) <= width:  # the row's spare width says why it waited
        r.append("  " + cause, style=x.pal["device_sync"])
    return r.truncate(width, overflow="ellipsis")
