"""Run an experiment on a live prover: wait for its first GPU section, then hold each arm in
the design's order (set its knobs, drop the settle, count to the hold's end), and finish with
the figures (prover/stats/experiment.py), every step an event in the prover's stream:

    ExperimentStarted -> (ModeChange..., HoldStarted, ..., HoldEnded) x holds -> ExperimentEnded

    link = EmbeddedLink(engine); engine.start()
    result = Runner(link, design).run()        # ExperimentResult; raises ExperimentError

With `--hold auto` (the design's hold_s None) a pilot comes first, an experiment of its own
("NAME: pilot", one short hold an arm, ended once PILOT_SECTIONS sections began or PILOT_MAX_S
passed), and the holds are sized from what it measured (prover/stats/plan.py); the plan is said
(a Note in the stream, and `say`) before the first hold. Every experiment ends by waiting for
the sections begun in its holds (a partition counts for the hold its GPU section began in).

At the end the knobs any arm set go back to what they were at the start (a prover attached
to is left as it was found; `tune --apply` sets its best on purpose afterwards). Before each
hold and before that restore the runner checks that the knobs are still what it set: a knob
someone else changed meanwhile (a key, another attached client) stops the experiment, and
that change is left in force, never overwritten (the other knobs still go back).
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable

from prover import events as ev
from prover.experiment.design import Arm, Design, shown
from prover.experiment.link import Link
from prover.fold.tally import HoldTally, Tally
from prover.knobs import KNOBS
from prover.stats.experiment import ExperimentResult, analyse
from prover.stats.plan import HoldPlan, pace_of, plan_holds

POLL_S = 0.05
DRAIN_MIN_S, DRAIN_LAGS = 10.0, 4.0  # the wait for the last holds' sections: >= 10 s, >= 4 of the longest lag seen
PILOT_SECTIONS, PILOT_MAX_S, PILOT_SETTLE_S = 20, 60.0, 2.0  # a pilot hold: until 20 sections began, <= 60 s
Progress = Callable[[str, Tally], None]


class ExperimentError(RuntimeError):
    """The experiment could not run to its end (the message says why; what was counted is in
    `result`, when any hold finished)."""

    def __init__(self, message: str, result: ExperimentResult | None = None) -> None:
        super().__init__(message)
        self.result = result


def typed(knob: str, text: str) -> Any:
    """A knob's value from the text events carry ('True', '3', 'two-lock', ...)."""
    return KNOBS[knob].parse(text) if knob in KNOBS else text


