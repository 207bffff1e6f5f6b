"""Issue 33: a segment counts the GPU sections begun under its knobs; what a section begun
before a switch does after it is the later segment's transitional figures, never its own; every
segment and rate says its proofs and a 95% interval. Synthetic streams (exact figures), then
the native H200 recording of 20 live switches."""
from __future__ import annotations

from pathlib import Path

import pytest

from prover import events as ev
from prover.stats.intervals import poisson_interval, rate_interval, rate_ratio_interval
from prover.fold.apply import fold
from prover.fold.model import DashboardState
from prover.fold.segments import segment_rows

ROOT = Path(__file__).resolve().parents[2]
H200 = ROOT / "benchmarks" / "recordings" / "h200" / "switch" / "switch_pairs_cuda_22.jsonl.gz"


def _start() -> list:
    return [ev.RunStarted(t=0.0, backend="sim", simulated=True, profile="tiny", proved_log2=8, modelled_log2=8, gpus=1,
                          config={"mem_sync": "device", "lock_mode": "two-lock"}),
            ev.GpuInfo(t=0.0, gpu=0, name="Toy", total_bytes=1 << 30, budget_bytes=1 << 30, simulated=True)]


def _begin(part: str, t: float, w: str = "g0w0") -> list:
    return [ev.PartitionQueued(t=t, part=part, sector=0, index=int(part[-1])),
            ev.LockRequested(t=t, gpu=0, lock="mem", worker=w, part=part)]


def _sync(part: str, t: float, d: float, w: str = "g0w0") -> list:
    return [ev.DeviceSyncStart(t=t, gpu=0, worker=w, part=part),
            ev.DeviceSyncEnd(t=t + d, gpu=0, worker=w, part=part, start=t, duration=d)]


def _done(part: str, t: float) -> list:
    return [ev.ProofResult(t=t, part=part, ok=True), ev.PartitionDone(t=t, part=part, ok=True, seconds=1.0)]


def _switch(t: float) -> ev.ModeChange:
    return ev.ModeChange(t=t, knob="lock_mode", old="two-lock", new="reserved", source="key")


def test_a_section_that_straddles_a_switch_is_transitional_not_the_new_settings():
    evs = _start() + _begin("s0p1", 1.0) + _sync("s0p1", 1.1, 0.5) + [_switch(1.2)]
    evs += _sync("s0p1", 1.7, 0.25) + [ev.Oom(t=1.9, gpu=0, part="s0p1", worker="g0w0", requested=1, free=0)]
    evs += _done("s0p1", 2.0) + [ev.SwitchSettled(t=2.1, gpu=0, regime={"lock_mode": "reserved"}, waited=0.9, drained=1)]
    evs += [ev.PartitionQueued(t=2.2, part="s0p2", sector=0, index=2),
            ev.PhaseStart(t=2.2, part="s0p2", phase=ev.Phase.prestage, worker="g0w1", gpu=0)] + _done("s0p2", 3.0)
    a, b = segment_rows(fold(evs))
    assert a.device_syncs == 2 and a.device_sync_s == pytest.approx(0.75) and a.ooms == 1 and a.verified == 1
    assert b.knobs["lock_mode"] == "reserved" and b.device_sync_s == 0 and b.ooms == 0 and b.verified == 1
    assert b.transitional.device_syncs == 1 and b.transitional.device_sync_s == pytest.approx(0.25)
    assert b.transitional.ooms == 1 and b.transitional.verified == 1


def test_before_switch_settled_a_section_that_shows_itself_late_is_the_old_regimes():
    """A reserved section that waited for its slot across a switch shows its first GPU event
    after the ModeChange, but before the GPU's SwitchSettled: it began under the old knobs."""
    evs = _start() + [ev.ModeChange(t=0.5, knob="lock_mode", old="two-lock", new="reserved", source="key")]
    evs += [ev.SwitchSettled(t=0.6, gpu=0, regime={"lock_mode": "reserved"}, waited=0.0, drained=0)]
    evs += _begin("s0p1", 1.0) + [ev.ModeChange(t=2.0, knob="lock_mode", old="reserved", new="two-lock", source="key")]
    evs += [ev.PartitionQueued(t=2.1, part="s0p2", sector=0, index=2),
            ev.PhaseStart(t=2.3, part="s0p2", phase=ev.Phase.prestage, worker="g0w1", gpu=0)]  # the slot-waiter
    evs += _done("s0p1", 2.4) + _done("s0p2", 2.5)
    evs += [ev.SwitchSettled(t=2.6, gpu=0, regime={"lock_mode": "two-lock", "mem_sync": "device",
                                                     "prestage": "True"}, waited=0.5, drained=2)]
    evs += _begin("s0p3", 2.7) + _sync("s0p3", 2.8, 0.1) + _done("s0p3", 3.0)
    rows = segment_rows(fold(evs))
    assert [r.knobs["lock_mode"] for r in rows] == ["two-lock", "reserved", "two-lock"]
    assert rows[1].verified == 2 and rows[2].verified == 1 and rows[2].transitional.verified == 2
    assert rows[1].device_syncs == 0 and rows[2].device_syncs == 1


