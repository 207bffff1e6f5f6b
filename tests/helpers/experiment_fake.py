"""A simulated prover for the experiment's tests: a link (prover/experiment/link.py) whose clock
moves only when the runner sleeps, whose GPU sections begin as a process of a rate the knobs
decide (Poisson, or regular with jitter) and end `lag` seconds later, verified. Hours of
experiments run in milliseconds, on seeds."""
from __future__ import annotations

import heapq
import itertools
import math
import random
from dataclasses import dataclass
from typing import Any, Callable

from prover import events as ev
from prover.experiment.link import Live

RateFn = Callable[[dict[str, str]], float]  # knobs (event text) -> GPU sections begun per minute


class FakeProver(Live):
    def __init__(self, rate: RateFn, knobs: dict[str, Any], seed: int = 0, lag_s: float = 2.0,
                 regular: bool = False, step_s: float = 0.25, ooms: Callable[[dict[str, str]], bool] | None = None,
                 lags: Callable[[dict[str, str]], "Pace"] | None = None) -> None:
        """`lags`: each section's lag drawn from the arm's Pace (its lag_s and shape); else lag_s."""
        super().__init__(clock=lambda: self.t)
        self.t = 0.0
        self.rate, self.lag_s, self.regular, self.step_s, self.lags = rate, lag_s, regular, step_s, lags
        self.ooms = ooms or (lambda k: False)
        self.rng = random.Random(seed)
        self._pending: list[tuple[float, int, Any]] = []
        self._seq = itertools.count()
        self._parts = itertools.count()
        self._next_start: float | None = None
        self.sets: list[tuple[str, Any]] = []
        self(ev.RunStarted(t=0.0, backend="sim", simulated=True, profile="fake", proved_log2=8, modelled_log2=8,
                           gpus=1, config=dict(knobs)))
        self(ev.LockAcquired(t=0.0, gpu=0, lock="compute", worker="w", wait=0.0))

    # --- the link -------------------------------------------------------------------------------
    def set(self, knob: str, value: Any) -> None:
        old = self.knobs().get(knob)
        self.sets.append((knob, value))
        if str(value) != old:
            self(ev.ModeChange(t=self.t, knob=knob, old=str(old), new=str(value), source="experiment"))
            self._next_start = None  # the new rate applies from now

    def emit(self, cls: type, **fields: Any) -> Any:
        e = cls(t=self.t, **fields)
        self(e)
        return e

    def sleep(self, _s: float) -> None:
        self.advance(self.step_s)

    # --- the process ----------------------------------------------------------------------------
    def _gap(self) -> float:
        per_s = max(1e-9, self.rate(self.knobs()) / 60.0)
        if self.regular:
            return (1.0 / per_s) * self.rng.uniform(0.8, 1.2)
        return self.rng.expovariate(per_s)

    def advance(self, dt: float) -> None:
        end = self.t + dt
        if self._next_start is None:
            self._next_start = self.t + self._gap()
        while self._next_start <= end:
            s = self._next_start
            part = f"p{next(self._parts)}"
            self._push(s, ev.LockRequested(t=s, gpu=0, lock="compute", worker="w", part=part))
            if self.ooms(self.knobs()):
                self._push(s, ev.Oom(t=s, gpu=0, part=part, worker="w", requested=1, free=0))
            lag = self.lag_s if self.lags is None else (p := self.lags(self.knobs())).draw(self.rng, p.lag_s)
            d = s + lag
            self._push(d, ev.ProofResult(t=d, part=part, ok=True))
            self._push(d, ev.PartitionDone(t=d, part=part, ok=True, seconds=lag))
            self._next_start = s + self._gap()
        while self._pending and self._pending[0][0] <= end:
            _, _, e = heapq.heappop(self._pending)
            self.t = e.t
            self(e)
        self.t = end

    def _push(self, t: float, e: Any) -> None:
        heapq.heappush(self._pending, (t, next(self._seq), e))


# --- a closed pipeline: workers that synthesise, then run a GPU section, then start over --------------
SHAPES = ("fixed", "exp", "lognormal")


@dataclass(frozen=True)
class Pace:
    """One arm's pipeline: `workers` workers each spend `cpu_s` (mean) before their GPU section
    reads the knobs; the section then queues for the one GPU (first come, first served) for
    `gpu_s` of GPU work (0: no queue), and takes `lag_s` more to done (host work after the GPU),
    drawn by `shape`: fixed (+-10%), exponential, or lognormal with sigma 1 (heavy-tailed: one in
    a thousand takes ~13x the mean). Without a GPU queue the throughput is workers / (cpu_s +
    lag_s); with one, at most 1 / gpu_s: 8 and 12 workers on a saturated GPU run at the same rate
    with different lags (the queue)."""

    cpu_s: float
    lag_s: float
    shape: str = "fixed"
    workers: int | None = None
    gpu_s: float = 0.0

    def draw(self, rng: random.Random, mean: float) -> float:
        if mean <= 0:
            return 0.0
        if self.shape == "exp":
            return rng.expovariate(1.0 / mean)
        if self.shape == "lognormal":
            return rng.lognormvariate(math.log(mean) - 0.5, 1.0)
        return mean * rng.uniform(0.9, 1.1)

    def cpu(self, rng: random.Random) -> float:
        return rng.gammavariate(4.0, self.cpu_s / 4.0) if self.cpu_s > 0 else 0.0  # CV 0.5


