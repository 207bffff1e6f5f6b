"""Search the live knobs for the highest verified/min in a given time, with experiments.

    result = Tuner(link, TunePlan(time_s=600, hold_s=20, settle_s=5), workers=(2, 8)).run(apply=False)

Coordinate search, one race per knob (docs/experiment.md says why this and not a grid):
- knobs in the order that moves throughput most first: lock_mode, mem_sync, workers_per_gpu,
  b_g2, prestage; each one's race holds the best setting so far (the incumbent, arm 0) and the
  same with that knob at each other value, a round (one interleaved cycle) at a time;
- from the third round on, an arm whose paired ratio against the leader (the highest rate
  now) lies wholly below 1 at 99% is dropped (a race looks at every arm after every round: the
  stricter level keeps the chance of dropping an equal arm small), and so is one with an OOM or a failed partition in its
  counted windows (the constraints: budgets are the engine's, a worker never exceeds them);
- the race ends with one arm left or its share of the time spent; its leader replaces the
  incumbent only if it is significantly faster (paired ratio interval above 1), or the
  incumbent was dropped: an unproven change is not made;
- a worker range wider than 5 values is raced on 5 spread values first, then around the best;
- last, a confirmation: the start against the best, interleaved, on fresh holds, always its
  full `confirm_cycles` (the reported ratio). The best is kept only if it is significantly faster
  there: a race's leader is the largest of several noisy rates (the winner's curse), the
  confirmation is not. A leader the confirmation did not confirm is said so, with its race's
  figure and the time a confirmation that could tell would need: never "no change found".
The budget counts from the first GPU section (start-up is not the tuner's); `time_s` None
(`--time auto`, the default) is the space's least time (TunePlan.least_time); less is refused
before anything changes, with the time it needs.
"""
from __future__ import annotations

import math
import random
import threading
import time
from typing import Any, Callable

from pydantic import BaseModel, Field

from prover.experiment.design import Arm, Design, arm_of, shown
from prover.experiment.link import Link
from prover.experiment.runner import ExperimentError, Runner, typed, wait_ready
from prover.fold.tally import Tally
from prover.knobs import KNOBS
from prover.stats.experiment import ExperimentResult, HoldCount, against
from prover.stats.plan import pace_of, plan_holds

ORDER = ("lock_mode", "mem_sync", "workers_per_gpu", "b_g2", "prestage")
MIN_ROUNDS = 3  # before a drop: 2 degrees of freedom (t = 4.30)
DROP_LEVEL = 0.99  # a race looks after every round at every arm: a drop needs a 99% interval below 1
GRID = 5  # worker values raced at once
CONFIRM_CYCLES = 4


class Space(BaseModel):
    """knob -> the values to try (the start's value among them)."""

    knobs: dict[str, list[Any]]

    @classmethod
    def of(cls, start: dict[str, Any], workers: tuple[int, int] | None = None,
           search: tuple[str, ...] = ORDER, values: dict[str, list[str]] | None = None) -> "Space":
        """Every value of each searched knob (workers: `workers`, else the start's -2..+2), or
        the values given for it (text, checked by the knob's parse)."""
        out: dict[str, list[Any]] = {}
        for name, texts in (values or {}).items():
            if name not in search:
                raise ValueError(f"values given for {name}, which is not searched ({', '.join(search)})")
            out[name] = list(dict.fromkeys(KNOBS[name].parse(v) for v in texts))
        for name in search:
            if name not in ORDER:
                raise ValueError(f"cannot tune {name!r}; tunable: {', '.join(ORDER)}")
            k = KNOBS[name]
            if name in out:
                continue
            if name == "workers_per_gpu":
                lo, hi = workers or (max(k.lo, int(start[name]) - 2), min(k.hi, int(start[name]) + 2))
                if not k.lo <= lo <= hi <= k.hi:
                    raise ValueError(f"workers range {lo}..{hi} must lie within {k.lo}..{k.hi}, low first")
                out[name] = list(range(lo, hi + 1))
            elif k.kind is bool:
                out[name] = [True, False]
            else:
                out[name] = [v for v in k.values or () if k.runs is None or v in k.runs()]
        if "workers_per_gpu" in out:
            out["workers_per_gpu"] = sorted(out["workers_per_gpu"])
        return cls(knobs=out)


