"""VRAM growth across partitions: the trend test's numbers, the detector's series, and a planted
leak (a sim device that keeps a buffer per partition) found and named, while the same run
without it stays quiet; the metric and the threshold follow the event."""
from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from prover.health.vram_growth import GrowthDetector, mann_kendall, trend

MiB = 1 << 20


def test_mann_kendall_and_sen_on_known_series():
    s, var, p = mann_kendall([float(i) for i in range(10)])  # strictly rising: S = n(n-1)/2
    assert (s, var) == (45, 125.0) and p == pytest.approx(8.3e-5, rel=0.02)  # z = 44 / sqrt(125)
    t = trend([0, 2, 4, 6, 8, 10, 12, 14])
    assert t.slope == 2 and t.low == 2 and t.p < 0.01
    flat = trend([3.0] * 8)
    assert (flat.s, flat.p, flat.slope) == (0, 1.0, 0.0)
    noise = trend([5, 3, 6, 2, 5, 3, 6, 2])
    assert noise.p > 0.5 and noise.low < 0 < noise.high


def _mark(worker, own, live, cached=0, owners=None, device_used=None, gpu=0):
    return SimpleNamespace(gpu=gpu, worker=worker, own=own, live=live, cached=cached, owners=owners or {worker: own},
                           device_used=device_used)


def test_an_owner_that_keeps_bytes_is_found_named_and_cleared():
    d = GrowthDetector(window=8, min_growth=64 * MiB)
    found = []
    for i in range(12):
        found += d.add(_mark("g0w1", (i + 1) * 16 * MiB, (i + 1) * 16 * MiB), budget=16 << 30)
    grow = [f for f in found if f["series"] == "owner"]
    assert grow and grow[0]["state"] == "growing" and grow[0]["owner"] == "g0w1"
    assert grow[0]["slope"] == 16 * MiB and grow[0]["slope_low"] > 0 and grow[0]["p"] < 0.01
    assert grow[0]["headroom"] == (16 << 30) - 8 * 16 * MiB
    cleared = []
    for _ in range(10):  # it stops keeping more: the window goes flat
        cleared += d.add(_mark("g0w1", 12 * 16 * MiB, 12 * 16 * MiB), budget=16 << 30)
    assert [f["state"] for f in cleared if f["series"] == "owner"] == ["cleared"]


def test_noise_and_a_warm_up_step_do_not_fire():
    rng = random.Random(7)
    d = GrowthDetector()
    found = []
    for i in range(200):
        live = (12 << 30) * rng.choice((0, 1, 2)) if i > 5 else 0  # others' pre-stages come and go after warm-up
        found += d.add(_mark(f"g0w{i % 3}", 0, live, cached=rng.choice((0, 12 << 30)),
                             owners={"g0w0": live}, device_used=live + (1 << 30)), budget=36 << 30)
    assert found == []


def test_memory_outside_the_pool_is_its_own_series():
    d = GrowthDetector(window=8, min_growth=64 * MiB, warmup=0)
    found = []
    for i in range(12):
        found += d.add(_mark("g0w0", 0, 0, device_used=(1 << 30) + i * 32 * MiB), budget=16 << 30)
    assert [(f["series"], f["owner"]) for f in found] == [("outside_pool", "outside the pool")]


def _run(leak: int, seen: list) -> None:
    from prover.config import load_config
    from prover.pipeline.engine import Engine
    from prover.pipeline.nullphases import NullPhases

    cfg = load_config(None, backend="sim", profile="tiny", time_scale=0.05, sectors=4, partitions=10,
                      workers_per_gpu=2, faults={"vram_leak_bytes": leak}, health_sample_s=0)
    eng = Engine(cfg, [seen.append], phases=NullPhases()).start()
    assert eng.wait(90)