def test_every_segment_says_its_proofs_and_interval_and_a_ratio_holding_1_is_not_significant():
    evs = _start()
    for i in range(40):  # one a second, then the same rate after a switch: no difference to claim
        t = 1.0 + i
        if i == 20:
            evs.append(ev.ModeChange(t=t - 0.5, knob="b_g2", old="cpu", new="gpu", source="key"))
        evs += _begin(f"s{i}p0", t - 0.3) + _done(f"s{i}p0", t)
    a, b = segment_rows(fold(evs))
    assert a.proofs == 20 and a.per_min == pytest.approx(60.0) and a.per_min_ci is not None
    assert a.per_min_ci[0] < 60.0 < a.per_min_ci[1]
    assert b.ratio == pytest.approx(1.0) and b.ratio_ci is not None and b.ratio_significant is False


def test_the_intervals_are_the_exact_poisson_ones():
    lo, hi = poisson_interval(10)
    assert lo == pytest.approx(4.795, abs=1e-3) and hi == pytest.approx(18.39, abs=1e-2)  # Garwood, tabulated
    assert rate_interval(10, 60.0) == pytest.approx((lo, hi))
    assert rate_interval(3, 0.0) is None
    r = rate_ratio_interval(400, 60.0, 100, 60.0)
    assert r is not None and r[0] > 3.0 and r[1] < 5.1


def test_the_settling_header_figure_and_its_count():
    evs = _start() + [ev.LockAcquired(t=0.5, gpu=0, lock="compute", worker="g0w0", part="s9p9", wait=0.0)]
    for i in range(3):
        evs += _begin(f"s{i}p0", 1.0 + i) + _done(f"s{i}p0", 1.5 + i)
    r = fold(evs).rates()
    assert r.window_proofs == 3 and r.settling and r.window_ci is not None


def test_the_native_h200_recording_charges_no_device_sync_to_reserved_or_stream():
    from prover.record import read_recording

    rows = segment_rows(fold(read_recording(H200).events))
    assert len(rows) > 20 and all(r.per_min_ci is not None for r in rows)
    quiet = [r for r in rows if r.knobs["lock_mode"] == "reserved" or r.knobs["mem_sync"] == "stream"]
    assert quiet and all(r.device_sync_s == 0 for r in quiet)
    assert sum(r.transitional.device_syncs for r in quiet) > 0  # the drained sections' syncs, shown apart


def test_a_section_that_said_it_began_before_a_switch_is_the_old_segments():
    """SectionBegan is ordered exactly against ModeChange (both under the controller's lock):
    a narrow section that read mem_sync=device just before the switch and shows its first GPU
    event just after is charged to device, its sync the stream segment's transitional figure."""
    evs = _start() + [ev.ModeChange(t=0.1, knob="lock_mode", old="two-lock", new="narrow", source="key"),
                      ev.PartitionQueued(t=0.9, part="s0p1", sector=0, index=1),
                      ev.SectionBegan(t=1.0, gpu=0, worker="g0w0", part="s0p1", lock_mode="narrow"),
                      ev.ModeChange(t=1.001, knob="mem_sync", old="device", new="stream", source="key")]
    evs += [ev.LockRequested(t=1.002, gpu=0, lock="mem", worker="g0w0", part="s0p1")] + _sync("s0p1", 1.003, 0.004)
    evs += _done("s0p1", 1.5)
    rows = segment_rows(fold(evs))
    assert rows[-1].knobs["mem_sync"] == "stream" and rows[-1].device_syncs == 0
    assert rows[-1].transitional.device_syncs == 1 and rows[-2].device_syncs == 1