class TunePlan(BaseModel):
    time_s: float | None = Field(None, gt=0.0, allow_inf_nan=False,
                                 description="the search's budget from the first GPU section (None: the space's least)")
    hold_s: float = Field(20.0, gt=0.0, allow_inf_nan=False)
    settle_s: float = Field(5.0, ge=0.0, allow_inf_nan=False)
    confirm_cycles: int = Field(CONFIRM_CYCLES, ge=3, le=100)
    seed: int = Field(0, ge=0)

    def least_time(self, space: Space) -> float:
        """The least budget that races every knob MIN_ROUNDS rounds (a wide worker range twice:
        coarse, then fine) and confirms the best over the full `confirm_cycles`, with a settle's
        wait after each experiment for the sections begun in its last hold."""
        weights = [weight(len(v)) for v in space.knobs.values() if len(v) > 1]
        races = sum(1 + (len(v) > GRID) for v in space.knobs.values() if len(v) > 1)
        return (MIN_ROUNDS * sum(weights) + 2 * self.confirm_cycles) * self.hold_s + (races + 1) * self.settle_s

    def budget(self, space: Space) -> float:
        return self.time_s if self.time_s is not None else self.least_time(space)


class Step(BaseModel):
    knob: str
    values: list[str] = Field(description="the values raced, the incumbent first")
    rounds: int
    dropped: dict[str, str] = Field(default_factory=dict, description="value -> why it left the race")
    leader: str = Field(description="the value with the highest rate at the race's end")
    adopted: bool = Field(description="made the incumbent: significantly faster, or the incumbent was dropped")
    ratio: float | None = None
    ratio_ci: tuple[float, float] | None = None
    why: str | None = Field(None, description="the race's leader got no verdict against the incumbent: why")


class TuneResult(BaseModel):
    start: dict[str, str]
    best: dict[str, str] = Field(description="the setting to run with: the races' best if confirmed, else the start")
    found: dict[str, str] = Field(default_factory=dict, description="the races' best, before its confirmation")
    steps: list[Step]
    confirm: ExperimentResult | None = Field(None, description="start (arm 0) against best (arm 1)")
    ratio: float | None = None
    ratio_ci: tuple[float, float] | None = None
    verdict: str = Field("no change found", description="faster (confirmed) | not confirmed | no change found")
    applied: bool = False
    seconds: float = 0.0
    budget_s: float = Field(0.0, description="the --time it ran under (auto: the space's least)")
    confirm_needs_s: float | None = Field(None, description="not confirmed: a --time whose confirmation could tell")
    confirm_holds: str = Field("", description="not confirmed: what to give with it (--hold/--settle, --confirm-cycles)")
    notes: list[str] = Field(default_factory=list)

    def adopted(self) -> list[Step]:
        return [s for s in self.steps if s.adopted]


class TooShort(ValueError):
    """The time given cannot race the space even briefly (the message says how much it needs)."""


