"""The two sources behind the dashboard: replay (fold to a cursor, seek, speed, checkpoints)
and live (a fold thread that hands out whole snapshots; the sink never blocks)."""
from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from c2tui.sources import seek_points
from c2tui.sources.live import LiveSource
from c2tui.sources.replay import SPEEDS, ReplaySource
from prover import events as ev
from prover.fold.apply import fold
from tests.helpers.tui_synth import synth_events

EVENTS = synth_events(gpus=2, workers_per_gpu=3, sectors=2, switches=[(9.0, "mem_sync", "device")], fail_every=5)


def view(s):
    """What the screen shows of a state (everything the widgets read)."""
    return (
        s.partitions_ok, s.partitions_failed, s.proofs_ok, s.proofs_failed, s.fallbacks, s.ooms, dict(s.knobs),
        {i: ({k: (l.holder, l.holder_part, l.since, dict(l.waiters)) for k, l in g.locks.items()},
             {o: dict(b) for o, b in g.live.items()}, g.pool_reserved, g.pool_used, list(g.util_history),
             [(x.worker, x.label, x.t0, x.t1) for x in g.timeline if x.t1 is None or x.t1 >= s.t - 35])
         for i, g in s.gpus.items()},
        {p.part: (p.current, dict(p.phases), p.verified, p.fallback) for p in s.recent_partitions()},
        list(s.log),
    )


def fold_to(t: float):
    s = fold(e for e in EVENTS if e.t <= t)
    s.t = t
    return s


def test_replay_at_equals_fold_prefix():
    end = EVENTS[-1].t
    for t in (0.0, 3.3, end / 2, end):
        src = ReplaySource(EVENTS, at=t, playing=False)
        assert view(src.snapshot()[1]) == view(fold_to(t))


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(min_value=-5, max_value=60, allow_nan=False), min_size=1, max_size=8))
def test_any_seek_sequence_equals_a_fresh_fold(times):
    """Seeking back restores a checkpoint and folds on: the same state as folding from zero."""
    old = seek_points.CHECKPOINT_EVERY, seek_points.MAX_CHECKPOINTS
    # many checkpoints in a small recording, thinned (the spacing doubled) several times
    seek_points.CHECKPOINT_EVERY, seek_points.MAX_CHECKPOINTS = 97, 3
    try:
        src = ReplaySource(EVENTS, playing=False)
        for t in times:
            src.seek(t)
        want = min(EVENTS[-1].t, max(0.0, times[-1]))
        assert src.position == pytest.approx(want)
        assert view(src.snapshot()[1]) == view(fold_to(want))
        assert len(src.checkpoints) <= 3
    finally:
        seek_points.CHECKPOINT_EVERY, seek_points.MAX_CHECKPOINTS = old


def test_play_speed_and_end():
    src = ReplaySource(EVENTS, at=1.0, playing=True, speed=4.0)
    src.tick(now=100.0)
    src.tick(now=100.5)  # half a second of wall time at 4x
    assert src.position == pytest.approx(3.0)
    src.faster()
    assert src.speed == 8.0
    for _ in range(20):
        src.faster()
    assert src.speed == SPEEDS[-1] == 16.0
    for _ in range(20):
        src.slower()
    assert src.speed == SPEEDS[0] == 0.25
    src.set_speed(16.0)
    src.tick(now=101.0)
    src.tick(now=200.0)
    assert src.position == EVENTS[-1].t and not src.playing  # stops at the end
    src.toggle()  # play again from the start
    assert src.playing and src.position == 0.0


def test_paused_replay_never_moves():
    src = ReplaySource(EVENTS, at=5.0, playing=False)
    v0 = src.snapshot()[0]
    for k in range(5):
        src.tick(now=1000.0 + k)
    assert src.position == 5.0 and src.snapshot()[0] == v0


