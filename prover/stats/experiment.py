"""An experiment's figures from its holds' counts: each arm's verified/min with a 95% interval,
each arm against the first as a ratio with a 95% interval paired over cycles, and a verdict, or
no verdict and why. Pure functions over `HoldCount`s (prover/fold/tally.py makes them from
events); nothing of prover is imported (a leaf: the fold stands on it).

The method, and why (docs/experiment.md says it at length):
- A hold counts the partitions whose GPU section **began** in its counted window (after its
  settle, before its end) and that were verified, whenever they finished: the count of a
  window's section starts, over the window. No correction for the time a partition takes from
  its GPU section to done (its lag): a count by completions had to subtract it, and where it
  neared the window the subtraction decided the figure (the 2^24 "8 workers beat 12").
- Ratio: per cycle, d = log((n_arm + 1/2) / w_arm) - log((n_base + 1/2) / w_base) (the half
  keeps a hold that verified nothing finite); a Student t interval of the mean of d over the
  cycles (df = cycles - 1), exponentiated. d's variance is never taken below the counts' own
  resolution (a count is only known to +-1/2: var >= (1/12)(1/n_a^2 + 1/n_b^2)).
- No verdict, said why: against or for an arm that counted nothing; without a cycle in which
  some arm counted; where a settle after a switch was shorter than the lag of the arm held
  before it (sections of that arm still ran in the counted window: a transient, not the arm).
  A cycle in which every arm counted 0 carries nothing and is not paired.
- Per arm: the exact (Garwood) Poisson interval of the pooled count over the pooled windows,
  widened to the t interval of the holds' log rates when there are 3 or more holds and they
  disagree more than counting explains.
"""
from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, Field

from prover.stats.intervals import LEVEL, poisson_interval, sd, t_quantile

Verdict = Literal["baseline", "faster", "slower", "no difference detected", "too few cycles", "no verdict"]
SETTLE_LAGS = 1.0  # a settle shorter than this many lags of the arm held before it: no verdict
PLAN_SETTLE_LAGS = 1.5  # what a plan gives, and what a refusal asks for (benchmarks/calibrate_experiment.py)
METHOD = ("a hold counts the partitions whose GPU section began in its counted window (after its settle) and "
          "that verified, whenever they finished, over the window; ratio: paired Student t interval of per-cycle "
          "log-rate differences (df = cycles - 1, +1/2 per count, variance floored at the counts' resolution); "
          "per arm: exact Poisson interval of the pooled count, widened to the t interval of the holds' log "
          "rates (3+ holds); no verdict where an arm counted nothing or a settle was shorter than the lag of the "
          "arm held before it")


class HoldCount(BaseModel):
    """One hold's tally: what the figures need of it."""

    arm: int = Field(ge=0)
    cycle: int = Field(ge=0)
    window_s: float = Field(ge=0.0, description="from the settle's end to the hold's end")
    settle_s: float = Field(0.0, ge=0.0, description="the settle before the window")
    after: int | None = Field(None, description="the arm held just before (None: the experiment's first hold)")
    verified: int = Field(0, ge=0, description="sections begun in the window that verified (whenever they finished)")
    began: int = Field(0, ge=0, description="sections begun in the window, every outcome")
    pending: int = Field(0, ge=0, description="of those, still running when counted")
    lag_sum_s: float = Field(0.0, ge=0.0, description="sum of (done - GPU section start) over the verified")
    lag_n: int = Field(0, ge=0, description="how many lag_sum_s is over")
    lag_max_s: float = Field(0.0, ge=0.0, description="the longest of those lags")
    gap_n: int = Field(0, ge=0, description="gaps between consecutive section starts in the window: how many")
    gap_sum_s: float = Field(0.0, ge=0.0, description="their sum")
    gap_sq_s: float = Field(0.0, ge=0.0, description="the sum of their squares")
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
    exposure_s: float = Field(description="seconds the rate is over (the counted windows, summed)")
    lag_s: float | None = Field(None, description="mean seconds from GPU section start to done of the verified")
    per_min: float = Field(description="verified partitions per minute, pooled over the arm's holds")
    per_min_ci: tuple[float, float] | None = Field(None, description="95% interval of per_min")
    ratio: float | None = Field(None, description="per_min against the first arm's, paired over cycles")
    ratio_ci: tuple[float, float] | None = Field(None, description="95% interval of ratio")
    cycles_paired: int = 0
    verdict: Verdict = "baseline"
    why: str | None = Field(None, description="why there is no verdict (verdict 'no verdict')")
    failed: int = 0
    unchecked: int = 0
    ooms: int = 0
    fallbacks: int = 0
    pending: int = Field(0, description="sections begun in its windows still running when counted (not counted)")


