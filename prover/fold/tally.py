"""The accounting of an experiment: per hold, the partitions whose GPU section began in its
counted window, by outcome, from events alone.

A concept over events like the fold's (`Tally.apply(event)`, handlers in `HANDLERS` over its own
small state), so the live runner (prover/experiment/) and a fold of a recording count the same
way: the fold registers it (prover/fold/experiments.py), and `replay`, `summary` and `compare`
show the arms.

The counting rule (docs/experiment.md): a partition counts for the hold in whose counted window
(after the settle, up to the hold's end) its GPU section began, by the fold's one definition of
that moment (prover/fold/sections.py: its SectionBegan, else its first GPU event; a retried
partition starts over at its synthesis). It counts as verified when it finishes with its proof
checked and good, **whenever** that is: in the next hold, or after the last one (the runner waits
for those before it ends the experiment). Unchecked proofs (--verify-share < 1) and failed
partitions are counted apart, never as verified; sections still running are `pending`. OOMs and
fallbacks count for the hold their section began in. Outside an experiment nothing is kept, so
a run with no experiment pays ~nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from prover import events as ev
from prover.fold.sections import section_begun, starts_over
from prover.stats.experiment import HoldCount

MAX_TRACKED = 10_000  # partitions whose GPU section start is remembered (in flight: far fewer)
Key = tuple[str | None, str]


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
    after: int | None = None  # the arm held just before in this experiment
    t1: float | None = None  # None: still open
    complete: bool = False
    began: int = 0  # sections begun in the counted window
    pending: int = 0  # of those, still running
    lags: list[float] = field(default_factory=list)  # verified: done - section start
    gaps: list[float] = field(default_factory=list)  # from one section start in the window to the next
    last_start: float | None = None
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
        return len(self.lags)

    def count(self, now: float | None = None) -> HoldCount:
        end = self.t1 if self.t1 is not None else (now if now is not None else self.counting_from)
        return HoldCount(arm=self.arm, cycle=self.cycle, window_s=max(0.0, end - self.counting_from),
                         settle_s=self.settle_s, after=self.after, verified=self.verified, began=self.began,
                         pending=self.pending, lag_sum_s=sum(self.lags), lag_n=len(self.lags),
                         lag_max_s=max(self.lags, default=0.0), gap_n=len(self.gaps), gap_sum_s=sum(self.gaps),
                         gap_sq_s=sum(g * g for g in self.gaps), failed=self.failed, unchecked=self.unchecked,
                         ooms=self.ooms, fallbacks=self.fallbacks)


@dataclass
class _Start:
    hold: int  # index into Tally.holds; -1: began outside every counted window
    t: float
    exact: bool  # said by a SectionBegan (a first GPU event may be overridden by one)
    unchecked: bool = False


@dataclass
class Tally:
    experiments: dict[int, ExperimentInfo] = field(default_factory=dict)
    holds: list[HoldTally] = field(default_factory=list)
    open: HoldTally | None = None  # the hold running now
    running: bool = False  # an experiment has started and not ended: GPU section starts are placed
    starts: dict[Key, _Start] = field(default_factory=dict)
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

    def pending(self, experiment: int) -> int:
        """Sections begun in the experiment's counted windows and still running."""
        return sum(h.pending for h in self.holds_of(experiment, complete_only=False))

    def lag_max(self, experiment: int) -> float:
        """The longest GPU-section-to-done time seen in the experiment so far (0: none yet)."""
        return max((max(h.lags, default=0.0) for h in self.holds_of(experiment, complete_only=False)), default=0.0)

    @property
    def listening(self) -> bool:
        """Events matter to the tally: an experiment runs, or sections begun in its holds still do."""
        return self.running or bool(self.starts)

    def current(self) -> ExperimentInfo | None:
        """The experiment running now (started, not ended), if any."""
        live = [x for x in self.experiments.values() if x.ended is None]
        return live[-1] if live else None

    def _resolve(self, k: Key) -> tuple[_Start, HoldTally] | None:
        """A tracked section leaves the book (it ended, or starts over): its hold, if it counts."""
        st = self.starts.pop(k, None)
        if st is None or st.hold < 0:
            return None
        h = self.holds[st.hold]
        h.pending -= 1
        return st, h


def _key(e: Any) -> Key:
    return getattr(e, "host", None), e.part


