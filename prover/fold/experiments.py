"""Experiments in the fold: the arms an experiment holds in turn (prover/experiment/), counted
from the events exactly as the live runner counts them, so `replay`, `summary`, `compare` and
the dashboard's panel show the arms (rate, interval, ratio, verdict) of any recording.

The state's `experiments` is one of these (its concept: CONCEPT below). The counting is the
`Tally` (prover/fold/tally.py: the runner folds the same events through it); this module only
holds it and says what the UI and the summary read. The figures (prover/stats/experiment.py:
`analyse`) are worked out again only when what they rest on has changed (a hold ended, or a
partition begun in a finished hold finished): a frame is 0.1 s, and `analyse` is not free."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from prover import events as ev
from prover.fold.concept import Concept
from prover.fold.tally import HANDLERS, ExperimentInfo, Tally
from prover.fold.world import World
from prover.stats.experiment import ExperimentResult, analyse

VIEW_EXPERIMENTS = 8  # a tune runs one experiment a knob and a confirmation: the latest few are shown


@dataclass
class ExperimentsState:
    tally: Tally = field(default_factory=Tally)
    # experiment -> (what the figures rest on when worked out: holds, and their counts; the figures)
    results: dict[int, tuple[tuple[int, ...], ExperimentResult]] = field(default_factory=dict)
    numbers: dict[int, int] = field(default_factory=dict)  # an event's experiment number -> the fold's (_renumbered)

    def result(self, experiment: int) -> ExperimentResult | None:
        """The experiment's figures over its complete holds (None: not started)."""
        x = self.tally.experiments.get(experiment)
        if x is None:
            return None
        holds = self.tally.holds_of(experiment)
        basis = (len(holds), sum(h.verified + h.failed + h.unchecked for h in holds), sum(h.pending for h in holds))
        cached = self.results.get(experiment)
        if cached is None or cached[0] != basis:
            knobs = (list(x.knobs) + [{}] * len(x.arms))[:len(x.arms)]  # one a label, whatever the event said
            cached = (basis, analyse([h.count() for h in holds], x.arms, knobs))
            self.results[experiment] = cached
        return cached[1]

    def views(self, now: float) -> tuple["ExperimentView", ...]:
        """What the panel shows (the same on the fold's own state, as a paused replay hands
        the UI, and on its view copy)."""
        return view_of(self, now)


@dataclass(frozen=True)
class HoldNow:
    """The hold running now: which arm, which cycle, how far in, what it has counted so far."""

    arm: int
    cycle: int
    hold: int
    elapsed_s: float
    hold_s: float
    settling: bool  # still inside the settle dropped after the switch
    verified: int


@dataclass(frozen=True)
class ExperimentView:
    """One experiment as the dashboard's panel reads it (a copy: the fold goes on)."""

    experiment: int
    name: str
    arms: tuple[str, ...]
    design: str
    cycles: int
    hold_s: float
    settle_s: float
    holds_done: int  # complete holds
    holds_planned: int
    ended: str | None
    now: HoldNow | None
    result: ExperimentResult | None  # over the complete holds (shared: never changed once made)

    @property
    def running(self) -> bool:
        return self.ended is None


def _view_of(own: ExperimentsState, x: ExperimentInfo, now: float) -> ExperimentView:
    t = own.tally
    open_ = t.open if t.open is not None and t.open.experiment == x.experiment and x.ended is None else None
    hold_now = None
    if open_ is not None:
        hold_now = HoldNow(arm=open_.arm, cycle=open_.cycle, hold=open_.hold, elapsed_s=max(0.0, now - open_.t0),
                           hold_s=open_.hold_s, settling=now <= open_.counting_from, verified=open_.verified)
    return ExperimentView(experiment=x.experiment, name=x.name, arms=tuple(x.arms), design=x.design, cycles=x.cycles,
                          hold_s=x.hold_s, settle_s=x.settle_s, holds_done=len(t.holds_of(x.experiment)),
                          holds_planned=x.cycles * len(x.arms), ended=x.ended, now=hold_now,
                          result=own.result(x.experiment))


def view_of(own: ExperimentsState, now: float) -> tuple[ExperimentView, ...]:
    """The latest experiments, oldest first (empty for a run without any)."""
    xs = list(own.tally.experiments.values())[-VIEW_EXPERIMENTS:]
    return tuple(_view_of(own, x, now) for x in xs)


@dataclass(frozen=True)
class ExperimentsCopy:
    """The view's copy: the experiments as they were when it was made (never the tally's
    growing lists: a view costs the same however long the experiment)."""

    shown: tuple[ExperimentView, ...]

    def views(self, now: float) -> tuple[ExperimentView, ...]:
        return self.shown


def view(own: ExperimentsState, now: float) -> ExperimentsCopy:
    return ExperimentsCopy(view_of(own, now))


_OWN = (ev.ExperimentStarted, ev.HoldStarted, ev.HoldEnded, ev.ExperimentEnded)


def _apply(own: ExperimentsState, e: Any, w: World) -> None:
    """An experiment's own event: numbered for this run, tallied, and said in the log."""
    e = _renumbered(own, e)
    own.tally.apply(e)
    if isinstance(e, ev.ExperimentStarted):
        w.note("info", f"experiment {e.name!r} started: {len(e.arms)} arms x {e.cycles} cycles of {e.hold_s:g} s "
                       f"(settle {e.settle_s:g} s); X (shift+x) shows its arms", e)
    elif isinstance(e, ev.ExperimentEnded):
        x = own.tally.experiments.get(e.experiment)
        w.note("info", f"experiment {x.name if x else e.experiment!r} ended: {e.reason}", e)


def _listened(own: ExperimentsState, e: Any, w: World) -> None:
    """A partition's event: tallied only while the tally listens (Tally.listening, read in place: a
    third of the fold's events come here, nearly all outside any experiment)."""
    tally = own.tally
    if tally.running or tally.starts:
        tally.apply(e)


def _renumbered(own: ExperimentsState, e: Any) -> Any:
    """The experiment's number in this run: each `c2tui experiment --attach` against one
    long-lived prover numbers its own from 0 (so does a script that runs an experiment and then
    a tune), and a recording of that prover holds them all; the fold keeps them apart."""
    if isinstance(e, ev.ExperimentStarted):
        own.numbers[e.experiment] = len(own.tally.experiments)
    n = own.numbers.get(e.experiment, e.experiment)
    return e if n == e.experiment else e.model_copy(update={"experiment": n})


CONCEPT = Concept("experiments", ExperimentsState, {t: _apply if t in _OWN else _listened for t in HANDLERS},
                  view=view)


class ExperimentSummary(BaseModel):
    """One experiment of the run (`summary`, `compare`): its design and its figures, worked out
    again from the recording's events (the same counting as the live runner's)."""

    experiment: int
    name: str
    design: str
    arms: list[str]
    cycles: int = Field(description="cycles planned")
    hold_s: float
    settle_s: float
    holds_complete: int
    ended: str | None = Field(description="done | stopped | interrupted | error: ...; None: the recording ends first")
    result: ExperimentResult


def summarize_experiments(own: ExperimentsState) -> list[ExperimentSummary]:
    out = []
    for x in own.tally.experiments.values():
        res = own.result(x.experiment)
        if res is None:
            continue
        out.append(ExperimentSummary(experiment=x.experiment, name=x.name, design=x.design, arms=list(x.arms),
                                     cycles=x.cycles, hold_s=x.hold_s, settle_s=x.settle_s,
                                     holds_complete=len(own.tally.holds_of(x.experiment)), ended=x.ended, result=res))
    return out

