"""The lock disciplines (prover/disciplines): each one under random schedules, live
switches between every pair, what each one puts under its locks (read from the events), and
that a lock_mode value with no strategy cannot run."""
from __future__ import annotations

import dataclasses
import itertools
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the helpers beside this file
from test_invariants import KNOB_SWITCHES, TINY, run_schedule  # noqa: E402
from prover import knobs
from prover.config import ConfigError, load_config
from prover import disciplines
from prover.pipeline.control.controller import Controller, Knobs

NAMES = disciplines.names()


def test_registry_declares_every_lock_mode_and_one_lock_order():
    assert set(NAMES) >= {"single", "narrow", "two-lock", "reserved"}
    assert knobs.KNOBS["lock_mode"].values == NAMES
    order = disciplines.lock_order()
    assert order == ("mem", "compute")
    for cls in map(disciplines.get, NAMES):
        assert disciplines.COMPUTE in cls.locks, cls.name  # every discipline computes under compute
        assert [order.index(n) for n in cls.locks] == sorted(order.index(n) for n in cls.locks), cls.name


def test_a_value_added_to_the_knob_table_alone_cannot_run(monkeypatch):
    k = knobs.KNOBS["lock_mode"]
    monkeypatch.setitem(knobs.KNOBS, "lock_mode", dataclasses.replace(k, values=(*k.values, "three-lock")))
    with pytest.raises(ConfigError) as exc:
        load_config(None, backend="sim", lock_mode="three-lock")
    msg = str(exc.value)
    assert "\n" not in msg and "three-lock" in msg and "lock_mode" in msg and "nothing that runs it" in msg
    with pytest.raises(ValueError, match="nothing that runs it"):
        knobs.parse_switch("three-lock")
    c = Controller(Knobs.from_config(load_config(None, backend="sim")), lambda *a, **kw: None)
    with pytest.raises(ValueError, match="nothing that runs it"):
        c.set("lock_mode", "three-lock")
    with pytest.raises(ValueError, match="has no discipline"):
        disciplines.get("three-lock")


def test_lock_order_refuses_a_discipline_out_of_order(monkeypatch):
    class Backwards(disciplines.Discipline):
        name, locks, summary = "backwards", ("compute", "mem"), "takes compute before mem"

        def section(self, s, work):  # pragma: no cover - never run
            raise AssertionError

    monkeypatch.setitem(disciplines._REGISTRY, "backwards", Backwards)
    with pytest.raises(ValueError, match="out of the global lock order"):
        disciplines.lock_order()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", NAMES)
