"""One compact line per GPU, shown only when the GPU panels do not all fit: utilisation,
who holds each lock, VRAM, done / fallbacks / OOMs, and where that GPU's panel is
(on screen, or above / below: scroll the panels with the wheel or PgUp / PgDn, or click
the line to bring the panel into view). At most a third of the screen: a fleet whose GPUs
do not fit gets a line per host instead (fleet_overview.py), a host with GPUs "+N more".

Focused (Tab), its lines are GPU rows for a row action (c2tui/widgets/row_actions.py): ↑ ↓ select a GPU
(in reverse, its panel brought into view), `o` cordons or uncordons it. A fleet's per-host lines
are not GPU rows (a host is not cordoned whole): ↑ ↓ and `o` say so."""
from __future__ import annotations

from textual.binding import Binding

from c2tui.widgets.alerts import oom_cell, oom_parts
from c2tui.widgets.common import Line, StateView, gib, sparkline
from c2tui.widgets.fleet_overview import host_lines
from c2tui.widgets.gpu_panel import CORDON_BINDINGS, GpuPanel, cordon_key_applies
from c2tui.widgets.lock_lanes import lock_names
from c2tui.widgets.row_actions import step as step_row
from prover import DashboardState

WHERE = {"shown": ("on screen", "dim"), "above": ("↑ above: scroll up", "warn"),
         "below": ("↓ below: scroll down", "warn"), "partly": ("◐ partly shown", "dim")}
WHERE_SHORT = {"shown": ("shown", "dim"), "above": ("↑ above", "warn"), "below": ("↓ below", "warn"),
               "partly": ("◐ partly", "dim")}


def lock_cell(name: str, lk, pal) -> Line:
    ln = Line()
    ln.append(f"{name} ", style=pal["dim"])
    ln.append(f"{(lk.holder or 'free')[-4:]:<4}", style="bold" if lk.holder else pal["dim"])
    ln.append(f" +{len(lk.waiters)}" if lk.waiters else "   ", style=pal[f"wait:{name}"])
    return ln


DROP_ORDER = ("done", "spark", "fb", "OOM", "VRAM")  # left out in this order where a line is short of room


def overview_cells(g, pal, width: int, st: DashboardState | None = None) -> list[tuple[str, Line]]:
    """The line's cells in screen order, each named for DROP_ORDER; each ends in its blank."""
    cells = [("gpu", Line(f"GPU{g.gpu:<2}", style="bold"))]
    if st is not None and g.gpu in st.jobs.cordoned:  # on every line that names the GPU, never left out
        cells.append(("cordon", Line("CORDONED " if width >= 100 else "cordoned ", style="bold " + pal["warn"])))
    cells.append(("util", Line(f"{g.util * 100:4.0f}% " if g.util is not None else "   –% ", style="bold")))
    if width >= 100:
        cells.append(("spark", Line(f"{sparkline(g.util_history, 8):<8} ", style=pal["ntt_h"])))
    for name in lock_names(g):
        cells.append((name, lock_cell(name, g.locks[name], pal).append(" ")))
    vram = f"{gib(max(g.pool_reserved, g.live_bytes))}/{gib(g.budget or g.total)} "
    cells.append(("VRAM", Line.assemble(("VRAM ", pal["dim"]), (vram, "bold"))))
    cells.append(("done", Line(f"done {g.done} ", style=pal["dim"])))
    cells.append(("fb", Line(f"fb {g.fallbacks} ", style=pal["warn"] if g.fallbacks else pal["dim"])))
    n, retried, failed = oom_parts(st, g.gpu) if st is not None else (g.ooms, 0, 0)
    cells.append(("OOM", oom_cell(n, retried, failed, pal)))
    return cells