@pytest.mark.timeout(180)
def test_a_planted_leak_is_found_and_its_owner_named_and_the_control_is_quiet():
    from prover.observe.metrics import MetricsFold, families
    from prover.observe.thresholds import worst

    leaky: list = []
    _run(16 * MiB, leaky)
    marks = [e for e in leaky if e.kind == "vram_mark"]
    assert len(marks) == 40 and marks[-1].live >= 32 * 16 * MiB  # every partition kept its 16 MiB
    grow = [e for e in leaky if e.kind == "vram_growth" and e.state == "growing"]
    owners = {e.owner for e in grow if e.series == "owner"}
    assert owners and owners <= {"g0w0", "g0w1"}, grow
    first = next(e for e in grow if e.series == "owner")
    assert first.slope == 16 * MiB and first.p < 0.01 and first.window == 8
    f = MetricsFold()
    for e in leaky:
        f.apply(e)
    slopes = {s.labels["owner"]: s.value for m in families(f) for s in m.samples
              if m.name == "c2tui_vram_growth_bytes_per_partition" and s.labels["series"] == "owner"}
    assert set(slopes) == owners and all(v == 16 * MiB for v in slopes.values())
    verdict = worst(f.ops.figures(0))
    assert verdict.level in ("amber", "red") and verdict.alert == "C2tuiVramGrowing"
    control: list = []
    _run(0, control)
    assert sum(e.kind == "vram_mark" for e in control) == 40
    assert [e for e in control if e.kind == "vram_growth"] == []


def _feed(d: GrowthDetector, owner_mib: list[float] | None = None, live_mib: list[float] | None = None) -> list:
    """Marks of one worker: its own bytes (owner series) or the pool's live bytes (pool series)."""
    found: list = []
    n = len(owner_mib or live_mib or [])
    for i in range(n):
        own = int((owner_mib or [0.0] * n)[i] * MiB)
        live = int((live_mib or [0.0] * n)[i] * MiB)
        found += d.add(_mark("g0w0", own, live, owners={"g0w0": live}), budget=16 << 30)
    return found


def test_the_warm_up_skips_the_pool_filling_up_and_no_more() -> None:
    """Issue 42: the warm-up skip survived a mutation. The pool's live bytes step up while the
    workers fill (the first `warmup` marks), then stay: quiet. The same rise after the warm-up
    is a trend, and fires."""
    rise = [i * 512.0 for i in range(8)]
    d = GrowthDetector(window=8, block=1, warmup=8)
    assert _feed(d, live_mib=rise + [rise[-1]] * 40) == []
    late = GrowthDetector(window=8, block=1, warmup=8)
    found = _feed(late, live_mib=[0.0] * 8 + rise)
    assert [(f["series"], f["state"]) for f in found] == [("live", "growing")]
    assert late.warmup == 8 and GrowthDetector().warmup >= 1  # the default skips something


def test_a_rise_smaller_than_min_growth_is_not_a_leak() -> None:
    """Strictly rising (p tiny, Sen's interval above 0) by 1 MiB a partition: 7 MiB over the
    window, under the 64 MiB floor: quiet. 16 MiB a partition: found."""
    small = GrowthDetector(window=8, min_growth=64 * MiB, warmup=0)
    assert _feed(small, owner_mib=[float(i) for i in range(12)]) == []
    big = GrowthDetector(window=8, min_growth=64 * MiB, warmup=0)
    assert [f["series"] for f in _feed(big, owner_mib=[16.0 * i for i in range(12)])] == ["owner"]


def test_a_series_whose_slope_interval_reaches_zero_is_not_a_leak() -> None:
    """Two steps, ties between: Mann-Kendall's p is under alpha (0.008) but Sen's interval starts
    at 0 (most pairs did not rise): a buffer kept twice, not a growth per partition. The
    interval's low end guards it (p < alpha alone would fire)."""
    steps = [0.0, 0.0, 0.0, 256.0, 256.0, 256.0, 512.0, 512.0]
    t = trend([float(x) for x in steps])
    assert t.p < 0.01 and t.low == 0
    d = GrowthDetector(window=8, min_growth=64 * MiB, warmup=0)
    assert _feed(d, owner_mib=steps) == []
