"""The counting rule, event by event: a partition counts for the hold in whose counted window its
GPU section began (the fold's one definition of that moment), whenever it finishes."""
from __future__ import annotations

from typing import Any

from prover import events as ev
from prover.events import Phase
from prover.fold import sections
from prover.fold.tally import HANDLERS, Tally


def _start(t: float = 0.0, settle: float = 2.0, hold: float = 10.0) -> list[Any]:
    return [ev.ExperimentStarted(t=t, arms=["a", "b"], knobs=[{}, {}], design="abab", cycles=1, hold_s=hold,
                                 settle_s=settle),
            ev.HoldStarted(t=t, hold=0, arm=0, cycle=0, hold_s=hold, settle_s=settle)]


def _part(part: str, section: float, done: float, ok: bool = True, checked: bool = True,
          first: str = "lock", worker: str = "w") -> list[Any]:
    out: list[Any] = [ev.PhaseStart(t=max(0.0, section - 0.5), part=part, phase=Phase.synthesis, worker=worker)]
    if first == "lock":
        out.append(ev.LockRequested(t=section, gpu=0, lock="mem", worker=worker, part=part))
    else:
        out.append(ev.SectionBegan(t=section, gpu=0, worker=worker, part=part, lock_mode="two-lock"))
    out.append(ev.LockRequested(t=section + 0.3, gpu=0, lock="compute", worker=worker, part=part))
    out.append(ev.ProofResult(t=done, part=part, ok=ok, checked=checked))
    out.append(ev.PartitionDone(t=done, part=part, ok=ok, seconds=1.0))
    return out


def _fold(events: list[Any]) -> Tally:
    s = Tally()
    for e in sorted(events, key=lambda e: e.t):
        s.apply(e)
    return s


def test_sections_begun_in_the_window_count_whenever_they_finish() -> None:
    es = _start() + _part("in", 3.0, 5.0) + _part("announced", 4.0, 6.0, first="began")
    es += _part("too_early", 1.5, 4.0)  # section began in the settle (its compute request after it: the first counts)
    es += _part("late", 8.0, 11.0)  # began in the window, finished after the hold: counts (the old rule lost it)
    es += _part("after", 10.5, 12.0)  # began after the hold ended
    es += [ev.HoldEnded(t=10.0, hold=0, arm=0, cycle=0)]
    h = _fold(es).holds[0]
    assert h.verified == 3 and h.began == 3 and h.pending == 0 and h.complete
    c = h.count()
    assert c.window_s == 8.0 and c.began == 3
    assert (c.lag_n, c.lag_sum_s, c.lag_max_s) == (3, 7.0, 3.0)


def test_the_last_holds_sections_still_running_are_pending_until_they_finish() -> None:
    s = Tally()
    for e in _start() + _part("p", 8.0, 14.0)[:3] + [ev.HoldEnded(t=10.0, hold=0, arm=0, cycle=0)]:
        s.apply(e)
    assert (s.holds[0].verified, s.pending(0)) == (0, 1)
    s.apply(ev.ExperimentEnded(t=10.0, reason="done"))
    assert s.listening  # a section begun in a hold is still followed after the experiment's end
    for e in _part("p", 8.0, 14.0)[3:]:
        s.apply(e)
    assert (s.holds[0].verified, s.pending(0), s.listening) == (1, 0, False)


def test_unchecked_and_failed_partitions_are_counted_apart() -> None:
    es = _start() + _part("u", 3.0, 5.0, checked=False) + _part("f", 3.0, 6.0, ok=False)
    es += [ev.HoldEnded(t=10.0, hold=0, arm=0, cycle=0)]
    h = _fold(es).holds[0]
    assert (h.verified, h.unchecked, h.failed, h.began) == (0, 1, 1, 2)


def test_a_retried_partition_counts_from_its_new_section() -> None:
    es = _start() + _part("r", 1.0, 2.5, ok=False)[:3]  # first try: began in the settle, no done (retried)
    es += _part("r", 4.0, 6.0)  # the retry: synthesis again, a new section in the window
    es += [ev.HoldEnded(t=10.0, hold=0, arm=0, cycle=0)]
    h = _fold(es).holds[0]
    assert (h.verified, h.began, h.pending) == (1, 1, 0)


def test_a_section_began_is_exact_over_a_first_gpu_event() -> None:
    """The engine says SectionBegan as the section reads its knobs; an earlier GPU event of the
    same section (a recording that has both) gives way to it."""
    es = _start() + [ev.LockRequested(t=1.5, gpu=0, lock="mem", worker="w", part="x"),
                     ev.SectionBegan(t=3.0, gpu=0, worker="w", part="x", lock_mode="narrow"),
                     ev.ProofResult(t=4.0, part="x", ok=True), ev.PartitionDone(t=4.0, part="x", ok=True, seconds=1),
                     ev.HoldEnded(t=10.0, hold=0, arm=0, cycle=0)]
    assert _fold(es).holds[0].verified == 1


def test_ooms_and_fallbacks_count_for_the_hold_their_section_began_in() -> None:
    es = _start() + [ev.Oom(t=1.0, gpu=0, worker="w", part="settle", requested=1, free=0),
                     ev.Oom(t=3.0, gpu=0, worker="w", part="in", requested=1, free=0),
                     ev.Fallback(t=4.0, gpu=0, part="in", worker="w", reason="no room"),
                     ev.Fallback(t=5.0, gpu=0, part="settle", worker="w", reason="no room"),
                     ev.HoldEnded(t=10.0, hold=0, arm=0, cycle=0)]
    h = _fold(es).holds[0]
    assert (h.ooms, h.fallbacks) == (1, 1)


def test_the_gaps_between_section_starts_measure_how_regular_they_are() -> None:
    es = _start() + [e for i in range(5) for e in _part(f"p{i}", 3.0 + i, 3.5 + i, worker=f"g0w{i % 2}")]
    es += [ev.HoldEnded(t=10.0, hold=0, arm=0, cycle=0)]
    c = _fold(es).holds[0].count()
    assert (c.gap_n, c.gap_sum_s, c.gap_sq_s) == (4, 4.0, 4.0)


def test_a_hold_cut_short_is_not_counted_and_nothing_is_kept_outside_experiments() -> None:
    es = _start() + _part("p", 3.0, 5.0) + [ev.HoldEnded(t=6.0, hold=0, arm=0, cycle=0, complete=False),
                                             ev.ExperimentEnded(t=6.0, reason="stopped")]
    s = _fold(es)
    assert s.counts(0) == [] and len(s.counts(0, complete_only=False)) == 1
    assert s.experiments[0].ended == "stopped" and s.current() is None
    for e in _part("q", 7.0, 8.0):
        s.apply(e)
    assert s.starts == {} and not s.listening


def test_the_tally_reads_every_event_the_fold_s_section_rule_names() -> None:
    """One definition (prover/fold/sections.py): every event type it says may begin a section
    reaches the tally."""
    assert set(sections.FIRST_GPU_EVENTS) | {ev.SectionBegan, ev.PhaseStart} <= set(HANDLERS)
    assert all(callable(h) for h in HANDLERS.values())
