"""The accounting of an experiment: verified completions per hold, from events alone.

A concept over events like the fold's (`Tally.apply(event)`, handlers in `HANDLERS` over its
own small state), so the live runner and a fold of a recording count the same way: the fold
registers it as one of its concepts, and `replay`, `summary` and `compare` show the arms.

The counting rule: a partition counts for a hold when its GPU section began after the hold's
settle ended (GPU section start: its first lock request or prep_msm start after its latest
synthesis; the knobs it runs under are read there) and it finished, verified, inside the hold
(PartitionDone ok, its proof checked and good). Unchecked proofs (--verify-share < 1) and
failed partitions are counted apart and never as verified. OOMs and fallbacks are counted
when they happen inside the counted window (after the settle: a switch's own transients fall
in the settle). Outside holds nothing is kept, so a run with no experiment pays ~nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from prover import events as ev
from prover.events import Phase
from prover.experiment.stats import HoldCount

MAX_TRACKED = 10_000  # partitions whose GPU section start is remembered (in flight: far fewer)


@dataclass
class ExperimentInfo:
    experiment: int
    name: str
    arms: list[str]
    knobs: list[dict[str, str]]
    design: str
    cycles: int
    hold_s: float
    settle_s: float
    t0: float
    ended: str | None = None  # ExperimentEnded's reason
    result: dict[str, Any] | None = None


@dataclass
class HoldTally:
    experiment: int
    hold: int
    arm: int
    cycle: int
    t0: float
    hold_s: float
    settle_s: float
    t1: float | None = None  # None: still open
    complete: bool = False
    done: list[tuple[float, float]] = field(default_factory=list)  # verified: (done t, lag)
    # every verified partition whose section began in the window, finished in the hold or after:
    # its lag (GPU section start -> done), unbiased by the window's end (stats.exposure)
    lags: list[float] = field(default_factory=list)
    failed: int = 0
    unchecked: int = 0
    ooms: int = 0
    fallbacks: int = 0

    @property
    def counting_from(self) -> float:
        return self.t0 + self.settle_s

    def counts(self, t: float) -> bool:
        """t falls in the counted window (after the settle, before the end if ended)."""
        return t > self.counting_from and (self.t1 is None or t <= self.t1)

    @property
    def verified(self) -> int:
        return len(self.done)

    def count(self, now: float | None = None) -> HoldCount:
        end = self.t1 if self.t1 is not None else (now if now is not None else self.counting_from)
        return HoldCount(arm=self.arm, cycle=self.cycle, window_s=max(0.0, end - self.counting_from),
                         verified=self.verified, lag_sum_s=sum(self.lags), lag_n=len(self.lags), failed=self.failed,
                         unchecked=self.unchecked, ooms=self.ooms, fallbacks=self.fallbacks)


def _key(e: Any) -> tuple[str | None, str]:
    return e.host, e.part


@dataclass
class Tally:
    experiments: dict[int, ExperimentInfo] = field(default_factory=dict)
    holds: list[HoldTally] = field(default_factory=list)
    open: HoldTally | None = None  # the hold running now
    running: bool = False  # an experiment has started and not ended: GPU section starts are kept
    # part -> (the hold it counts for, -1: none; when its GPU section began)
    starts: dict[tuple[str | None, str], tuple[int, float]] = field(default_factory=dict)
    unchecked_parts: set[tuple[str | None, str]] = field(default_factory=set)
    t: float = 0.0

    def apply(self, e: Any) -> None:
        if e.t > self.t:
            self.t = e.t
        handler = HANDLERS.get(type(e))
        if handler is not None:
            handler(self, e)

    def holds_of(self, experiment: int, complete_only: bool = True) -> list[HoldTally]:
        return [h for h in self.holds if h.experiment == experiment and (h.complete or not complete_only)]

    def counts(self, experiment: int, complete_only: bool = True) -> list[HoldCount]:
        return [h.count(self.t) for h in self.holds_of(experiment, complete_only)]

    def current(self) -> ExperimentInfo | None:
        """The experiment running now (started, not ended), if any."""
        live = [x for x in self.experiments.values() if x.ended is None]
        return live[-1] if live else None


# --- handlers -----------------------------------------------------------------------------------
def _started(s: Tally, e: ev.ExperimentStarted) -> None:
    s.experiments[e.experiment] = ExperimentInfo(e.experiment, e.name, list(e.arms), [dict(k) for k in e.knobs],
                                                 e.design, e.cycles, e.hold_s, e.settle_s, e.t)
    s.running = True


def _hold_started(s: Tally, e: ev.HoldStarted) -> None:
    s.open = HoldTally(e.experiment, e.hold, e.arm, e.cycle, e.t, e.hold_s, e.settle_s)
    s.holds.append(s.open)


def _hold_ended(s: Tally, e: ev.HoldEnded) -> None:
    for h in reversed(s.holds):
        if (h.experiment, h.hold) == (e.experiment, e.hold) and h.t1 is None:
            h.t1, h.complete = e.t, e.complete
            h.done = [(t, lag) for t, lag in h.done if t <= e.t]  # a late-arriving event past the end (its lag stays)
            break
    if s.open is not None and (s.open.experiment, s.open.hold) == (e.experiment, e.hold):
        s.open = None


def _ended(s: Tally, e: ev.ExperimentEnded) -> None:
    x = s.experiments.get(e.experiment)
    if x is not None:
        x.ended, x.result = e.reason, e.result
    if s.open is not None and s.open.experiment == e.experiment:
        s.open = None
    s.running = False
    s.starts.clear()
    s.unchecked_parts.clear()


def _synthesis(s: Tally, e: ev.PhaseStart) -> None:
    if e.phase is Phase.synthesis:  # a retried partition starts over: its old GPU section no longer counts
        s.starts.pop(_key(e), None)
    elif e.phase is Phase.prep_msm:
        _section_began(s, e)


def _section_began(s: Tally, e: Any) -> None:
    """The first of a partition's GPU section events (a lock request, prep_msm's start) since
    its synthesis: where it began decides the hold it may count for (-1: none)."""
    if not s.running or e.part is None:
        return
    k = _key(e)
    if k in s.starts:
        return
    if len(s.starts) >= MAX_TRACKED:
        s.starts.pop(next(iter(s.starts)))
    counted = s.open is not None and s.open.counts(e.t)
    s.starts[k] = (len(s.holds) - 1 if counted else -1, e.t)


def _proof(s: Tally, e: ev.ProofResult) -> None:
    if not e.checked and s.starts.get(_key(e), (-1, 0.0))[0] >= 0:
        s.unchecked_parts.add(_key(e))


def _done(s: Tally, e: ev.PartitionDone) -> None:
    k = _key(e)
    if not e.ok and s.open is not None and s.open.counts(e.t):
        s.open.failed += 1
    began = s.starts.pop(k, None)
    unchecked = k in s.unchecked_parts
    s.unchecked_parts.discard(k)
    if began is None or began[0] < 0 or not e.ok:
        return
    h = s.holds[began[0]]
    lag = max(0.0, e.t - began[1])
    if not unchecked:
        h.lags.append(lag)
    if h.t1 is not None and e.t > h.t1:
        return  # finished after its hold ended: counted for no hold
    if unchecked:
        h.unchecked += 1
    else:
        h.done.append((e.t, lag))


def _oom(s: Tally, e: Any) -> None:
    if s.open is not None and s.open.counts(e.t):
        s.open.ooms += 1


def _fallback(s: Tally, e: Any) -> None:
    if s.open is not None and s.open.counts(e.t):
        s.open.fallbacks += 1


HANDLERS: dict[type, Callable[[Tally, Any], None]] = {
    ev.ExperimentStarted: _started, ev.HoldStarted: _hold_started, ev.HoldEnded: _hold_ended,
    ev.ExperimentEnded: _ended, ev.PhaseStart: _synthesis, ev.LockRequested: _section_began,
    ev.ProofResult: _proof, ev.PartitionDone: _done, ev.Oom: _oom, ev.Fallback: _fallback,
}
