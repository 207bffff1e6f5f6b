"""A/A calibration of `c2tui experiment`'s verdicts over a grid of lags and hold lengths (issue 42):
simulated experiments in which the two arms run at the same rate, each through the project's own
Runner, Tally (the fold's counting rule) and analyse(); a verdict "faster" or "slower" is wrong.
At the 95% level a calibrated method is wrong in about 5% of them.

    python3 benchmarks/calibrate_experiment.py --out benchmarks/results/issue42/calibration.json [--runs 400]

Two simulated provers (tests/helpers/experiment_fake.py), both on seeds, their clocks moved by
the runner's sleeps (hours of experiment a second):
- `open`: GPU sections begin as a Poisson stream at 120/min in either arm, each done a lag later,
  drawn per arm: `equal` (both arms L, +-10%), `unequal` (L and L/2: the 3.26 s against 1.65 s
  of the 2^24 case), `heavy` (lognormal, sigma 1: L and L/2). L = 0, 0.25, 0.5, 1 and 1.5 times
  the counted window; windows of 5, 15 and 30 s (~10, 30, 60 proofs a hold).
- `pipeline`: a closed pipeline as the engine is, workers that synthesise (0.5 s) then queue for
  one GPU (0.3 s a section) then finish (0.2 s): saturated, so 8 and 12 workers run at the same
  rate, 200/min, with lags of ~1.9 and ~3.1 s (the queue). `equal`: 12 against 12 workers;
  `unequal`: 8 against 12; `heavy`: 8 against 12, every time lognormal. Windows 2, 5, 10, 20 s
  (lag up to 1.5x the window); and `auto` (--hold auto: a pilot, then holds planned for +-20%).
Every hold's settle is the plan's (prover/stats/plan.py: 1.5 lags of the slowest arm, at least
1 s); 4 cycles, blocks drawn from the run's seed. Two power cells (a true 1.3x) show the
verdicts are not simply withheld.

Per cell: runs, wrong verdicts (share and its exact 95% Clopper-Pearson interval), no verdicts,
the mean count a hold, `passed` (the share at most 5%) and `shown_above_5` (its exact interval,
at 95% over all the cells at once, lies wholly above 5%); pooled over the A/A cells, the share
and its interval. A method exactly at its level is wrong in 5% of runs, so about half its cells
measure a little above 5% by chance; none may be shown above it, nor the pool. The tests
(tests/experiment/test_calibration.py) run the same cells with fewer runs.
"""
from __future__ import annotations

import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

import harness

from prover.experiment.design import Design, parse_arm
from prover.experiment.runner import Runner
from prover.stats.experiment import PLAN_SETTLE_LAGS
from prover.stats.intervals import _solve
from tests.helpers.experiment_fake import FakeProver, Pace, PipelineProver

START = {"lock_mode": "two-lock", "mem_sync": "device", "workers_per_gpu": 8}
ARMS = ("mem_sync=device", "mem_sync=stream")  # the two arms: the knob they set changes nothing but the pace
CYCLES, OPEN_RATE, LEVEL_WRONG = 4, 120.0, 0.05
GPU_S, CPU_S, AFTER_S = 0.3, 0.5, 0.2  # the pipeline: its steady lags are ~1.9 s (8 workers), ~3.1 s (12)
PIPE_LAG = {8: 1.9, 12: 3.1}


@dataclass(frozen=True)
class Cell:
    model: str  # open | pipeline
    kind: str  # equal | unequal | heavy
    window_s: float | None  # the counted window; None: --hold auto
    lag_share: float = 0.0  # open: the baseline's mean lag as a share of the window
    ratio: float = 1.0  # the second arm's true rate against the first (1: A/A)

    @property
    def name(self) -> str:
        w = "auto" if self.window_s is None else f"{self.window_s:g}s"
        lag = f" lag {self.lag_share:g}x" if self.model == "open" else ""
        return f"{self.model} {self.kind}{lag} window {w}" + (f" ratio {self.ratio:g}" if self.ratio != 1 else "")

    def lags(self) -> tuple[float, float]:
        if self.model == "pipeline":
            return (PIPE_LAG[12], PIPE_LAG[12]) if self.kind == "equal" else (PIPE_LAG[8], PIPE_LAG[12])
        lag = self.lag_share * (self.window_s or 0.0)
        return (lag, lag) if self.kind == "equal" else (lag, lag / 2)

    def settle(self) -> float:
        return max(1.0, math.ceil(PLAN_SETTLE_LAGS * max(self.lags())))


