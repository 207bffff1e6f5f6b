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


def _tuner(fp: FakeProver, time_s: float, **kw: Any) -> Tuner:
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
