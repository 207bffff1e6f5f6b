"""The partition table: in-flight partitions first, then the most recently finished, one
row each: id, GPU, worker, phase bar, current phase and its elapsed time, total time,
pre-staged or fallback, verified or failed. Drawn as Lines so a frame is cheap.

With focus it sorts (`s`: in flight first, failed first, by GPU, by worker, slowest first)
and filters (`f` state, `g` GPU, `w` worker; `esc` clears); the border says what applies. `v`
turns its rows into sectors (c2tui/widgets/sector_rows.py) and back; ↑ ↓ select a row of either
kind for a row action (c2tui/widgets/row_actions.py). From the first ↑ ↓ until esc or the focus leaves,
the rows hold their order (c2tui/widgets/row_hold.py; the title says "order held")."""
from __future__ import annotations

from typing import TYPE_CHECKING

from textual.binding import Binding

from c2tui.widgets.common import Line, StateView
from c2tui.widgets.partition_columns import (COLUMNS, Column, Row, column_room, device_sync_of, failed, header, lock_gpu,
                                              row_line, total_time)
from c2tui.widgets.row_hold import HELD, RowHold
from c2tui.widgets.sector_rows import render_sector_rows, sector_rows
from c2tui.widgets.row_actions import KEYS as ROW_KEYS, can_steer, step as step_row
from prover import DashboardState

if TYPE_CHECKING:
    from themes import Palette

STATES = ("all", "in flight", "done", "failed")
SORTS = ("in flight first", "failed first", "by gpu", "by worker", "slowest first")


def render_rows(st: DashboardState, pal: Palette, width: int, height: int, view: "PartitionView | None" = None,
                selected: str | None = None, hold: RowHold | None = None) -> list[Line]:
    """The header and the rows that fit: the view's order, or the hold's (rows that hold still
    under a focused cursor, c2tui/widgets/row_hold.py), in a window that keeps `selected` shown."""
    bar_w, cols = shown_columns(width)
    view = view or PartitionView()
    hold = hold or RowHold(lambda p: p.part)
    ordered = hold.order(view.select(st), st.partitions.get)
    queued = [p for p in st.partitions.values() if p.done_t is None and not p.phases] if view.plain() else []
    room = max(0, height - 1 - (1 if queued else 0))
    top = hold.window(ordered, selected, room)
    if room > 1 and any(p.done_t is None for p in ordered[:top] + ordered[top + room:]):
        top = hold.window(ordered, selected, room - 1)  # in-flight rows hidden: a row says how many
        room -= 1
    parts = ordered[top:top + room]
    hidden = sum(1 for p in ordered[:top] + ordered[top + len(parts):] if p.done_t is None)
    rows = [header(cols, bar_w, pal)]
    rows += [row_line(Row(st, p, pal, bar_w, device_sync_of(st, p)), cols, width, p.part == selected) for p in parts]
    return rows + _below(pal, width, height - len(rows), hidden, queued, empty=not parts and not queued,
                         plain=view.plain())


def shown_columns(width: int) -> tuple[int, list[Column]]:
    """The phase bar's width and the columns shown at `width` (COLUMNS, less those without room)."""
    bar_w, show_now, show_tot = column_room(width)
    return bar_w, [c for c in COLUMNS if not c.needs or (c.needs == "now" and show_now) or (c.needs == "total" and show_tot)]


def _below(pal: Palette, width: int, left: int, hidden: int, queued: list, empty: bool, plain: bool) -> list[Line]:
    """Under the rows: how many in-flight rows are hidden, the queued partitions (where a line
    is left), or why there is no row."""
    out = []
    if hidden:
        out.append(Line(f"+{hidden} more in flight (s sorts, f g filter)", no_wrap=True,
                        style="bold " + pal["warn"]).truncate(width, overflow="ellipsis"))
    if queued and len(out) < left:
        q = Line(no_wrap=True, overflow="ellipsis", style=pal["dim"])
        q.append(f"+{len(queued)} queued: ")
        q.append(" ".join(p.part for p in queued[:40]))
        out.append(q.truncate(width, overflow="ellipsis"))
    if empty:
        out.append(Line("no partitions yet" if plain else "no partition matches the filter", style=pal["dim"]))
    return out


