"""An OOM right after a switch to `single` (the QA walk's "one OOM after a switch to single"),
driven step by step on one GPU whose budget holds one partition, as the sim run showed it
(`c2tui record --backend sim --lock-mode reserved --switch 5:single ...`, each switch one OOM):

  g0w9 (the test) holds compute and a partition's buffers: the old compute holder;
  g0w0 enters its GPU section under `reserved`: a slot, then it waits for room;
  the switch to single; g0w1 takes mem and queues for compute (first in line);
  g0w9 frees its buffers: g0w0 pre-stages them (no lock) and queues for compute behind g0w1;
  g0w9 lets compute go: g0w1 holds both locks and finds the budget taken by g0w0.

g0w1 cannot wait for that room under its locks (g0w0 frees it only after compute, which g0w1
holds), so its allocation fails and it lets go and retries: correct, and the Note says whose
memory it was. Nothing fails, no lock order breaks, live bytes stay under the budget."""
from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from prover.config import load_config
from prover.device.profiles import get_profile
from prover.device.sim import SimDevice
from prover.pipeline.controller import Controller, Knobs
from prover.pipeline.faults import Faults
from prover.pipeline.gpu_load import host_compute
from prover.pipeline.locks import LockSet
from prover.pipeline.nullphases import NullPhases
from prover.pipeline.partition import Partition, PartitionFlow, Prover


class Recorder:
    def __init__(self) -> None:
        self.events: list = []
        self._lock, self._t0 = threading.Lock(), time.monotonic()

    def __call__(self, cls, **kw) -> None:
        with self._lock:
            self.events.append(cls(t=time.monotonic() - self._t0, **kw))

    def until(self, what, timeout: float = 10.0) -> None:
        end = time.monotonic() + timeout
        while not any(what(e) for e in list(self.events)):
            assert time.monotonic() < end, "never happened"
            time.sleep(0.002)


def _flow(rec: Recorder, stop: threading.Event):
    cfg = load_config(None, backend="sim", profile="tiny", time_scale=0.1, lock_mode="reserved", mem_sync="stream")
    prof = get_profile("tiny")
    dev = SimDevice(0, prof, prof.partition_bytes(cfg.modelled), rec, stop, cfg.time_scale)  # one partition fits
    P = NullPhases()
    circuit = P.make_circuit(cfg.constraints_log2, cfg.seed)
    pv = Prover(P, circuit, *P.load_or_setup(circuit, cfg.seed), host_compute(P, "sim"))
    ctl = Controller(Knobs.from_config(cfg), rec)
    flow = PartitionFlow(cfg, prof.times(cfg.modelled), prof.buffer_bytes(cfg.modelled), rec, time.monotonic, stop,
                         ctl, Faults(cfg.faults, cfg.seed, time.monotonic, stop), {0: dev}, {0: LockSet(0, rec, stop)},
                         pv, ThreadPoolExecutor(4))
    return flow, ctl, dev


def _is(kind: str, **match):
    return lambda e: e.kind == kind and all(getattr(e, k) == v for k, v in match.items())


@pytest.mark.timeout(30)
def test_an_oom_after_a_switch_to_single_names_the_old_disciplines_pre_stage():
    rec, stop = Recorder(), threading.Event()
    flow, ctl, dev = _flow(rec, stop)
    locks, results = flow.locksets[0], {}
    old = locks.hold("compute", "g0w9", "s9p0")
    old.__enter__()
    bufs = [dev.alloc("g0w9", "s9p0", n, b, dev.stream("g0w9")) for n, b in flow.buffer_sizes.items()]

    def run(w: str, part: str) -> threading.Thread:
        p = Partition(part, 0, int(part[-1]), int(part[-1]), 0.0)
        t = threading.Thread(target=lambda: results.setdefault(w, flow.run(w, 0, p)))
        t.start()
        return t

    a = run("g0w0", "s0p0")
    rec.until(_is("phase_start", worker="g0w0", phase="prestage"))  # a slot, waiting for room
    ctl.set("lock_mode", "single", source="switch")
    b = run("g0w1", "s0p1")
    rec.until(_is("lock_requested", worker="g0w1", lock="compute"))  # mem held, first in line for compute
    for buf in bufs:
        dev.free(buf, dev.stream("g0w9"))
    rec.until(_is("lock_requested", worker="g0w0", lock="compute"))  # pre-staged with no lock, behind g0w1
    old.__exit__(None, None, None)
    a.join(20)
    b.join(20)
    stop.set()

    assert {w: r.outcome.value for w, r in results.items()} == {"g0w0": "done", "g0w1": "done"}
    assert [e.part for e in rec.events if e.kind == "partition_done" and e.ok] == ["s0p0", "s0p1"]
    assert [(e.worker, e.part) for e in rec.events if e.kind == "oom"] == [("g0w1", "s0p1")]
    [note] = [e.text for e in rec.events if e.kind == "note" and "retried" in e.text]
    assert note.startswith("s0p1 on gpu0: out of VRAM budget")
    assert ("96 MiB held by g0w0 s0p0 (a reserved section begun before the switch to single, holding no lock): "
            "freed only after compute, which this section holds, so it lets go; GPU section retried") in note
    assert dev.max_used <= dev.budget


def test_the_oom_note_names_the_switch_the_way_it_went():
    """single -> reserved: the single section (begun before the switch) found the room taken by a
    reserved one begun after it; the note said "a reserved section begun before the switch to
    single", the switch backwards. Each direction is named as it went."""
    from prover.pipeline.vram_holders import Holder, explain

    new = [Holder("g0w2", 12 << 30, "s4p4", "reserved", ())]
    after = explain("single", ("mem", "compute"), new, now="reserved")
    assert "12 GiB held by g0w2 s4p4 (a reserved section begun after the switch from single, holding no lock)" in after
    old = [Holder("g0w0", 12 << 30, "s2p4", "reserved", ())]
    before = explain("single", ("mem", "compute"), old, now="single")
    assert "(a reserved section begun before the switch to single, holding no lock)" in before
    same = explain("two-lock", ("compute",), [Holder("g0w1", 12 << 30, "s1p9", "two-lock", ("mem",))], now="two-lock")
    assert "(a two-lock section, holding mem)" in same
