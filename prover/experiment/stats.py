"""An experiment's figures from its holds' counts: each arm's verified/min with a 95% interval,
each arm against the first as a ratio with a 95% interval paired over cycles, and a verdict.
Pure functions over `HoldCount`s (prover/experiment/tally.py makes them from events).

The method, and why (docs/experiment.md says it at length):
- A hold counts `n` verified partitions whose GPU section began after its settle and that
  finished inside it. Those are the partitions that began at most (window - lag) before its
  end, lag being how long a partition takes from its GPU section to done; so its exposure is
  window - lag (the arm's mean lag over every partition that began in its windows, finished
  inside or after them; never below a quarter of the window), and its rate n / exposure.
  A lag near the window makes the count small and the correction large: holds should last
  several lags (a note says so when the quarter floor is reached).
- Ratio: per cycle, d = log((n_arm + 1/2) / E_arm) - log((n_base + 1/2) / E_base) (the half
  keeps a hold that verified nothing finite); a Student t interval of the mean of d over the
  cycles (df = cycles - 1), exponentiated. Pairing within a cycle removes what the cycles share
  (drift, load); the t quantile is honest about few cycles (4.30 at 3 cycles, 12.7 at 2; none
  at 1). d's variance is never taken below the counts' own resolution (a count is only known
  to +-1/2: var >= (1/12)(1/n_a^2 + 1/n_b^2)), so identical counts do not give a zero-width
  interval.
- Per arm: the exact (Garwood) Poisson interval of the pooled count over the pooled exposure,
  widened to the t interval of the holds' log rates when there are 3 or more holds and they
  disagree more than counting explains.
"""
from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist
from typing import Callable, Literal

from pydantic import BaseModel, Field

LEVEL = 0.95
MIN_EXPOSURE_SHARE = 0.25  # a hold's exposure is never taken below this share of its window
Verdict = Literal["baseline", "faster", "slower", "no difference detected", "too few cycles"]
METHOD = ("ratio: paired Student t interval of per-cycle log-rate differences (df = cycles - 1, +1/2 per count, "
          "variance floored at the counts' resolution); per arm: exact Poisson interval of the pooled count, "
          "widened to the t interval of the holds' log rates (3+ holds); a hold counts partitions whose GPU "
          "section began after its settle and that finished inside it, over exposure = window - the arm's lag")


class HoldCount(BaseModel):
    """One hold's tally: what stats needs of it."""

    arm: int = Field(ge=0)
    cycle: int = Field(ge=0)
    window_s: float = Field(ge=0.0, description="from the settle's end to the hold's end")
    verified: int = Field(0, ge=0, description="partitions counted (see the module docstring)")
    lag_sum_s: float = Field(0.0, ge=0.0, description="sum of (done - GPU section start) over the verified "
                             "partitions whose section began in the window, finished in the hold or after")
    lag_n: int = Field(0, ge=0, description="how many lag_sum_s is over")
    failed: int = Field(0, ge=0)
    unchecked: int = Field(0, ge=0)
    ooms: int = Field(0, ge=0)
    fallbacks: int = Field(0, ge=0)


class ArmResult(BaseModel):
    arm: int
    label: str
    knobs: dict[str, str] = Field(default_factory=dict)
    holds: int
    verified: int
    exposure_s: float = Field(description="seconds the rate is over (window - lag, summed over holds)")
    lag_s: float | None = Field(None, description="mean seconds from GPU section start to done of the counted")
    per_min: float = Field(description="verified partitions per minute, pooled over the arm's holds")
    per_min_ci: tuple[float, float] | None = Field(None, description="95% interval of per_min")
    ratio: float | None = Field(None, description="per_min against the first arm's, paired over cycles")
    ratio_ci: tuple[float, float] | None = Field(None, description="95% interval of ratio")
    cycles_paired: int = 0
    verdict: Verdict = "baseline"
    failed: int = 0
    unchecked: int = 0
    ooms: int = 0
    fallbacks: int = 0


class ExperimentResult(BaseModel):
    level: float = LEVEL
    method: str = METHOD
    cycles_complete: int = Field(0, description="cycles in which every arm held to the end")
    arms: list[ArmResult]
    notes: list[str] = Field(default_factory=list)


# --- distributions (no scipy: the GPU machine has none) ------------------------------------
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


def _poisson_cdf(n: int, mu: float) -> float:
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


@lru_cache(maxsize=4096)  # every rate on screen asks at ~10 Hz; counts repeat
def poisson_interval(n: int, level: float = LEVEL) -> tuple[float, float]:
    """The exact (Garwood) interval of a Poisson mean from one count n."""
    a = (1 - level) / 2
    if n > 400:  # the normal approximation of the square root is exact enough there, and O(1)
        z = NormalDist().inv_cdf(1 - a)
        r = math.sqrt(n)
        return (max(0.0, r - z / 2) ** 2, (math.sqrt(n + 1) + z / 2) ** 2)
    top = n + 10 * math.sqrt(n + 1) + 20
    upper = _solve(lambda mu: _poisson_cdf(n, mu), a, 0.0, top, decreasing=True)
    lower = 0.0 if n == 0 else _solve(lambda mu: 1 - _poisson_cdf(n - 1, mu), a, 0.0, top, decreasing=False)
    return lower, upper


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