class PartitionView:
    """How the table is sorted and filtered (a sort, a state, a GPU, a worker)."""

    def __init__(self) -> None:
        self.sort, self.state = 0, 0
        self.gpu: int | None = None
        self.worker: str | None = None

    def plain(self) -> bool:
        return self.sort == 0 and self.state == 0 and self.gpu is None and self.worker is None

    def keep(self, st: DashboardState, p) -> bool:
        state = STATES[self.state]
        return ((state == "all" and (p.phases or p.done_t is not None))
                or (state == "in flight" and p.done_t is None and bool(p.phases))
                or (state == "done" and p.done_t is not None and not failed(p))
                or (state == "failed" and failed(p))) \
            and (self.gpu is None or self.gpu == (p.gpu if p.gpu is not None else lock_gpu(st, p))) \
            and (self.worker is None or p.worker == self.worker)  # lock_gpu scans every lock: only when filtering

    def select(self, st: DashboardState) -> list:
        parts = [p for p in st.partitions.values() if self.keep(st, p)]
        # the default: in flight in start order, then the most recently finished first
        parts.sort(key=lambda p: (p.done_t is not None, -(p.done_t or 0.0)))
        how = SORTS[self.sort]
        if how == "failed first":
            parts.sort(key=lambda p: not failed(p))
        elif how == "by gpu":
            parts.sort(key=lambda p: (p.gpu is None, p.gpu or 0))
        elif how == "by worker":
            parts.sort(key=lambda p: (p.worker is None, p.worker or ""))
        elif how == "slowest first":
            parts.sort(key=lambda p: -(total_time(p, st.t) or 0.0))
        return parts

    def describe(self) -> str:
        bits = [] if self.sort == 0 else [f"sort {SORTS[self.sort]}"]
        if self.state:
            bits.append(STATES[self.state])
        if self.gpu is not None:
            bits.append(f"gpu {self.gpu}")
        if self.worker is not None:
            bits.append(f"worker {self.worker}")
        return " · ".join(bits)


def _next(values: list, current):
    """The value after `current` in [None, *values] (None: no filter), wrapping round."""
    cycle = [None, *values]
    return cycle[(cycle.index(current) + 1) % len(cycle)] if current in cycle else None