class ExperimentResult(BaseModel):
    level: float = LEVEL
    method: str = METHOD
    cycles_complete: int = Field(0, description="cycles in which every arm held to the end")
    arms: list[ArmResult]
    notes: list[str] = Field(default_factory=list)


# --- one arm ---------------------------------------------------------------------------------------
def arm_lag(holds: list[HoldCount]) -> float | None:
    """The arm's mean lag (GPU section start to done) over its verified partitions."""
    n = sum(h.lag_n for h in holds)
    return sum(h.lag_sum_s for h in holds) / n if n else None


def log_rate(h: HoldCount) -> float:
    return math.log((h.verified + 0.5) / max(h.window_s, 1e-9))


def arm_rate(holds: list[HoldCount], level: float = LEVEL) -> tuple[float, tuple[float, float] | None]:
    """(verified/min pooled over holds, its interval); (0, None) without a counted second."""
    e = sum(h.window_s for h in holds)
    if not holds or e <= 0:
        return 0.0, None
    n = sum(h.verified for h in holds)
    rate = 60.0 * n / e
    lo_n, hi_n = poisson_interval(n, level)
    lo, hi = 60.0 * lo_n / e, 60.0 * hi_n / e
    if len(holds) >= 3:
        ys = [log_rate(h) for h in holds]
        half = t_quantile(len(ys) - 1, level) * sd(ys) / math.sqrt(len(ys))
        centre = math.log(max(rate, 1e-12))
        if n:  # nothing verified: the Poisson interval's 0 stays the lower end
            lo = min(lo, math.exp(centre - half))
        hi = max(hi, math.exp(centre + half))
    return rate, (lo, hi)


# --- an arm against the baseline -------------------------------------------------------------------
def empty_cycles(holds: list[HoldCount]) -> set[int]:
    """Cycles in which every hold counted 0: nothing to pair (the holds saw no partition at all)."""
    cycles = {h.cycle for h in holds}
    return {c for c in cycles if all(h.verified == 0 for h in holds if h.cycle == c)}


def paired_ratio(base: list[HoldCount], arm: list[HoldCount], level: float = LEVEL, skip: set[int] | None = None
                 ) -> tuple[float | None, tuple[float, float] | None, int]:
    """(ratio arm/base, its interval, cycles paired): over the cycles both held in (less `skip`)."""
    by_cycle = {h.cycle: h for h in base}
    pairs = [(by_cycle[h.cycle], h) for h in arm if h.cycle in by_cycle and h.cycle not in (skip or set())]
    if not pairs:
        return None, None, 0
    d = [log_rate(a) - log_rate(b) for b, a in pairs]
    mean = sum(d) / len(d)
    if len(d) < 2:
        return math.exp(mean), None, 1
    floor = sum((1 / (a.verified + 0.5) ** 2 + 1 / (b.verified + 0.5) ** 2) / 12 for b, a in pairs) / len(pairs)
    s = math.sqrt(max(sd(d) ** 2, floor))
    half = t_quantile(len(d) - 1, level) * s / math.sqrt(len(d))
    return math.exp(mean), (math.exp(mean - half), math.exp(mean + half)), len(d)


def verdict(ci: tuple[float, float] | None) -> Verdict:
    if ci is None:
        return "too few cycles"
    if ci[0] > 1.0:
        return "faster"
    if ci[1] < 1.0:
        return "slower"
    return "no difference detected"


def short_settles(holds: list[HoldCount], lags: dict[int, float | None]) -> list[HoldCount]:
    """Holds whose settle was shorter than SETTLE_LAGS lags of the (other) arm held before them:
    that arm's sections still ran in the counted window."""
    out = []
    for h in holds:
        before = lags.get(h.after) if h.after is not None and h.after != h.arm else None
        if before is not None and h.settle_s < SETTLE_LAGS * before:
            out.append(h)
    return out


def _why_short(arm_holds: list[HoldCount], labels: list[str], lags: dict[int, float | None], window: float) -> str:
    h = min(arm_holds, key=lambda h: h.settle_s - ((lags.get(h.after) if h.after is not None else None) or 0.0))  # the shortest against its lag
    slow = max((i for i in lags if lags[i] is not None), key=lambda i: lags[i] or 0.0)
    settle_to = max(1, math.ceil(PLAN_SETTLE_LAGS * (lags[slow] or 0.0)))
    lag_before = lags.get(h.after) if h.after is not None else None
    return (f"holds too short: partitions of {labels[h.after] if h.after is not None else labels[slow]} take "
            f"{lag_before or 0.0:.1f} s from GPU section to done, longer than the {h.settle_s:g} s settle after a "
            f"switch; use --hold >= {math.ceil(settle_to + window)} --settle >= {settle_to} (or --hold auto)")