# --- an experiment's figures -----------------------------------------------------------------
def arm_lag(holds: list[HoldCount]) -> float | None:
    """The arm's mean lag over every partition that began in its windows (not only the counted:
    those are the quicker ones, the window's end cut the slow)."""
    n = sum(h.lag_n for h in holds)
    return sum(h.lag_sum_s for h in holds) / n if n else None


def exposure(h: HoldCount, lag: float | None) -> float:
    """Seconds hold h's count is over: its window less the arm's lag (see the module docstring)."""
    return max(h.window_s - (lag or 0.0), MIN_EXPOSURE_SHARE * h.window_s, 1e-9)


def log_rate(h: HoldCount, lag: float | None) -> float:
    return math.log((h.verified + 0.5) / exposure(h, lag))


def arm_rate(holds: list[HoldCount], level: float = LEVEL) -> tuple[float, tuple[float, float] | None]:
    """(verified/min pooled over holds, its interval); (0, None) without a hold."""
    if not holds:
        return 0.0, None
    lag = arm_lag(holds)
    n = sum(h.verified for h in holds)
    e = sum(exposure(h, lag) for h in holds)
    rate = 60.0 * n / e
    lo_n, hi_n = poisson_interval(n, level)
    lo, hi = 60.0 * lo_n / e, 60.0 * hi_n / e
    if len(holds) >= 3:
        ys = [log_rate(h, lag) for h in holds]
        half = t_quantile(len(ys) - 1, level) * _sd(ys) / math.sqrt(len(ys))
        centre = math.log(max(rate, 1e-12))
        if n:  # nothing verified: the Poisson interval's 0 stays the lower end
            lo = min(lo, math.exp(centre - half))
        hi = max(hi, math.exp(centre + half))
    return rate, (lo, hi)


def paired_ratio(base: list[HoldCount], arm: list[HoldCount], level: float = LEVEL
                 ) -> tuple[float | None, tuple[float, float] | None, int]:
    """(ratio arm/base, its interval, cycles paired): over the cycles both held in."""
    lag_b, lag_a = arm_lag(base), arm_lag(arm)
    by_cycle = {h.cycle: h for h in base}
    pairs = [(by_cycle[h.cycle], h) for h in arm if h.cycle in by_cycle]
    if not pairs:
        return None, None, 0
    d = [log_rate(a, lag_a) - log_rate(b, lag_b) for b, a in pairs]
    mean = sum(d) / len(d)
    if len(d) < 2:
        return math.exp(mean), None, 1
    floor = sum((1 / (a.verified + 0.5) ** 2 + 1 / (b.verified + 0.5) ** 2) / 12 for b, a in pairs) / len(pairs)
    sd = math.sqrt(max(_sd(d) ** 2, floor))
    half = t_quantile(len(d) - 1, level) * sd / math.sqrt(len(d))
    return math.exp(mean), (math.exp(mean - half), math.exp(mean + half)), len(d)


def verdict(ci: tuple[float, float] | None) -> Verdict:
    if ci is None:
        return "too few cycles"
    if ci[0] > 1.0:
        return "faster"
    if ci[1] < 1.0:
        return "slower"
    return "no difference detected"


def analyse(holds: list[HoldCount], labels: list[str], knobs: list[dict[str, str]] | None = None,
            level: float = LEVEL) -> ExperimentResult:
    """The experiment's figures from its complete holds (arm 0 is the baseline)."""
    by_arm = {i: [h for h in holds if h.arm == i] for i in range(len(labels))}
    base = by_arm.get(0, [])
    cycles = {h.cycle for h in holds}
    complete = sum(1 for c in cycles if all(any(h.cycle == c for h in by_arm[i]) for i in by_arm))
    arms: list[ArmResult] = []
    notes: list[str] = []
    for i, label in enumerate(labels):
        hs = by_arm[i]
        rate, ci = arm_rate(hs, level)
        lag = arm_lag(hs)
        r = ArmResult(arm=i, label=label, knobs=(knobs or [{}] * len(labels))[i], holds=len(hs),
                      verified=sum(h.verified for h in hs), exposure_s=sum(exposure(h, lag) for h in hs),
                      lag_s=lag, per_min=rate, per_min_ci=ci, failed=sum(h.failed for h in hs),
                      unchecked=sum(h.unchecked for h in hs), ooms=sum(h.ooms for h in hs),
                      fallbacks=sum(h.fallbacks for h in hs))
        if i > 0:
            ratio, rci, n = paired_ratio(base, hs, level)
            r = r.model_copy(update={"ratio": ratio, "ratio_ci": rci, "cycles_paired": n, "verdict": verdict(rci)})
        arms.append(r)
        clamped = [h for h in hs if lag is not None and h.window_s - lag < MIN_EXPOSURE_SHARE * h.window_s]
        if clamped:
            notes.append(f"{label}: a partition takes {lag:.1f} s from its GPU section to done, most of the "
                         f"{clamped[0].window_s:.1f} s counted: use a longer --hold")
        if hs and sum(h.verified for h in hs) == 0:
            notes.append(f"{label}: no partition counted in any hold")
    if complete < 2:
        notes.append("fewer than 2 complete cycles: no ratio interval (use --cycles 4 or more)")
    return ExperimentResult(level=level, cycles_complete=complete, arms=arms, notes=notes)


def _sd(xs: list[float]) -> float:
    if len(xs) < 2:
        return 0.0
    m = sum(xs) / len(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
