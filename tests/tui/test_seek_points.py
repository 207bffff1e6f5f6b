"""A replay's seek checkpoints stay bounded (issue 35: a deep copy of the whole state every 2000
events made 100k `alloc` events take 47 s and 1.9 GB to draw). Counted, not timed: the whole
state's copies (every copy, deep or pickled, goes through its __reduce_ex__) and what they
weigh, and the memory a replay holds beside a plain fold of the same events."""
from __future__ import annotations

import gc
import tracemalloc

import pytest

from c2tui.sources import seek_points
from c2tui.sources.seek_points import SeekPoints
from c2tui.sources.replay import ReplaySource
from prover import DashboardState
from prover import events as ev
from prover.fold.apply import fold

pytestmark = pytest.mark.timeout(120)


def allocs(n: int) -> list[ev.Event]:
    """A state that grows with N: every event a new live buffer (the issue's recording)."""
    head: list[ev.Event] = [
        ev.RunStarted(t=0.0, backend="sim", simulated=True, profile="p", proved_log2=8, modelled_log2=27, gpus=1),
        ev.GpuInfo(t=0.1, gpu=0, name="g", total_bytes=1 << 34, budget_bytes=1 << 34, simulated=True)]
    return head + [ev.Alloc.model_construct(t=0.2 + i * 1e-3, gpu=0, owner=f"g0w{i % 16}", part=None, name=f"d_{i}",
                                            bytes=1, host=None) for i in range(n)]


def test_copies_of_the_state_are_bounded_and_linear_in_n(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each copy of the whole state weighs the events folded into it; their sum was quadratic
    (N/2000 copies: 50 at 100k events, 25 N in all) and is now at most ~12 N (the doubling's
    geometric sum: 16 copies, then 8 a doubling)."""
    events = allocs(100_000)
    copies: list[int] = []
    plain = DashboardState.__reduce_ex__

    def counted(self: DashboardState, protocol: int):  # type: ignore[no-untyped-def]
        copies.append(self.events)  # the events folded into the copied state: its weight
        return plain(self, protocol)

    monkeypatch.setattr(DashboardState, "__reduce_ex__", counted)
    src = ReplaySource(events, at=events[-1].t, playing=False)
    n = len(events)
    assert src.snapshot()[1].events == n
    assert len(copies) <= 2 * seek_points.MAX_CHECKPOINTS, len(copies)
    assert sum(copies) <= 13 * n, (sum(copies) / n, len(copies))
    assert len(src.checkpoints) <= seek_points.MAX_CHECKPOINTS


def test_a_replays_memory_grows_linearly() -> None:
    """The memory a replay holds once folded to its end (tracemalloc's count of what is still
    allocated), at N and 2N events: linear gives 2x; a copy every 2000 events (N/2000 states
    of up to N buffers each) gave ~3.5x."""
    def held(n: int) -> int:
        events = allocs(n)
        gc.collect()
        tracemalloc.start()
        try:
            src = ReplaySource(events, at=events[-1].t, playing=False)
            return tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
            del src

    small, large = held(20_000), held(40_000)
    assert large < 2.5 * small, (large >> 10, small >> 10)


def test_seeking_back_after_thinning_equals_a_fresh_fold() -> None:
    events = allocs(3000)
    points = SeekPoints(every=50, most=4)
    st = DashboardState()
    for i, e in enumerate(events, 1):
        st.apply(e)
        if points.due(i):
            points.take(i, st)
    assert len(points) <= 4 and points.every > 50
    for target in (0, 49, 50, 1234, 2999, 3002):
        idx, got = points.restore(target)
        assert idx <= target
        for e in events[idx:target]:
            got.apply(e)
        want = fold(events[:target])
        assert (got.events, {o: dict(b) for o, b in got.gpu(0).live.items()}) == \
               (want.events, {o: dict(b) for o, b in want.gpu(0).live.items()})
