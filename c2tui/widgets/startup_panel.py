"""The start-up panel: while keys are set up or loaded, kernels compile and devices come up,
a line per step (done ✓, running with its bar and what it is doing, failed ✗) and the time
so far, instead of a blank dashboard. Hidden once the first partition has started (unless a
step failed) and in recordings made before start-up was recorded. Later, while a key of
another size loads (prover/pipeline/keys/key_ring.py: a partition of a class whose key was cold),
the panel comes back as "keys" with a line per load and the partitions waiting for it."""
from __future__ import annotations

from c2tui.widgets.common import Line, StateView, fmt_secs
from prover import starting
from prover import DashboardState

LABEL = {"circuit": "circuit", "keys": "keys", "host_kernels": "host kernels", "gpu_kernels": "gpu kernels",
         "devices": "devices"}


SPIN = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"  # a running step's mark turns with the event clock (the engine's heartbeat moves it)


def spinner(t: float) -> str:
    return SPIN[int(t * 4) % len(SPIN)]


def _row(pal, width: int, label: str, frac: float, took: float, detail: str, running: bool, ok: bool,
         t: float = 0.0) -> Line:
    """One bar line: mark (a spinner while it runs), label, bar, share, seconds so far, what it is doing."""
    bar_w = max(10, min(40, width - 60))
    ln = Line(no_wrap=True)
    mark, style = (spinner(t), pal["info"]) if running else (("✓", pal["ok"]) if ok else ("✗", pal["fail"]))
    ln.append(f" {mark} ", style="bold " + style)
    ln.append(f"{label:<13}", style="bold")
    cells = round(frac * bar_w)
    ln.append("█" * cells, style=pal["ntt_h"] if ok else pal["fail"])
    ln.append(" " * (bar_w - cells), style=f"on {pal['free']}")
    ln.append(f" {frac:4.0%} ", style="bold")
    ln.append(f"{fmt_secs(took):>7}  ", style=pal["dim"] if not running else "bold")
    ln.append(detail, style=pal["fail"] if not ok else "")
    ln.truncate(width, overflow="ellipsis")
    return ln


def render_startup(st: DashboardState, pal, width: int) -> list[Line]:
    lines = []
    if starting(st):
        for name, s in st.startup.steps.items():
            running = s.t1 is None
            lines.append(_row(pal, width, LABEL.get(name, name), s.frac, (st.t - s.t0) if running else (s.seconds or 0.0),
                              s.detail, running, s.ok, st.t))
            if name == "keys":
                lines += setup_rows(st, pal, width)
    return lines + key_rows(st, pal, width)


def setup_rows(st: DashboardState, pal, width: int) -> list[Line]:
    """Under the keys step: the run's key's set-up steps done so far, with their seconds (a
    minutes-long set-up at 2^27 is then more than one bar). None in recordings without them."""
    k = next((x for _, x in sorted(st.keys.keys.items(), reverse=True) if x.setup_steps and x.worker is None), None)
    if k is None:
        return []
    ln = Line(no_wrap=True, overflow="ellipsis")
    ln.append(" " * 16 + "set-up: ", style=pal["dim"])
    ln.append(" · ".join(f"{n.replace('_', ' ')} {fmt_secs(sec)}" for n, sec in k.setup_steps.items()), style=pal["dim"])
    ln.truncate(width, overflow="ellipsis")
    return [ln]


def key_rows(st: DashboardState, pal, width: int) -> list[Line]:
    """A line per key load in progress after start-up (its progress, whose partition needs
    it, who waits for it)."""
    if starting(st):
        return []  # the keys step is the run's key's load
    rows = []
    for k in st.keys.loading:
        waiting = sorted(w for w, (log2, _, _) in st.keys.waiters.items() if log2 == k.log2)
        who = f"for {k.worker}" + (f", {len(waiting)} waiting" if waiting else "") + ": " if k.worker else ""
        rows.append(_row(pal, width, f"key 2^{k.log2}", k.frac, st.t - (k.load_t0 or st.t), who + k.detail, True, True,
                         st.t))
    return rows


class StartupPanel(StateView):
    DEFAULT_CSS = "StartupPanel { height: auto; border: round $primary; padding: 0 1; }"

    def wanted_height(self, st: DashboardState) -> int:
        rows = (len(st.startup.steps) + len(setup_rows(st, self.palette, 80)) if starting(st) else 0) \
            + len(key_rows(st, self.palette, 80))
        self.display = rows > 0
        return rows + 2 if rows else 0

    def show(self, st: DashboardState) -> None:
        u = st.startup
        if not starting(st):
            self.set_titles(f"keys: {len(st.keys.loading)} loading", "")
            super().show(st)
            return
        what = "start-up failed" if u.failed else ("start-up" if u.open else "start-up done")
        self.set_titles(f"{what} {fmt_secs(u.seconds if not u.open else st.t - min(s.t0 for s in u.steps.values()))}"
                        if u.steps else "start-up", "")
        super().show(st)

    def draw(self, st: DashboardState, width: int, height: int) -> list[Line]:
        return render_startup(st, self.palette, width)
