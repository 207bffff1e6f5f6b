"""The partition table's sector rows (`v` toggles; issue 36's row actions act on them): one row
per sector, the unfinished first, then the most recently finished, as many as fit: its id, its
proof class (the queues' unfinished sectors and their latest finished ones; blank for a sector
finished long ago or in a recording that predates the record), a cell per partition and the counts done / running / queued / failed /
cancelled, its age (finished: how long it took) and its deadline (overdue in the fail colour).
Pure: a state in, Lines out. Counts are of the partitions the view carries (every unfinished
one first, then the latest finished: prover/fold/model.py's view)."""
from __future__ import annotations

from dataclasses import dataclass, field

from c2tui.widgets.common import Line, fmt_secs
from c2tui.widgets.row_hold import RowHold
from prover import CANCELLED
from prover import DashboardState

STATES = ("done", "running", "queued", "failed", "cancelled")
CELL = {"done": ("■", "ok"), "running": ("▶", "info"), "queued": ("·", "dim"), "failed": ("✗", "fail"),
        "cancelled": ("–", "warn")}
SHORT = {"done": "done", "running": "run", "queued": "queued", "failed": "failed", "cancelled": "cancel"}
BAR_MAX = 16  # cells of partitions (a c2 sector has 10); more are counted, not drawn
PARTS_MAX = BAR_MAX + 2 + 40  # the partitions column: cells, then every count
AGE_W = 12


def part_state(p) -> str:
    """A partition's bucket: running and queued while unfinished; stopped by a job action or a
    quit-now counts as cancelled (not a failure), as the partition rows say."""
    if p.done_t is None:
        return "running" if p.phases else "queued"
    if p.reason == CANCELLED or p.abandoned:
        return "cancelled"
    return "failed" if (p.ok is False or p.verified is False) else "done"


@dataclass
class SectorRow:
    sector: int
    cls: str = ""  # "" where the fold no longer knows it (finished long ago)
    t0: float | None = None  # submitted (the queues'), else its first partition queued
    deadline_t: float | None = None
    done_t: float | None = None  # finished: its last partition's end
    missed: bool = False
    parts: list = field(default_factory=list)  # its partitions on screen, in index order

    @property
    def unfinished(self) -> list[str]:
        return [p.part for p in self.parts if p.done_t is None]

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(STATES, 0)
        for p in self.parts:
            out[part_state(p)] += 1
        return out


def sector_rows(st: DashboardState) -> list[SectorRow]:
    """Every sector the state shows: the unfinished (by id) first, then the finished, latest first."""
    rows: dict[int, SectorRow] = {}
    q = st.queues
    for p in st.partitions.values():
        if p.sector >= 0:
            rows.setdefault(p.sector, SectorRow(p.sector)).parts.append(p)
    for n, info in [*q.sectors.items(), *((n, i) for n, i in q.finished.items() if n in rows)]:
        r = rows.setdefault(n, SectorRow(n))
        r.cls, r.t0, r.deadline_t, r.missed = info.cls, info.t, info.deadline_t, info.missed
    missed = {n: cls for _, n, cls, _ in q.missed}
    for r in rows.values():
        r.parts.sort(key=lambda p: p.index)
        if r.t0 is None and r.parts:
            r.t0 = min(p.queued_t for p in r.parts)
        if r.sector not in q.sectors and not r.unfinished:
            r.done_t = max((p.done_t for p in r.parts if p.done_t is not None), default=None)
            r.missed = r.missed or r.sector in missed
            r.cls = r.cls or missed.get(r.sector, "")
    live = sorted((r for r in rows.values() if r.done_t is None), key=lambda r: r.sector)
    done = sorted((r for r in rows.values() if r.done_t is not None), key=lambda r: -(r.done_t or 0.0))
    return live + done


