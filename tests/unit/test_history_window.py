"""History's per-minute series over a named sliding window, not one 2 s cell x 30 (issue 33):
a steady 12.8 fallbacks/min reads about that on every point, never 30 then 0."""
from __future__ import annotations

from prover import events as ev
from prover.fold.apply import fold
from prover.fold.model import DashboardState


def test_fallbacks_per_minute_are_over_the_sliding_window():
    evs: list = [ev.RunStarted(t=0.0, backend="sim", simulated=True, profile="tiny", proved_log2=8, modelled_log2=8,
                               gpus=1, config={}),
                 ev.GpuInfo(t=0.0, gpu=0, name="Toy", total_bytes=1 << 30, budget_bytes=1 << 30, simulated=True)]
    t, i = 0.5, 0
    while t < 90.0:
        evs.append(ev.Fallback(t=t, gpu=0, part=f"s{i}p0", worker="g0w0", reason="no room"))
        t, i = t + 60.0 / 12.8, i + 1
    evs.append(ev.Note(t=92.0, text="end"))
    st = fold(evs, DashboardState(rate_window_s=30.0))
    late = [p.fallbacks_per_min for p in st.history.series(0) if p.t >= 30.0]
    assert late and all(10.0 <= v <= 16.0 for v in late), late
    assert st.history.window_s == 30.0
