"""One GPU's panel (nvitop-like block): utilisation history, what sets its pace, lock lanes,
VRAM bar and the timeline of its workers, drawn from one snapshot in one render call."""
from __future__ import annotations

from rich.text import Text
from textual.binding import Binding

from prover import COMPUTE

from c2tui.widgets.common import Line, StateView, fmt_secs, gib, sparkline
from c2tui.widgets.alerts import mark_panel, oom_text
from c2tui.widgets.lock_lanes import render_locks
from c2tui.widgets.pace_line import pace_line
from c2tui.widgets.timeline import lane_workers, render_timeline
from c2tui.widgets.vram_bar import render_vram
from c2tui.widgets.row_actions import GPU_KEYS, can_steer
from prover import DashboardState


def title_text(g, pal) -> Text:
    """The panel's border title: which GPU (changes only if the GPU is renamed)."""
    line = Text(no_wrap=True, overflow="ellipsis")
    if getattr(g, "host", None):  # a fleet: the host first, then its GPU (fleet-wide number)
        line.append(f"{g.host} ", style="bold " + pal["info"])
    line.append(f"GPU{g.gpu}", style="bold")
    line.append(f" {g.name}")
    if g.simulated and "sim" not in g.name.lower() and "model" not in g.name.lower():
        line.append(" (simulated)", style=pal["sim"])
    elif g.nvml:
        line.append(" NVML", style=pal["info"])
    return line


def util_line(g, pal, width: int) -> Line:
    """Utilisation now and its history (one cell per sample), the panel's first line."""
    line = Line()
    line.append("util    ", "bold")
    u = g.util
    busy = g.lock(COMPUTE).holder is not None
    spark_w = max(6, min(60, width - 46))
    hist = sparkline(g.util_history, spark_w)
    line.append(f"{u * 100:3.0f}% " if u is not None else "  –% ", "bold")
    line.append(hist.ljust(spark_w), pal["ntt_h"])
    line.append("  kernels ", pal["dim"])
    line.append(f"{fmt_secs(g.kernel_busy):>7}", "bold")
    line.append("  ● computing" if busy else "  ○ idle", "bold " + pal["ok"] if busy else pal["dim"])
    return line.truncate(width)


def subtitle_text(g, pal, window: float, width: int | None = None, st: DashboardState | None = None) -> Text:
    """done, fallbacks, OOMs, NVML's used bytes and how much of them the budget does not count
    (keys on the device, NTT plans, MSM scratch, the CUDA context), the timeline's span: the
    NVML part whole, shortened or left out to fit `width`, never cut mid-word."""
    line = Text(no_wrap=True)
    line.append("done ", style=pal["dim"])
    line.append(str(g.done), style="bold")
    line.append("  fallbacks ", style=pal["dim"])
    line.append(str(g.fallbacks), style="bold " + (pal["warn"] if g.fallbacks else ""))
    line.append_text(oom_text(st, g.gpu, pal, "  ") if st is not None  # retried / failed apart
                     else Text.assemble(("  OOM ", pal["dim"]), (str(g.ooms), "bold " + (pal["fail"] if g.ooms else ""))))
    span = Text(f"  timeline {window:.0f}s", style=pal["dim"])
    for nvml in _nvml_parts(g, pal):
        if width is None or len(line) + len(nvml) + len(span) <= width:
            line.append_text(nvml)
            break
    return line.append_text(span)


def _nvml_parts(g, pal) -> list[Text]:
    """The NVML part, longest first: used and outside the budget, used alone."""
    if not g.nvml or g.device_used is None:
        return []
    used = Text.assemble(("  NVML ", pal["dim"]), (f"{gib(g.device_used)} GiB", "bold"))
    outside = g.device_used - max(g.pool_reserved, g.live_bytes)
    if outside < 1 << 30:
        return [used]
    return [used + Text(f" ({gib(outside)} outside the budget)", style=pal["dim"]), used]