class Runner:
    def __init__(self, link: Link, design: Design, *, experiment: int = 0, name: str = "experiment",
                 stop: threading.Event | None = None, progress: Progress | None = None,
                 tally: Tally | None = None, startup_timeout_s: float | None = None, order: str | None = None,
                 sleep: Callable[[float], None] = time.sleep, lock: threading.Lock | None = None,
                 say: Callable[[str], None] | None = None) -> None:
        self.link, self.design = link, design
        self.say = say or (lambda text: None)
        self.plan: HoldPlan | None = None  # an auto hold's plan, once the pilot has made it
        self.experiment, self.name = experiment, name
        self.stop = stop or threading.Event()
        self.progress = progress
        self.startup_timeout_s = startup_timeout_s
        self.order = order  # what ExperimentStarted calls the design (a tune's race: "race")
        self.sleep = sleep  # tests pass one that moves a simulated prover's clock
        self._lock = lock or threading.Lock()  # the tally's (a tune's races share one tally and lock)
        self.tally = tally or Tally()
        if tally is None:
            link.add_sink(self._fold)
        self.start_knobs: dict[str, Any] = {}
        self.expected: dict[str, Any] = {}  # what the prover's knobs are if nobody else touched them
        self.clash: str | None = None  # a knob someone else changed mid-experiment (said, left as set)
        self._asked: dict[str, Any] = {}  # knobs asked for whose answer has not come (cut short)

    def _fold(self, e: Any) -> None:
        with self._lock:
            self.tally.apply(e)

    # --- the run ------------------------------------------------------------------------------
    def run(self) -> ExperimentResult:
        """The whole design, in its order (a pilot first for an auto hold); ExperimentError if it
        could not finish."""
        if self.design.auto:
            self.wait_ready()
            self.design = self.pilot()
        resolved = self.begin()
        reason = "done"
        try:
            for i, (cycle, arm) in enumerate(self.design.schedule()):
                reason = self.hold(i, cycle, arm, resolved[arm])
                if reason != "done":
                    break
        except BaseException:  # Ctrl-C: still say so in the stream, with what was counted
            self.finish("interrupted")
            raise
        result = self.finish(reason)
        if reason != "done" or self.clash is not None:
            raise ExperimentError(f"the experiment did not finish: {self.clash or reason}", result)
        return result

    def begin(self) -> list[dict[str, Any]]:
        """Wait for the prover, note the knobs in force, announce the experiment; returns each
        arm's full assignment (what hold() sets)."""
        self.wait_ready()
        if not self.start_knobs:  # (a pilot before this experiment noted them before its first switch)
            now = self.link.knobs()
            self.start_knobs = {k: typed(k, now[k]) for k in self.design.knob_names() if k in now}
        self.expected = self.expected or dict(self.start_knobs)  # (after a pilot: its last arm's)
        try:
            resolved = self.design.resolved(self.start_knobs)
        except ValueError as exc:
            raise ExperimentError(str(exc)) from None
        d = self.design
        self.link.emit(ev.ExperimentStarted, experiment=self.experiment, name=self.name, arms=[a.label for a in d.arms],
                       knobs=[{k: str(v) for k, v in r.items()} for r in resolved], design=self.order or d.order,
                       cycles=d.cycles, hold_s=d.hold_s, settle_s=d.settle_s, seed=d.seed)
        return resolved

    def finish(self, reason: str) -> ExperimentResult:
        """Knobs back as they were, the last holds' sections waited for, the figures,
        ExperimentEnded; returns the figures."""
        self.restore()
        if self.clash is not None and reason == "done":
            reason = self.clash
        if reason == "done":
            self.drain()
        result = self.result()
        self.link.emit(ev.ExperimentEnded, experiment=self.experiment, reason=reason, result=result.model_dump(mode="json"))
        return result

    def wait_ready(self) -> None:
        wait_ready(self.link, self.stop, self.sleep, self.startup_timeout_s)

    def hold(self, i: int, cycle: int, arm: int, knobs: dict[str, Any],
             until: Callable[[HoldTally], bool] | None = None) -> str:
        """One hold: set the arm, count until its end (or until `until(its tally)`, checked as it
        runs); 'done' or why it was cut short."""
        why = self.changed_by_others() or self.apply(knobs)
        if why is not None:
            return why
        d = self.design
        assert d.hold_s is not None and d.settle_s is not None  # an auto design is planned before its holds
        start = self.link.emit(ev.HoldStarted, experiment=self.experiment, hold=i, arm=arm, cycle=cycle,
                               hold_s=d.hold_s, settle_s=d.settle_s)
        t0 = start.t if start is not None else self.link.now()
        why = self.wait_until(t0 + d.hold_s, f"hold {i + 1} ({d.arms[arm].label})", until)
        self.link.emit(ev.HoldEnded, experiment=self.experiment, hold=i, arm=arm, cycle=cycle, complete=why is None)
        return why or "done"

    # --- an auto hold: the pilot, then the plan ---------------------------------------------------
    def pilot(self) -> Design:
        """One short hold an arm (its own experiment, numbered before this one), each ended once
        PILOT_SECTIONS sections began in it or PILOT_MAX_S passed; the design with the planned
        hold and settle. ExperimentError if an arm saw no section begin or finish."""
        d = self.design
        settle = d.settle_s if d.settle_s is not None else PILOT_SETTLE_S
        pilot = Pilot(self, d.model_copy(update={"cycles": 1, "hold_s": settle + PILOT_MAX_S, "settle_s": settle,
                                                 "order": "abab"}))
        paces = pilot.run()
        self.start_knobs, self.expected = pilot.start_knobs, dict(pilot.expected)  # its last arm's knobs stay
        self.experiment += 1
        dead = [p.label for p in paces if p.sections == 0 or p.lag_s is None]
        if dead:
            raise ExperimentError(f"the pilot saw no partition of {dead[0]} begin and finish in {PILOT_MAX_S:g} s: "
                                  "the holds cannot be sized from the run; give --hold S --settle S")
        self.plan = plan_holds(paces, d.cycles, d.precision, d.settle_s, max_s=d.max_s)
        line = self.plan.line([a.label for a in d.arms])
        self.link.emit(ev.Note, level="info", text=f"{self.name}: {line}")
        self.say(line)
        return d.model_copy(update={"hold_s": self.plan.hold_s, "settle_s": self.plan.settle_s})

    def apply(self, knobs: dict[str, Any]) -> str | None:
        for k, v in knobs.items():
            self._asked[k] = v  # set, or maybe set: a Ctrl-C can land while the prover says yes
            try:
                self.link.set(k, v)
            except Exception as exc:  # noqa: BLE001 - a refusal (ValueError) or a lost prover: said, not raised
                return f"{k}={v} refused: {exc}"
            self.expected[k] = self._asked.pop(k)
        return None

    def _mine(self, knob: str, text: str) -> bool:
        """Whether the knob's value now is one this runner set (or asked for)."""
        return same(knob, text, self.expected[knob]) or (knob in self._asked and same(knob, text, self._asked[knob]))

    def changed_by_others(self) -> str | None:
        """Why the experiment must stop, if a knob it steers is no longer what it set (someone
        else changed it: that change is theirs to keep); sets self.clash."""
        now = self.link.knobs()
        moved = {k: now[k] for k in self.expected if k in now and not self._mine(k, now[k])}
        if moved and self.clash is None:
            self.clash = ("changed by someone else mid-experiment: " + ", ".join(
                f"{k} {shown(k, self.expected[k]) if k in KNOBS else self.expected[k]} -> {t}" for k, t in moved.items())
                + " (left as they set it; the experiment stopped)")
        return self.clash

    def wait_until(self, t_end: float, what: str, until: Callable[[HoldTally], bool] | None = None) -> str | None:
        """Sleep on the prover's clock until t_end (or `until` the open hold's tally); why not,
        if the run ended or was stopped."""
        while self.link.now() < t_end:
            if until is not None:
                with self._lock:
                    if self.tally.open is not None and until(self.tally.open):
                        return None
            why = self.link.ended()
            if why is not None:
                return f"the run ended during {what}: {why}"
            if self.stop.is_set():
                return "stopped"
            if self.progress is not None:
                with self._lock:
                    self.progress(what, self.tally)
            self.sleep(POLL_S)
        return None

    def drain(self) -> int:
        """Wait on the prover's clock until every section begun in a counted window has finished
        (a partition counts for the hold its section began in, whenever it finishes), at most
        DRAIN_LAGS of the longest lag seen (and DRAIN_MIN_S); how many still run then."""
        with self._lock:
            end = self.link.now() + max(DRAIN_MIN_S, DRAIN_LAGS * self.tally.lag_max(self.experiment))
        while True:
            with self._lock:
                left = self.tally.pending(self.experiment)
                if left and self.progress is not None:
                    self.progress(f"waiting for {left} partition(s) begun in the holds", self.tally)
            if not left or self.link.now() >= end or self.link.ended() is not None or self.stop.is_set():
                return left
            self.sleep(POLL_S)

    def restore(self) -> None:
        """Every knob an arm set back to its value at the start (best effort: a stopped run
        takes no change, and that is fine), except one someone else changed meanwhile."""
        if self.link.ended() is not None:
            return
        self.changed_by_others()
        now = self.link.knobs()
        for k, v in self.start_knobs.items():  # one by one: a knob refused leaves the others to go back
            if k not in now or k not in self.expected or self._mine(k, now[k]):
                self.apply({k: v})

    def result(self) -> ExperimentResult:
        with self._lock:
            info = self.tally.experiments.get(self.experiment)
            counts = self.tally.counts(self.experiment)
        labels = [a.label for a in self.design.arms]
        return analyse(counts, labels, info.knobs if info is not None else None)


