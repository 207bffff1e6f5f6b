"""Resident bytes in the GPU's room (pipeline/gpu/room.py, rule 3): `hold(owner, n)` is a budget cut
for the sections (at the boundary, at once on an idle GPU, refused with the numbers where a
partition would no longer fit beside it), `let_go(owner)` a raise; the sections run under the
budget less what is held (slots, the claim check), and an OOM never blames a resident owner as a
leak. The random schedules take holds and let them go mid-run, on the engine, against every
invariant: one compute holder per GPU, one lock order, live bytes never above the budget, no OOM."""
from __future__ import annotations

import random
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the helpers beside this file
from test_invariants import TINY  # noqa: E402
from prover import disciplines
from prover.config import load_config
from prover.device.base import OomError, Stopped
from prover.device.budget import BudgetError, Sizing
from prover.device.profiles import get_profile
from prover.device.sim import SimDevice
from prover.pipeline.engine import Engine
from prover.pipeline.gpu.room import Room
from prover.pipeline.nullphases import NullPhases
from tests.helpers.invariants import InvariantChecker

KEY = (("lock_mode", "reserved"),)


def _room(parts: int, spec: int | str | None = None) -> tuple[Room, list, threading.Event]:
    said: list = []
    stop = threading.Event()
    tiny = get_profile("tiny")
    room = Room(Sizing(tiny, tiny.modelled_log2), spec if spec is not None else parts * TINY, stop,
                lambda ledger: SimDevice(0, tiny, ledger, lambda cls, **kw: said.append(cls(t=0.0, **kw)), stop))
    return room, said, stop


