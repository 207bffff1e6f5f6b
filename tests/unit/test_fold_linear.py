"""The fold's work per event does not grow with what the state holds (issue 35's audit of the
fold and the widgets): live bytes are kept as a running total, where every history bucket (and
every frame's VRAM bar) summed every live buffer - O(buffers x buckets) over a recording of
many buffers and spaced events."""
from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from prover import DashboardState
from prover import events as ev

HEAD = [ev.RunStarted(t=0.0, backend="sim", simulated=True, profile="p", proved_log2=8, modelled_log2=27, gpus=1),
        ev.GpuInfo(t=0.1, gpu=0, name="g", total_bytes=1 << 34, budget_bytes=1 << 34, simulated=True)]


def _with_buffers(n: int) -> DashboardState:
    s = DashboardState()
    for e in HEAD:
        s.apply(e)
    for i in range(n):
        s.apply(ev.Alloc.model_construct(t=0.2, gpu=0, owner=f"g0w{i % 16}", part=None, name=f"d_{i}", bytes=1, host=None))
    return s


def _spaced_events_cpu_s(s: DashboardState, k: int) -> float:
    """k notes 2.5 s apart: each closes a history bucket."""
    notes = [ev.Note.model_construct(t=1.0 + 2.5 * i, level="info", text="x", host=None) for i in range(k)]
    t0 = time.process_time()
    for e in notes:
        s.apply(e)
    return time.process_time() - t0


def test_history_buckets_cost_the_same_over_many_buffers() -> None:
    """3000 buckets over 200 and over 60k live buffers: a sum per bucket made the second ~300x
    the first (~3 s against ~0.01 s); a running total makes them alike. CPU time of the same
    process, one against the other."""
    small, large = _with_buffers(200), _with_buffers(60_000)
    assert large.gpu(0).live_bytes == 60_000
    few, many = _spaced_events_cpu_s(small, 3000), _spaced_events_cpu_s(large, 3000)
    assert many < 4 * few + 0.3, (few, many)
    assert large.history.series(0)[-1].vram_live == 60_000


_OPS = st.lists(st.tuples(st.sampled_from(["alloc", "free", "lost"]), st.integers(0, 2), st.sampled_from(["d_a", "d_bc"]),
                          st.integers(0, 1 << 33)), max_size=60)


@settings(max_examples=60, deadline=None)
@given(_OPS)
def test_live_bytes_is_always_the_sum_of_the_live_buffers(ops: list) -> None:
    s = DashboardState()
    s.apply(ev.HostJoined(t=0.0, host="h", node="n", gpu_offset=0, gpus=1))
    for k, (op, w, name, n) in enumerate(ops):
        t = 0.1 + k * 0.01
        if op == "alloc":
            s.apply(ev.Alloc(t=t, gpu=0, owner=f"g0w{w}", name=name, bytes=n, host="h"))
        elif op == "free":
            s.apply(ev.Free(t=t, gpu=0, owner=f"g0w{w}", name=name, bytes=n, host="h"))
        else:
            s.apply(ev.HostLeft(t=t, host="h", reason="gone", lost=True, requeued=[]))
        g = s.gpu(0)
        assert g.live_bytes == sum(sum(b.values()) for b in g.live.values()) >= 0