# --- handlers -----------------------------------------------------------------------------------
def _started(s: Tally, e: ev.ExperimentStarted) -> None:
    s.experiments[e.experiment] = ExperimentInfo(e.experiment, e.name, list(e.arms), [dict(k) for k in e.knobs],
                                                 e.design, e.cycles, e.hold_s, e.settle_s, e.t)
    s.running = True


def _hold_started(s: Tally, e: ev.HoldStarted) -> None:
    prev = next((h.arm for h in reversed(s.holds) if h.experiment == e.experiment), None)
    s.open = HoldTally(e.experiment, e.hold, e.arm, e.cycle, e.t, e.hold_s, e.settle_s, after=prev)
    s.holds.append(s.open)


def _hold_ended(s: Tally, e: ev.HoldEnded) -> None:
    for h in reversed(s.holds):
        if (h.experiment, h.hold) == (e.experiment, e.hold) and h.t1 is None:
            h.t1, h.complete = e.t, e.complete
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
    # sections begun outside the holds are forgotten; those begun in them are still followed (the
    # runner waits for them before it ends; a recording cut short leaves them pending)
    s.starts = {k: st for k, st in s.starts.items() if st.hold >= 0}


def _phase_start(s: Tally, e: ev.PhaseStart) -> None:
    part = starts_over(e)
    if part is not None:
        s._resolve(_key(e))  # a retried partition starts over: its old section no longer counts
    else:
        _section(s, e)


def _section(s: Tally, e: Any) -> None:
    """A GPU section's start (the fold's rule): the hold whose counted window holds it, or none."""
    got = section_begun(e)
    if got is None or not s.running:
        return
    k = _key(e)
    known = s.starts.get(k)
    if known is not None and (known.exact or not got[2]):
        return  # a later event of a section already placed
    if known is not None:
        s._resolve(k)  # a SectionBegan after a first GPU event (never in the engine's order): it is exact
    if len(s.starts) >= MAX_TRACKED:
        s._resolve(next(iter(s.starts)))
    hold = s.open if s.open is not None and s.open.counts(e.t) else None
    s.starts[k] = _Start(len(s.holds) - 1 if hold is not None else -1, e.t, got[2])
    if hold is not None:
        hold.began += 1
        hold.pending += 1
        _gap(s, e)


def _gap(s: Tally, e: Any) -> None:
    """The time from the hold's previous section start to this one: how regular the starts are
    (the plan's dispersion, prover/stats/plan.py)."""
    h = s.open
    if h is not None:
        if h.last_start is not None:
            h.gaps.append(e.t - h.last_start)
        h.last_start = e.t


def _proof(s: Tally, e: ev.ProofResult) -> None:
    st = s.starts.get(_key(e))
    if st is not None and not e.checked:
        st.unchecked = True


def _done(s: Tally, e: ev.PartitionDone) -> None:
    got = s._resolve(_key(e))
    if got is None:
        return
    st, h = got
    if not e.ok:
        h.failed += 1
    elif st.unchecked:
        h.unchecked += 1
    else:
        h.lags.append(max(0.0, e.t - st.t))


def _cancelled(s: Tally, e: ev.PartitionCancelled) -> None:
    s._resolve(_key(e))


def _counted_for(s: Tally, e: Any) -> HoldTally | None:
    """The hold an OOM or a fallback counts for: its section's (placed by this very event if it
    is the section's first); an event without a partition counts where it happens."""
    _section(s, e)
    part = getattr(e, "part", None)
    if part is None:
        return s.open if s.open is not None and s.open.counts(e.t) else None
    st = s.starts.get(_key(e))
    return s.holds[st.hold] if st is not None and st.hold >= 0 else None


def _oom(s: Tally, e: ev.Oom) -> None:
    h = _counted_for(s, e)
    if h is not None:
        h.ooms += 1


def _fallback(s: Tally, e: ev.Fallback) -> None:
    h = _counted_for(s, e)
    if h is not None:
        h.fallbacks += 1


HANDLERS: dict[type, Callable[[Tally, Any], None]] = {
    ev.ExperimentStarted: _started, ev.HoldStarted: _hold_started, ev.HoldEnded: _hold_ended,
    ev.ExperimentEnded: _ended, ev.PhaseStart: _phase_start, ev.SectionBegan: _section,
    ev.LockRequested: _section, ev.LockAcquired: _section, ev.Alloc: _section, ev.DeviceSyncStart: _section,
    ev.ProofResult: _proof, ev.PartitionDone: _done, ev.PartitionCancelled: _cancelled,
    ev.Oom: _oom, ev.Fallback: _fallback,
}