def cells() -> list[Cell]:
    out = [Cell("open", kind, w, share) for w in (5.0, 15.0, 30.0) for share in (0.0, 0.25, 0.5, 1.0, 1.5)
           for kind in ("equal", "unequal", "heavy")]
    out += [Cell("pipeline", kind, w) for w in (2.0, 5.0, 10.0, 20.0, None) for kind in ("equal", "unequal", "heavy")]
    out += [Cell("open", "unequal", 15.0, 0.5, ratio=1.3), Cell("pipeline", "unequal", None, ratio=1.3)]
    return out


def _prover(cell: Cell, seed: int) -> Any:
    second = {"mem_sync": "stream"}
    is_b = lambda k: all(k.get(x) == v for x, v in second.items())  # noqa: E731
    if cell.model == "open":
        la, lb = cell.lags()
        shape = "lognormal" if cell.kind == "heavy" else "fixed"
        pa, pb = Pace(0.0, la, shape), Pace(0.0, lb, shape)
        return FakeProver(lambda k: OPEN_RATE * (cell.ratio if is_b(k) else 1.0), START, seed=seed,
                          lags=lambda k: pb if is_b(k) else pa)
    shape = "lognormal" if cell.kind == "heavy" else "exp"
    wa = 12 if cell.kind == "equal" else 8
    pa = Pace(CPU_S, AFTER_S, shape, workers=wa, gpu_s=GPU_S)
    pb = Pace(CPU_S, AFTER_S, shape, workers=12, gpu_s=GPU_S / cell.ratio)
    return PipelineProver(lambda k: pb if is_b(k) else pa, START, seed=seed)


