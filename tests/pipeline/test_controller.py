from __future__ import annotations

import sys
import threading
from pathlib import Path

import time

import pytest

from tests.helpers.invariants import InvariantChecker  # noqa: E402
from prover.config import load_config
from prover.pipeline.control.controller import parse_switch
from prover.pipeline.engine import Engine
from prover.pipeline.nullphases import NullPhases
from prover.fold.apply import fold


@pytest.mark.parametrize("spec,want", [
    ("single", ("lock_mode", "single")), ("two-lock", ("lock_mode", "two-lock")), ("stream", ("mem_sync", "stream")),
    ("mem_sync=device", ("mem_sync", "device")), ("workers_per_gpu=4", ("workers_per_gpu", 4)),
    ("workers=2", ("workers_per_gpu", 2)), ("prestage=off", ("prestage", False)), ("b_g2=gpu", ("b_g2", "gpu")),
    ("pause", ("paused", True)), ("resume", ("paused", False)), ("lock-mode=single", ("lock_mode", "single")),
])
def test_parse_switch(spec, want):
    assert parse_switch(spec) == want


@pytest.mark.parametrize("spec", ["triple", "mem_sync=often", "workers_per_gpu=0", "workers_per_gpu=x", "prestage=maybe",
                                  "b_g2=tpu", "colour=red"])
def test_parse_switch_errors(spec):
    with pytest.raises(ValueError):
        parse_switch(spec)


def engine(**kw):
    base = dict(backend="sim", profile="tiny", time_scale=1.0, sectors=1, partitions=6, workers_per_gpu=2)
    base.update(kw)
    chk = InvariantChecker()
    return Engine(load_config(None, **base), [chk], phases=NullPhases()), chk


@pytest.mark.timeout(30)
def test_knobs_emit_mode_changes_and_apply_at_next_section():
    eng, chk = engine(partitions=30, lock_mode="two-lock")
    c = eng.controller
    with pytest.raises(ValueError):
        c.set_lock_mode("triple")
    eng.start()
    time.sleep(0.15)
    assert c.set_lock_mode("single", source="key")
    assert not c.set_lock_mode("single")  # no change, no event
    c.set_mem_sync("stream")
    c.set_prestage(False)
    c.set_b_g2("gpu")
    assert eng.wait(30)
    assert chk.final() == []
    changes = [e for e in chk.events if e.kind == "mode_change"]
    assert [(e.knob, e.new) for e in changes] == [("lock_mode", "single"), ("mem_sync", "stream"), ("prestage", "False"),
                                                  ("b_g2", "gpu")]
    assert changes[0].source == "key"
    t_switch = changes[-1].t
    # after the switch, sections take mem then compute and hold both (single)
    held: dict[str, set] = {}
    both = 0
    for e in chk.events:
        if e.t <= t_switch:
            continue
        if e.kind == "lock_acquired":
            held.setdefault(e.worker, set()).add(e.lock)
            both += held[e.worker] == {"mem", "compute"}
        elif e.kind == "lock_released":
            held.get(e.worker, set()).discard(e.lock)
    assert both > 0
    assert any(e.kind == "phase_start" and e.phase.value == "b_g2_msm" and e.impl == "sim" for e in chk.events if e.t > t_switch)
    st = fold(chk.events)
    assert st.knobs["lock_mode"] == "single" and st.knobs["b_g2"] == "gpu"


@pytest.mark.timeout(30)
def test_workers_up_and_down_pause_resume_submit():
    eng, chk = engine(partitions=12, workers_per_gpu=1, time_scale=3.0)
    c = eng.controller
    eng.start()
    time.sleep(0.1)
    assert not eng.finished
    c.set_workers_per_gpu(3)
    time.sleep(0.1)
    c.pause()
    time.sleep(0.1)
    n_done = sum(1 for e in chk.events if e.kind == "partition_done")
    c.submit_sector(3)
    time.sleep(0.3)
    c.set_workers_per_gpu(1)
    c.resume()
    assert eng.wait(30)
    assert chk.final() == []
    st = fold(chk.events)
    assert st.partitions_ok == 15 and n_done < 12
    starts = [e for e in chk.events if e.kind == "worker_started"]
    stops = [e for e in chk.events if e.kind == "worker_stopped"]
    assert len(starts) >= 3 and any(e.reason == "scaled down" for e in stops)


@pytest.mark.timeout(30)
def test_pause_holds_new_work():
    eng, chk = engine(partitions=40, workers_per_gpu=2)
    eng.start()
    time.sleep(0.1)
    eng.controller.pause()
    time.sleep(0.25)  # in-flight partitions finish their current step
    n1 = sum(1 for e in chk.events if e.kind == "phase_start" and e.phase.value == "synthesis")
    time.sleep(0.3)
    n2 = sum(1 for e in chk.events if e.kind == "phase_start" and e.phase.value == "synthesis")
    assert n1 == n2  # nothing new started while paused
    eng.controller.resume()
    assert eng.wait(30)
    assert fold(chk.events).partitions_ok == 40


