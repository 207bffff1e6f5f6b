"""Placement (class_gpus, prover/placement.py): a class pinned to GPUs runs there only, a
dedicated GPU runs nothing else, a kept share leaves workers free; live through the
controller, in the fleet's scheduler; and the queue says why a class waits (QueueWait)."""
from __future__ import annotations

import time
from collections import Counter

import pytest

from prover import placement
from prover.config import ConfigError, load_config
from prover.fleet.scheduler import Scheduler
from prover.pipeline.engine import Engine
from prover.pipeline.nullphases import NullPhases
from prover.pipeline.queue.queue_why import QueueView, why_waits


def test_the_text_reads_one_way_and_says_what_is_wrong():
    assert placement.parse_spec(" Winning = gpu1 ") == "winning=1"
    assert placement.parse_spec("window=2+0:1;winning=1") == "winning=1,window=0+2:1"
    assert placement.parse_spec("off") == ""
    for bad, says in (("winning", "not CLASS=GPU"), ("post=1", "unknown proof class 'post'"),
                      ("winning=1,winning=2", "pinned twice"), ("winning=1:0", "keeps 0 workers")):
        with pytest.raises(ValueError, match=says):
            placement.parse(bad)
    with pytest.raises(ValueError, match="pinned to gpu3, which this run does not have"):
        placement.parse("winning=3").check(range(2))
    with pytest.raises(ValueError, match="c2 would have no GPU"):
        placement.parse("winning=0,window=1").check(range(2))


def test_a_dedicated_gpu_and_a_kept_share():
    p = placement.parse("winning=1")
    assert [p.allowed(c, g) for c in ("winning", "c2") for g in (0, 1)] == [False, True, True, False]
    share = placement.parse("winning=1:1")
    assert share.may_take("c2", 1, 3, {"c2": 1}) and not share.may_take("c2", 1, 3, {"c2": 2})
    assert share.may_take("winning", 1, 3, {"c2": 2}) and not share.may_take("winning", 0, 3, {})
    assert share.may_take("c2", 1, 3, {"c2": 1, "winning": 1})  # its keeper busy with its class: one left


def _engine(seen: list, **kw) -> Engine:
    cfg = load_config(None, backend="sim", profile="tiny", health_sample_s=0, **kw)
    return Engine(cfg, [seen.append], phases=NullPhases()).start()


def _classes(seen: list) -> dict[str, str]:
    return {e.part: e.proof_class for e in seen if e.kind == "partition_queued"}


@pytest.mark.timeout(120)
def test_winning_pinned_to_gpu1_of_2_never_waits_behind_c2_and_never_runs_on_gpu0():
    seen: list = []
    eng = _engine(seen, gpus=2, sectors=4, partitions=8, time_scale=0.5, workers_per_gpu=2, class_gpus="winning=1")
    end = time.monotonic() + 30
    while not any(e.kind == "partition_done" for e in seen) and time.monotonic() < end:
        time.sleep(0.01)
    for _ in range(4):  # winning sectors arrive while gpu0 is full of c2
        eng.controller.apply("submit=winning", source="test")
        time.sleep(0.05)
    assert eng.wait(90)
    cls = _classes(seen)
    ran = Counter((cls[e.part], e.gpu) for e in seen if e.kind == "phase_start" and e.gpu is not None)
    assert ran[("winning", 1)] > 0 and ran[("winning", 0)] == 0 and ran[("c2", 1)] == 0
    # behind nobody but its own class: every lock on gpu1 is requested and held by winning partitions
    gpu1 = [e for e in seen if e.kind in ("lock_requested", "lock_acquired") and e.gpu == 1]
    assert gpu1 and {cls[e.part] for e in gpu1} == {"winning"}
    done = {e.part: e.t for e in seen if e.kind == "partition_done"}
    assert all(done.get(p) for p, c in cls.items() if c == "winning")


