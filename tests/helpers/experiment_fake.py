"""A simulated prover for the experiment's tests: a link (prover/experiment/link.py) whose clock
moves only when the runner sleeps, whose GPU sections begin as a process of a rate the knobs
decide (Poisson, or regular with jitter) and end `lag` seconds later, verified. Hours of
experiments run in milliseconds, on seeds."""
from __future__ import annotations

import heapq
import itertools
import random
from typing import Any, Callable

from prover import events as ev
from prover.experiment.link import Live

RateFn = Callable[[dict[str, str]], float]  # knobs (event text) -> GPU sections begun per minute


class FakeProver(Live):
    def __init__(self, rate: RateFn, knobs: dict[str, Any], seed: int = 0, lag_s: float = 2.0,
                 regular: bool = False, step_s: float = 0.25, ooms: Callable[[dict[str, str]], bool] | None = None) -> None:
        super().__init__(clock=lambda: self.t)
        self.t = 0.0
        self.rate, self.lag_s, self.regular, self.step_s = rate, lag_s, regular, step_s
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
            d = s + self.lag_s
            self._push(d, ev.ProofResult(t=d, part=part, ok=True))
            self._push(d, ev.PartitionDone(t=d, part=part, ok=True, seconds=self.lag_s))
            self._next_start = s + self._gap()
        while self._pending and self._pending[0][0] <= end:
            _, _, e = heapq.heappop(self._pending)
            self.t = e.t
            self(e)
        self.t = end

    def _push(self, t: float, e: Any) -> None:
        heapq.heappush(self._pending, (t, next(self._seq), e))
