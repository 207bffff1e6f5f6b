"""The labels an operator acts on, pinned by what they mean (issue 42: SETTLE_PROOFS 10 -> 5 and
a significant slowdown labelled "not significant" survived the suite): a rate is "settling"
exactly while its 95% interval reaches past 1.85x the rate; a ratio whose interval lies wholly
below 1 is a significant slowdown on every surface that shows it."""
from __future__ import annotations

import pytest

import themes
from c2tui.text.segments import ratio_text
from c2tui.widgets.rate_text import window_item
from prover import events as ev
from prover.fold.apply import fold
from prover.fold.rates import SETTLE_PROOFS
from prover.fold.segments import segment_rows
from prover.stats.intervals import poisson_interval

PAL = themes.load("dark").palette
START = [ev.RunStarted(t=0.0, backend="sim", simulated=True, profile="tiny", proved_log2=8, modelled_log2=8, gpus=1,
                       config={"mem_sync": "device", "lock_mode": "two-lock", "b_g2": "cpu"}),
         ev.GpuInfo(t=0.0, gpu=0, name="Toy", total_bytes=1 << 30, budget_bytes=1 << 30, simulated=True),
         ev.LockAcquired(t=0.5, gpu=0, lock="compute", worker="g0w0", part="s99p9", wait=0.0)]


def _proof(part: str, t: float) -> list:
    return [ev.PartitionQueued(t=t - 0.4, part=part, sector=0, index=0),
            ev.LockRequested(t=t - 0.3, gpu=0, lock="mem", worker="g0w0", part=part),
            ev.ProofResult(t=t, part=part, ok=True), ev.PartitionDone(t=t, part=part, ok=True, seconds=1.0)]


def _rates(n: int):
    evs = list(START)
    for i in range(n):
        evs += _proof(f"s{i}p0", 1.0 + i)
    return fold(evs).rates()


@pytest.mark.parametrize("n", [SETTLE_PROOFS - 1, SETTLE_PROOFS])
def test_a_rate_is_settling_exactly_while_its_interval_reaches_past_1_85x(n: int) -> None:
    """The threshold by its meaning, at its boundary: below it the Garwood interval of the count
    reaches above 1.85x the rate (9 proofs: 1.90x), at it no longer (10: 1.84x)."""
    r = _rates(n)
    wide = poisson_interval(n)[1] / n > 1.85
    assert r.window_proofs == n and r.settling == wide
    text = window_item(r, PAL, compact=False).plain
    assert ("settling" in text) == wide, text


def _two_segments(second_gap: float) -> list:
    evs = list(START)
    t = 1.0
    for i in range(30):
        evs += _proof(f"s{i}p0", t)
        t += 1.0
    evs.append(ev.ModeChange(t=t - 0.5, knob="b_g2", old="cpu", new="gpu", source="key"))
    for i in range(30, 60):
        evs += _proof(f"s{i}p0", t)
        t += second_gap
    return segment_rows(fold(evs))


def test_a_significant_slowdown_is_labelled_significant_everywhere() -> None:
    a, b = _two_segments(2.5)  # 60/min, then 24/min
    assert b.ratio == pytest.approx(0.4, rel=0.05) and b.ratio_ci[1] < 1.0
    assert b.ratio_significant is True
    assert "not significant" not in ratio_text(b)
    from c2tui.widgets.segment_panel import _ratio, _ratio_ci

    assert " ns" not in _ratio(b) and "not significant" not in _ratio_ci(b)


def test_a_ratio_holding_1_is_labelled_not_significant_everywhere() -> None:
    a, b = _two_segments(1.0)
    assert b.ratio_ci[0] < 1.0 < b.ratio_ci[1] and b.ratio_significant is False
    assert ratio_text(b).endswith("not significant")
    from c2tui.widgets.segment_panel import _ratio, _ratio_ci

    assert _ratio(b).endswith(" ns") and _ratio_ci(b).endswith("not significant")