def one(cell: Cell, seed: int) -> dict[str, Any]:
    """One simulated experiment: its second arm's verdict and the mean count a hold."""
    fp = _prover(cell, seed)
    arms = [parse_arm(a) for a in ARMS]
    if cell.window_s is None:
        d = Design(arms=arms, cycles=CYCLES, seed=seed)  # --hold auto
    else:
        s = cell.settle()
        d = Design(arms=arms, cycles=CYCLES, hold_s=s + cell.window_s, settle_s=s, seed=seed)
    runner = Runner(fp, d, sleep=fp.sleep)
    res = runner.run()
    b = res.arms[1]
    holds = sum(a.holds for a in res.arms)
    return {"verdict": b.verdict, "per_hold": sum(a.verified for a in res.arms) / max(1, holds),
            "hold_s": runner.design.hold_s, "ci": b.ratio_ci}


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact interval of a binomial share k/n (by bisection on the binomial tails)."""
    a = (1 - level) / 2

    def pmf(i: int, p: float) -> float:  # in logs: n is thousands when cells are pooled
        if p <= 0.0 or p >= 1.0:
            return float(i == (0 if p <= 0.0 else n))
        return math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1)
                        + i * math.log(p) + (n - i) * math.log1p(-p))

    def tail_ge(p: float) -> float:  # P(X >= k)
        return 1.0 - sum(pmf(i, p) for i in range(k))

    def tail_le(p: float) -> float:  # P(X <= k)
        return sum(pmf(i, p) for i in range(k + 1))

    lo = 0.0 if k == 0 else _solve(tail_ge, a, 0.0, 1.0, decreasing=False)
    hi = 1.0 if k == n else _solve(tail_le, a, 0.0, 1.0, decreasing=True)
    return lo, hi


def run_cell(cell: Cell, runs: int, seed0: int = 0) -> dict[str, Any]:
    t0 = time.monotonic()
    got = [one(cell, seed0 + i) for i in range(runs)]
    wrong = sum(g["verdict"] in ("faster", "slower") for g in got)
    found = sum(g["verdict"] == "faster" for g in got)
    none = sum(g["verdict"] == "no verdict" for g in got)
    widths = [math.log(g["ci"][1] / g["ci"][0]) / 2 for g in got if g["ci"]]
    row = {"cell": cell.name, **asdict(cell), "lags_s": cell.lags(), "settle_s": None if cell.window_s is None else cell.settle(),
           "hold_s": sum(g["hold_s"] for g in got) / runs, "runs": runs, "per_hold": sum(g["per_hold"] for g in got) / runs,
           "no_verdict": none / runs, "half_width_log": sum(widths) / len(widths) if widths else None,
           "seconds": round(time.monotonic() - t0, 1)}
    if cell.ratio == 1.0:
        lo, hi = clopper_pearson(wrong, runs)
        row.update(wrong=wrong / runs, wrong_ci=(lo, hi), passed=wrong / runs <= LEVEL_WRONG)
    else:
        row.update(found=found / runs)
    return row


def _job(args: tuple[Cell, int, int]) -> dict[str, Any]:
    return run_cell(*args)


def main(argv: list[str] | None = None) -> int:
    ap = harness.parser(__doc__, out="benchmarks/results/issue42/calibration.json")
    ap.add_argument("--runs", type=int, default=400, help="simulated experiments a cell")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="", help="cells whose name contains this")
    a = ap.parse_args(argv)
    todo = [c for c in cells() if a.only in c.name]
    rows = harness.Rows(a.out, machine=harness.machine(),
                        what="A/A calibration of experiment verdicts (sim): wrong verdicts a cell at the 95% level",
                        command=" ".join(["python3", "benchmarks/calibrate_experiment.py", *(argv or sys.argv[1:])]))
    with ProcessPoolExecutor(max_workers=a.jobs) as pool:
        for row in pool.map(_job, [(c, a.runs, 1000 + 10_000 * cells().index(c)) for c in todo]):  # seeds apart
            rows.new(**row)
            rows.save()
            share = f"wrong {row['wrong']:.1%} [{row['wrong_ci'][0]:.1%}, {row['wrong_ci'][1]:.1%}]" \
                if "wrong" in row else f"found {row['found']:.0%}"
            print(f"{row['cell']:<46} {share}  no verdict {row['no_verdict']:.1%}  ~{row['per_hold']:.0f}/hold "
                  f"hold {row['hold_s']:.0f} s  ({row['seconds']} s)", flush=True)
    aa = [r for r in rows.rows if "wrong" in r]
    family = 1 - 0.05 / len(aa)  # "shown above 5%": a cell's exact interval at 95% over all cells (Bonferroni)
    for r in aa:
        r["shown_above_5"] = clopper_pearson(round(r["wrong"] * r["runs"]), r["runs"], family)[0] > LEVEL_WRONG
    k, n = sum(round(r["wrong"] * r["runs"]) for r in aa), sum(r["runs"] for r in aa)
    rows.doc["pooled"] = {"cells": len(aa), "runs": n, "wrong": k / n, "wrong_ci": clopper_pearson(k, n),
                          "cells_at_or_under_5": sum(r["passed"] for r in aa),
                          "cells_shown_above_5": sum(r["shown_above_5"] for r in aa)}
    rows.save()
    p = rows.doc["pooled"]
    print(f"{p['cells_at_or_under_5']} of {len(aa)} A/A cells at or under {LEVEL_WRONG:.0%} wrong verdicts (worst "
          f"{max(r['wrong'] for r in aa):.1%}); {p['cells_shown_above_5']} shown above it (its exact interval, 95% "
          f"over the {len(aa)} cells, wholly over 5%); "
          f"pooled {p['wrong']:.2%} [{p['wrong_ci'][0]:.2%}, {p['wrong_ci'][1]:.2%}] over {n} runs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