def test_the_view_is_independent_and_faithful():
    s = fold_to(12.0)
    c = s.view()
    assert view(c) == view(s)
    # later folding does not leak into the snapshot
    for e in EVENTS:
        if 12.0 < e.t <= 20.0:
            s.apply(e)
    assert view(c) == view(fold_to(12.0))


@pytest.mark.slow
def test_live_source_folds_on_its_thread_and_publishes_snapshots():
    src = LiveSource(None, snapshot_hz=50)
    src.start()
    try:
        t0 = time.perf_counter()
        for e in EVENTS:
            src.sink(e)  # what the engine calls: must be cheap
        sink_s = time.perf_counter() - t0
        deadline = time.time() + 10
        while src.folded < len(EVENTS) and time.time() < deadline:
            time.sleep(0.02)
        assert src.folded == len(EVENTS)
        ver = src.snapshot()[0]
        while src.snapshot()[0] == ver and time.time() < deadline:
            time.sleep(0.02)
        _, snap = src.snapshot()
        assert view(snap) == view(fold(EVENTS))
        assert sink_s / len(EVENTS) < 50e-6, "the sink is an append"
    finally:
        src.stop()


def _mutable(obj, seen: dict[int, object], path: str, out: dict[int, str]) -> None:
    """Every container and dataclass reachable from obj (what a fold could change in place)."""
    import dataclasses
    from collections import deque as _deque

    if id(obj) in seen or isinstance(obj, (str, bytes, int, float, bool, type(None), ev._Ev)):  # events: frozen records
        return
    seen[id(obj)] = obj  # kept alive, so ids are not reused while we walk
    if isinstance(obj, (dict, list, set, _deque)) or dataclasses.is_dataclass(obj):
        out[id(obj)] = path
    if isinstance(obj, dict):
        for k, v in obj.items():
            _mutable(v, seen, f"{path}[{k!r}]", out)
    elif isinstance(obj, (list, set, _deque, tuple)):
        for i, v in enumerate(obj):
            _mutable(v, seen, f"{path}[{i}]", out)
    elif dataclasses.is_dataclass(obj):  # its fields and any attribute set beside them (a concept's sub-state)
        for name, v in vars(obj).items():
            _mutable(v, seen, f"{path}.{name}", out)


def _shared(state) -> list[str]:
    """What a snapshot of `state` shares with it that the fold may still change. Shared by
    design, as the fold never changes them once made: closed timeline segments, device syncs,
    history points and marks, the config's inner values (the run's start, replaced whole)."""
    from prover.fold.history import HistoryMark, HistoryPoint
    from prover.fold.parts import DeviceSyncState, Segment

    snap = state.view()  # the fold's own view (DashboardState.view), what LiveSource publishes
    a: dict[int, str] = {}
    b: dict[int, str] = {}
    keep: dict[int, object] = {}
    _mutable(state, keep, "state", a)
    _mutable(snap, kept := {}, "snap", b)
    keep.update(kept)
    frozen = (DeviceSyncState, HistoryPoint, HistoryMark)
    return sorted(b[i] for i in set(a) & set(b)
                  if not isinstance(keep[i], frozen) and not b[i].startswith("snap.config[")
                  and not (isinstance(keep[i], Segment) and keep[i].t1 is not None))


def test_a_snapshot_shares_nothing_the_fold_still_changes():
    """Every recording the screenshots use (start-up, keys, host RAM, classes, cordons, four
    GPUs) and a fleet: the snapshot the UI reads shares no dict, list or state object with the
    state the fold thread goes on changing. (Startup's steps were shared: the UI once iterated
    them while the fold added one.)"""
    from pathlib import Path

    from prover.record import read_recording
    from tests.helpers.fleet_synth import fleet_stream

    rec_dir = Path(__file__).parent / "recordings"
    states = {p.name: fold(read_recording(p).events) for p in sorted(rec_dir.glob("*.jsonl*"))}
    states["fleet"] = fold(fleet_stream(4, 8.0, distinct=2))
    assert len(states) >= 8
    for name, st in states.items():
        assert _shared(st) == [], name