@pytest.mark.timeout(30)
def test_unbounded_run_keeps_going_until_stopped():
    eng, chk = engine(sectors=None, partitions=2)
    eng.start()
    time.sleep(0.6)
    assert not eng.finished
    assert eng.stop(timeout=10)
    st = fold(chk.events)
    assert st.partitions_ok > 4 and st.ended and chk.final(all_done=False) == []


@pytest.mark.timeout(30)
def test_fold_sees_prestaged_and_fallback_partitions_right():
    eng, chk = engine(partitions=12, workers_per_gpu=3, lock_mode="two-lock", mem_sync="device",
                      vram_budget=2 * __import__("prover.device.profiles", fromlist=["x"]).get_profile("tiny").partition_bytes())
    eng.start()
    assert eng.wait(30)
    st = fold(chk.events)
    fell = {e.part for e in chk.events if e.kind == "fallback"}
    for p in st.partitions.values():
        assert p.prestaged is (p.part not in fell), p.part
        assert p.fallback is (p.part in fell)


@pytest.mark.timeout(30)
def test_vram_budget_live_switch_applies_or_is_refused_with_the_numbers():
    eng, chk = engine(sectors=None)
    eng.start()
    try:
        while not eng.devices:
            time.sleep(0.01)
        assert eng.devices[0].budget == 1 << 30  # tiny's card (the default budget "card")
        assert eng.controller.apply("vram_budget=two-prestage")
        part = 96 << 20  # tiny: (32 + 64) B x 2^20
        assert eng.devices[0].budget == 2 * part
        assert eng.controller.apply("vram-budget=512MiB")
        assert eng.devices[0].budget == 512 << 20
        with pytest.raises(ValueError, match=r"below one partition's pre-stage of 96 MiB"):
            eng.controller.apply("vram_budget=64MiB")
        assert eng.devices[0].budget == 512 << 20  # refused: unchanged
        with pytest.raises(ValueError, match="vram_budget"):
            eng.controller.apply("vram_budget=lots")
    finally:
        assert eng.stop(timeout=10)
    changes = [(e.knob, e.new) for e in chk.events if e.kind == "mode_change"]
    assert changes == [("vram_budget", "192 MiB"), ("vram_budget", "512 MiB")]
    assert any(e.kind == "note" and "vram_budget change refused" in e.text for e in chk.events)
    assert chk.final(all_done=False) == []


def test_vram_budget_is_a_knob_everywhere():
    """One parse, one check (prover.knobs), for config, --switch, the controller and the
    fleet's controller alike; the convenience methods are the one KnobFacade's."""
    from prover.attach.client import RemoteController
    from prover.fleet.control import FleetController
    from prover.pipeline.control.controller import Controller, Knobs
    from prover.pipeline.control.knob_facade import KnobFacade

    assert parse_switch("vram_budget=20GiB") == ("vram_budget", 20 * 2**30)
    assert parse_switch("budget=two-prestage") == ("vram_budget", "two-prestage")
    with pytest.raises(ValueError, match="vram_budget: 'lots' is not a size"):
        parse_switch("vram_budget=lots")
    with pytest.raises(Exception, match="vram_budget"):
        load_config(None, vram_budget="lots")
    sent = []

    class Fleet:
        knob_lock = threading.RLock()

        def send_control(self, knob, value, source, target):
            sent.append((knob, value, source, target))

    fc = FleetController(Fleet(), Knobs.from_config(load_config(None)))
    assert fc.apply("vram_budget=20GiB") and fc.apply("h1:budget=card")
    assert sent == [("vram_budget", 20 * 2**30, "switch", None), ("vram_budget", "card", "switch", "h1")]
    for face in (Controller, FleetController, RemoteController):
        for name in ("set_lock_mode", "set_mem_sync", "set_workers_per_gpu", "set_prestage", "set_b_g2",
                     "set_vram_budget", "pause", "resume"):
            assert getattr(face, name) is getattr(KnobFacade, name), (face, name)


@pytest.mark.timeout(30)
def test_vram_budget_switch_on_the_engine_and_its_refusal():
    eng, chk = engine(partitions=4)
    c = eng.controller
    eng.start()
    assert c.apply("vram_budget=two-prestage", source="switch")
    with pytest.raises(ValueError, match="below one partition"):
        c.set_vram_budget("1MiB")
    assert eng.wait(30)
    assert chk.final() == []
    changes = [e for e in chk.events if e.kind == "mode_change" and e.knob == "vram_budget"]
    assert len(changes) == 1 and changes[0].source == "switch"
    assert any(e.kind == "note" and "vram_budget change refused" in e.text for e in chk.events)
    assert c.snapshot().vram_budget == "two-prestage"