def test_each_discipline_keeps_the_invariants_under_random_schedules(mode):
    """Knobs other than lock_mode switched every 1-6 ms, errors and OOMs, a budget of two."""
    for seed, mem_sync in ((1, "device"), (2, "stream")):
        chk = run_schedule(seed, gpus=2, workers=3, budget_parts=2, lock_mode=mode, mem_sync=mem_sync,
                           partitions=8, error_rate=0.03, oom_rate=0.05, switch_every_ms=(1, 6),
                           switches=KNOB_SWITCHES)
        assert chk.final() == [], (mode, mem_sync)
        assert all(v <= 1 for v in chk.compute_max.values())
        assert not [e for e in chk.events if e.kind == "mode_change" and e.knob == "lock_mode"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("a,b", list(itertools.combinations(NAMES, 2)))
def test_live_switches_between_every_pair(a, b):
    """a <-> b every 1-4 ms (both directions, many times) with mem_sync flipping too."""
    chk = run_schedule(11, gpus=1, workers=4, budget_parts=2, lock_mode=a, mem_sync="device", partitions=10,
                       error_rate=0.0, oom_rate=0.0, switch_every_ms=(1, 4),
                       switches=[a, b, a, b, "mem_sync=stream", "mem_sync=device"])
    assert chk.final() == []
    assert all(d.ok for d in chk.done.values())
    modes = {e.new for e in chk.events if e.kind == "mode_change" and e.knob == "lock_mode"}
    assert modes == {a, b}


def _run(mode: str, budget_parts: int = 2, seed: int = 3, **kw):
    return run_schedule(seed, gpus=1, workers=4, budget_parts=budget_parts, lock_mode=mode, partitions=8,
                        error_rate=0.0, oom_rate=0.0, switch_every_ms=(10_000, 10_000), switches=["resume"],
                        **{"mem_sync": "device", **kw})


def _by_part(chk, kind: str, **match) -> dict[str, float]:
    out: dict[str, float] = {}
    for e in chk.events:
        if e.kind == kind and all(getattr(e, k) == v for k, v in match.items()):
            out.setdefault(e.part, e.t)
    return out


@pytest.mark.timeout(30)
def test_single_starts_prep_inside_the_lock_and_narrow_finishes_it_before():
    single = _run("single", b_g2="cpu")
    got = _by_part(single, "lock_acquired", lock="compute")
    assert got and all(
        any(e.kind == "phase_start" and e.part == p and e.phase.value == "prep_msm" and e.t >= t for e in single.events)
        for p, t in got.items())
    narrow = _run("narrow", b_g2="cpu")
    asked = _by_part(narrow, "lock_requested", lock="mem")
    prep_end = {e.part: e.t for e in narrow.events if e.kind == "phase_end" and e.phase.value == "prep_msm"}
    released = {e.part: e.t for e in narrow.events if e.kind == "lock_released" and e.lock == "compute"}
    b_g2 = {e.part: e.t for e in narrow.events if e.kind == "phase_start" and e.phase.value == "b_g2_msm"}
    assert asked and all(prep_end[p] <= t for p, t in asked.items())  # prep done before the lock
    assert released and all(b_g2[p] >= released[p] for p in released)  # CPU b_g2 after it


def _two_lock_fallbacks(attempts: int = 6) -> list[int]:
    """Fallbacks of two-lock + device sync on a budget of two, run after run until one falls
    back. Whether a pre-stage finds room after its device sync is a race it is meant to show:
    the sync and the compute holder's free both wake when the holder's kernels end, and
    whichever thread the OS runs first decides it. Here about 1 in 4 pre-stages lose it; a
    loaded 2-core CI box once ran a whole run where none did, so one run cannot be the test."""
    seen: list[int] = []
    for seed in range(3, 3 + attempts):
        seen.append(_run("two-lock", budget_parts=2, seed=seed).kinds["fallback"])
        if seen[-1]:
            break
    return seen


@pytest.mark.timeout(60)
def test_reserved_needs_no_mem_lock_no_device_sync_and_no_fallback_on_a_tight_budget():
    seen = _two_lock_fallbacks()
    assert seen[-1] > 0, seen  # the seed's serialisation: device sync, room checked once
    res = _run("reserved", budget_parts=2)
    assert res.final() == []
    assert res.kinds["fallback"] == 0 and res.kinds["oom"] == 0
    assert not [e for e in res.events if e.kind.startswith("lock_") and e.lock != "compute"]
    staged = [e for e in res.events if e.kind == "alloc"]
    assert staged and max(res.max_live.values()) <= 2 * TINY


class _ThreeLock(disciplines.Discipline):
    """A discipline that adds a lock: uploads under their own `upload` lock, between mem
    (allocation) and compute. Registered only inside the test below."""

    name, locks, summary = "three-lock", ("mem", "upload", "compute"), "alloc under mem, upload under upload"

    def section(self, s, work):
        prep_f = work.start_prep(s)
        with s.locks.hold_all(("mem", "upload"), s.w, s.part.id):
            with work.phase(s, disciplines.base.Phase.prestage):
                s.bufs[:] = s.upload(s.T["prestage"])
        with s.locks.hold("compute", s.w, s.part.id):
            work.compute(s, prep_f)
        return prep_f


@pytest.mark.timeout(30)
def test_a_discipline_with_a_new_lock_needs_nothing_else(monkeypatch, tmp_path):
    """Registered alone (no event, fold, widget, theme or trace change), its lock is made,
    checked, folded, drawn in the lanes and overview (a colour it has none of: the default),
    exported to the trace and summarised."""
    from c2tui.widgets.gpu_overview import overview_line
    from c2tui.widgets.lock_lanes import render_locks
    from prover.observe.trace import to_trace
    from prover.record import RecordingHeader, RecordingWriter, read_recording
    from prover.fold.apply import fold
    from prover.fold.summary import summarize
    from themes import load

    monkeypatch.setitem(disciplines._REGISTRY, "three-lock", _ThreeLock)
    k = knobs.KNOBS["lock_mode"]
    monkeypatch.setitem(knobs.KNOBS, "lock_mode", dataclasses.replace(k, values=disciplines.names()))
    assert disciplines.lock_order() == ("mem", "upload", "compute")
    chk = run_schedule(5, gpus=1, workers=3, budget_parts=3, lock_mode="three-lock", mem_sync="stream",
                       partitions=6, error_rate=0.0, oom_rate=0.0, switch_every_ms=(2, 5),
                       switches=["three-lock", "two-lock", "single", "three-lock"])
    assert chk.final() == [] and any(e.kind == "lock_acquired" and e.lock == "upload" for e in chk.events)
    out = tmp_path / "three.jsonl"
    w = RecordingWriter(out, RecordingHeader())
    for e in chk.events:
        w(e)
    w.close()
    st = fold(read_recording(out).events)
    g = st.gpus[0]
    assert g.locks["upload"].acquisitions > 0
    pal = load("dark").palette
    assert "wait:upload" not in pal.colours  # no theme entry: the default colour, no crash
    lanes = [ln.plain for ln in render_locks(g, st.t, pal, 100)]
    assert [ln.split()[0] for ln in lanes] == ["mem", "upload", "compute"]
    assert "upload" in overview_line(g, pal, 160, "shown").plain
    tracks = {ev["args"]["name"] for ev in to_trace(read_recording(out))["traceEvents"]
              if ev.get("ph") == "M" and ev.get("name") == "thread_name"}
    assert "lock upload holds" in tracks
    assert summarize(st).gpus[0].locks["upload"].acquisitions == g.locks["upload"].acquisitions