def same(knob: str, text: str, value: Any) -> bool:
    """Whether a knob's text (as events carry it) is `value`."""
    try:
        return typed(knob, text) == value
    except ValueError:
        return text == str(value)


def wait_ready(link: Link, stop: threading.Event, sleep: Callable[[float], None] = time.sleep,
               timeout_s: float | None = None) -> None:
    """Until the prover's first GPU section (start-up can take minutes natively)."""
    t0 = time.monotonic()
    while not link.ready():
        why = link.ended()
        if why is not None:
            raise ExperimentError(f"the run ended before its first GPU section: {why}")
        if stop.is_set():
            raise ExperimentError("stopped before the first GPU section")
        if timeout_s is not None and time.monotonic() - t0 > timeout_s:
            raise ExperimentError(f"no GPU section began within {timeout_s:g} s")
        sleep(POLL_S)


def run_experiment(link: Link, arms: list[Arm], **design: Any) -> ExperimentResult:
    """A one-call form: Design(arms=arms, **design), run on link."""
    return Runner(link, Design(arms=arms, **design)).run()


class Pilot(Runner):
    """The auto hold's pilot: the runner's design at one short hold an arm, on the runner's link
    and tally, numbered as the runner's experiment; returns each arm's pace."""

    def __init__(self, main: Runner, design: Design) -> None:
        super().__init__(main.link, design, experiment=main.experiment, name=f"{main.name}: pilot", stop=main.stop,
                         progress=main.progress, tally=main.tally, order="pilot", sleep=main.sleep, lock=main._lock)
        self._done = False

    def run(self) -> list[Any]:  # type: ignore[override]
        resolved = self.begin()
        reason = "done"
        try:
            for i, (cycle, arm) in enumerate(self.design.schedule()):
                reason = self.hold(i, cycle, arm, resolved[arm], until=lambda h: h.began >= PILOT_SECTIONS)
                if reason != "done":
                    break
        except BaseException:
            self.finish("interrupted")
            raise
        self._done = reason == "done"
        self.finish(reason)
        if reason != "done":
            raise ExperimentError(f"the pilot did not finish: {reason}")
        with self._lock:
            counts = self.tally.counts(self.experiment)
        return [pace_of(a.label, [h for h in counts if h.arm == i]) for i, a in enumerate(self.design.arms)]

    def restore(self) -> None:
        """After a whole pilot the experiment follows at once (its first hold sets its own
        knobs); a pilot cut short puts them back."""
        if not self._done:
            super().restore()
