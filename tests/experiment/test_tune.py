"""The tuner over a simulated prover whose best setting is known: it finds it, within its time,
respects the constraints, reports the best against the start, and leaves the knobs as asked."""
from __future__ import annotations

from typing import Any

import pytest

from prover.experiment.tune import Space, TooShort, Tuner, TunePlan, spread
from tests.helpers.experiment_fake import FakeProver

START = {"lock_mode": "two-lock", "mem_sync": "device", "workers_per_gpu": 3, "b_g2": "cpu", "prestage": "True"}
# the sim's two-prestage scenario (two-lock + device, 24 GiB): a third worker's pre-stage falls back
WORKERS = {1: 52.0, 2: 93.0, 3: 55.0, 4: 48.0, 5: 46.0, 6: 45.0, 7: 44.0, 8: 44.0}


def _tuner(fp: FakeProver, time_s: float | None, **kw: Any) -> Tuner:
    plan = TunePlan(time_s=time_s, hold_s=20.0, settle_s=5.0)
    return Tuner(fp, plan, sleep=fp.sleep, clock=lambda: fp.t, **kw)


@pytest.mark.parametrize("seed", range(3))
def test_it_finds_the_known_best_worker_count(seed: int) -> None:
    fp = FakeProver(lambda k: WORKERS[int(k["workers_per_gpu"])], START, seed=seed, regular=True)
    t0 = fp.t
    res = _tuner(fp, 900.0, workers=(1, 4), search=("workers_per_gpu",)).run()
    assert res.best["workers_per_gpu"] == "2"
    assert res.verdict == "faster" and res.ratio_ci[0] > 1.0
    assert res.steps[0].adopted and res.steps[0].leader == "2"
    assert fp.knobs()["workers_per_gpu"] == "3"  # no --apply: as found
    assert fp.t - t0 <= 900.0 + 4 * 20.0  # its time (a confirmation may round up to 2 cycles)


def test_a_wide_range_is_raced_coarse_then_fine() -> None:
    fp = FakeProver(lambda k: WORKERS[int(k["workers_per_gpu"])], {**START, "workers_per_gpu": 6}, seed=1, regular=True)
    res = _tuner(fp, 1500.0, workers=(1, 8), search=("workers_per_gpu",)).run(apply=True)
    assert [len(s.values) for s in res.steps][0] == 5
    assert res.best["workers_per_gpu"] == "2" and res.applied
    assert fp.knobs()["workers_per_gpu"] == "2"


def test_knobs_are_raced_in_turn_and_a_setting_that_ooms_is_dropped() -> None:
    def rate(k: dict[str, str]) -> float:
        base = {"single": 50.0, "narrow": 90.0, "two-lock": 95.0, "reserved": 140.0}[k["lock_mode"]]
        return base * (1.3 if k["mem_sync"] == "stream" else 1.0)

    fp = FakeProver(rate, START, seed=5, regular=True, ooms=lambda k: k["lock_mode"] == "reserved")
    res = _tuner(fp, 1400.0, search=("lock_mode", "mem_sync")).run()
    lock = res.steps[0]
    assert lock.knob == "lock_mode" and "OOM" in lock.dropped["reserved"]
    assert res.best == {"lock_mode": "two-lock", "mem_sync": "stream"}
    assert res.verdict == "faster"


def test_no_change_without_evidence() -> None:
    fp = FakeProver(lambda k: 80.0, START, seed=2)
    res = _tuner(fp, 400.0, search=("mem_sync",)).run()
    assert res.best == res.start and res.verdict in ("no change found", "no difference detected")
    assert fp.knobs()["mem_sync"] == "device"


def test_too_little_time_is_refused_before_any_change() -> None:
    fp = FakeProver(lambda k: 80.0, START, seed=2)
    with pytest.raises(TooShort, match="needs at least"):
        _tuner(fp, 60.0, search=("lock_mode", "workers_per_gpu")).run()
    assert fp.sets == []


def test_the_space() -> None:
    s = Space.of({"workers_per_gpu": 3, "lock_mode": "two-lock", "prestage": True},
                 search=("workers_per_gpu", "lock_mode", "prestage"))
    assert s.knobs["workers_per_gpu"] == [1, 2, 3, 4, 5] and s.knobs["prestage"] == [True, False]
    assert "reserved" in s.knobs["lock_mode"]
    with pytest.raises(ValueError, match="within 1..16"):
        Space.of({"workers_per_gpu": 3}, workers=(0, 4), search=("workers_per_gpu",))
    with pytest.raises(ValueError, match="cannot tune"):
        Space.of({}, search=("vram_budget",))
    only = Space.of({"lock_mode": "two-lock", "workers_per_gpu": 8}, search=("lock_mode", "workers_per_gpu"),
                    values={"lock_mode": ["reserved", "two-lock"], "workers_per_gpu": ["12", "6", "8"]})
    assert only.knobs == {"lock_mode": ["reserved", "two-lock"], "workers_per_gpu": [6, 8, 12]}
    wide = spread(list(range(1, 17)), 5, 7)
    assert len(wide) == 5 and 7 in wide and wide[0] == 1 and wide[-1] == 16


