"""The counting rule, event by event: a partition counts for a hold when its GPU section began
after the hold's settle and it finished, verified, inside the hold."""
from __future__ import annotations

from typing import Any

from prover import events as ev
from prover.events import Phase
from prover.experiment.tally import HANDLERS, Tally


def _start(t: float = 0.0, settle: float = 2.0, hold: float = 10.0) -> list[Any]:
    return [ev.ExperimentStarted(t=t, arms=["a", "b"], knobs=[{}, {}], design="abab", cycles=1, hold_s=hold,
                                 settle_s=settle),
            ev.HoldStarted(t=t, hold=0, arm=0, cycle=0, hold_s=hold, settle_s=settle)]


def _part(part: str, section: float, done: float, ok: bool = True, checked: bool = True,
          first: str = "lock") -> list[Any]:
    out: list[Any] = [ev.PhaseStart(t=max(0.0, section - 0.5), part=part, phase=Phase.synthesis, worker="w")]
    if first == "lock":
        out.append(ev.LockRequested(t=section, gpu=0, lock="mem", worker="w", part=part))
    else:
        out.append(ev.PhaseStart(t=section, part=part, phase=Phase.prep_msm, worker="w"))
    out.append(ev.LockRequested(t=section + 0.3, gpu=0, lock="compute", worker="w", part=part))
    out.append(ev.ProofResult(t=done, part=part, ok=ok, checked=checked))
    out.append(ev.PartitionDone(t=done, part=part, ok=ok, seconds=1.0))
    return out


def _fold(events: list[Any]) -> Tally:
    s = Tally()
    for e in sorted(events, key=lambda e: e.t):
        s.apply(e)
    return s


def test_only_sections_begun_after_the_settle_and_done_inside_count() -> None:
    es = _start() + _part("in", 3.0, 5.0) + _part("prep_first", 4.0, 6.0, first="prep")
    es += _part("too_early", 1.5, 4.0)  # section began in the settle (its compute request after it)
    es += _part("too_late", 8.0, 11.0)  # finished after the hold
    es += [ev.HoldEnded(t=10.0, hold=0, arm=0, cycle=0)]
    h = _fold(es).holds[0]
    assert h.verified == 2 and h.complete
    c = h.count()
    assert c.window_s == 8.0
    assert (c.lag_n, c.lag_sum_s) == (3, 7.0)  # the lags of all that began in the window: too_late's too


def test_unchecked_and_failed_partitions_are_counted_apart() -> None:
    es = _start() + _part("u", 3.0, 5.0, checked=False) + _part("f", 3.0, 6.0, ok=False)
    es += [ev.HoldEnded(t=10.0, hold=0, arm=0, cycle=0)]
    h = _fold(es).holds[0]
    assert (h.verified, h.unchecked, h.failed) == (0, 1, 1)


def test_a_retried_partition_counts_from_its_new_section() -> None:
    es = _start() + _part("r", 1.0, 2.5, ok=False)  # first try: began in the settle, failed
    es += _part("r", 4.0, 6.0)  # the retry: synthesis again, a new section after the settle
    es += [ev.HoldEnded(t=10.0, hold=0, arm=0, cycle=0)]
    assert _fold(es).holds[0].verified == 1


def test_ooms_and_fallbacks_count_only_after_the_settle() -> None:
    es = _start() + [ev.Oom(t=1.0, gpu=0, worker="w", requested=1, free=0),
                     ev.Oom(t=3.0, gpu=0, worker="w", requested=1, free=0),
                     ev.Fallback(t=4.0, gpu=0, part="x", worker="w", reason="no room"),
                     ev.HoldEnded(t=10.0, hold=0, arm=0, cycle=0)]
    h = _fold(es).holds[0]
    assert (h.ooms, h.fallbacks) == (1, 1)


def test_a_done_that_arrives_after_the_hold_ended_still_counts_by_its_time() -> None:
    """Over attach, the prover's events may reach the tally after this side's HoldEnded."""
    s = Tally()
    for e in _start() + _part("late", 3.0, 9.9)[:3]:
        s.apply(e)
    s.apply(ev.HoldEnded(t=10.0, hold=0, arm=0, cycle=0))
    for e in _part("late", 3.0, 9.9)[3:] + _part("later", 3.5, 10.2)[1:]:
        s.apply(e)
    assert s.holds[0].verified == 1


def test_a_hold_cut_short_is_not_counted_and_nothing_is_kept_outside_experiments() -> None:
    es = _start() + _part("p", 3.0, 5.0) + [ev.HoldEnded(t=6.0, hold=0, arm=0, cycle=0, complete=False),
                                             ev.ExperimentEnded(t=6.0, reason="stopped")]
    s = _fold(es)
    assert s.counts(0) == [] and len(s.counts(0, complete_only=False)) == 1
    assert s.experiments[0].ended == "stopped" and s.current() is None
    for e in _part("q", 7.0, 8.0):
        s.apply(e)
    assert s.starts == {}


def test_handlers_are_registered_per_event_type_for_the_fold() -> None:
    assert ev.HoldStarted in HANDLERS and ev.PartitionDone in HANDLERS
    assert all(callable(h) for h in HANDLERS.values())
