"""Random seeded schedules: mode switches every few ms, injected phase exceptions, OOMs,
workers changed up and down, pause/resume. The invariants must hold on every one:
at most one compute holder per GPU, lock order never inverted, live bytes never above the
budget, every lock released and every buffer freed on every exit path, every bounded run
finishes (no deadlock), every partition ends done or failed with a reason."""
from __future__ import annotations

import sys
from pathlib import Path

import random
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.invariants import InvariantChecker  # noqa: E402
from prover.config import load_config
from prover.device.profiles import get_profile
from prover.events import SUB_PHASES, Phase
from prover import disciplines
from prover.pipeline.engine import Engine
from prover.pipeline.nullphases import NullPhases

TINY = get_profile("tiny").partition_bytes()

KNOB_SWITCHES = ["mem_sync=device", "mem_sync=stream", "prestage=off", "prestage=on",
            "b_g2=gpu", "b_g2=cpu", "workers_per_gpu=1", "workers_per_gpu=2", "workers_per_gpu=4", "pause", "resume"]
SWITCHES = [*disciplines.names(), *KNOB_SWITCHES]


def run_schedule(seed: int, *, gpus: int, workers: int, budget_parts: int, lock_mode: str, mem_sync: str,
                 partitions: int, error_rate: float, oom_rate: float, switch_every_ms: tuple[int, int],
                 timeout: float = 30.0, switches: list[str] | None = None, **config: object) -> InvariantChecker:
    rnd = random.Random(seed)
    faults = {"phase_error": {p.value: error_rate for p in Phase} if error_rate else {}, "oom_rate": oom_rate}
    cfg = load_config(None, backend="sim", profile="tiny", gpus=gpus, workers_per_gpu=workers,
                      vram_budget=budget_parts * TINY, lock_mode=lock_mode, mem_sync=mem_sync, sectors=1,
                      partitions=partitions, time_scale=1.0, seed=seed, prestage_wait_s=0.05, vram_sample_s=0.02,
                      faults=faults, **config)
    chk = InvariantChecker()
    eng = Engine(cfg, [chk], phases=NullPhases())
    eng.start()
    try:
        while not eng.wait(rnd.randint(*switch_every_ms) / 1000.0):
            eng.controller.apply(rnd.choice(switches or SWITCHES), source="test")
            if eng.controller.snapshot().paused and rnd.random() < 0.5:
                eng.controller.resume(source="test")
        finished = True
    finally:
        eng.controller.resume(source="test")
    finished = eng.wait(timeout)
    if not finished:
        eng.stop(timeout=5)
    assert finished, f"bounded run did not finish (deadlock?) seed={seed}"
    for ls in eng.locksets.values():
        assert ls.all_free()
    for g, d in eng.devices.items():
        assert d.pool.used == 0
        assert d.max_used <= chk.max_budget[(None, g)]  # and never above the budget in force (the checker)
    return chk


@pytest.mark.timeout(120)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), gpus=st.integers(1, 2), workers=st.integers(1, 4),
       budget_parts=st.integers(1, 3), lock_mode=st.sampled_from(disciplines.names()),
       mem_sync=st.sampled_from(["device", "stream"]), partitions=st.integers(3, 10),
       error_rate=st.sampled_from([0.0, 0.02, 0.08]), oom_rate=st.sampled_from([0.0, 0.05]))
def test_random_schedules_keep_invariants(seed, gpus, workers, budget_parts, lock_mode, mem_sync, partitions,
                                          error_rate, oom_rate):
    chk = run_schedule(seed, gpus=gpus, workers=workers, budget_parts=budget_parts, lock_mode=lock_mode,
                       mem_sync=mem_sync, partitions=partitions, error_rate=error_rate, oom_rate=oom_rate,
                       switch_every_ms=(1, 8))
    assert chk.final() == []
    assert all(v <= 1 for v in chk.compute_max.values())
    if error_rate == 0 and oom_rate == 0:
        assert all(d.ok for d in chk.done.values()), [d.reason for d in chk.done.values() if not d.ok]


@pytest.mark.timeout(60)
def test_storm_short():
    """A shorter CI version of the storm: switches every 1-3 ms, errors and OOMs, 2 GPUs."""
    chk = run_schedule(7, gpus=2, workers=3, budget_parts=2, lock_mode="two-lock", mem_sync="device",
                       partitions=40, error_rate=0.03, oom_rate=0.1, switch_every_ms=(1, 3))
    assert chk.final() == []
    assert chk.kinds["mode_change"] > 100, chk.kinds["mode_change"]
    assert chk.kinds["oom"] > 0
    failed = [d for d in chk.done.values() if not d.ok]
    assert all(d.reason for d in failed)


@pytest.mark.timeout(30)
def test_exception_in_every_phase_releases_locks():
    for phase in Phase:  # a sub-phase (r1cs) runs where the GPU makes a, b, c (abc gpu)
        cfg = load_config(None, backend="sim", profile="tiny", workers_per_gpu=2, sectors=1, partitions=3,
                          time_scale=0.2, faults={"phase_error": {phase.value: 1.0}},
                          abc="gpu" if phase in SUB_PHASES else "auto")
        chk = InvariantChecker()
        eng = Engine(cfg, [chk], phases=NullPhases())
        eng.start()
        assert eng.wait(15), phase
        assert chk.final() == [], phase
        assert len(chk.done) == 3 and not any(d.ok for d in chk.done.values()), phase
        assert all(phase.value in (d.reason or "") or "injected" in (d.reason or "") for d in chk.done.values())


@pytest.mark.timeout(30)
def test_stop_mid_run_releases_everything():
    cfg = load_config(None, backend="sim", workers_per_gpu=3, time_scale=0.05, constraints_log2=8, sectors=None)
    chk = InvariantChecker()
    eng = Engine(cfg, [chk], phases=NullPhases())
    eng.start()
    time.sleep(0.6)
    assert eng.stop(timeout=10)
    assert chk.final(all_done=False) == []
    assert chk.events[-1].reason == "stopped"
    assert all(ls.all_free() for ls in eng.locksets.values())
    assert all(d.pool.used == 0 for d in eng.devices.values())
    assert not [t for t in threading.enumerate() if t.name.startswith("worker-") and t.is_alive()]