def test_a_leader_is_adopted_only_when_significantly_faster_than_the_incumbent() -> None:
    """Tune's adoption rule (issue 42: a mutation adopting any leader survived): over seeds
    where every setting runs at the same rate, leaders other than the incumbent come up, and
    none is adopted; a step is adopted exactly when its interval lies above 1."""
    steps = []
    for seed in range(6):
        fp = FakeProver(lambda k: 80.0, START, seed=seed)
        steps += _tuner(fp, 700.0, search=("lock_mode",)).run().steps
    assert any(s.leader != s.values[0] for s in steps), "no seed put another leader ahead: the rule went untried"
    for s in steps:
        assert s.adopted == (s.ratio_ci is not None and s.ratio_ci[0] > 1.0), s
    assert not any(s.adopted for s in steps)


def test_a_race_leader_the_confirmation_does_not_confirm_is_reported_as_such() -> None:
    """The races see reserved 2x faster (its gain fades before the confirmation: a drift, or the
    winner's curse): the start is kept, and the result says what was found and the time a
    confirmation that could tell would need, never "no change found"."""
    fp = FakeProver(lambda k: 150.0 if k["lock_mode"] == "reserved" and fp.t < 135 else 75.0, START, seed=3,
                    regular=True)
    res = _tuner(fp, None, search=("lock_mode",), values={"lock_mode": ["two-lock", "reserved"]}).run()
    assert res.found["lock_mode"] == "reserved" and res.best == res.start and res.verdict == "not confirmed"
    assert res.steps[0].adopted and res.steps[0].ratio_ci[0] > 1.0
    assert res.confirm is not None and res.confirm.cycles_complete == 4  # its full 4 cycles
    (note,) = [n for n in res.notes if "not confirmed on fresh holds" in n]
    assert note.startswith("lock_mode=reserved: 1.97x [1.85, 2.11] in its race; not confirmed on fresh holds") and f"run with --time {res.confirm_needs_s:.0f}{res.confirm_holds} to confirm" in note
    assert res.confirm_needs_s > res.budget_s
    assert "--confirm-cycles" in res.confirm_holds  # a 1.1x measured effect wants more cycles than 4, said


def test_the_default_time_is_the_space_s_least_and_it_runs_to_a_verdict_within_it() -> None:
    fp = FakeProver(lambda k: WORKERS[int(k["workers_per_gpu"])], START, seed=0, regular=True)
    t0, plan = fp.t, TunePlan(hold_s=20.0, settle_s=5.0)
    res = Tuner(fp, plan, sleep=fp.sleep, clock=lambda: fp.t, workers=(1, 4), search=("workers_per_gpu",)).run()
    space = Space.of(START, (1, 4), ("workers_per_gpu",))
    assert res.budget_s == plan.least_time(space) == (3 * 4 + 2 * 4) * 20.0 + 2 * 5.0
    assert res.best["workers_per_gpu"] == "2" and res.verdict == "faster"
    assert fp.t - t0 <= res.budget_s + 2 * 20.0  # its time, and the last experiment's wait for its sections


def test_a_budget_too_small_for_a_full_confirmation_is_refused_with_the_time_it_needs() -> None:
    plan = TunePlan(time_s=240.0, hold_s=20.0, settle_s=5.0)
    space = Space.of(START, search=("lock_mode", "mem_sync"))
    need = plan.least_time(space)
    assert need == (3 * (4 + 2) + 2 * 4) * 20.0 + 3 * 5.0 > 240
    with pytest.raises(TooShort, match=f"needs at least {need:.0f} s .* a 4-cycle confirmation"):
        Tuner.check(plan, START, None, ("lock_mode", "mem_sync"))


def test_races_with_holds_too_short_drop_and_adopt_nothing_and_say_why() -> None:
    """A settle shorter than the arms' lag: no race gives a verdict, so no arm is dropped as
    slower and nothing is adopted; the result says why rather than "no setting was faster"."""
    from c2tui.text.experiment import found_line

    fp = FakeProver(lambda k: 150.0 if k["lock_mode"] == "reserved" else 50.0, START, seed=1, regular=True, lag_s=6.0)
    res = _tuner(fp, None, search=("lock_mode",), values={"lock_mode": ["two-lock", "reserved"]}).run()
    (step,) = res.steps
    assert not step.adopted and step.dropped == {} and step.why and "holds too short" in step.why
    assert res.best == res.start and "could give no verdict (holds too short" in found_line(res)
