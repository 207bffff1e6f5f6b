"""One compact line per GPU, shown only when the GPU panels do not all fit: utilisation,
who holds each lock, VRAM, done / fallbacks / OOMs, and where that GPU's panel is
(on screen, or above / below: scroll the panels with the wheel or PgUp / PgDn, or click
the line to bring the panel into view)."""
from __future__ import annotations

from c2tui.widgets.common import Line, StateView, gib, sparkline
from c2tui.widgets.gpu_panel import GpuPanel
from c2tui.widgets.lock_lanes import lock_names

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


def overview_line(g, pal, width: int, where: str) -> Line:
    ln = Line()
    ln.append(f"GPU{g.gpu:<2}", style="bold")
    ln.append(f"{g.util * 100:4.0f}% " if g.util is not None else "   –% ", style="bold")
    if width >= 100:
        ln.append(f"{sparkline(g.util_history, 8):<8} ", style=pal["ntt_h"])
    for name in lock_names(g):
        ln.append_text(lock_cell(name, g.locks[name], pal))
        ln.append(" ")
    budget = g.budget or g.total
    ln.append("VRAM ", style=pal["dim"])
    ln.append(f"{gib(max(g.pool_reserved, g.live_bytes))}/{gib(budget)} ", style="bold")
    ln.append(f"done {g.done} ", style=pal["dim"])
    ln.append(f"fb {g.fallbacks} ", style=pal["warn"] if g.fallbacks else pal["dim"])
    ln.append(f"OOM {g.ooms} ", style=pal["fail"] if g.ooms else pal["dim"])
    text, key = (WHERE if width >= 100 else WHERE_SHORT).get(where, ("", "dim"))
    tail = Line(text, style="bold " + pal[key] if key != "dim" else pal[key])
    ln.truncate(max(0, width - tail.cell_len - 1), overflow="ellipsis")
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


class GpuOverview(StateView):
    """Watches the panels' box (`#gpus`): shows itself when it scrolls, hides when all fit."""

    DEFAULT_CSS = "GpuOverview { height: auto; display: none; }"

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
        if self.overflow is not None:  # the layout knows before the box is laid out
            overflow = self.overflow
        if overflow != self.display:
            self.display = overflow

    def show(self, st) -> None:
        # every new snapshot and every resize of the app comes here (the app redraws)
        self.locate()
        super().show(st)

    def follow(self, *_: object) -> None:
        """The panels scrolled or their content grew or shrank."""
        if self.state is not None:
            self.show(self.state)
        else:
            self.locate()

    def wanted_height(self, st) -> int:
        # never more lines than the terminal has: a fleet's 800 GPUs would build 800 unseen lines
        rows = self.app.size.height if self.is_mounted else len(st.gpus)
        return max(1, min(len(st.gpus), rows))

    def draw(self, st, width: int, height: int) -> list[Line]:
        gpus = sorted(st.gpus)
        # a short terminal caps this widget (CSS max-height): the GPUs that do not get a
        # line are named on the last one
        if self.is_mounted:
            height = min(height, self.app.size.height)
        room = len(gpus) if len(gpus) <= height else max(0, height - 1)
        lines = [overview_line(st.gpus[i], self.palette, width, self.places.get(i, "")) for i in gpus[:room]]
        if room < len(gpus):
            rest = gpus[room:]
            more = Line(f"+{len(rest)} more GPUs (GPU{rest[0]}…GPU{rest[-1]}): scroll the panels",
                        style=self.palette["warn"])
            lines.append(more.truncate(width, overflow="ellipsis"))
        return lines

    def on_click(self, event) -> None:
        """A click on a GPU's line scrolls its panel into view."""
        if self.state is None:
            return
        gpus = sorted(self.state.gpus)
        y = event.y - self.gutter.top
        if 0 <= y < len(gpus):
            box = self.screen.query_one(self.box_selector)
            for p in box.query(GpuPanel):
                if p.gpu == gpus[y]:
                    box.scroll_to_widget(p, animate=False, top=True)
