"""The fold's answer to "what did that switch do": windowed and since-change rates, history
with marks, segments with ratios, and the device-global sync a mem holder waits in.
Synthetic event streams (exact figures), then the committed sim recording of a real switch."""
from __future__ import annotations

from pathlib import Path

import pytest

from prover import events as ev
from prover.record import read_recording
from prover.fold.apply import fold
from prover.fold.model import DashboardState
from prover.fold.segments import segment_rows

REC = Path(__file__).resolve().parents[1] / "tui" / "recordings" / "switch_device_stream.jsonl.gz"


def _start(gpus: int = 1) -> list:
    out: list = [ev.RunStarted(t=0.0, backend="sim", simulated=True, profile="tiny", proved_log2=8, modelled_log2=8,
                               gpus=gpus, config={"mem_sync": "device", "lock_mode": "two-lock"})]
    out += [ev.GpuInfo(t=0.0, gpu=g, name="Toy", total_bytes=1 << 30, budget_bytes=1 << 30, simulated=True)
            for g in range(gpus)]
    return out


def _partition(i: int, t: float, gpu: int = 0, hold: float = 0.5) -> list:
    """One verified partition finishing at t, its compute hold just before."""
    part, w = f"s0p{i}", f"g{gpu}w{i % 2}"
    return [ev.PartitionQueued(t=t - hold - 0.1, part=part, sector=0, index=i),
            ev.PhaseStart(t=t - hold - 0.1, part=part, phase=ev.Phase.ntt_h, worker=w, gpu=gpu),
            ev.LockAcquired(t=t - hold, gpu=gpu, lock="compute", worker=w, part=part, wait=0.0),
            ev.LockReleased(t=t, gpu=gpu, lock="compute", worker=w, part=part, hold=hold),
            ev.ProofResult(t=t, part=part, ok=True),
            ev.PartitionDone(t=t, part=part, ok=True, seconds=1.0)]


def _switched(before_every: float = 1.0, after_every: float = 0.5, switch_at: float = 20.0, end: float = 40.0) -> list:
    """One partition a second until the switch, then two a second."""
    evs, i, t = _start(), 0, 1.0
    while t <= end:
        if t > switch_at and evs[-1].t <= switch_at:
            evs.append(ev.ModeChange(t=switch_at, knob="mem_sync", old="device", new="stream", source="switch"))
        evs += _partition(i, t, hold=min(0.4, 0.8 * (before_every if t <= switch_at else after_every)))
        i += 1
        t += before_every if t < switch_at else after_every
    return evs


def test_windowed_rate_follows_the_switch_within_one_window() -> None:
    evs = _switched()
    before = fold([e for e in evs if e.t <= 19.9], DashboardState(rate_window_s=10.0)).rates()
    assert before.windowed_per_min == pytest.approx(60.0, rel=0.01)
    assert before.change is None and before.since_change_per_min is None
    after = fold([e for e in evs if e.t <= 30.0], DashboardState(rate_window_s=10.0)).rates()
    assert after.window_s == 10.0 and after.windowed_per_min == pytest.approx(120.0, rel=0.01)
    assert after.since_change_per_min == pytest.approx(120.0, rel=0.01)
    assert after.change == "mem_sync: device -> stream (switch)" and after.since_change_s == pytest.approx(10.0)
    assert after.mean_per_min < 100.0  # the mean since start still carries the slow half: labelled as such


def test_window_never_starts_before_the_first_gpu_section() -> None:
    evs = _start() + _partition(0, 9.0) + _partition(1, 10.0)  # set-up until 8.5 s
    r = fold(evs, DashboardState(rate_window_s=30.0)).rates()
    assert r.window_span_s == pytest.approx(1.5) and r.windowed_per_min == pytest.approx(80.0)


def test_segments_split_at_the_switch_with_their_ratio() -> None:
    st = fold(_switched())
    rows = segment_rows(st)
    assert [r.index for r in rows] == [0, 1]
    a, b = rows
    assert a.change is None and a.knobs["mem_sync"] == "device" and not a.open and a.t1 == 20.0
    assert b.change == "mem_sync: device -> stream (switch)" and b.knobs["mem_sync"] == "stream" and b.open
    assert a.verified == 20 and a.verified_per_min == pytest.approx(60.0)
    assert b.verified_per_min == pytest.approx(120.0) and b.ratio == pytest.approx(2.0)
    assert a.compute_held_share == pytest.approx(20 * 0.4 / 20.0, rel=0.02)
    assert b.compute_held_share == pytest.approx(0.8, rel=0.02)


def test_changes_at_one_moment_open_one_segment() -> None:
    evs = _start() + _partition(0, 1.0) + [
        ev.ModeChange(t=2.0, knob="mem_sync", old="device", new="stream", source="switch"),
        ev.ModeChange(t=2.0, knob="lock_mode", old="two-lock", new="single", source="switch")] + _partition(1, 3.0)
    rows = segment_rows(fold(evs))
    assert len(rows) == 2 and rows[1].knobs["lock_mode"] == "single" and "lock_mode" in (rows[1].change or "")