class PartitionTable(StateView, can_focus=True):
    DEFAULT_CSS = "PartitionTable { height: 1fr; }"
    BINDINGS = [
        Binding("s", "cycle_sort", "sort", tooltip="sort: " + " → ".join(SORTS)),
        Binding("f", "cycle_state", "state", tooltip="state filter: " + " → ".join(STATES)),
        Binding("g", "cycle_gpu", "gpu", tooltip="GPU filter: all → each GPU"),
        Binding("w", "cycle_worker", "worker", tooltip="worker filter: all → each worker (of the GPU filtered on)"),
        Binding("escape", "clear", "all", key_display="esc", tooltip="back to all partitions, in flight first, "
                "in the live order (drops the selection)"),
        # row actions (c2tui/widgets/row_actions.py): a row selected with the arrows, then a key; each asks first
        Binding("v", "toggle_rows", "sectors", tooltip="rows: partitions ↔ sectors (a sector row: c or x "
                "cancels the sector)"),
        Binding("up", "move(-1)", "row", key_display="↑", show=False,
                tooltip="select a row (for a row action); the rows then hold their order"),
        Binding("down", "move(1)", "row", key_display="↓", show=False,
                tooltip="select a row (for a row action); the rows then hold their order"),
        *(Binding(k, f"row('{k}')", what, show=False, tooltip=f"live: {what} (asks first, naming what it does)")
          for k, what in ROW_KEYS.items()),
    ]

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.view = PartitionView()
        self.selected: str | None = None  # the partition a row action acts on (↑ ↓ with focus)
        self.sectors = False  # `v`: a row per sector instead of per partition
        self.selected_sector: int | None = None  # the sector row a row action acts on
        # rows that hold still while focused with a row selected (c2tui/widgets/row_hold.py)
        self.hold: RowHold = RowHold(lambda p: p.part)
        self.sector_hold: RowHold = RowHold(lambda r: r.sector)

    def action_toggle_rows(self) -> None:
        self.sectors = not self.sectors
        self._changed()

    def _rows(self) -> list:
        """The rows in the order drawn now (the hold's, else live)."""
        st = self.state
        if st is None:
            return []
        if self.sectors:
            return self.sector_hold.order(sector_rows(st))
        return self.hold.order(self.view.select(st), st.partitions.get)

    def action_move(self, step: int) -> None:
        """↑ ↓: the next row in the order on screen; the order holds from the first press on."""
        if self.state is None:
            return
        rows, hold = self._rows(), (self.sector_hold if self.sectors else self.hold)
        hold.hold(rows)  # what is on screen now, rows that came since included: nothing moves
        if self.sectors:
            self.selected_sector = step_row([r.sector for r in rows], self.selected_sector, step)
        else:
            self.selected = step_row([p.part for p in rows], self.selected, step)
        self._changed()

    def on_focus(self) -> None:
        if self.state is not None and (self.selected_sector if self.sectors else self.selected) is not None:
            (self.sector_hold if self.sectors else self.hold).hold(self._rows())
        self._changed()

    def on_blur(self) -> None:
        self.hold.release()  # unfocused, the table shows the live order (and no selection)
        self.sector_hold.release()
        self._changed()

    def _rehold(self) -> None:
        """A sort or filter asked for: the new order, held again if it was."""
        if self.hold.held:
            self.hold.release()
            self.hold.hold(self.view.select(self.state) if self.state is not None else [])
        self._changed()

    def action_row(self, key: str) -> None:
        chosen = self.selected_sector if self.sectors else self.selected
        if chosen is None:
            self.notify("select a row first (↑ ↓)", severity="warning")
            return
        if self.sectors:
            self.app.sector_action(chosen, key)  # type: ignore[attr-defined]
        else:
            self.app.row_action(chosen, key)  # type: ignore[attr-defined]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "row":  # steering: live and not read-only only
            return can_steer(self.app)
        return True

    def show(self, st: DashboardState) -> None:
        self.state = st
        self._titles_for(st)
        super().show(st)

    def _titles_for(self, st: DashboardState) -> None:
        inflight = sum(1 for p in st.partitions.values() if p.done_t is None and p.phases)
        queued = sum(1 for p in st.partitions.values() if not p.phases and p.done_t is None)
        sub = f"{inflight} in flight · {queued} queued · {st.partitions_ok} ok · {st.partitions_failed} failed"
        held = (self.sector_hold if self.sectors else self.hold).held and self.has_focus
        if self.sectors:  # the same counts under it: the sectors' rows are made of these partitions
            self.set_titles(f"Sectors · {len(st.queues.sectors)} unfinished · v partitions"
                            + (f" · {HELD}" if held else ""), sub)
            return
        how = " · ".join(x for x in (self.view.describe(), HELD if held else "") if x)
        self.set_titles(f"Partitions · {how}" if how else "Partitions", sub)

    def draw(self, st: DashboardState, width: int, height: int) -> list[Line]:
        if self.sectors:
            return render_sector_rows(st, self.palette, width, height, self.selected_sector if self.has_focus else None,
                                      self.sector_hold)
        return render_rows(st, self.palette, width, height, self.view, self.selected if self.has_focus else None,
                           self.hold)

    def _changed(self) -> None:
        if self.state is not None:
            self._titles_for(self.state)
        self._lines = None
        self.refresh()

    def action_cycle_sort(self) -> None:
        self.view.sort = (self.view.sort + 1) % len(SORTS)
        self._rehold()

    def action_cycle_state(self) -> None:
        self.view.state = (self.view.state + 1) % len(STATES)
        self._rehold()

    def action_cycle_gpu(self) -> None:
        gpus = sorted(self.state.gpus) if self.state is not None else []
        self.view.gpu = _next(gpus, self.view.gpu)
        self._rehold()

    def action_cycle_worker(self) -> None:
        st = self.state
        # only the workers of the GPU filtered on, so every step shows some partitions
        workers = sorted({p.worker for p in st.partitions.values()
                          if p.worker and (self.view.gpu is None or p.gpu == self.view.gpu)}) if st is not None else []
        self.view.worker = _next(workers, self.view.worker)
        self._rehold()

    def action_clear(self) -> None:
        self.view = PartitionView()
        self.sectors = False  # back to all partitions, as the key says, in the live order
        self.selected = self.selected_sector = None
        self.hold.release()
        self.sector_hold.release()
        self._changed()