@pytest.mark.timeout(120)
def test_a_kept_share_leaves_one_worker_for_winning():
    seen: list = []
    eng = _engine(seen, gpus=1, sectors=2, partitions=8, time_scale=0.5, workers_per_gpu=3, class_gpus="winning=0:1")
    assert eng.wait(90)
    cls, inflight, most = _classes(seen), set(), 0
    for e in seen:  # c2 partitions in flight at once on the GPU: never more than 3 - 1
        if e.kind == "phase_start" and e.phase.value == "synthesis" and cls[e.part] == "c2":
            inflight.add(e.part)
            most = max(most, len(inflight))
        elif e.kind == "partition_done":
            inflight.discard(e.part)
    assert most == 2


@pytest.mark.timeout(120)
def test_live_through_the_controller_and_refused_by_name():
    seen: list = []
    eng = _engine(seen, gpus=2, sectors=None, partitions=4, time_scale=0.5, workers_per_gpu=1)
    try:
        assert eng.controller.apply("class_gpus=winning=1", source="test")
        change = next(e for e in seen if e.kind == "mode_change" and e.knob == "class_gpus")
        assert (change.old, change.new, change.source) == ("", "winning=1", "test")
        with pytest.raises(ValueError, match="gpu5"):
            eng.controller.apply("placement=winning=5", source="test")
        assert any(e.kind == "note" and "class_gpus change refused" in e.text for e in seen)
    finally:
        eng.stop(timeout=30)
    with pytest.raises(ConfigError, match="pinned to gpu1"):
        Engine(load_config(None, backend="sim", class_gpus="winning=1"))


def test_why_a_class_waits():
    pl = placement.parse("winning=1")
    view = QueueView(range(2), pl, workers=2, waiting={"winning": 1, "c2": 5}, busy={0: {"c2": 2}})
    assert why_waits("c2", view) == ("every worker of gpu0 is busy", [0])
    assert why_waits("winning", QueueView(range(2), pl, 2, cordoned={1}, waiting={"winning": 1})) == \
        ("its GPU is cordoned (gpu1)", [])
    assert why_waits("c2", QueueView(range(1), placement.NONE, 1, paused=True, waiting={"c2": 1}))[0] == "paused"
    assert why_waits("c2", QueueView(range(1), placement.NONE, 1, waiting={"window": 2, "c2": 1}))[0] == \
        "behind 2 window partition(s) on gpu0"
    kept = QueueView(range(1), placement.parse("winning=0:1"), 2, waiting={"c2": 3}, busy={0: {"c2": 1}})
    assert why_waits("c2", kept)[0] == "the free workers of gpu0 are kept for winning (class_gpus)"


@pytest.mark.timeout(120)
def test_the_queue_says_why_it_waits_and_when_it_no_longer_does():
    seen: list = []
    eng = _engine(seen, gpus=1, sectors=1, partitions=2, time_scale=0.5, workers_per_gpu=1, paused=True)
    end = time.monotonic() + 30
    while not any(e.kind == "queue_wait" for e in seen) and time.monotonic() < end:
        time.sleep(0.02)
    eng.controller.resume("test")
    assert eng.wait(60)
    said = [(e.proof_class, e.reason) for e in seen if e.kind == "queue_wait"]
    assert said[0] == ("c2", "paused") and said[-1] == ("c2", "")


def test_the_fleet_scheduler_places_by_class():
    s = Scheduler(depth=0)
    s.add_host("h0", 0, 2, 2, 1 << 30)
    s.placement = placement.parse("winning=1")
    placed = [s.place(f"p{i}") for i in range(5)]
    assert [x.gpu for x in placed if x] == [0, 0] and placed[2] is None  # c2 never on the dedicated gpu1
    s2 = Scheduler(depth=0)
    s2.add_host("h0", 0, 1, 3, 1 << 30)
    s2.placement = placement.parse("winning=0:1")
    assert [bool(s2.place(f"p{i}")) for i in range(3)] == [True, True, False]  # one worker kept