def test_history_samples_on_the_event_clock_with_marks() -> None:
    st = fold(_switched(), DashboardState(rate_window_s=4.0))
    run, g0 = st.history.series(), st.history.series(0)
    assert [p.t for p in run] == [2.0 * k for k in range(1, 20)]  # 40.0 closes with a later event and len(g0) == len(run)
    assert run[8].verified_per_min == pytest.approx(60.0) and run[-1].verified_per_min == pytest.approx(120.0)
    assert 0.0 < run[5].compute_held <= 1.0 and run[0].budget == 1 << 30
    (mark,) = st.history.marks
    assert mark.t == 20.0 and mark.label == "mem_sync: device -> stream (switch)" and mark.new == "stream"
    # a fold stopped at T (a replay at T) has the history up to T only
    assert fold([e for e in _switched() if e.t <= 11.0]).history.series()[-1].t == 10.0


def test_device_sync_names_the_compute_holder_it_waited_behind() -> None:
    evs = _start() + [
        ev.PartitionQueued(t=0.5, part="s3p1", sector=3, index=1),
        ev.PartitionQueued(t=0.5, part="s3p2", sector=3, index=2),
        ev.PhaseStart(t=1.0, part="s3p2", phase=ev.Phase.prestage, worker="g0w2", gpu=0),
        ev.DeviceSyncStart(t=1.0, gpu=0, worker="g0w2", part="s3p2", behind_worker="g0w0", behind_part="s3p1")]
    st = fold(evs)
    now = st.gpus[0].device_sync
    assert now is not None and now.label(1.041) == "mem g0w2 device sync behind g0w0 s3p1 41 ms"
    assert st.gpus[0].timeline[-1].label == "device_sync" and st.gpus[0].timeline[-1].detail == "behind g0w0 s3p1"
    st.apply(ev.DeviceSyncEnd(t=1.042, gpu=0, worker="g0w2", part="s3p2", behind_worker="g0w0", behind_part="s3p1",
                              start=1.0, duration=0.042))
    g = st.gpus[0]
    assert g.device_sync is None and g.last_device_sync is not None and g.last_device_sync.duration == 0.042
    assert g.device_syncs == 1 and g.device_sync_total == pytest.approx(0.042)
    assert st.partitions["s3p2"].device_sync_s == pytest.approx(0.042)
    assert st.partitions["s3p2"].device_sync_behind == "g0w0 s3p1"
    assert g.timeline[-1].label == "prestage"  # back on the pre-stage it interrupted
    assert segment_rows(st)[0].device_sync_s == pytest.approx(0.042)


def test_switch_recording_segment_ratio() -> None:
    """The committed real-engine switch (sim, default profile, time scale 0.1; made by
    tests/tui/make_recordings.py): device syncs before, none after, the rate up ~2.7x."""
    rec = read_recording(REC)
    assert rec.error is None and rec.header is not None and rec.header.schema_version == 3
    st = fold(rec.events, DashboardState(rate_window_s=3.0))
    a, b = segment_rows(st)
    assert a.knobs["mem_sync"] == "device" and b.knobs["mem_sync"] == "stream"
    assert a.device_syncs > 5 and a.device_sync_s > 1.0 and a.fallbacks > 5
    assert b.ratio is not None and 2.0 < b.ratio < 3.5
    # within one window (3 s) of the switch the windowed rate has moved as far
    at = [e for e in rec.events if e.t <= b.t0 + 3.0 + 2.0]  # + a partition in flight at the switch
    w_before = fold([e for e in rec.events if e.t <= b.t0], DashboardState(rate_window_s=3.0)).rates()
    w_after = fold(at, DashboardState(rate_window_s=3.0)).rates()
    assert w_after.windowed_per_min / w_before.windowed_per_min > 2.0


def test_ui_snapshot_does_not_share_the_switch_view_with_the_fold() -> None:
    evs = _switched()
    st = fold(evs[:-30])
    snap = st.view()
    before = (len(snap.history.series()), snap.segments[-1].own.verified, len(snap.ok_times.times))
    for e in evs[-30:]:
        st.apply(e)
    assert (len(snap.history.series()), snap.segments[-1].own.verified, len(snap.ok_times.times)) == before
    assert len(st.history.series()) > before[0] and st.segments[-1].own.verified > before[1]


def test_segments_stay_bounded() -> None:
    from prover.fold.segments import MAX_SEGMENTS

    evs = _start() + [ev.ModeChange(t=1.0 + k, knob="paused", old=str(k % 2 == 1), new=str(k % 2 == 0), source="key")
                      for k in range(MAX_SEGMENTS + 20)]
    st = fold(evs)
    assert len(st.segments) == MAX_SEGMENTS and st.segments[-1].index == MAX_SEGMENTS + 20
