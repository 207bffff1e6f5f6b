"""The runner end to end over a simulated prover (tests/helpers/experiment_fake.py): the events it
adds to the stream, the knobs it sets and restores, what it does when the prover refuses or
ends, and the done-when calibration (an A/A experiment holds 1 in >= 18 of 20 seeds)."""
from __future__ import annotations

from typing import Any

import pytest

from prover import events as ev
from prover.experiment.design import Design, parse_arm
from prover.experiment.runner import ExperimentError, Runner
from prover.stats.experiment import analyse
from prover.fold.tally import Tally
from tests.helpers.experiment_fake import FakeProver

START = {"lock_mode": "two-lock", "mem_sync": "device", "workers_per_gpu": 3}
RATES = {"single": 60.0, "narrow": 110.0, "two-lock": 100.0, "reserved": 100.0}


def _design(*specs: str, **kw: Any) -> Design:
    return Design(arms=[parse_arm(s) for s in specs], **{"cycles": 4, "hold_s": 20.0, "settle_s": 5.0, **kw})


def _run(fp: FakeProver, d: Design) -> tuple[Any, list[Any]]:
    seen: list[Any] = []
    fp.add_sink(seen.append)
    return Runner(fp, d, sleep=fp.sleep).run(), seen


def test_the_stream_carries_the_experiment_and_the_knobs_go_back() -> None:
    fp = FakeProver(lambda k: RATES[k["lock_mode"]], START, seed=3, regular=True)
    res, seen = _run(fp, _design("lock_mode=single", "lock_mode=two-lock,mem_sync=stream", cycles=3, order="abab"))
    kinds = [e.kind for e in seen if e.kind in ("experiment_started", "hold_started", "hold_ended",
                                                "experiment_ended", "mode_change")]
    assert kinds[0] == "experiment_started" and kinds[-1] == "experiment_ended"
    assert kinds.count("hold_started") == kinds.count("hold_ended") == 6
    started = next(e for e in seen if isinstance(e, ev.ExperimentStarted))
    assert started.knobs == [{"lock_mode": "single", "mem_sync": "device"}, {"lock_mode": "two-lock", "mem_sync": "stream"}]
    assert fp.knobs()["lock_mode"] == "two-lock" and fp.knobs()["mem_sync"] == "device"  # as found
    ended = next(e for e in seen if isinstance(e, ev.ExperimentEnded))
    assert ended.reason == "done" and ended.result["arms"][1]["label"] == "lock_mode=two-lock,mem_sync=stream"
    assert res.arms[1].verdict == "faster"


def test_a_recording_counts_the_same_as_the_live_runner() -> None:
    fp = FakeProver(lambda k: RATES[k["lock_mode"]], START, seed=4)
    res, seen = _run(fp, _design("single", "narrow", "reserved", cycles=3))
    again = Tally()
    for e in seen:
        again.apply(e)
    replayed = analyse(again.counts(0), [a.label for a in res.arms], again.experiments[0].knobs)
    assert replayed == res


@pytest.mark.parametrize("regular", [False, True], ids=["poisson", "regular"])
def test_an_a_a_experiment_holds_1_in_at_least_18_of_20_seeds(regular: bool) -> None:
    """Done-when calibration through runner, tally and stats: two equal arms (the same rate under
    different knobs), 4 cycles of 20 s holds with a 5 s settle, seeds 0..19."""
    covered = 0
    for seed in range(20):
        fp = FakeProver(lambda k: 75.0, START, seed=seed, regular=regular)
        res, _ = _run(fp, _design("mem_sync=device", "mem_sync=stream"))
        lo, hi = res.arms[1].ratio_ci
        covered += lo <= 1.0 <= hi
    assert covered >= 18


def test_a_refused_knob_ends_the_experiment_with_what_was_counted() -> None:
    class Refusing(FakeProver):
        def set(self, knob: str, value: Any) -> None:
            if value == "reserved":
                raise ValueError("lock_mode 'reserved' refused here")
            super().set(knob, value)

    fp = Refusing(lambda k: RATES[k["lock_mode"]], START, seed=1)
    seen: list[Any] = []
    fp.add_sink(seen.append)
    with pytest.raises(ExperimentError, match="refused here") as info:
        Runner(fp, _design("single", "reserved", order="abab"), sleep=fp.sleep).run()
    assert info.value.result is not None and info.value.result.arms[0].holds == 1
    assert seen[-1].kind == "experiment_ended" and "refused" in seen[-1].reason


def test_a_run_that_ends_mid_hold_is_said_and_the_hold_not_counted() -> None:
    fp = FakeProver(lambda k: 60.0, START, seed=2)
    orig = fp.advance

    def advance(dt: float) -> None:
        orig(dt)
        if fp.t > 50 and fp.ended() is None:
            fp(ev.RunEnded(t=fp.t, reason="stopped (key)"))

    fp.advance = advance  # type: ignore[method-assign]
    with pytest.raises(ExperimentError, match=r"the run ended during hold 3 .*stopped \(key\)") as info:
        Runner(fp, _design("single", "two-lock", order="abab"), sleep=fp.sleep).run()
    assert info.value.result.arms[0].holds == 1 and info.value.result.arms[1].holds == 1


def test_it_waits_for_the_first_gpu_section() -> None:
    class Starting(FakeProver):
        def ready(self) -> bool:
            return self.t >= 30.0

    fp = Starting(lambda k: 60.0, START, seed=0)
    seen: list[Any] = []
    fp.add_sink(seen.append)
    Runner(fp, _design("single", "two-lock", cycles=1), sleep=fp.sleep).run()
    assert next(e for e in seen if e.kind == "experiment_started").t >= 30.0


def test_an_embedded_link_made_mid_run_takes_the_knobs_from_the_controller() -> None:
    """A dashboard key starts an experiment long after RunStarted: the link's knobs come from
    the controller, its readiness from the fold (prime)."""
    from prover.experiment.link import EmbeddedLink
    from prover.pipeline.control.controller import Knobs

    class Engine:
        clock = staticmethod(lambda: 100.0)
        sinks: list[Any] = []

        class controller:  # noqa: N801 - stands in for the engine's Controller
            @staticmethod
            def snapshot() -> Knobs:
                return Knobs(lock_mode="reserved", mem_sync="stream", workers_per_gpu=5, prestage=True, b_g2="gpu",
                             vram_budget="card", paused=False)

        def add_sink(self, s: Any) -> None:
            self.sinks.append(s)

    link = EmbeddedLink(Engine())
    assert link.knobs()["lock_mode"] == "reserved" and link.knobs()["workers_per_gpu"] == "5"
    assert not link.ready()
    link.prime({"lock_mode": "single"}, ready=True)
    assert link.ready() and link.knobs()["lock_mode"] == "reserved"  # what it saw wins over the primer
