"""Is VRAM growing across partitions? A trend test over the last marks of each series.

Every partition leaves a VramMark at the same point (its GPU section's end, after its own
frees), so the series below compare like with like. Per GPU:
- `owner`: each worker's own live bytes at its own marks. 0 every time unless it kept
  something: the cleanest signal, and it names the owner;
- `live`: the pool's live bytes, and `cached`: what the pool keeps beyond them. Other
  workers' pre-staged buffers come and go under these, so the test reads the floor of
  each block of `block` marks (the least of them), after the first `warmup` marks (the
  workers filling up is a step, not a leak). The owner named is the one whose bytes rose most;
- `outside_pool`: NVML's used bytes less the pool's (a library's own allocations, the
  2026 sppark leak's shape), where NVML is read.

The test is Mann-Kendall's (non-parametric: no distribution assumed, ties corrected), with
Sen's slope and its confidence interval (Gilbert 1987, 1 - alpha): a series grows when the
trend's p < alpha, the interval's low end is above 0 and it grew at least `min_growth` bytes
over the window. Its state changes (growing, cleared) are what the caller emits (VramGrowth).
"""
from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

WINDOW, ALPHA, MIN_GROWTH, WARMUP, BLOCK = 8, 0.01, 64 << 20, 8, 4


@dataclass(frozen=True)
class Trend:
    s: int  # Mann-Kendall's S
    p: float  # two-sided p-value
    slope: float  # Sen's slope, per step
    low: float  # its 1 - alpha confidence interval
    high: float
    n: int


def mann_kendall(xs: list[float]) -> tuple[int, float, float]:
    """(S, Var(S) with ties corrected, two-sided p)."""
    n = len(xs)
    s = sum((xs[j] > xs[i]) - (xs[j] < xs[i]) for i in range(n) for j in range(i + 1, n))
    ties: dict[float, int] = {}
    for x in xs:
        ties[x] = ties.get(x, 0) + 1
    var = (n * (n - 1) * (2 * n + 5) - sum(t * (t - 1) * (2 * t + 5) for t in ties.values())) / 18.0
    if var <= 0:
        return s, 0.0, 1.0
    z = (s - 1) / math.sqrt(var) if s > 0 else (s + 1) / math.sqrt(var) if s < 0 else 0.0
    return s, var, min(1.0, 2.0 * (1.0 - NormalDist().cdf(abs(z))))


def sen_slope(xs: list[float], var: float, alpha: float) -> tuple[float, float, float]:
    """(median pairwise slope, low, high) with Gilbert's rank interval."""
    slopes = sorted((xs[j] - xs[i]) / (j - i) for i in range(len(xs)) for j in range(i + 1, len(xs)))
    if not slopes:
        return 0.0, 0.0, 0.0
    m = len(slopes)
    mid = slopes[m // 2] if m % 2 else (slopes[m // 2 - 1] + slopes[m // 2]) / 2
    c = NormalDist().inv_cdf(1 - alpha / 2) * math.sqrt(max(var, 0.0))
    lo = max(0, min(m - 1, int(round((m - c) / 2)) - 1))
    hi = max(0, min(m - 1, int(round((m + c) / 2))))
    return mid, slopes[lo], slopes[hi]


def trend(xs: list[float], alpha: float = ALPHA) -> Trend:
    s, var, p = mann_kendall(xs)
    slope, low, high = sen_slope(xs, var, alpha)
    return Trend(s, p, slope, low, high, len(xs))


@dataclass
class _Series:
    kind: str  # owner | live | cached | outside_pool
    owner: str
    block: int
    values: deque = field(default_factory=deque)  # floors (or values), the last `window`
    pending: list = field(default_factory=list)  # the current block's values
    owners: deque = field(default_factory=deque)  # owners' bytes at each kept value (live only)
    growing: bool = False


class GrowthDetector:
    """One GPU's series. `add(mark, budget)` returns the VramGrowth fields of every state change."""

    def __init__(self, window: int = WINDOW, alpha: float = ALPHA, min_growth: int = MIN_GROWTH,
                 warmup: int = WARMUP, block: int = BLOCK) -> None:
        if window < 4:
            raise ValueError("a trend test wants a window of 4 marks or more")
        self.window, self.alpha, self.min_growth, self.warmup, self.block = window, alpha, min_growth, warmup, block
        self.marks = 0
        self._series: dict[tuple[str, str], _Series] = {}

    def add(self, mark: Any, budget: int | None = None) -> list[dict[str, Any]]:
        """`mark`: a VramMark (or anything with its fields)."""
        self.marks += 1
        out = self._feed(("owner", mark.worker), 1, mark.own, mark.owners, budget, mark)
        if self.marks > self.warmup:
            out += self._feed(("live", "pool"), self.block, mark.live, mark.owners, budget, mark)
            out += self._feed(("cached", "pool"), self.block, mark.cached, mark.owners, budget, mark)
            if mark.device_used is not None:
                outside = max(0, mark.device_used - mark.live - mark.cached)
                out += self._feed(("outside_pool", "outside the pool"), 1, outside, {}, budget, mark)
        return out

    def _feed(self, key: tuple[str, str], block: int, value: int, owners: dict[str, int], budget: int | None,
              mark: Any) -> list[dict[str, Any]]:
        ser = self._series.get(key)
        if ser is None:
            ser = self._series[key] = _Series(key[0], key[1], block, deque(maxlen=self.window),
                                              owners=deque(maxlen=self.window))
        ser.pending.append((value, dict(owners)))
        if len(ser.pending) < ser.block:
            return []
        low_v, low_owners = min(ser.pending, key=lambda vo: vo[0])
        ser.pending.clear()
        ser.values.append(low_v)
        ser.owners.append(low_owners)
        return self._judge(ser, budget, mark)

    def _judge(self, ser: _Series, budget: int | None, mark: Any) -> list[dict[str, Any]]:
        if len(ser.values) < self.window:
            return []
        xs = [float(v) for v in ser.values]
        tr = trend(xs, self.alpha)
        grown = int(xs[-1] - xs[0])
        now = tr.p < self.alpha and tr.low > 0 and grown >= self.min_growth
        if now == ser.growing:
            return []
        ser.growing = now
        headroom = None if budget is None else int(budget - mark.live)
        return [{"gpu": mark.gpu, "state": "growing" if now else "cleared", "series": ser.kind,
                 "owner": self._owner(ser), "slope": tr.slope, "slope_low": tr.low, "slope_high": tr.high,
                 "p": tr.p, "window": tr.n, "grown": grown, "headroom": headroom}]

    @staticmethod
    def _owner(ser: _Series) -> str:
        """A pool series names the owner whose bytes rose most over the window."""
        if ser.kind != "live" or len(ser.owners) < 2:
            return ser.owner
        first, last = ser.owners[0], ser.owners[-1]
        rises = {o: last.get(o, 0) - first.get(o, 0) for o in set(first) | set(last)}
        best = max(rises.items(), key=lambda kv: (kv[1], kv[0]), default=("pool", 0))
        return best[0] if best[1] > 0 else ser.owner