def fit_lines(util: Line, locks: list[Line], vram: list[Line], lanes: list[Line], axis: Line,
              room: int, pal, width: int, pace: Line | None = None) -> list[Line]:
    """The panel's lines in `room` rows: the locks and the VRAM bar always, then one lane,
    the axis, the utilisation, what sets the pace, a second lane, the VRAM legend, then the
    other lanes; lanes that do not fit are counted on the axis ("+5 more")."""
    keep_util = keep_axis = keep_legend = keep_pace = False
    n_lanes = 0
    left = room - len(locks) - 1
    for what in ("lane", "axis", "util", "pace", "lane", "legend", *["lane"] * max(0, len(lanes) - 2)):
        if left <= 0:
            break
        if what == "lane" and n_lanes < len(lanes):
            n_lanes += 1
        elif what == "util":
            keep_util = True
        elif what == "pace" and pace is not None:
            keep_pace = True
        elif what == "axis":
            keep_axis = True
        elif what == "legend":
            keep_legend = True
        else:
            continue
        left -= 1
    out = ([util] if keep_util else []) + ([pace] if keep_pace and pace is not None else []) + locks + vram[:2 if keep_legend else 1] + lanes[:n_lanes]
    hidden = len(lanes) - n_lanes
    if hidden and not keep_axis and n_lanes:  # no axis to carry the count: a row of its own, never over a lane
        out[-1] = Line(f"+{hidden + 1} more lanes", style="bold " + pal["warn"]).truncate(width)
    if keep_axis:
        if hidden:  # over the axis's blank label cells; the ticks stay where they were
            axis = axis.overlay(0, f"+{hidden} more ", "bold " + pal["warn"])
        out.append(axis)
    return out


# `o` on a selected GPU: one binding a state, so the footer says what the key does now
# ("o cordon" while it takes work, "o uncordon" while cordoned); check_action shows the one that applies
CORDON_BINDINGS = [Binding("o", "cordon", "cordon", tooltip=f"live: {GPU_KEYS['o']} (asks first)"),
                   Binding("o", "uncordon", "uncordon", tooltip=f"live: {GPU_KEYS['o']} (asks first)")]


def cordon_key_applies(app, st: DashboardState | None, gpu: int | None, action: str) -> bool | None:
    """check_action for CORDON_BINDINGS: live and steering, and the one for the GPU's state (no
    GPU selected: cordon)."""
    if action not in ("cordon", "uncordon"):
        return True
    if not can_steer(app):
        return False
    cordoned = st is not None and gpu is not None and gpu in st.jobs.cordoned
    return cordoned == (action == "uncordon")


class GpuPanel(StateView, can_focus=True):
    """Focused (Tab, or a click), it is the selected GPU of a row action: `o` cordons it (or
    uncordons it, and the footer says which)."""

    DEFAULT_CSS = "GpuPanel { height: 11; }"
    BINDINGS = [*CORDON_BINDINGS]

    def __init__(self, gpu: int, **kw) -> None:
        super().__init__(**kw)
        self.gpu = gpu
        self.window = 30.0
        self._workers: list[str] = []
        self.fixed_height: int | None = None  # the layout's (c2tui/dashboard/layout.py); None: every line
        self._cordoned = False  # as the footer's `o` last said it

    def wanted_height(self, st: DashboardState) -> int:
        g = st.gpus.get(self.gpu)
        self._workers = lane_workers(g) if g is not None else []
        if self.fixed_height is not None:
            return self.fixed_height
        # border 2 + util 1 + pace 1 + locks 2 + vram 2 + lanes + axis 1
        return 2 + 1 + 1 + 2 + 2 + len(self._workers) + 1

    def show(self, st: DashboardState) -> None:
        # early in a run, zoom the timeline onto what there is (10 s steps up to 30 s)
        self.window = float(min(30, max(10, 10 * -(-st.t // 10))))
        g = st.gpus.get(self.gpu)
        if g is not None:
            title = title_text(g, self.palette)
            cordoned = self.gpu in st.jobs.cordoned
            if cordoned:  # a job action: no new work here, in-flight work finishes
                title.append(" CORDONED", style="bold reverse " + self.palette["warn"])
            if cordoned != self._cordoned:  # the footer's `o`: cordon <-> uncordon
                self._cordoned = cordoned
                self.refresh_bindings()
            mark_panel(self, st, title, self.palette)  # its alert thresholds: border colour and why
            self.set_titles(title, subtitle_text(g, self.palette, self.window, max(0, self.size.width - 4) or None, st))
        super().show(st)

    def action_cordon(self) -> None:
        self.app.gpu_action(self.gpu)  # type: ignore[attr-defined]

    action_uncordon = action_cordon  # the confirmation names which, from the GPU's state

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return cordon_key_applies(self.app, self.state, self.gpu, action)

    def draw(self, st: DashboardState, width: int, height: int) -> list[Line]:
        g = st.gpus.get(self.gpu)
        if g is None:
            return [Line("no such GPU")]
        pal = self.palette
        tl = render_timeline(g, st.t, pal, width, self.window, self._workers or None)
        pace = pace_line(st.pace.readout(self.gpu, st.t), pal, width)  # the fold's pace concept (prover/fold/pace.py)
        return fit_lines(util_line(g, pal, width), render_locks(g, st.t, pal, width), render_vram(g, pal, width),
                         tl[:-1], tl[-1], height, pal, width, pace)