def overview_line(g, pal, width: int, where: str, st: DashboardState | None = None) -> Line:
    """One GPU in a line: cells that do not fit are left out whole, least needed first
    (at 80 columns the line ended 'fb 31 OOM…'), and where its panel is stays at the end.
    Room is counted against the longest place, so every GPU's line keeps the same cells."""
    places = WHERE if width >= 100 else WHERE_SHORT
    text, key = places.get(where, ("", "dim"))
    tail = Line(text, style="bold " + pal[key] if key != "dim" else pal[key])
    cells = overview_cells(g, pal, width, st)
    room = max(0, width - max(len(t) for t, _ in places.values()) - 1)
    for name in DROP_ORDER:
        if sum(c.cell_len for _, c in cells) <= room:
            break
        cells = [(n, c) for n, c in cells if n != name]
    ln = Line.assemble(*(c for _, c in cells)).truncate(max(0, width - tail.cell_len - 1), overflow="ellipsis")
    pad = width - ln.cell_len - tail.cell_len
    if pad > 0:
        ln.append(" " * pad)
    return ln.append_text(tail)


def panel_places(box) -> dict[int, str]:
    """Where each GPU panel is in the scrolled box: shown, partly, above or below."""
    top, height = box.scroll_offset.y, box.scrollable_content_region.height
    places = {}
    for p in box.query(GpuPanel):
        r = p.virtual_region
        if r.y >= top and r.bottom <= top + height:
            places[p.gpu] = "shown"
        elif r.bottom <= top:
            places[p.gpu] = "above"
        elif r.y >= top + height:
            places[p.gpu] = "below"
        else:
            places[p.gpu] = "partly"
    return places


def selected_line(ln: Line) -> Line:
    """The line in reverse (the selected GPU row), its own colours kept under it."""
    out = Line(style="reverse")
    for text, style in ln.parts:
        out.append(text, style)
    return out


def lined_gpus(gpus: list[int], height: int) -> list[int]:
    """The GPUs that get a line in `height` lines: all, or where a short terminal caps this
    widget, all but the last line's worth (it names the GPUs that do not get one)."""
    return gpus if len(gpus) <= height else gpus[:max(0, height - 1)]


HOST_LINES = "these lines are hosts, not GPUs (a host is not cordoned whole): tab to a GPU panel to cordon one"