class PipelineProver(Live):
    """Workers in a loop: synthesis (its time read from the knobs then), a GPU section
    (SectionBegan; its GPU work and lag read from the knobs then), done and verified. The knobs
    decide each phase as it starts, as the engine's do, so a switch takes a while to show in
    full: what an experiment's settle is for. A pace with fewer workers retires the extra ones
    at their next synthesis; more start at once. The clock moves only when the runner sleeps."""

    def __init__(self, pace: Callable[[dict[str, str]], Pace], knobs: dict[str, Any], workers: int = 8,
                 seed: int = 0, step_s: float = 0.25, warm_s: float | None = None) -> None:
        super().__init__(clock=lambda: self.t)
        self.t = 0.0
        self.pace, self.default_workers, self.step_s = pace, workers, step_s
        self.rng = random.Random(seed)
        self._heap: list[tuple[float, int, str, int, str]] = []
        self._seq = itertools.count()
        self._parts = itertools.count()
        self._gpu_free = 0.0  # when the GPU's queue is empty again (first come, first served)
        self.active: set[int] = set()
        self.sets: list[tuple[str, Any]] = []
        self(ev.RunStarted(t=0.0, backend="sim", simulated=True, profile="fake", proved_log2=8, modelled_log2=8,
                           gpus=1, config=dict(knobs)))
        p0 = pace(self.knobs())
        self._staff(p0, spread=p0.cpu_s + p0.lag_s + p0.gpu_s)
        self(ev.LockAcquired(t=0.0, gpu=0, lock="compute", worker="g0w0", wait=0.0))
        self.advance(warm_s if warm_s is not None else 3 * (p0.cpu_s + p0.lag_s + p0.gpu_s * self._n(p0)) + 1.0)

    def _n(self, p: Pace) -> int:
        return p.workers if p.workers is not None else self.default_workers

    def _staff(self, p: Pace, spread: float = 0.0) -> None:
        """Start the workers the pace wants beyond those running (staggered over `spread`)."""
        for w in range(self._n(p)):
            if w not in self.active:
                self.active.add(w)
                self._push(self.t + self.rng.uniform(0.0, spread), "synth", w, "")

    def set(self, knob: str, value: Any) -> None:
        old = self.knobs().get(knob)
        self.sets.append((knob, value))
        if str(value) != old:
            self(ev.ModeChange(t=self.t, knob=knob, old=str(old), new=str(value), source="experiment"))
            self._staff(self.pace(self.knobs()))

    def emit(self, cls: type, **fields: Any) -> Any:
        e = cls(t=self.t, **fields)
        self(e)
        return e

    def sleep(self, _s: float) -> None:
        self.advance(self.step_s)

    def _push(self, t: float, what: str, w: int, part: str) -> None:
        heapq.heappush(self._heap, (t, next(self._seq), what, w, part))

    def advance(self, dt: float) -> None:
        end = self.t + dt
        while self._heap and self._heap[0][0] <= end:
            t, _, what, w, part = heapq.heappop(self._heap)
            self.t = t
            getattr(self, f"_{what}")(t, w, part)
        self.t = end

    def _synth(self, t: float, w: int, _part: str) -> None:
        p = self.pace(self.knobs())
        if w >= self._n(p):  # fewer workers now: this one retires
            self.active.discard(w)
            return
        part = f"p{next(self._parts)}"
        self(ev.PhaseStart(t=t, part=part, phase=ev.Phase.synthesis, worker=f"g0w{w}"))
        self._push(t + p.cpu(self.rng), "section", w, part)

    def _section(self, t: float, w: int, part: str) -> None:
        knobs = self.knobs()
        p = self.pace(knobs)
        self(ev.SectionBegan(t=t, gpu=0, worker=f"g0w{w}", part=part, lock_mode=knobs.get("lock_mode", "")))
        gpu_done = t
        if p.gpu_s > 0:
            gpu_done = max(t, self._gpu_free) + p.draw(self.rng, p.gpu_s)
            self._gpu_free = gpu_done
        self._push(gpu_done + p.draw(self.rng, p.lag_s), "done", w, part)

    def _done(self, t: float, w: int, part: str) -> None:
        self(ev.ProofResult(t=t, part=part, ok=True))
        self(ev.PartitionDone(t=t, part=part, ok=True, seconds=0.0))
        self._push(t, "synth", w, "")
