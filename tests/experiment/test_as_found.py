"""Issue 44: an experiment or a tune leaves the prover as it found it. The knobs "at the start"
are those in force once the attach history is all in (not those of its first lock event), and
a knob someone else changes mid-experiment stops it and stays as they set it."""
from __future__ import annotations

from typing import Any, Callable

import pytest

from prover import events as ev
from prover.experiment.design import Design, parse_arm
from prover.experiment.link import AttachLink
from prover.experiment.runner import ExperimentError, Runner
from prover.experiment.tune import TunePlan, Tuner
from tests.helpers.experiment_fake import FakeProver

START = {"lock_mode": "two-lock", "mem_sync": "device", "workers_per_gpu": 3}


class HistoryClient:
    """An attach client that hands over a history, then (later) the `live` line."""

    def __init__(self) -> None:
        self.live = False
        self.on_event: Callable[[Any], None] | None = None

    def start(self, on_event: Callable[[Any], None], on_end: Callable[[str], None]) -> None:
        self.on_event = on_event


def test_an_attached_link_is_ready_only_once_the_history_is_in() -> None:
    client = HistoryClient()
    link = AttachLink(client, controller=None)
    link.start()
    feed = client.on_event
    feed(ev.RunStarted(t=0.0, backend="sim", simulated=True, profile="p", proved_log2=8, modelled_log2=8, gpus=1,
                       config={"lock_mode": "two-lock", "workers_per_gpu": 3}))
    feed(ev.LockAcquired(t=1.0, gpu=0, lock="compute", worker="g0w0", wait=0.0))
    assert not link.ready()  # the history's first lock event: its knobs are the run's first minute's
    feed(ev.ModeChange(t=50.0, knob="lock_mode", old="two-lock", new="reserved", source="attach:ops"))
    feed(ev.ModeChange(t=51.0, knob="workers_per_gpu", old="3", new="5", source="attach:ops"))
    client.live = True
    assert link.ready() and link.knobs()["lock_mode"] == "reserved" and link.knobs()["workers_per_gpu"] == "5"


def _others_change(fp: FakeProver, at: float, knob: str, new: str) -> Callable[[float], None]:
    """The fake's sleep, with another client's change at `at` seconds."""
    done = []

    def sleep(s: float) -> None:
        fp.sleep(s)
        if fp.t >= at and not done:
            done.append(1)
            fp(ev.ModeChange(t=fp.t, knob=knob, old=fp.knobs()[knob], new=new, source="attach:bob"))
    return sleep


@pytest.mark.parametrize("at", [30.0, 79.0], ids=["mid-experiment", "in-the-last-hold"])
def test_a_knob_changed_by_someone_else_stops_it_and_is_not_overwritten(at: float) -> None:
    fp = FakeProver(lambda k: 100.0, START, seed=1, regular=True)
    d = Design(arms=[parse_arm("lock_mode=single,workers_per_gpu=5"), parse_arm("lock_mode=narrow")], cycles=2,
               hold_s=20.0, settle_s=5.0, order="abab")
    seen: list[Any] = []
    fp.add_sink(seen.append)
    with pytest.raises(ExperimentError) as info:
        Runner(fp, d, sleep=_others_change(fp, at, "lock_mode", "reserved")).run()
    assert "lock_mode" in str(info.value) and "someone else" in str(info.value)
    assert fp.knobs()["lock_mode"] == "reserved"  # theirs, kept
    assert fp.knobs()["workers_per_gpu"] == "3"  # the experiment's own change, gone back
    ended = [e for e in seen if isinstance(e, ev.ExperimentEnded)]
    assert len(ended) == 1 and "someone else" in ended[0].reason


def test_a_tune_stops_on_a_change_by_someone_else_and_leaves_it() -> None:
    fp = FakeProver(lambda k: 30.0 * int(k["workers_per_gpu"]), START, seed=2, regular=True)
    plan = TunePlan(time_s=400.0, hold_s=10.0, settle_s=2.0, confirm_cycles=3)
    tuner = Tuner(fp, plan, search=("lock_mode", "workers_per_gpu"), workers=(2, 4),
                  sleep=_others_change(fp, 25.0, "workers_per_gpu", "7"))
    with pytest.raises(ExperimentError) as info:
        tuner.run(apply=True)
    assert "workers_per_gpu" in str(info.value) and "someone else" in str(info.value)
    assert fp.knobs()["workers_per_gpu"] == "7" and fp.knobs()["lock_mode"] == "two-lock"


def test_a_clean_experiment_restores_every_knob_even_when_one_is_refused() -> None:
    fp = FakeProver(lambda k: 100.0, START, seed=1, regular=True)
    refuse = {"flag": False}
    base_set = fp.set

    def set_(knob: str, value: Any) -> None:
        if refuse["flag"] and knob == "lock_mode":
            raise ValueError("refused for the test")
        base_set(knob, value)

    fp.set = set_  # type: ignore[method-assign]
    d = Design(arms=[parse_arm("lock_mode=single,workers_per_gpu=5"), parse_arm("lock_mode=narrow")], cycles=1,
               hold_s=10.0, settle_s=2.0, order="abab")
    r = Runner(fp, d, sleep=fp.sleep)
    r.run()
    assert fp.knobs()["workers_per_gpu"] == "3"
    r2 = Runner(fp, d, sleep=fp.sleep)
    r2.begin()
    r2.apply({"lock_mode": "single", "workers_per_gpu": 5})
    refuse["flag"] = True
    r2.restore()
    assert fp.knobs()["workers_per_gpu"] == "3"  # restored although lock_mode's restore was refused
