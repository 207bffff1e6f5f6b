"""Distributions and intervals, without scipy (the GPU machine has none): Student's t quantile,
the exact (Garwood) Poisson interval of a count, and the rate intervals every figure of the fold
rests on (docs/figures.md). Pure functions of numbers: nothing of prover is imported here."""
from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist
from typing import Callable

LEVEL = 0.95
EXACT_UP_TO = 400  # above: the square-root normal approximation (within 5e-5 of the exact ends), O(1)


def _t_two_sided(t: float, df: int) -> float:
    """P(|T| < t) for Student's t with integer df (Abramowitz & Stegun 26.7.3-4, exact)."""
    th = math.atan(t / math.sqrt(df))
    c2, s = math.cos(th) ** 2, math.sin(th)
    if df % 2:
        if df == 1:
            return 2 * th / math.pi
        term = total = math.cos(th)
        for j in range(1, (df - 1) // 2):
            term *= c2 * (2 * j) / (2 * j + 1)
            total += term
        return 2 / math.pi * (th + s * total)
    term = total = 1.0
    for j in range(1, df // 2):
        term *= c2 * (2 * j - 1) / (2 * j)
        total += term
    return s * total


@lru_cache(maxsize=512)
def t_quantile(df: int, level: float = LEVEL) -> float:
    """The two-sided `level` quantile of Student's t (4.303 for df 2 at 95%)."""
    if df < 1:
        raise ValueError("a t interval needs at least one degree of freedom")
    if df > 2000:
        return NormalDist().inv_cdf(0.5 + level / 2)
    lo, hi = 0.0, 1e7
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _t_two_sided(mid, df) < level else (lo, mid)
        if hi - lo < 1e-10 * max(1.0, hi):
            break
    return (lo + hi) / 2


def poisson_cdf(n: int, mu: float) -> float:
    """P(X <= n) for X ~ Poisson(mu), summed in log space."""
    if mu <= 0:
        return 1.0
    log_mu = math.log(mu)
    return min(1.0, sum(math.exp(k * log_mu - mu - math.lgamma(k + 1)) for k in range(n + 1)))


def _solve(f: Callable[[float], float], target: float, lo: float, hi: float, decreasing: bool) -> float:
    for _ in range(200):
        mid = (lo + hi) / 2
        above = f(mid) > target
        lo, hi = (mid, hi) if above == decreasing else (lo, mid)
        if hi - lo < 1e-9 * max(1.0, hi):
            break
    return (lo + hi) / 2


def exact_poisson_interval(n: int, level: float = LEVEL) -> tuple[float, float]:
    """Garwood's interval by its definition: the means whose tail probability is (1 - level)/2."""
    a = (1 - level) / 2
    top = n + 10 * math.sqrt(n + 1) + 20
    upper = _solve(lambda mu: poisson_cdf(n, mu), a, 0.0, top, decreasing=True)
    lower = 0.0 if n == 0 else _solve(lambda mu: 1 - poisson_cdf(n - 1, mu), a, 0.0, top, decreasing=False)
    return lower, upper


@lru_cache(maxsize=4096)  # every rate on screen asks at ~10 Hz; counts repeat
def poisson_interval(n: int, level: float = LEVEL) -> tuple[float, float]:
    """The exact (Garwood) interval of a Poisson mean from one count n (above EXACT_UP_TO, the
    square-root normal approximation: its ends within 5e-5 of the exact ones, and O(1))."""
    if n > EXACT_UP_TO:
        z = NormalDist().inv_cdf(0.5 + level / 2)
        return (max(0.0, math.sqrt(n) - z / 2) ** 2, (math.sqrt(n + 1) + z / 2) ** 2)
    return exact_poisson_interval(n, level)


def rate_interval(n: int, span_s: float, level: float = LEVEL) -> tuple[float, float] | None:
    """The `level` interval of a rate per minute from n events counted over span_s seconds: the
    exact (Garwood) Poisson interval of the count, over the span (None without a span). Used by
    the fold for every windowed, since-change and per-segment rate (docs/figures.md)."""
    if span_s <= 0:
        return None
    lo, hi = poisson_interval(n, level)
    return 60.0 * lo / span_s, 60.0 * hi / span_s


def rate_ratio_interval(n_a: int, span_a: float, n_b: int, span_b: float, level: float = LEVEL
                        ) -> tuple[float, float] | None:
    """The `level` interval of (n_a / span_a) / (n_b / span_b), two independent Poisson counts:
    log ratio +- z * sqrt(1/(n_a + 1/2) + 1/(n_b + 1/2)) (the half keeps an empty count finite).
    None without both spans."""
    if span_a <= 0 or span_b <= 0:
        return None
    z = NormalDist().inv_cdf(0.5 + level / 2)
    centre = math.log((n_a + 0.5) / span_a) - math.log((n_b + 0.5) / span_b)
    half = z * math.sqrt(1 / (n_a + 0.5) + 1 / (n_b + 0.5))
    return math.exp(centre - half), math.exp(centre + half)


def sd(xs: list[float]) -> float:
    """The sample standard deviation (0 for fewer than 2 values)."""
    if len(xs) < 2:
        return 0.0
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