class GpuOverview(StateView, can_focus=True):
    """Watches the panels' box (`#gpus`): shows itself when it scrolls, hides when all fit."""

    DEFAULT_CSS = "GpuOverview { height: auto; display: none; }"
    FOCUS_ON_CLICK = False  # a click brings a panel into view; Tab selects GPU rows
    BINDINGS = [
        Binding("up", "move(-1)", "row", key_display="↑", show=False, tooltip="select a GPU line (for a row action)"),
        Binding("down", "move(1)", "row", key_display="↓", show=False, tooltip="select a GPU line (for a row action)"),
        *CORDON_BINDINGS,
    ]
    selected: int | None = None  # the GPU a row action acts on (↑ ↓ with focus)

    def __init__(self, box: str = "#gpus", **kw) -> None:
        super().__init__(**kw)
        self.box_selector = box
        self.places: dict[int, str] = {}
        self.overflow: bool | None = None  # set by the app's layout: the panels do not all fit

    def on_mount(self) -> None:
        self.call_after_refresh(self._watch_box)  # the box is mounted after this widget

    def _watch_box(self) -> None:
        box = self.screen.query_one(self.box_selector)
        self.watch(box, "scroll_y", self.follow, init=False)
        self.watch(box, "virtual_size", self.follow, init=False)

    def locate(self) -> None:
        """Which panels are off screen; show this widget only when some are."""
        box = self.screen.query_one(self.box_selector)
        self.places = panel_places(box)
        overflow = box.max_scroll_y > 0 and any(v != "shown" for v in self.places.values())
        if self.state is not None and len(self.state.gpus) > len(self.places):
            overflow = True  # a fleet's GPUs past the panels (the app mounts the first 8)
        if self.overflow is not None:  # the layout knows before the box is laid out
            overflow = self.overflow
        if overflow != self.display:
            self.display = overflow

    def show(self, st: DashboardState) -> None:
        # every new snapshot and every resize of the app comes here (the app redraws)
        cordoned = self.selected is not None and self.selected in st.jobs.cordoned
        if self.has_focus and (self.state is None or cordoned != (self.selected in self.state.jobs.cordoned)):
            self.call_later(self.refresh_bindings)  # the selected GPU was cordoned or uncordoned: the footer's `o`
        self.state = st
        self.locate()
        super().show(st)

    def follow(self, *_: object) -> None:
        """The panels scrolled or their content grew or shrank."""
        if self.state is not None:
            self.show(self.state)
        else:
            self.locate()

    def room(self, st: DashboardState) -> int:
        """Lines this widget may take: 4 on a short terminal, else a third of it, so the panels
        and partitions keep the rest; a fleet's 64 or 800 GPUs never take the whole screen."""
        rows = self.app.size.height if self.is_mounted else len(st.gpus)
        return max(1, min(len(st.gpus), 4 if rows < 32 else max(4, rows // 3)))

    def by_host(self, st: DashboardState) -> bool:
        """A fleet whose GPUs do not get a line each: a line per host instead (fleet_overview)."""
        return len(st.hosts) > 1 and len(st.gpus) > self.room(st)

    def wanted_height(self, st: DashboardState) -> int:
        return min(len(st.hosts), self.room(st)) if self.by_host(st) else self.room(st)

    def host_places(self, st: DashboardState) -> dict[str, str]:
        """Where each host's GPU panels are (the first hosts have panels): its best place."""
        order = ("shown", "partly", "above", "below")
        best: dict[str, str] = {}
        for i, where in self.places.items():
            h = st.gpus[i].host if i in st.gpus else None
            if h is not None and (h not in best or order.index(where) < order.index(best[h])):
                best[h] = where
        return {h: WHERE_SHORT[w][0] for h, w in best.items()}

    def draw(self, st: DashboardState, width: int, height: int) -> list[Line]:
        height = min(height, self.room(st))
        if self.by_host(st):
            return host_lines(st, self.palette, width, height, self.host_places(st))
        gpus = sorted(st.gpus)
        lined = lined_gpus(gpus, height)
        lines = [overview_line(st.gpus[i], self.palette, width, self.places.get(i, ""), st) for i in lined]
        if self.has_focus and self.selected in lined:
            at = lined.index(self.selected)
            lines[at] = selected_line(lines[at])
        if len(lined) < len(gpus):
            rest = gpus[len(lined):]
            more = Line(f"+{len(rest)} more GPUs (GPU{rest[0]}…GPU{rest[-1]}): scroll the panels",
                        style=self.palette["warn"])
            lines.append(more.truncate(width, overflow="ellipsis"))
        return lines

    def on_click(self, event) -> None:
        """A click on a GPU's line scrolls its panel into view."""
        if self.state is None:
            return
        st = self.state
        gpus = sorted(st.gpus)
        if self.by_host(st):  # a host's line: its first GPU that has a panel
            hosts = sorted(st.hosts.values(), key=lambda h: (h.gpus[0] if h.gpus else 1 << 30, h.host))
            gpus = [h.gpus[0] if h.gpus else -1 for h in hosts]
        y = event.y - self.gutter.top
        if 0 <= y < len(gpus):
            self.bring(gpus[y])

    def bring(self, gpu: int) -> None:
        """Scroll GPU `gpu`'s panel into view (none: a fleet's GPU past the panels)."""
        box = self.screen.query_one(self.box_selector)
        for p in box.query(GpuPanel):
            if p.gpu == gpu:
                box.scroll_to_widget(p, animate=False, top=True)

    def _rows(self) -> list[int] | None:
        """The GPU rows on screen; None (said why) where the lines are a fleet's hosts."""
        st = self.state
        if st is None:
            return []
        if self.by_host(st):
            self.notify(HOST_LINES, severity="warning")
            return None
        return lined_gpus(sorted(st.gpus), self.content_size.height or self.room(st))

    def action_move(self, step: int) -> None:
        rows = self._rows()
        if not rows:
            return
        self.selected = step_row(rows, self.selected, step)
        self.refresh_bindings()  # the footer's `o`: cordon or uncordon, for this GPU
        self.bring(self.selected)
        self._lines = None
        self.refresh()

    def action_cordon(self) -> None:
        rows = self._rows()
        if rows is None:
            return
        if self.selected not in rows:
            self.notify("select a GPU line first (↑ ↓)", severity="warning")
            return
        self.app.gpu_action(self.selected)  # type: ignore[attr-defined]

    action_uncordon = action_cordon

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return cordon_key_applies(self.app, self.state, self.selected, action)

    def on_focus(self) -> None:
        self._lines = None
        self.refresh()

    def on_blur(self) -> None:
        self._lines = None
        self.refresh()
