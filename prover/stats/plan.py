"""Holds sized from the run (`--hold auto`): from each arm's pace measured in a short pilot (its
rate, the time from GPU section to done, how regular its workers are), the shortest hold whose
arms count enough proofs for a ratio interval of a target half-width (`--precision`).

The model (docs/experiment.md): a hold of counted window w counts n = r w sections of an arm
of rate r; over C cycles the ratio's 95% half-width on the log scale is about
t(C-1) sqrt(D (1/n_k + 1/n_0) / C), where D is how much a count varies against Poisson's: the
CV^2 of the gaps between consecutive section starts in the pilot (1 for a Poisson stream; a GPU
that paces the sections by a steady kernel time gives less; a per-worker estimate would miss
that the workers share the GPU), never planned below D_MIN (a drift between cycles, which a
pilot cannot see, widens the interval). Each
arm's own interval (exact Poisson, pooled) must be as narrow: C r w >= (z / log(1 + p))^2.
The settle lasts PLAN_SETTLE_LAGS of the longest lag: the sections of the arm before must be
out of the counted window (the figures give no verdict below one lag: stats/experiment.py).
"""
from __future__ import annotations

import math
from statistics import NormalDist

from pydantic import BaseModel, Field

from prover.stats.experiment import PLAN_SETTLE_LAGS, HoldCount
from prover.stats.intervals import LEVEL, t_quantile

D_MIN = 0.25  # the least count variance planned for, against Poisson's
MIN_SETTLE_S, MIN_WINDOW_S, MAX_HOLD_S = 1.0, 2.0, 3600.0


class ArmPace(BaseModel):
    """One arm as the pilot measured it."""

    label: str
    per_min: float = Field(ge=0.0, description="GPU sections begun a minute in the pilot's window")
    lag_s: float | None = Field(None, description="mean seconds from GPU section to done (None: none finished)")
    dispersion: float = Field(1.0, ge=0.0, description="CV^2 of the gaps between section starts (1: Poisson)")
    sections: int = Field(0, ge=0, description="sections the pilot saw begin")


class HoldPlan(BaseModel):
    hold_s: float
    settle_s: float
    window_s: float = Field(description="the counted part of each hold")
    cycles: int
    precision: float = Field(description="target half-width of the ratio's 95% interval, e.g. 0.15 for +-15%")
    dispersion: float = Field(description="the count variance planned for, against Poisson's")
    expected_counts: list[float] = Field(description="each arm's expected count a hold")
    expected_s: float = Field(description="the holds' whole time, and the wait for the last holds' sections")
    capped: bool = Field(False, description="the hold reached MAX_HOLD_S: the precision will not be met")
    asked: float | None = Field(None, description="the precision asked for, where a time limit afforded only `precision`")

    def line(self, arms: list[str]) -> str:
        """The plan in one line, as the commands print it before the holds begin."""
        least = min(range(len(arms)), key=lambda i: self.expected_counts[i])
        m, s = divmod(round(self.expected_s), 60)
        return (f"plan: {len(arms)} arms x {self.cycles} cycles of {self.hold_s:g} s holds (settle {self.settle_s:g} s, "
                f"{self.window_s:g} s counted: ~{self.expected_counts[least]:.0f} proofs a hold of {arms[least]}) "
                f"for a ratio within +-{self.precision:.0%} at 95%; about {m} min {s:02d} s"
                + (" (capped: the precision will not be met)" if self.capped else "")
                + (f" (the time given affords +-{self.precision:.0%}, not the +-{self.asked:.0%} asked)"
                   if self.asked is not None else ""))


def pace_of(label: str, holds: list[HoldCount]) -> ArmPace:
    """An arm's pace from its (pilot) holds: sections begun a minute, their mean lag, and the
    CV^2 of the gaps between section starts (1.0, Poisson's, from fewer than 5 gaps)."""
    window = sum(h.window_s for h in holds)
    began = sum(h.began for h in holds)
    lag_n = sum(h.lag_n for h in holds)
    n, s1, s2 = sum(h.gap_n for h in holds), sum(h.gap_sum_s for h in holds), sum(h.gap_sq_s for h in holds)
    disp = 1.0
    if n >= 5 and s1 > 0:
        mean = s1 / n
        disp = max(0.0, (s2 / n - mean * mean) * n / (n - 1)) / (mean * mean)
    return ArmPace(label=label, per_min=60.0 * began / window if window > 0 else 0.0,
                   lag_s=sum(h.lag_sum_s for h in holds) / lag_n if lag_n else None, dispersion=disp, sections=began)


def window_for(paces: list[ArmPace], cycles: int, precision: float, dispersion: float, level: float = LEVEL) -> float:
    """The least counted window (s) meeting both criteria of the module's docstring."""
    if cycles < 2:
        raise ValueError("a ratio interval needs at least 2 cycles")
    rates = [max(p.per_min, 1e-6) / 60.0 for p in paces]
    log_p = math.log(1.0 + precision)
    t = t_quantile(cycles - 1, level)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    ratio = max(t * t * dispersion * (1 / r + 1 / rates[0]) / (cycles * log_p ** 2) for r in rates[1:])
    own = max(z * z / (cycles * r * log_p ** 2) for r in rates)
    return max(ratio, own, MIN_WINDOW_S)


def plan_holds(paces: list[ArmPace], cycles: int, precision: float, settle_s: float | None = None,
               level: float = LEVEL, max_s: float | None = None) -> HoldPlan:
    """The plan for these arms (the first is the baseline). `settle_s`: a floor the user gave;
    `max_s`: the holds' time limit (a longer plan widens the precision to what fits, said so)."""
    if len(paces) < 2:
        raise ValueError("an experiment has at least two arms")
    if not 0.0 < precision < 10.0:
        raise ValueError(f"precision {precision:g} must be a share above 0, e.g. 0.15 for +-15%")
    plan = _plan(paces, cycles, precision, settle_s, level)
    if max_s is None or plan.expected_s <= max_s:
        return plan
    lo, hi = precision, 5.0
    for _ in range(40):  # the least precision whose plan fits
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _plan(paces, cycles, mid, settle_s, level).expected_s > max_s else (lo, mid)
    return _plan(paces, cycles, hi, settle_s, level).model_copy(update={"asked": precision})


def _plan(paces: list[ArmPace], cycles: int, precision: float, settle_s: float | None, level: float) -> HoldPlan:
    lag = max((p.lag_s for p in paces if p.lag_s is not None), default=0.0)
    settle = max(MIN_SETTLE_S, math.ceil(PLAN_SETTLE_LAGS * lag), settle_s or 0.0)
    d = max(D_MIN, min(1.0, max(p.dispersion for p in paces)))
    window: float = math.ceil(window_for(paces, cycles, precision, d, level))
    capped = settle + window > MAX_HOLD_S
    if capped:
        window = max(MIN_WINDOW_S, MAX_HOLD_S - settle)
    hold = settle + window
    return HoldPlan(hold_s=hold, settle_s=settle, window_s=window, cycles=cycles, precision=precision, dispersion=d,
                    expected_counts=[p.per_min / 60.0 * window for p in paces],
                    expected_s=len(paces) * cycles * hold + lag, capped=capped)
