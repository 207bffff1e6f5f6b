"""The GPUs' own health and the host's CPUs (what nvitop and btop show beside the pipeline):
per GPU its temperature, power against its limit, SM and memory clocks, throttle reasons, PCIe
traffic and the processes holding its memory; the host's CPUs, one cell a core, and its
pressure (PSI) and available memory. A row above the GPU panels, a line each.

Only what was read: GpuHealth comes from NVML (source "nvml") or says "modelled"; a simulated
GPU records none and gets no line (nothing is invented). HostHealth is the real host (/proc).
Hidden while the run has said neither (older recordings, sim without health sampling)."""
from __future__ import annotations

from c2tui.widgets.common import Line, StateView, gib, sparkline
from prover import DashboardState

MAX_GPU_LINES = 4  # more GPUs: the first ones and "+N more" (c2tui status --json has every one)
SHORT = 32  # terminals shorter than this: one GPU line at most


def _rate(bps: float | None) -> str:
    if bps is None:
        return "–"
    if bps >= 1e9:
        return f"{bps / 1e9:.1f} GB/s"
    if bps >= 1e6:
        return f"{bps / 1e6:.0f} MB/s"
    return f"{bps / 1e3:.0f} kB/s"


def gpu_line(i: int, h, pal, width: int) -> Line:
    """"GPU0 nvml 61°C 420/700 W 60% · SM 1980/1980 MHz mem 3201 · PCIe ↓12 MB/s ↑1.1 GB/s · no throttle · mine 81 GiB"."""
    ln = Line(no_wrap=True, overflow="ellipsis")
    ln.append(f"GPU{i} ", "bold")
    ln.append("nvml " if h.source == "nvml" else "MODELLED ", pal["info"] if h.source == "nvml" else "bold " + pal["sim"])
    if h.temp_c is not None:
        hot = h.temp_c >= 85
        ln.append(f"{h.temp_c:.0f}°C ", "bold " + (pal["fail"] if hot else ""))
    if h.power_w is not None:
        lim = f"/{h.power_limit_w:.0f}" if h.power_limit_w else ""
        near = bool(h.power_limit_w) and h.power_w >= 0.95 * h.power_limit_w
        ln.append(f"{h.power_w:.0f}{lim} W ", "bold " + (pal["warn"] if near else ""))
    if h.throttle:  # before the clocks: it is why they are low, and a narrow line keeps it
        ln.append("· throttle " + ",".join(h.throttle) + " ", "bold " + pal["warn"])
    if h.sm_clock_mhz is not None:
        top = f"/{h.sm_clock_max_mhz}" if h.sm_clock_max_mhz else ""
        ln.append("· SM ", pal["dim"]).append(f"{h.sm_clock_mhz}{top} MHz ", "bold")
    if h.mem_clock_mhz is not None:
        ln.append("mem ", pal["dim"]).append(f"{h.mem_clock_mhz} MHz ", "")
    if h.pcie_rx_bps is not None or h.pcie_tx_bps is not None:
        ln.append("· PCIe ", pal["dim"]).append(f"↓{_rate(h.pcie_rx_bps)} ↑{_rate(h.pcie_tx_bps)} ", "")
    if not h.throttle:
        ln.append("· no throttle ", pal["dim"])
    procs = [p for p in h.procs if p.bytes is not None]
    if procs:
        ln.append("· ", pal["dim"])
        for p in sorted(procs, key=lambda p: (not p.mine, -(p.bytes or 0)))[:3]:
            who = "mine" if p.mine else (p.name or f"pid {p.pid}")
            ln.append(f"{who} {gib(p.bytes or 0)} GiB ", pal["ok"] if p.mine else "bold " + pal["warn"])
    return ln.truncate(width, overflow="ellipsis")


def host_line(h, pal, width: int) -> Line:
    """"host 16 CPUs ▁▁▇█… 21% · PSI cpu 0% mem 0% · 97/126 GiB free"."""
    ln = Line(no_wrap=True, overflow="ellipsis")
    ln.append("host ", "bold")
    n = len(h.cpu_busy)
    if n:
        mean = sum(h.cpu_busy) / n
        ln.append(f"{n} CPUs ", pal["dim"])
        ln.append(sparkline(h.cpu_busy, min(n, max(8, width // 3))) + " ", pal["ntt_h"])
        ln.append(f"{mean:.0%} ", "bold")
    psi = [(name, v) for name, v in (("cpu", h.cpu_pressure), ("mem", h.mem_pressure)) if v is not None]
    if psi:
        ln.append("· PSI ", pal["dim"])
        for name, v in psi:
            ln.append(f"{name} {v:.0%} ", "bold " + (pal["warn"] if v >= 0.1 else ""))
    if h.mem_available is not None:
        tot = f"/{gib(h.mem_total)}" if h.mem_total else ""
        ln.append("· ", pal["dim"]).append(f"{gib(h.mem_available)}{tot} GiB available ", "")
    ln.append("(/proc)", pal["dim"])
    return ln.truncate(width, overflow="ellipsis")


def render_health(st: DashboardState, pal, width: int, height: int) -> list[Line]:
    o = st.ops
    out: list[Line] = []
    if o.host is not None:
        out.append(host_line(o.host, pal, width))
    gpus = sorted(o.health)
    room = max(0, height - len(out))
    for i in gpus[:room if len(gpus) <= room else max(0, room - 1)]:
        out.append(gpu_line(i, o.health[i], pal, width))
    hidden = len(gpus) - (len(out) - (o.host is not None))
    if hidden > 0:
        out.append(Line(f"+{hidden} more GPUs' health: c2tui status", style=pal["dim"]))
    return out[:height]


class HealthPanel(StateView):
    DEFAULT_CSS = "HealthPanel { height: 1; padding: 0 1; }"

    def wanted_height(self, st: DashboardState) -> int:
        o = st.ops
        gpus = len(o.health)
        short = self.app.size.height < SHORT
        n = (o.host is not None) + min(gpus, 1 if short else MAX_GPU_LINES)
        n += gpus > (1 if short else MAX_GPU_LINES)  # the "+N more" line
        self.display = n > 0
        return n

    def draw(self, st: DashboardState, width: int, height: int) -> list[Line]:
        return render_health(st, self.palette, width, height)


__all__ = ["HealthPanel", "gpu_line", "host_line", "render_health"]