def bar(r: SectorRow, pal, width: int, cells: int = BAR_MAX) -> Line:
    """A cell per partition (index order) in its state's colour in `cells` cells (the rows'
    widest: the counts line up), then its counts."""
    ln = Line()
    for p in r.parts[:cells]:
        ch, key = CELL[part_state(p)]
        ln.append(ch, style=pal[key])
    ln.append(" " * (cells + 1 - len(r.parts[:cells])))
    for name, n in r.counts().items():
        if n:
            key = CELL[name][1] if name in ("failed", "cancelled", "running") else "dim"
            ln.append(f"{n} {SHORT[name]} ", style=pal[key] if name != "failed" else "bold " + pal["fail"])
    return ln.truncate(width, overflow="ellipsis")


def when(r: SectorRow, now: float, pal) -> Line:
    """Age (finished: took) and the deadline: in N s, overdue N s (fail colour), met or missed."""
    ln = Line()
    if r.done_t is None:
        ln.append(f"{fmt_secs(now - r.t0) if r.t0 is not None else '':<{AGE_W}}")
    else:
        took = f"took {fmt_secs(r.done_t - r.t0)}" if r.t0 is not None else "done"
        ln.append(f"{took:<{AGE_W}}", style=pal["dim"])
    if r.deadline_t is not None and r.done_t is None:
        left = r.deadline_t - now
        if left >= 0:
            ln.append(f"due in {fmt_secs(left)}", style=pal["warn"] if r.missed else "")
        else:
            ln.append(f"OVERDUE {fmt_secs(-left)}", style="bold " + pal["fail"])
    elif r.missed:
        ln.append("deadline missed", style="bold " + pal["fail"])
    elif r.done_t is not None and r.deadline_t is not None and not r.counts()["cancelled"]:
        ln.append("met", style=pal["ok"])
    return ln


def render_sector_rows(st: DashboardState, pal, width: int, height: int, selected: int | None = None,
                       hold: RowHold | None = None) -> list[Line]:
    """The header and a row per sector that fits (the hold's order while a focused row is
    selected, c2tui/widgets/row_hold.py, in a window that keeps it shown); the unfinished that
    do not fit are counted."""
    part_w = max(8, min(PARTS_MAX, width - 17 - AGE_W - 18))  # the rest of a wide table stays blank
    head = Line(no_wrap=True, style="bold " + pal["dim"])
    head.append(f"{'sector':<8}{'class':<9}{'partitions':<{part_w}}{'age':<{AGE_W}}deadline")
    rows = [head]
    hold = hold or RowHold(lambda r: r.sector)
    all_rows = hold.order(sector_rows(st))
    room = max(0, height - 1)
    top = hold.window(all_rows, selected, room)
    if room > 1 and any(r.done_t is None for r in all_rows[:top] + all_rows[top + room:]):
        room -= 1
        top = hold.window(all_rows, selected, room)
    shown = all_rows[top:top + room]
    cells_w = min(BAR_MAX, max((len(r.parts) for r in shown), default=1))
    for r in shown:
        ln = Line(style="reverse") if r.sector == selected else Line()  # the row a row action acts on
        ln.append(f"{'s' + str(r.sector):<8}", style="bold " + (pal["fail"] if r.missed else ""))
        ln.append(f"{r.cls[:8]:<9}", style=pal["info"] if r.cls and r.cls != "c2" else "")
        cells = bar(r, pal, part_w - 1, cells_w)
        ln.append_text(cells).append(" " * (part_w - cells.cell_len))
        ln.append_text(when(r, st.t, pal))
        rows.append(ln.truncate(width, overflow="ellipsis"))
    hidden = sum(1 for r in all_rows[:top] + all_rows[top + len(shown):] if r.done_t is None)
    if hidden:
        rows.append(Line(f"+{hidden} more unfinished sectors", style="bold " + pal["warn"]).truncate(width))
    if not shown:
        rows.append(Line("no sectors yet", style=pal["dim"]))
    return rows