def test_a_hold_on_an_idle_gpu_is_earmarked_at_once_and_the_sections_run_beside_it():
    room, _, _ = _room(3)
    dev = room.device
    assert room.slot_capacity() == 3
    room.hold("r1cs:2^20", TINY // 2)
    assert room.resident() == {"r1cs:2^20": TINY // 2}
    assert dev.ledger.book.earmarked == {"r1cs:2^20": TINY // 2}
    assert room.slot_capacity() == 2  # (3 - 0.5) partitions' room beside it
    s = dev.stream("r1cs")
    buf = dev.alloc("r1cs:2^20", None, "A.cols", TINY // 2, s)  # out of its earmark
    assert dev.ledger.book.earmarked == {} and dev.pool.used == TINY // 2
    with pytest.raises(BudgetError, match="resident"):  # a cut that would leave no partition room beside it
        room.set_budget(TINY)
    assert dev.budget == 3 * TINY
    dev.free(buf, s)
    room.let_go("r1cs:2^20")
    assert room.resident() == {} and room.slot_capacity() == 3 and dev.pool.used == 0


def test_a_hold_that_leaves_no_partition_room_is_refused_with_the_numbers():
    room, _, _ = _room(2)
    room.hold("r1cs:2^20", TINY // 2)
    with pytest.raises(BudgetError) as refused:
        room.hold("r1cs:2^18", TINY)
    msg = str(refused.value)
    assert "\n" not in msg and "beside" in msg and "resident" in msg
    assert room.resident() == {"r1cs:2^20": TINY // 2}  # nothing changed


def test_a_hold_waits_for_the_sections_admitted_under_the_old_figure():
    """A section on the GPU when the hold comes keeps its room; a section that starts after it opens
    a new epoch and waits at the gate; the hold is earmarked once the old one has left, then the new
    section passes, under the budget less the hold."""
    room, _, _ = _room(2)
    _, old = room.enter("g0w0", lambda: (None, KEY))
    room.gate(old)
    room.room(old, None)  # its partition's room, earmarked
    done = threading.Event()
    t = threading.Thread(target=lambda: (room.hold("r1cs:2^20", TINY // 2), done.set()), daemon=True)
    t.start()
    time.sleep(0.1)
    assert not done.is_set() and room.resident() == {}  # not while the old section is on the GPU
    _, new = room.enter("g0w1", lambda: (None, KEY))
    assert [m for _, m in room.epochs()] == [1, 1]  # a new epoch: the hold is a boundary
    passed = threading.Event()
    g = threading.Thread(target=lambda: (room.gate(new), passed.set()), daemon=True)
    g.start()
    time.sleep(0.1)
    assert not passed.is_set()
    room.leave(old)
    assert done.wait(5) and passed.wait(5)
    assert room.resident() == {"r1cs:2^20": TINY // 2} and room.slot_capacity() == 1
    room.leave(new)
    room.let_go("r1cs:2^20")
    assert room.epochs() == [] and room.device.ledger.book.earmarked == {}


def test_a_let_go_applies_at_once_and_joins_no_new_epoch():
    room, _, _ = _room(3)
    room.hold("r1cs:2^20", TINY)
    _, t1 = room.enter("g0w0", lambda: (None, KEY))
    room.gate(t1)
    assert room.slot_capacity() == 2
    room.let_go("r1cs:2^20")
    assert room.slot_capacity() == 3  # a raise: at once, for the section on the GPU too
    _, t2 = room.enter("g0w1", lambda: (None, KEY))
    assert [m for _, m in room.epochs()] == [2]  # same figure: the same epoch, no wait
    room.leave(t1)
    room.leave(t2)


def test_a_scenario_budget_is_resolved_beside_what_is_held():
    """two-prestage keeps meaning two partitions' room: a hold raises it by the bytes held."""
    room, _, _ = _room(0, spec="two-prestage")
    assert room.device.budget == 2 * TINY
    room.hold("r1cs:2^20", TINY // 4)
    assert room.device.budget == 2 * TINY + TINY // 4 and room.slot_capacity() == 2
    room.let_go("r1cs:2^20")
    assert room.device.budget == 2 * TINY


def test_a_resident_owner_is_not_a_leak_in_an_ooms_cause():
    room, _, _ = _room(2)
    dev = room.device
    room.hold("r1cs:2^20", TINY)
    s = dev.stream("r1cs")
    dev.alloc("r1cs:2^20", None, "A.cols", TINY, s)
    _, t = room.enter("g0w0", lambda: (None, KEY))
    room.gate(t)
    with pytest.raises(OomError) as refused:
        dev.alloc("g0w0", "s0p0", "d_a", 2 * TINY, dev.stream("g0w0"))
    assert refused.value.cause == "budget"  # beyond the budget less what is resident, not a leak
    room.leave(t)


def test_a_hold_waiting_when_the_engine_stops_raises_stopped():
    room, _, stop = _room(2)
    _, old = room.enter("g0w0", lambda: (None, KEY))
    room.gate(old)
    got: list = []

    def hold() -> None:
        try:
            room.hold("r1cs:2^20", TINY // 2)
        except Stopped:
            got.append("stopped")

    t = threading.Thread(target=hold, daemon=True)
    t.start()
    time.sleep(0.1)
    stop.set()
    t.join(5)
    assert got == ["stopped"] and room.resident() == {}


# --- random schedules on the engine ---------------------------------------------------------------
SWITCHES = [*disciplines.names(), "mem_sync=device", "mem_sync=stream", "prestage=off", "prestage=on",
            *(f"workers_per_gpu={n}" for n in (1, 2, 3)), *(f"vram_budget={k * TINY}" for k in (2, 3)), "pause",
            "resume"]


def _holder(eng: Engine, rnd: random.Random, stop: threading.Event, said: list) -> None:
    """Takes holds and lets them go on random GPUs, as the key ring does with a circuit's matrices:
    hold, allocate under the owner, keep a while, free, let go."""
    i = 0
    while not stop.is_set():
        g = rnd.choice(sorted(eng.seats))
        seat = eng.seats[g]
        owner, n = f"r1cs:test{i}", rnd.choice((TINY // 8, TINY // 3, TINY // 2))
        i += 1
        try:
            seat.room.hold(owner, n)
        except BudgetError:
            said.append("refused")
            time.sleep(rnd.uniform(0.001, 0.01))
            continue
        except Stopped:
            return
        s = seat.device.stream(owner)
        buf = seat.device.alloc(owner, None, "m", n, s)
        said.append("held")
        time.sleep(rnd.uniform(0.002, 0.03))
        seat.device.free(buf, s)
        seat.room.let_go(owner)


@pytest.mark.slow
@pytest.mark.timeout(240)
@pytest.mark.parametrize("seed", range(48))
def test_random_schedules_with_holds_taken_and_let_go_keep_every_invariant(seed):
    """Switches of every live knob every 1-8 ms (as test_switch_protocol.py) while a holder takes
    resident bytes and lets them go; then the holder stops and the run drains."""
    rnd = random.Random(41_000 + seed)
    cfg = load_config(None, backend="sim", profile="tiny", gpus=rnd.choice((1, 2)), workers_per_gpu=rnd.randint(1, 4),
                      vram_budget=rnd.choice((2, 3)) * TINY, lock_mode=rnd.choice(disciplines.names()),
                      mem_sync=rnd.choice(("device", "stream")), sectors=None, time_scale=1.0, seed=seed,
                      prestage_wait_s=0.05, vram_sample_s=0.02)
    chk = InvariantChecker()
    eng = Engine(cfg, [chk], phases=NullPhases())
    eng.start()
    while not eng.seats:
        time.sleep(0.001)
    stop, said = threading.Event(), []
    holder = threading.Thread(target=_holder, args=(eng, random.Random(seed), stop, said), daemon=True)
    holder.start()
    try:
        for _ in range(rnd.randint(60, 120)):
            time.sleep(rnd.randint(1, 8) / 1000.0)
            eng.controller.apply(rnd.choice(SWITCHES), source="test")
            if eng.controller.snapshot().paused and rnd.random() < 0.5:
                eng.controller.resume(source="test")
    finally:
        eng.controller.resume(source="test")
        stop.set()
        holder.join(20)
    assert not holder.is_alive(), f"seed {seed}: a hold never came"
    assert eng.stop(timeout=30, drain=True), f"seed {seed}: the run did not drain"
    where = f"seed {seed}: {cfg.lock_mode} {cfg.workers_per_gpu} workers, {said.count('held')} holds"
    assert chk.final(all_done=False) == [], (where, chk.final(all_done=False))
    assert all(v <= 1 for v in chk.compute_max.values()), where
    assert [(e.worker, e.cause) for e in chk.events if e.kind == "oom"] == [], where
    assert chk.done and all(d.ok for d in chk.done.values()), where
    assert said.count("held") > 0, where
    for ls in eng.locksets.values():
        assert ls.all_free()
