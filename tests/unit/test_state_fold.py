"""The fold: events in, dashboard state out; JSON round trip of every event kind."""
from __future__ import annotations

from typing import get_args

import pytest
from pydantic import ValidationError

from prover import events as ev
from prover.fold.apply import fold
from prover.fold.model import DashboardState

GiB = 1 << 30


def _run(t: float = 0.0) -> ev.RunStarted:
    return ev.RunStarted(t=t, backend="sim", simulated=True, profile="rtx5070ti-16g", proved_log2=8,
                         modelled_log2=27, gpus=1, config={"lock_mode": "two-lock", "mem_sync": "stream"})


def _lifecycle() -> list[ev.Event]:
    w, p = "g0w0", "s0p0"
    return [
        _run(),
        ev.GpuInfo(t=0.0, gpu=0, name="sim", total_bytes=16 * GiB, budget_bytes=16 * GiB, simulated=True),
        ev.WorkerStarted(t=0.0, gpu=0, worker=w),
        ev.PartitionQueued(t=0.1, part=p, sector=0, index=0),
        ev.PhaseStart(t=0.2, part=p, phase=ev.Phase.synthesis, worker=w),
        ev.PhaseEnd(t=1.2, part=p, phase=ev.Phase.synthesis, worker=w, duration=1.0),
        ev.LockRequested(t=1.2, gpu=0, lock="mem", worker=w, part=p),
        ev.LockAcquired(t=1.5, gpu=0, lock="mem", worker=w, part=p, wait=0.3),
        ev.PhaseStart(t=1.5, part=p, phase=ev.Phase.prestage, worker=w, gpu=0),
        ev.Alloc(t=1.5, gpu=0, owner=w, part=p, name="d_a", bytes=4 * GiB),
        ev.Alloc(t=1.5, gpu=0, owner=w, part=p, name="d_bc", bytes=8 * GiB),
        ev.PhaseEnd(t=1.52, part=p, phase=ev.Phase.prestage, worker=w, gpu=0, duration=0.02),
        ev.LockReleased(t=1.52, gpu=0, lock="mem", worker=w, part=p, hold=0.02),
        ev.LockRequested(t=1.52, gpu=0, lock="compute", worker=w, part=p),
        ev.LockAcquired(t=1.52, gpu=0, lock="compute", worker=w, part=p, wait=0.0),
        ev.PhaseStart(t=1.52, part=p, phase=ev.Phase.ntt_h, worker=w, gpu=0, impl="sim"),
        ev.PhaseEnd(t=2.2, part=p, phase=ev.Phase.ntt_h, worker=w, gpu=0, duration=0.68),
        ev.Free(t=2.2, gpu=0, owner=w, part=p, name="d_a", bytes=4 * GiB),
        ev.Free(t=2.2, gpu=0, owner=w, part=p, name="d_bc", bytes=8 * GiB),
        ev.LockReleased(t=2.2, gpu=0, lock="compute", worker=w, part=p, hold=0.68),
        ev.ModeChange(t=2.3, knob="lock_mode", old="two-lock", new="single", source="key"),
        ev.ProofResult(t=2.5, part=p, ok=True),
        ev.PartitionDone(t=2.5, part=p, ok=True, seconds=2.4),
        ev.RunEnded(t=3.0),
    ]


def test_fold_follows_a_partition_through_its_locks_and_buffers() -> None:
    events = _lifecycle()
    mid = fold(events[:12])
    g = mid.gpus[0]
    assert g.locks["mem"].holder == "g0w0"
    assert g.live_bytes == 12 * GiB
    assert mid.partitions["s0p0"].prestaged is True
    end = fold(events)
    g = end.gpus[0]
    assert g.locks["mem"].holder is None and g.locks["compute"].holder is None
    assert g.live_bytes == 0
    assert g.locks["mem"].wait_total == pytest.approx(0.3)
    assert g.kernel_busy == pytest.approx(0.68)
    assert end.knobs["lock_mode"] == "single"
    assert (end.proofs_ok, end.partitions_ok, end.ended) == (1, 1, True)
    assert end.throughput_per_min() == pytest.approx(20.0)


def test_fold_is_deterministic_and_snapshots_are_independent() -> None:
    events = _lifecycle()
    a, b = fold(events), fold(events)
    assert a == b
    snap = a.snapshot()
    a.apply(ev.Note(t=9.0, text="later"))
    assert snap.t == 3.0 and a.t == 9.0


def test_every_event_kind_round_trips_through_json() -> None:
    for e in _lifecycle():
        assert ev.parse_event(e.model_dump_json()) == e
    kinds = {m.model_fields["kind"].default for m in get_args(get_args(ev.Event)[0])}
    assert {"run_started", "lock_acquired", "vram_sample", "stall", "run_ended"} <= kinds


@pytest.mark.parametrize("line", [
    '{"kind": "lock_acquired", "t": 1.0}',  # missing fields
    '{"kind": "no_such_event", "t": 1.0}',
    '{"kind": "phase_start", "t": -1, "part": "p", "phase": "synthesis", "worker": "w"}',
    '{"kind": "phase_start", "t": 1, "part": "p", "phase": "warp", "worker": "w"}',
    'not json',
])
def test_bad_event_lines_are_rejected(line: str) -> None:
    with pytest.raises(ValidationError):
        ev.parse_event(line)


def test_unknown_partition_ids_do_not_crash_the_fold() -> None:
    s = DashboardState()
    s.apply(ev.PhaseEnd(t=1.0, part="ghost", phase=ev.Phase.msm, worker="w", gpu=0, duration=0.5))
    assert "ghost" in s.partitions and s.gpus[0].kernel_busy == 0.5


def test_steady_busy_leaves_out_start_up_and_drain() -> None:
    def sample(t: float, util: float) -> ev.VramSample:
        return ev.VramSample(t=t, gpu=0, budget=GiB, pool_reserved=0, pool_used=0, util=util)

    es: list[ev.Event] = [_run(), sample(0.5, 0.0)]  # start-up: idle, outside the window
    es += [ev.LockAcquired(t=1.0, gpu=0, lock="compute", worker="w", wait=0.0), sample(1.5, 1.0),
           ev.LockReleased(t=2.0, gpu=0, lock="compute", worker="w", hold=1.0), sample(2.5, 0.5),
           ev.LockAcquired(t=3.0, gpu=0, lock="compute", worker="w", wait=0.0),
           ev.LockReleased(t=4.0, gpu=0, lock="compute", worker="w", hold=1.0), sample(5.0, 0.0)]
    held, util = fold(es).gpus[0].steady_busy()
    assert held == pytest.approx(2.0 / 3.0) and util == pytest.approx(0.75)
    assert DashboardState().gpu(0).steady_busy() == (None, None)