class Tuner:
    """Space: given, or made when the prover is ready from its knobs then (Space.of: `workers`,
    `search`). ValueError (TooShort among them) from run() for a space or a time that cannot be."""

    def __init__(self, link: Link, plan: TunePlan, *, space: Space | None = None,
                 workers: tuple[int, int] | None = None, search: tuple[str, ...] = ORDER,
                 values: dict[str, list[str]] | None = None, stop: threading.Event | None = None,
                 progress: Callable[[str, Tally], None] | None = None, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic, say: Callable[[str], None] | None = None) -> None:
        self.link, self.plan = link, plan
        self.space, self.workers, self.search, self.values = space, workers, search, values
        self.stop, self.progress, self.sleep, self.clock = stop or threading.Event(), progress, sleep, clock
        self.say = say or (lambda text: None)
        self.tally = Tally()
        self._lock = threading.Lock()
        link.add_sink(self._fold)
        self._n = 0  # experiments run
        self._rng = random.Random(plan.seed)

    def _fold(self, e: Any) -> None:
        with self._lock:
            self.tally.apply(e)

    @staticmethod
    def check(plan: TunePlan, start: dict[str, Any], workers: tuple[int, int] | None,
              search: tuple[str, ...], values: dict[str, list[str]] | None = None) -> Space:
        """The space around `start`, if `plan` has the time to race it; ValueError (TooShort) if not."""
        space = Space.of(start, workers, search, values)
        need = plan.least_time(space)
        if plan.time_s is not None and need > plan.time_s:
            raise TooShort(f"--time {plan.time_s:g} s cannot race this space: it needs at least {math.ceil(need)} s "
                           f"with --hold {plan.hold_s:g} ({MIN_ROUNDS} rounds a knob, then a {plan.confirm_cycles}-cycle "
                           "confirmation); give --time auto or more, a shorter --hold, or fewer knobs (--search, --workers)")
        return space

    def _runner(self, arms: list[Arm], name: str, order: str, cycles: int) -> Runner:
        d = Design(arms=arms, cycles=cycles, hold_s=self.plan.hold_s, settle_s=self.plan.settle_s,
                   order="blocks", seed=self.plan.seed + self._n)
        r = Runner(self.link, d, experiment=self._n, name=name, stop=self.stop, progress=self.progress,
                   tally=self.tally, order=order, sleep=self.sleep, lock=self._lock)
        self._n += 1
        return r

    # --- the search ------------------------------------------------------------------------------
    def run(self, apply: bool = False) -> TuneResult:
        """Search, confirm, and (apply) leave the best in force; else the start is restored."""
        wait_ready(self.link, self.stop, self.sleep)
        now = self.link.knobs()
        if self.space is None:
            self.space = self.check(self.plan, {k: typed(k, now[k]) for k in self.search if k in now},
                                    self.workers, self.search, self.values)
        start = {k: typed(k, now[k]) for k in self.space.knobs}
        best = dict(start)
        t0 = self.clock()
        self.budget_s = self.plan.budget(self.space)
        deadline = t0 + self.budget_s
        reserve = self.plan.confirm_cycles * 2 * self.plan.hold_s + self.plan.settle_s
        steps: list[Step] = []
        todo = [k for k in ORDER if len(self.space.knobs.get(k, ())) > 1]
        for i, knob in enumerate(todo):
            if self.stop.is_set():
                break
            share = (deadline - reserve - self.clock()) * self._weight(knob) / sum(self._weight(k) for k in todo[i:])
            t_end = self.clock() + share
            for values in self._candidates(knob, best):
                step = self._race(knob, values, best, t_end)
                if step is None:
                    continue
                steps.append(step)
                self.say(_step_line(step))
                if step.adopted:
                    best[knob] = typed(knob, step.leader)
        confirm = None if best == start or self.stop.is_set() else self._confirm(start, best, deadline)
        found = best
        if confirm is not None and confirm.arms[1].verdict != "faster":
            best = dict(start)  # not confirmed: no change is made
        if apply and not self.stop.is_set():
            for k, v in best.items():
                self.link.set(k, v)
        return self._result(start, best, found, steps, confirm, apply and not self.stop.is_set(), self.clock() - t0)

    def _weight(self, knob: str) -> int:
        return weight(len(self.space.knobs[knob]))

    def _candidates(self, knob: str, best: dict[str, Any]) -> Any:
        """The value sets raced for one knob: all of them, or (a wide worker range) a spread of
        GRID, then the values around the best of those."""
        values = self.space.knobs[knob]
        if len(values) <= GRID:
            yield values
            return
        coarse = spread(values, GRID, best[knob])
        yield coarse
        b = best[knob]
        gap = max(abs(x - y) for x, y in zip(coarse, coarse[1:]))
        near = sorted((v for v in values if v not in coarse and abs(v - b) < gap), key=lambda v: (abs(v - b), v))
        if near:
            yield [b, *sorted(near[:GRID - 1])]

    def _race(self, knob: str, values: list[Any], best: dict[str, Any], t_end: float) -> Step | None:
        """One knob's race (see the module docstring); None when there is nothing to race."""
        inc = arm_of({**best, knob: best[knob]})
        arms = [inc] + [arm_of({**best, knob: v}) for v in values if v != best[knob]]
        if len(arms) < 2:
            return None
        hold = self.plan.hold_s
        runner = self._runner(arms, f"tune: {knob}", "race", cycles=max(MIN_ROUNDS, int((t_end - self.clock()) // (len(arms) * hold))))
        resolved = runner.begin()
        alive, dropped, rounds, i = list(range(len(arms))), {}, 0, 0
        reason = "done"
        try:
            while len(alive) > 1 and not self.stop.is_set():
                if rounds >= MIN_ROUNDS and self.clock() + len(alive) * hold > t_end:
                    break
                for arm in self._rng.sample(alive, len(alive)):
                    reason = runner.hold(i, rounds, arm, resolved[arm])
                    i += 1
                    if reason != "done":
                        raise ExperimentError(f"tune stopped in its {knob} race: {reason}")
                rounds += 1
                self._drop(knob, arms, alive, dropped, rounds)
        except BaseException:
            runner.finish("interrupted" if reason == "done" else reason)
            raise
        result = runner.finish("done")
        if runner.clash is not None:
            raise ExperimentError(f"tune stopped after its {knob} race: {runner.clash}")
        leader = max(alive, key=lambda a: result.arms[a].per_min)
        r = result.arms[leader]
        # adopted only when proven: significantly faster than the incumbent, or the incumbent dropped
        adopted = leader != 0 and (_value(arms[0], knob) in dropped or r.verdict == "faster")
        return Step(knob=knob, values=[_value(a, knob) for a in arms], rounds=rounds, dropped=dropped,
                    leader=_value(arms[leader], knob), adopted=adopted,
                    ratio=r.ratio if leader else None, ratio_ci=r.ratio_ci if leader else None,
                    why=r.why if leader else next((a.why for a in result.arms if a.why), None))

    def _drop(self, knob: str, arms: list[Arm], alive: list[int], dropped: dict[str, str], rounds: int) -> None:
        """Infeasible arms at once; from MIN_ROUNDS on, those significantly slower than the leader."""
        with self._lock:
            counts = self.tally.counts(self._n - 1)
        by = {a: [h for h in counts if h.arm == a] for a in alive}
        for a in list(alive):
            bad = sum(h.ooms for h in by[a]), sum(h.failed for h in by[a])
            if any(bad) and len(alive) > 1:
                alive.remove(a)
                dropped[_value(arms[a], knob)] = f"{bad[0]} OOM(s), {bad[1]} failed partition(s) in its counted windows"
        if rounds < MIN_ROUNDS or len(alive) < 2:
            return
        leader = max(alive, key=lambda a: _pooled(by[a]))
        # against the leader, by the figures' own rules: holds too short for a verdict drop nothing
        res = against(counts, [a.label for a in arms], leader, DROP_LEVEL)
        for a in [x for x in alive if x != leader]:
            r = res.arms[a]
            if r.verdict == "slower" and r.ratio is not None and r.ratio_ci is not None:
                alive.remove(a)
                dropped[_value(arms[a], knob)] = (f"slower than {_value(arms[leader], knob)}: "
                                                  f"x{r.ratio:.3f} [{r.ratio_ci[0]:.3f}, {r.ratio_ci[1]:.3f}]")

    def _confirm(self, start: dict[str, Any], best: dict[str, Any], deadline: float) -> ExperimentResult | None:
        """The start against the best, interleaved, its full confirm_cycles (the budget kept the
        time for them: a 2-cycle confirmation, t = 12.7, could confirm nothing): the ratio the
        tune reports."""
        runner = self._runner([arm_of(start), arm_of(best)], "tune: confirm", "blocks", self.plan.confirm_cycles)
        try:
            return runner.run()
        except ExperimentError as exc:
            if exc.result is None or runner.clash is not None:
                raise
            return exc.result

    def _result(self, start: dict[str, Any], best: dict[str, Any], found: dict[str, Any], steps: list[Step],
                confirm: ExperimentResult | None, applied: bool, seconds: float) -> TuneResult:
        notes = [] if not self.stop.is_set() else ["stopped before the search finished"]
        res = TuneResult(start={k: str(v) for k, v in start.items()}, best={k: str(v) for k, v in best.items()},
                         found={k: str(v) for k, v in found.items()}, steps=steps, confirm=confirm, applied=applied,
                         seconds=seconds, budget_s=self.budget_s, notes=notes)
        if confirm is None or len(confirm.arms) < 2:
            return res
        b = confirm.arms[1]
        res = res.model_copy(update={"ratio": b.ratio, "ratio_ci": b.ratio_ci,
                                     "verdict": "faster" if b.verdict == "faster" else "not confirmed"})
        if found != best:
            need, holds = self._confirm_needs(seconds, steps, confirm)
            res = res.model_copy(update={"confirm_needs_s": need, "confirm_holds": holds})
            res.notes.append(not_confirmed(res, need))
        return res

    def _confirm_needs(self, seconds: float, steps: list[Step], confirm: ExperimentResult) -> tuple[float, str]:
        """What a confirmation that could tell needs: (a --time, the flags to give with it, or "").
        A confirmation planned by prover/stats/plan.py from the confirmation's own counts, for the
        effect it measured (its interval's half-width half the effect's log: the race's figure is
        an optimist's), in the tune's holds: a settle its lags ask for (--hold/--settle), as many
        cycles as the counted time needs (--confirm-cycles); the races as they ran before it (longer
        by a longer hold); never less than 10% over this budget."""
        b, a = confirm.arms[1], confirm.arms[0]
        measured = b.ratio if b.ratio is not None else (b.per_min / a.per_min if a.per_min > 0 else 1.0)
        effect = max(1.03, measured)
        with self._lock:
            counts = self.tally.counts(self._n - 1)
        paces = [pace_of(x.label, [h for h in counts if h.arm == x.arm]) for x in confirm.arms]
        races = max(0.0, seconds - sum(h.window_s + h.settle_s for h in counts))
        try:
            plan = plan_holds(paces, self.plan.confirm_cycles, math.sqrt(effect) - 1.0, self.plan.settle_s)
        except ValueError:  # an arm counted nothing: no pace to plan from
            return math.ceil(2 * self.budget_s / 10) * 10.0, ""
        hold, settle = self.plan.hold_s, self.plan.settle_s
        settle2 = max(settle, plan.settle_s)  # a settle the lags ask for, the counted window kept
        hold2 = hold + settle2 - settle
        cycles = max(self.plan.confirm_cycles, math.ceil(plan.window_s * plan.cycles / (hold2 - settle2)))
        flags = (f" --hold {hold2:g} --settle {settle2:g}" if settle2 > settle else "") + (
            f" --confirm-cycles {cycles}" if cycles > self.plan.confirm_cycles else "")
        need = races * hold2 / hold + 2 * cycles * hold2 + settle2
        return math.ceil(max(need, 1.1 * self.budget_s) / 10) * 10.0, flags


def not_confirmed(res: TuneResult, need: float) -> str:
    """What the races found and the confirmation did not confirm, in one line (issue 42)."""
    found = "; ".join(f"{s.knob}={s.leader}: {s.ratio:.2f}x [{s.ratio_ci[0]:.2f}, {s.ratio_ci[1]:.2f}] in its race"
                      if s.ratio is not None and s.ratio_ci else f"{s.knob}={s.leader}" for s in res.adopted())
    ci = f" [{res.ratio_ci[0]:.2f}, {res.ratio_ci[1]:.2f}]" if res.ratio_ci else ""
    b = res.confirm.arms[1] if res.confirm is not None else None
    said = "-" if b is None else b.verdict if b.why is None else f"no verdict: {b.why}"
    if b is not None and b.ratio is not None and b.ratio <= 1.0:
        said += "; no faster there: more time may not confirm it"
    ratio = f"{res.ratio:.2f}x{ci}, " if res.ratio is not None else ""
    return (f"{found}; not confirmed on fresh holds ({ratio}{said}): the start is kept; run with --time "
            f"{need:.0f}{res.confirm_holds} to confirm")


def weight(n: int) -> int:
    """Arms a knob of n values races: all of them, or (a wide worker range) GRID, then GRID - 1 more."""
    return min(n, GRID) + (GRID - 1 if n > GRID else 0)


def spread(values: list[int], n: int, keep: int) -> list[int]:
    """n values spread evenly over `values` (sorted ints), `keep` among them."""
    idx = {round(i * (len(values) - 1) / (n - 1)) for i in range(n)}
    picked = sorted({values[i] for i in idx} | {keep})
    while len(picked) > n:  # keep replaced the nearest spread value
        near = min((v for v in picked if v != keep), key=lambda v: abs(v - keep))
        picked.remove(near)
    return picked


def _pooled(holds: list[HoldCount]) -> float:
    from prover.stats.experiment import arm_rate

    return arm_rate(holds)[0]


def _value(arm: Arm, knob: str) -> str:
    """The knob's value in the arm, as its label shows it (on/off for booleans)."""
    return shown(knob, arm.knobs[knob])


def _step_line(s: Step) -> str:
    ci = f" x{s.ratio:.3f} [{s.ratio_ci[0]:.3f}, {s.ratio_ci[1]:.3f}]" if s.ratio and s.ratio_ci else ""
    ci = ci or (f" (no verdict: {s.why})" if s.why else "")
    drop = "; dropped " + "; ".join(f"{k} ({v})" for k, v in s.dropped.items()) if s.dropped else ""
    return f"tune {s.knob}: {s.rounds} rounds, leader {s.knob}={s.leader}{ci}, {'adopted' if s.adopted else 'kept'}{drop}"