# --- the experiment --------------------------------------------------------------------------------
def analyse(holds: list[HoldCount], labels: list[str], knobs: list[dict[str, str]] | None = None,
            level: float = LEVEL) -> ExperimentResult:
    """The experiment's figures from its complete holds (arm 0 is the baseline)."""
    by_arm = {i: [h for h in holds if h.arm == i] for i in range(len(labels))}
    cycles = {h.cycle for h in holds}
    complete = sum(1 for c in cycles if all(any(h.cycle == c for h in by_arm[i]) for i in by_arm))
    lags = {i: arm_lag(hs) for i, hs in by_arm.items()}
    empty = empty_cycles(holds)
    short = {i: short_settles(hs, lags) for i, hs in by_arm.items()}
    window = max((h.window_s for h in holds), default=0.0)
    notes: list[str] = []
    arms = [_arm(i, label, by_arm, lags, (knobs or [{}] * len(labels))[i], level) for i, label in enumerate(labels)]
    base_why = _no_verdict(0, labels, by_arm, short, lags, window)
    for i, r in enumerate(arms):
        if i == 0:
            continue
        why = base_why or _no_verdict(i, labels, by_arm, short, lags, window)
        ratio, rci, n = paired_ratio(by_arm[0], by_arm[i], level, skip=empty)
        if why is not None:
            arms[i] = r.model_copy(update={"cycles_paired": n, "verdict": "no verdict", "why": why})
        else:
            arms[i] = r.model_copy(update={"ratio": ratio, "ratio_ci": rci, "cycles_paired": n, "verdict": verdict(rci)})
    notes += sorted({a.why for a in arms if a.why})
    if empty:
        notes.append(f"{len(empty)} cycle(s) in which every arm counted 0 ({', '.join(str(c + 1) for c in sorted(empty))})"
                     ": not paired; the holds are too short for this pipeline (use --hold auto)")
    pending = [a for a in arms if a.pending]
    if pending:
        notes.append("partitions still running when counted, not counted: " + ", ".join(
            f"{a.label} {a.pending}" for a in pending))
    if complete < 2:
        notes.append("fewer than 2 complete cycles: no ratio interval (use --cycles 4 or more)")
    return ExperimentResult(level=level, cycles_complete=complete, arms=arms, notes=notes)


def _arm(i: int, label: str, by_arm: dict[int, list[HoldCount]], lags: dict[int, float | None],
         knobs: dict[str, str], level: float) -> ArmResult:
    hs = by_arm[i]
    rate, ci = arm_rate(hs, level)
    return ArmResult(arm=i, label=label, knobs=knobs, holds=len(hs), verified=sum(h.verified for h in hs),
                     exposure_s=sum(h.window_s for h in hs), lag_s=lags[i], per_min=rate, per_min_ci=ci,
                     failed=sum(h.failed for h in hs), unchecked=sum(h.unchecked for h in hs),
                     ooms=sum(h.ooms for h in hs), fallbacks=sum(h.fallbacks for h in hs),
                     pending=sum(h.pending for h in hs))


def _no_verdict(i: int, labels: list[str], by_arm: dict[int, list[HoldCount]], short: dict[int, list[HoldCount]],
                lags: dict[int, float | None], window: float) -> str | None:
    """Why arm i's figures cannot carry a verdict (None: they can)."""
    hs = by_arm[i]
    if hs and sum(h.verified for h in hs) == 0:
        what = "the baseline" if i == 0 else labels[i]
        return f"{what} counted no partition in {len(hs)} hold(s): no ratio is drawn against 0 (use --hold auto)"
    if short[i]:
        return _why_short(short[i], labels, lags, window)
    return None


def against(holds: list[HoldCount], labels: list[str], base: int, level: float = LEVEL) -> ExperimentResult:
    """The figures with arm `base` as the baseline (a step between two arms neither of which is
    the first), every hold kept (a settle is judged against the arm held before it, whichever)."""
    order = [base] + [i for i in range(len(labels)) if i != base]
    new = {old: k for k, old in enumerate(order)}
    moved = [h.model_copy(update={"arm": new[h.arm], "after": None if h.after is None else new[h.after]}) for h in holds]
    res = analyse(moved, [labels[i] for i in order], level=level)
    arms = [res.arms[new[i]].model_copy(update={"arm": i}) for i in range(len(labels))]
    return res.model_copy(update={"arms": arms})
