"""The switch protocol (issue 33, pipeline/gpu/room.py) under 200 random switch schedules over
every live knob: lock_mode (every discipline), mem_sync, prestage, b_g2, workers up and down,
vram_budget up and down, pause and resume, switched every 1-8 ms on the sim backend (profile
tiny) with a budget of one or two partitions. Nothing is injected, so any OOM is the protocol's
failure: 0 OOMs, and every invariant held (one compute holder per GPU, one lock order, live
bytes never above the budget in force, every lock and buffer given back, every partition done).

One seeded loop, not hypothesis: a failure names its schedule (seed and parameters) and runs
again alike; the whole loop takes ~40 s on a 2-core machine."""
from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the helpers beside this file
from test_invariants import TINY, run_schedule  # noqa: E402
from prover import disciplines
from prover.config import load_config
from prover.pipeline.engine import Engine
from prover.pipeline.nullphases import NullPhases
from tests.helpers.invariants import InvariantChecker

SCHEDULES = 200
SWITCHES = [*disciplines.names(), "mem_sync=device", "mem_sync=stream", "prestage=off", "prestage=on", "b_g2=gpu",
            "b_g2=cpu", *(f"workers_per_gpu={n}" for n in (1, 2, 3, 4)), *(f"vram_budget={k * TINY}" for k in (1, 2, 3)),
            "pause", "resume"]


def _schedule(i: int, rnd: random.Random) -> dict:
    return dict(seed=33_000 + i, gpus=rnd.choice((1, 1, 2)), workers=rnd.randint(1, 4), budget_parts=rnd.randint(1, 2),
                lock_mode=rnd.choice(disciplines.names()), mem_sync=rnd.choice(("device", "stream")),
                partitions=rnd.randint(3, 6))


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_random_switch_schedules_over_every_live_knob_never_oom():
    rnd, t0, switches = random.Random(33), time.monotonic(), 0
    for i in range(SCHEDULES):
        kw = _schedule(i, rnd)
        chk = run_schedule(error_rate=0.0, oom_rate=0.0, switch_every_ms=(1, 8), switches=SWITCHES, **kw)
        where = f"schedule {i}: {kw}"
        assert chk.final() == [], (where, chk.final())
        assert all(v <= 1 for v in chk.compute_max.values()), where
        ooms = [(e.worker, e.part, e.cause) for e in chk.events if e.kind == "oom"]
        assert ooms == [], (where, ooms)
        assert all(d.ok for d in chk.done.values()), (where, [d.reason for d in chk.done.values() if not d.ok])
        switches += chk.kinds["mode_change"]
    assert switches > 20 * SCHEDULES  # they did switch, often
    print(f"{SCHEDULES} schedules, {switches} switches, {time.monotonic() - t0:.1f}s")


@pytest.mark.timeout(60)
def test_a_budget_cut_waits_for_the_sections_admitted_under_the_old_budget():
    """vram_budget 3 -> 1 partition while three reserved sections hold room: the cut is said at
    once (ModeChange) and applied when they have left (SwitchSettled with the budget); live bytes
    never exceed the budget in force, and nobody runs out of room."""
    cfg = load_config(None, backend="sim", profile="tiny", workers_per_gpu=3, vram_budget=3 * TINY, lock_mode="reserved",
                      sectors=1, partitions=12, time_scale=1.0, vram_sample_s=0.02)
    chk = InvariantChecker()
    eng = Engine(cfg, [chk], phases=NullPhases())
    eng.start()
    while not any(e.kind == "alloc" for e in list(chk.events)[-50:]):
        time.sleep(0.002)
    eng.controller.apply(f"vram_budget={TINY}", source="test")
    assert eng.wait(30)
    assert chk.final() == [] and chk.kinds["oom"] == 0
    [cut] = [e for e in chk.events if e.kind == "switch_settled"]
    assert cut.budget == TINY and cut.regime == {"lock_mode": "reserved"}
    change = next(e for e in chk.events if e.kind == "mode_change" and e.knob == "vram_budget")
    assert change.t <= cut.t
    later = [e for e in chk.events if e.kind == "alloc" and e.t > cut.t]
    assert later and max(chk.max_live.values()) <= 3 * TINY


@pytest.mark.timeout(60)
def test_knobs_outside_the_regime_apply_at_the_next_section_without_a_wait():
    """b_g2, workers, and mem_sync under a discipline that does not take room by it (reserved)
    open no new regime: no SwitchSettled, nobody waits at the gate."""
    chk = run_schedule(5, gpus=1, workers=3, budget_parts=2, lock_mode="reserved", mem_sync="device", partitions=8,
                       error_rate=0.0, oom_rate=0.0, switch_every_ms=(2, 6),
                       switches=["b_g2=gpu", "b_g2=cpu", "workers_per_gpu=2", "workers_per_gpu=3", "mem_sync=stream",
                                 "mem_sync=device", "prestage=off", "prestage=on"])
    assert chk.final() == [] and chk.kinds["mode_change"] > 5
    assert chk.kinds["switch_settled"] == 0 and chk.kinds["oom"] == 0


def test_the_budget_in_force_is_the_newest_word_once_the_old_sections_have_left():
    """On the room itself: 3 -> 1 -> 2 partitions while a section holds the GPU: the device
    keeps 3 until it leaves, then takes 2 (not 1, not 3); a raise to 4 applies at once."""
    import threading

    from prover.device.budget import Sizing
    from prover.device.profiles import get_profile
    from prover.device.sim import SimDevice
    from prover.pipeline.gpu.room import Room

    said: list = []
    stop = threading.Event()
    tiny = get_profile("tiny")
    adm = Room(Sizing(tiny, tiny.modelled_log2), 3 * TINY, stop,
               lambda ledger: SimDevice(0, tiny, ledger, lambda cls, **kw: said.append(cls(t=0.0, **kw)), stop))
    dev = adm.device
    key = (("lock_mode", "reserved"),)
    _, old = adm.enter("g0w0", lambda: (None, key))
    adm.gate(old)
    adm.set_budget(TINY)
    adm.set_budget(2 * TINY)
    assert dev.budget == 3 * TINY  # the section admitted under 3 keeps its room
    _, new = adm.enter("g0w1", lambda: (None, key))
    adm.leave(old)
    adm.gate(new)
    assert dev.budget == 2 * TINY
    [settled] = [e for e in said if e.kind == "switch_settled"]
    assert settled.budget == 2 * TINY and settled.regime == {"lock_mode": "reserved"}
    adm.set_budget(4 * TINY)
    assert dev.budget == 4 * TINY  # a raise: at once
    adm.leave(new)
    assert adm.epochs() == []
