"""Host RAM as a resource (prover/pipeline/keys/host_ram.py): a worker is held back before its
buffers would exceed the budget, FIFO, stoppable; a budget cut sends the newest back at its
next boundary; the engine under a budget that holds 2 of 3 workers waits, never OOMs."""
from __future__ import annotations

import random
import threading
import time

import pytest

from tests.helpers.invariants import InvariantChecker
from tests.helpers.threads import run_threads
from prover import events as ev  # noqa: E402
from prover.config import load_config  # noqa: E402
from prover.knobs import KNOBS  # noqa: E402
from prover.pipeline.engine import Engine  # noqa: E402
from prover.pipeline.keys.host_ram import HostRam  # noqa: E402
from prover.pipeline.nullphases import NullPhases  # noqa: E402
from prover.fold.apply import fold  # noqa: E402


class Ledger:
    """An emit that folds HostRam events and checks held <= budget after each one."""

    def __init__(self, budget: list[int]) -> None:
        self.budget, self.events, self.lock = budget, [], threading.Lock()
        self.held: dict[tuple[str, str], int] = {}
        self.over: list[int] = []

    def __call__(self, cls, **kw) -> None:
        with self.lock:
            e = cls(t=0.0, **kw)
            self.events.append(e)
            if isinstance(e, ev.HostRam):
                self.held[(e.owner, e.name)] = e.bytes
                if sum(self.held.values()) > self.budget[0]:
                    self.over.append(sum(self.held.values()))


def test_size_knob_parses_sizes_and_off():
    k = KNOBS["host_ram_budget"]
    assert k.parse("64GiB") == 64 << 30 and k.parse("off") == 0 and k.parse("0") == 0
    with pytest.raises(ValueError):
        k.parse("lots")
    assert load_config(None, host_ram_budget="1TiB").host_ram_budget == 1 << 40


@pytest.mark.timeout(30)
@pytest.mark.parametrize("seed", range(3))
def test_random_schedule_never_exceeds_the_budget(seed):
    budget, stop = [10 + 3 * 30], threading.Event()
    led = Ledger(budget)
    h = HostRam(led, time.monotonic, stop, lambda: budget[0])
    h.configure({"witness": 10, "abc": 20})
    h.hold_fixed("key", "2^8", 10)
    rng = random.Random(seed)
    plans = [[rng.random() for _ in range(20)] for _ in range(6)]

    def worker(i: int) -> None:
        name = f"g0w{i}"
        for x in plans[i]:
            assert h.admit(name, lambda: False)
            time.sleep(x * 0.004)
            if x < 0.3:
                h.release(name)  # stopped (scaled down) and started again
        h.release(name)

    assert run_threads(worker, 6, 20) == [], "a worker never got in"
    assert led.over == []
    assert h.held() == 10  # only the key left
    assert any(isinstance(e, ev.HostRamWait) for e in led.events)


def test_budget_cut_sends_the_newest_back_and_stop_ends_a_wait():
    budget, stop = [100], threading.Event()
    led = Ledger([1 << 60])
    h = HostRam(led, time.monotonic, stop, lambda: budget[0])
    h.configure({"abc": 30})
    for w in ("a", "b", "c"):
        assert h.admit(w, lambda: False)
    budget[0] = 65  # room for two
    assert h.admit("a", lambda: False) and h.admit("b", lambda: False)  # not the newest: carry on
    done: list[bool] = []
    t = threading.Thread(target=lambda: done.append(h.admit("c", lambda: False)))
    t.start()
    time.sleep(0.2)
    assert h.held() == 60 and t.is_alive()  # c gave its bytes back and waits
    stop.set()
    t.join(5)
    assert done == [False]
    end = [e for e in led.events if isinstance(e, ev.HostRamAdmit)]
    assert [(e.worker, e.admitted) for e in end] == [("c", False)]


def test_one_worker_goes_through_a_budget_too_small_for_any():
    led = Ledger([1 << 60])
    h = HostRam(led, time.monotonic, threading.Event(), lambda: 5)
    h.configure({"abc": 30})
    assert h.admit("a", lambda: False)
    assert any(isinstance(e, ev.Note) and "not even one worker" in e.text for e in led.events)


@pytest.mark.timeout(60)
def test_engine_under_a_budget_for_two_of_three_workers_waits_and_never_ooms():
    chk = InvariantChecker()
    cfg = load_config(None, backend="sim", profile="tiny", time_scale=1.0, sectors=1, partitions=12,
                      workers_per_gpu=3, paused=True)
    eng = Engine(cfg, [chk], phases=NullPhases())
    eng.start()
    deadline = time.monotonic() + 20
    while not any(e.kind == "host_ram" and e.name == "pk" for e in chk.events) and time.monotonic() < deadline:
        time.sleep(0.01)
    # the key and the circuit (held for the whole run) beside the workers
    key = next(e.bytes for e in chk.events if e.kind == "host_ram" and e.name == "pk") + eng.host_ram.circuits_held()
    need = eng.host_ram.need
    eng.controller.set("host_ram_budget", key + 2 * need + need // 2, source="test")
    eng.controller.resume("test")
    while not any(e.kind == "partition_done" for e in chk.events) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert any(e.kind == "host_ram_wait" for e in chk.events)
    eng.controller.set("host_ram_budget", key + 3 * need, source="test")  # live: the third gets in
    assert eng.wait(40)
    assert chk.final() == []
    s = fold(chk.events)
    assert s.ooms == 0 and s.partitions_ok == 12
    held, peak_workers = set(), 0
    for e in chk.events:
        if e.kind == "host_ram" and not e.owner.startswith("key"):
            (held.add if e.bytes else held.discard)(e.owner)
            peak_workers = max(peak_workers, len(held))
        if e.kind == "mode_change" and e.knob == "host_ram_budget" and e.new == str(key + 3 * need):
            assert peak_workers == 2  # until the budget was raised, two at a time
    assert any(e.kind == "host_ram_admit" and e.admitted for e in chk.events)
    assert s.host_ram.waits >= 1 and s.host_ram.wait_total > 0


def test_circuits_count_and_the_guard_holds_an_unlimited_run_back():
    """Circuits are held for the run and counted; with the budget off a native run's guard (the
    host's RAM) is the ceiling, and the start-up line says how many workers it holds."""
    from prover.pipeline.keys.host_ram import say_fit

    led = Ledger([1 << 60])
    h = HostRam(led, time.monotonic, threading.Event(), lambda: 0)  # host_ram_budget off
    h.configure({"witness": 10, "abc": 20})
    h.hold_circuit("key 2^27", 15)
    h.hold_fixed("key 2^27", "pk", 5)
    assert h.held() == 20 and h.workers_that_fit() is None
    h.set_guard(100)  # (100 - 15 - 5) // 30: two workers
    assert h.budget() == 100 and h.workers_that_fit() == 2
    assert say_fit(h, led, 3, device_key_bytes=7 << 30) == 2
    line = [e for e in led.events if isinstance(e, ev.Note)][-1]
    assert line.level == "warn" and "holds 2 of 3 workers" in line.text and "7.0 GiB resident on the GPU" in line.text
    assert h.admit("a", lambda: False) and h.admit("b", lambda: False)
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    assert not h.admit("c", stop.is_set)  # the third waits (HostRamWait), never over the guard
    assert any(isinstance(e, ev.HostRamWait) and e.budget == 100 for e in led.events)
    assert any(isinstance(e, ev.HostRam) and e.name == "circuit" and e.bytes == 15 for e in led.events)
