"""The start-up panel: while keys are set up or loaded, kernels compile and devices come up,
a line per step (done ✓, running with its bar and what it is doing, failed ✗) and the time
so far, instead of a blank dashboard. Hidden once the first partition has started (unless a
step failed) and in recordings made before start-up was recorded."""
from __future__ import annotations

from c2tui.widgets.common import Line, StateView, fmt_secs
from prover import starting

LABEL = {"circuit": "circuit", "keys": "keys", "host_kernels": "host kernels", "gpu_kernels": "gpu kernels",
         "devices": "devices"}


def render_startup(st, pal, width: int) -> list[Line]:
    lines = []
    bar_w = max(10, min(40, width - 60))
    for name, s in st.startup.steps.items():
        ln = Line(no_wrap=True)
        running = s.t1 is None
        mark, style = ("●", pal["info"]) if running else (("✓", pal["ok"]) if s.ok else ("✗", pal["fail"]))
        ln.append(f" {mark} ", style="bold " + style)
        ln.append(f"{LABEL.get(name, name):<13}", style="bold")
        cells = round(s.frac * bar_w)
        ln.append("█" * cells, style=pal["ntt_h"] if s.ok else pal["fail"])
        ln.append(" " * (bar_w - cells), style=f"on {pal['free']}")
        ln.append(f" {s.frac:4.0%} ", style="bold")
        took = (st.t - s.t0) if running else (s.seconds or 0.0)
        ln.append(f"{fmt_secs(took):>7}  ", style=pal["dim"] if not running else "bold")
        ln.append(s.detail, style=pal["fail"] if not s.ok else "")
        ln.truncate(width, overflow="ellipsis")
        lines.append(ln)
    return lines


class StartupPanel(StateView):
    DEFAULT_CSS = "StartupPanel { height: auto; border: round $primary; padding: 0 1; }"

    def wanted_height(self, st) -> int:
        shown = starting(st)
        self.display = shown
        return len(st.startup.steps) + 2 if shown else 0

    def show(self, st) -> None:
        u = st.startup
        what = "start-up failed" if u.failed else ("start-up" if u.open else "start-up done")
        self.set_titles(f"{what} {fmt_secs(u.seconds if not u.open else st.t - min(s.t0 for s in u.steps.values()))}"
                        if u.steps else "start-up", "")
        super().show(st)

    def draw(self, st, width: int, height: int) -> list[Line]:
        return render_startup(st, self.palette, width)
