"""One GPU's panel (nvitop-like block): utilisation history, lock lanes, VRAM bar and the
timeline of its workers, drawn from one snapshot in one render call."""
from __future__ import annotations

from rich.text import Text

from c2tui.widgets.common import StateView, fmt_secs, join_lines, sparkline
from c2tui.widgets.lock_lanes import render_locks
from c2tui.widgets.timeline import lane_workers, render_timeline
from c2tui.widgets.vram_bar import render_vram


def title_text(g, pal, width: int) -> Text:
    """The panel's border title: which GPU, and its utilisation history and counters."""
    line = Text(no_wrap=True, overflow="ellipsis")
    line.append(f"GPU{g.gpu}", style="bold")
    line.append(f" {g.name}")
    if g.simulated and "sim" not in g.name.lower() and "model" not in g.name.lower():
        line.append(" (simulated)", style=pal["sim"])
    elif g.nvml:
        line.append(" NVML", style=pal["info"])
    line.append("  util ", style=pal["dim"])
    u = g.util
    spark_w = max(6, min(30, width - len(g.name) - 30))
    hist = sparkline(g.util_history, spark_w)
    line.append(hist.rjust(spark_w, " "), style=pal["ntt_h"])
    line.append(f" {u * 100:3.0f}%" if u is not None else "  –%", style="bold")
    line.truncate(width, overflow="ellipsis")
    return line


def subtitle_text(g, pal, window: float) -> Text:
    line = Text(no_wrap=True)
    busy = g.locks["compute"].holder is not None if "compute" in g.locks else False
    line.append("computing" if busy else "idle", style="bold " + (pal["ok"] if busy else pal["dim"]))
    line.append("  kernels ", style=pal["dim"])
    line.append(fmt_secs(g.kernel_busy), style="bold")
    line.append("  done ", style=pal["dim"])
    line.append(str(g.done), style="bold")
    line.append("  fallbacks ", style=pal["dim"])
    line.append(str(g.fallbacks), style="bold " + (pal["warn"] if g.fallbacks else ""))
    line.append("  OOM ", style=pal["dim"])
    line.append(str(g.ooms), style="bold " + (pal["fail"] if g.ooms else ""))
    line.append(f"  timeline {window:.0f}s", style=pal["dim"])
    return line


class GpuPanel(StateView):
    DEFAULT_CSS = "GpuPanel { height: 11; }"

    def __init__(self, gpu: int, **kw) -> None:
        super().__init__(**kw)
        self.gpu = gpu
        self.window = 30.0
        self._workers: list[str] = []

    def wanted_height(self, st) -> int:
        g = st.gpus.get(self.gpu)
        n = len(lane_workers(g)) if g is not None else 0
        self._workers = lane_workers(g) if g is not None else []
        # border 2 (util in the title) + locks 2 + vram 2 + lanes + axis 1
        return 2 + 2 + 2 + n + 1

    def show(self, st) -> None:
        # early in a run, zoom the timeline onto what there is (10 s steps up to 30 s)
        self.window = float(min(30, max(10, 10 * -(-st.t // 10))))
        g = st.gpus.get(self.gpu)
        if g is not None:
            self.border_title = title_text(g, self.palette, self.content_width())
            self.border_subtitle = subtitle_text(g, self.palette, self.window)
        super().show(st)

    def draw(self, st, width: int, height: int) -> Text:
        g = st.gpus.get(self.gpu)
        if g is None:
            return Text("no such GPU")
        pal = self.palette
        lines = render_locks(g, st.t, pal, width)
        lines += render_vram(g, pal, width)
        lines += render_timeline(g, st.t, pal, width, self.window, self._workers or None)
        return join_lines(lines)
