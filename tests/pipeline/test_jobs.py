"""Job actions (prover/pipeline/queue/jobs.py) through the controller: cancel queued and in-flight
partitions (counted as cancelled, never failed; locks and buffers given back), requeue an
in-flight one, cordon a GPU (no new work there until uncordoned); each recorded with its
source; bad targets refused by name."""
from __future__ import annotations

import time

import pytest

from tests.helpers.invariants import InvariantChecker
from prover.config import load_config  # noqa: E402
from prover.pipeline.engine import Engine  # noqa: E402
from prover.pipeline.nullphases import NullPhases  # noqa: E402
from prover.fold.apply import fold  # noqa: E402
from prover.fold.summary import summarize  # noqa: E402


def _engine(**kw):
    base = dict(backend="sim", profile="tiny", time_scale=20.0, sectors=2, partitions=4, workers_per_gpu=2, gpus=2)
    base.update(kw)
    chk = InvariantChecker()
    return Engine(load_config(None, **base), [chk], phases=NullPhases()), chk


def _until(pred, timeout=20.0):
    end = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < end, "condition not met in time"
        time.sleep(0.005)


def _finished_once(chk) -> None:
    """Every queued partition ends once: done, or cancelled (never both, never neither)."""
    cancelled = [e.part for e in chk.events if e.kind == "partition_cancelled"]
    assert len(cancelled) == len(set(cancelled))
    assert set(chk.done) | set(cancelled) == chk.queued and not set(chk.done) & set(cancelled)


@pytest.mark.timeout(90)
def test_cancel_queued_sector_and_in_flight_partition_never_counted_failed():
    eng, chk = _engine()
    eng.start()
    _until(lambda: any(e.kind == "phase_start" and e.phase.value == "synthesis" for e in chk.events))
    running = next(e.part for e in chk.events if e.kind == "phase_start")
    c = eng.controller
    assert "4 queued cancelled" in c.job("cancel", "s1", source="key")
    c.apply("cancel=" + running, source="attach:ops")
    assert eng.wait(60)
    assert chk.final(all_done=False) == []
    _finished_once(chk)
    acts = [(e.action, e.target, e.source) for e in chk.events if e.kind == "job_action"]
    assert acts == [("cancel", "s1", "key"), ("cancel", running, "attach:ops")]
    stopped = next(e for e in chk.events if e.kind == "partition_cancelled" and e.part == running)
    assert stopped.where.startswith("before ") and stopped.source == "attach:ops"
    s = fold(chk.events)
    assert s.jobs.cancelled == 5 and s.partitions_failed == 0 and s.partitions_ok == 3
    sm = summarize(s)
    assert sm.partitions_cancelled == 5 and sm.partitions_failed == 0 and sm.all_proofs_verified


@pytest.mark.timeout(90)
def test_requeue_in_flight_sends_it_back_and_it_is_done_later():
    eng, chk = _engine(sectors=1, gpus=1, partitions=2, time_scale=10.0)
    eng.start()
    _until(lambda: any(e.kind == "phase_start" for e in chk.events))
    part = next(e.part for e in chk.events if e.kind == "phase_start")
    assert "requeued" in eng.controller.job("requeue", part, source="key")
    assert eng.wait(60)
    assert chk.final() == []
    queued = [e for e in chk.events if e.kind == "partition_queued" and e.part == part]
    assert len(queued) == 2 and chk.done[part].ok  # queued again, then proved
    with pytest.raises(ValueError, match="is not in flight"):
        eng.controller.job("requeue", "s0p9", source="key")


@pytest.mark.timeout(90)
def test_cordon_keeps_new_work_off_a_gpu_until_uncordoned():
    eng, chk = _engine(sectors=1, partitions=8, time_scale=8.0)
    eng.start()
    _until(lambda: any(e.kind == "worker_started" for e in chk.events))
    c = eng.controller
    assert c.apply("cordon=gpu1", source="key")
    t_cordon = next(e.t for e in chk.events if e.kind == "job_action")
    _until(lambda: sum(e.kind == "partition_done" for e in chk.events) >= 3)
    c.job("uncordon", "1", source="key")
    t_un = [e.t for e in chk.events if e.kind == "job_action"][-1]
    assert eng.wait(60)
    assert chk.final() == []
    s = fold(chk.events)
    assert not s.jobs.cordoned
    # what gpu1 began between the two actions: nothing (what it had already taken may finish)
    workers1 = {e.worker for e in chk.events if e.kind == "worker_started" and e.gpu == 1}
    took = [e for e in chk.events if e.kind == "phase_start" and e.phase.value == "synthesis" and e.worker in workers1
            and t_cordon + 0.05 < e.t < t_un]
    assert took == []
    assert any(e.worker in workers1 and e.t > t_un for e in chk.events if e.kind == "phase_start")


def test_bad_targets_are_refused_by_name():
    eng, _ = _engine()
    with pytest.raises(ValueError, match="cordon takes a GPU"):
        eng.controller.apply("cordon=s1")
    with pytest.raises(ValueError, match=r"requeue takes a partition \(s3p2\)"):
        eng.controller.apply("requeue=s1")
    # a GPU this run does not have: refused by name, not recorded as cordoned (it was)
    with pytest.raises(ValueError, match=r"cordon: this run has no gpu5 \(it has gpu0..gpu1\)"):
        eng.controller.apply("cordon=5")
    with pytest.raises(ValueError, match="uncordon: this run has no gpu2"):
        eng.controller.job("uncordon", "gpu2")
    assert not eng._queue.cordoned
    # a job action without its target says so (attach --send cancel answered "unknown switch")
    with pytest.raises(ValueError, match="cordon takes a GPU"):
        eng.controller.apply("cordon")


@pytest.mark.timeout(120)
@pytest.mark.parametrize("seed", range(3))
def test_random_job_actions_keep_the_invariants(seed):
    """Cancels, requeues and cordons at random moments: locks released, no live bytes left,
    one compute holder a GPU, every partition done or cancelled exactly once."""
    import random

    rng = random.Random(seed)
    eng, chk = _engine(sectors=2, partitions=5, time_scale=3.0, lock_mode=rng.choice(["single", "two-lock"]))
    eng.start()
    c = eng.controller
    for _ in range(12):
        time.sleep(rng.random() * 0.05)
        running = [p.id for p in eng._queue.running()]
        action, target = rng.choice([("cancel", rng.choice(running or ["s0p0"])), ("requeue", rng.choice(running or ["s0p0"])),
                                     ("cordon", str(rng.randrange(2))), ("uncordon", str(rng.randrange(2))),
                                     ("cancel", f"s{rng.randrange(2)}")])
        try:
            c.job(action, target, source="random")
        except ValueError:
            pass  # nothing of that name now (finished, or not in flight): refused, nothing changed
    c.job("uncordon", "0", source="random")
    c.job("uncordon", "1", source="random")
    assert eng.wait(90)
    assert chk.final(all_done=False) == []
    _finished_once(chk)
