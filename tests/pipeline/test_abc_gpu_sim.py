"""a/b/c made on the GPU (abc gpu, issue 41) as the simulated device models it: the per-partition
plan (d_a, d_bc, z, z_cls) allocated whole, the circuit's matrices held resident in each GPU's
room from start-up to the end (and dropped with their key, placed again when it is loaded), the
r1cs sub-phase inside every pre-stage with its modelled time, the host products made there
(real proofs that verify), the host-RAM line without a/b/c; random switch schedules with abc gpu
keep every invariant with 0 OOM; a budget that cannot hold a partition beside the matrices is
a clear one-line error at start."""
from __future__ import annotations

import random
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the helpers beside this file
from test_invariants import TINY, run_schedule  # noqa: E402
from prover import disciplines
from prover.config import load_config
from prover.device.profiles import get_profile
from prover.fold.apply import fold
from prover.fold.summary import summarize
from prover.pipeline.engine import Engine
from prover.pipeline.gpu.resident import matrix_bytes
from prover.pipeline.nullphases import NullPhases
from tests.helpers.invariants import InvariantChecker


def _allocs(chk: InvariantChecker) -> tuple[dict, dict]:
    """(part -> {buffer: bytes}, resident owner -> {name: bytes}) from the Alloc events."""
    parts: dict = {}
    resident: dict = {}
    for e in chk.events:
        if e.kind == "alloc":
            (parts.setdefault(e.part, {}) if e.part else resident.setdefault(e.owner, {}))[e.name] = e.bytes
    return parts, resident


@pytest.mark.timeout(180)
@pytest.mark.parametrize("lock_mode", disciplines.names())
def test_sim_proves_with_the_gpu_plan_and_the_matrices_resident(lock_mode):
    cfg = load_config(None, backend="sim", profile="tiny", constraints_log2=8, sectors=1, partitions=4,
                      workers_per_gpu=2, lock_mode=lock_mode, mem_sync="stream", abc="gpu", time_scale=1.0)
    chk = InvariantChecker()
    eng = Engine(cfg, [chk])
    eng.start()
    assert eng.wait(150)
    assert chk.final() == [] and chk.kinds["oom"] == 0
    st = fold(chk.events)
    assert st.proofs_ok == 4 and st.proofs_failed == 0 and st.knobs["abc"] == "gpu"
    parts, resident = _allocs(chk)
    plan = eng.sizing.buffers
    assert list(plan) == ["d_a", "d_bc", "z", "z_cls"] and all(b == plan for b in parts.values())
    tiny = get_profile("tiny")
    assert plan["d_a"] == 32 << tiny.modelled_log2 and plan["z"] == 32 * eng.sizing.field_vars  # z's form
    assert plan["z_cls"] == 12 * (-(-eng.sizing.variables // 32))
    from prover.groth16.circuit import family_counts  # the modelled member's own counts, not 2^8's scaled

    assert (eng.sizing.variables, eng.sizing.field_vars) == family_counts(tiny.modelled_log2)
    assert resident == {"r1cs:2^8": matrix_bytes(eng.keys.entry(8).circuit, 2.0 ** (tiny.modelled_log2 - 8))}
    # the sub-phase inside every pre-stage (or a fallback's ntt_h), its modelled time at least
    subs = [e for e in chk.events if e.kind == "phase_end" and e.phase.value == "r1cs"]
    assert len(subs) == 4 and all(e.duration >= 0.9 * tiny.r1cs for e in subs)
    assert {e.impl for e in chk.events if e.kind == "phase_start" and e.phase.value == "r1cs"} == {"sim"}
    sm = summarize(st)
    assert "r1cs" in sm.phases and sm.phases["r1cs"].count == 4
    notes = [e.text for e in chk.events if e.kind == "note"]
    assert any("a/b/c made on the GPU" in t for t in notes)
    assert [e.detail for e in chk.events if e.kind == "startup" and e.step == "matrices" and e.state == "end"]
    # the partition's current phase is never the sub-phase: the parent's while it runs
    assert all(p.current != "r1cs" for p in st.partitions.values())
    # the pace counts it as the GPU's work beside the pre-stage: never the host phase that bounds
    from prover.fold.pace_verdict import BESIDE, HOST_PHASES, KERNELS

    assert "r1cs" in KERNELS and "r1cs" in BESIDE and "r1cs" not in HOST_PHASES
    pace = st.pace.run(0, st.t)
    assert pace is not None and pace.what != "r1cs" and pace.shares.get("r1cs", 0.0) > 0


@pytest.mark.timeout(60)
def test_the_modelled_upload_is_z_and_its_classes():
    """The pre-stage's modelled time scales by its bytes: z's upload form (12 B a 32 variables, 32 B
    a field value; before the circuit is made, the family's 0.9502 variables and 36/1024 field
    values a row) where a, b, c were 96 B a row; the fallback's upload likewise; r1cs at the profile's."""
    host = Engine(load_config(None, backend="sim", profile="rtx5070ti-16g", abc="host"), [], phases=NullPhases())
    gpu = Engine(load_config(None, backend="sim", profile="rtx5070ti-16g", abc="gpu"), [], phases=NullPhases())
    th, tg = host._times()[None], gpu._times()[None]
    assert th["prestage"] == pytest.approx(0.018) and th["r1cs"] == pytest.approx(0.033)
    share = (12 / 32 * 0.9502 + 32 * 36 / 1024) / 96  # 1.6% of a, b, c's bytes (z whole was 33%)
    assert tg["prestage"] == pytest.approx(0.018 * share, rel=0.01)
    assert tg["fallback_upload"] == pytest.approx(4.0 * share, rel=0.01)


@pytest.mark.timeout(240)
def test_an_evicted_keys_matrices_are_freed_and_placed_again_when_it_is_loaded(tmp_path):
    from test_key_ring import _engine, _until

    eng, keys, inv = _engine(tmp_path, phases=NullPhases(), constraints_log2=10, time_scale=1.0, sectors=2,
                             partitions=4, workers_per_gpu=2, paused=True, abc="gpu", vram_budget="two-prestage")
    eng.start()
    _until(keys.events, lambda e: e.kind == "worker_started")
    big, small, need = eng.keys.entry(10).nbytes, eng.keys.entry(8).nbytes, eng.host_ram.need
    circuits = eng.host_ram.circuits_held()
    eng.controller.set("host_ram_budget", 2 * need + big + small // 2 + circuits, source="test")  # not both keys
    eng.controller.resume("test")
    for at in (1, 2):
        _until(keys.events, lambda e: e.kind == "partition_done" and e.part.startswith("s0p"), 90)
        if at == 2:
            _until(keys.events, lambda e: e.kind == "key_evicted" and e.log2 == 10, 90)
        eng.controller.submit_sector(source="test", cls="winning")
    assert eng.wait(200)
    assert inv.final() == [] and inv.kinds["oom"] == 0
    placed = [e.owner for e in inv.events if e.kind == "alloc" and e.part is None and e.name == "A"]
    freed = [e.owner for e in inv.events if e.kind == "free" and e.part is None and e.name == "A"]
    assert placed.count("r1cs:2^10") >= 2 and "r1cs:2^8" in placed  # c2's placed again after its eviction
    assert sorted(placed) == sorted(freed)  # every placement freed (evicted, or at the end)
    st = fold(inv.events)
    assert st.partitions_ok == 10 and st.partitions_failed == 0


@pytest.mark.timeout(60)
def test_a_budget_that_cannot_hold_a_partition_beside_the_matrices_is_one_clear_line():
    from prover.device.budget import Sizing

    tiny = get_profile("tiny")
    # room for one partition's plan (NullPhases' circuit: as many variables as rows), not beside the matrices
    need = Sizing(tiny, tiny.modelled_log2, abc="gpu", variables=1 << tiny.modelled_log2).need
    cfg = load_config(None, backend="sim", profile="tiny", sectors=1, partitions=2, abc="gpu", vram_budget=need + (1 << 20))
    chk = InvariantChecker()
    eng = Engine(cfg, [chk], phases=NullPhases())
    eng.start()
    assert eng.wait(30)
    end = chk.events[-1]
    assert end.kind == "run_ended" and "BudgetError" in end.reason and "\n" not in end.reason
    failed = [e for e in chk.events if e.kind == "startup" and e.state == "end" and not e.ok]
    assert failed and failed[0].step == "devices" and "abc host" in failed[0].detail


SWITCHES = [*disciplines.names(), "mem_sync=device", "mem_sync=stream", "prestage=off", "prestage=on", "b_g2=gpu",
            "b_g2=cpu", *(f"workers_per_gpu={n}" for n in (1, 2, 3, 4)), *(f"vram_budget={k * TINY}" for k in (2, 3, 4)),
            "pause", "resume"]


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_random_switch_schedules_with_a_b_c_on_the_gpu_never_oom():
    """test_switch_protocol.py's schedules with abc gpu: the bigger plan and the resident matrices."""
    rnd = random.Random(41)
    t0 = time.monotonic()
    for i in range(100):
        kw = dict(seed=41_100 + i, gpus=rnd.choice((1, 1, 2)), workers=rnd.randint(1, 4), budget_parts=rnd.randint(2, 3),
                  lock_mode=rnd.choice(disciplines.names()), mem_sync=rnd.choice(("device", "stream")),
                  partitions=rnd.randint(3, 6))
        chk = run_schedule(error_rate=0.0, oom_rate=0.0, switch_every_ms=(1, 8), switches=SWITCHES, abc="gpu", **kw)
        where = f"schedule {i}: {kw}"
        assert chk.final() == [], (where, chk.final())
        assert all(v <= 1 for v in chk.compute_max.values()), where
        assert [(e.worker, e.cause) for e in chk.events if e.kind == "oom"] == [], where
        assert all(d.ok for d in chk.done.values()), where
    print(f"100 schedules with abc gpu, {time.monotonic() - t0:.1f}s")


def test_abc_is_set_at_start_and_refused_live_in_words():
    """abc decides a worker's host buffers and each GPU's resident memory: a switch, an arm, attach
    --send and the controller refuse it in one line naming the flag; config and --abc take it."""
    from prover.knob_set import parse_knob_set
    from prover.knobs import parse_switch, switch_help
    from prover.pipeline.control.controller import Controller, Knobs

    for parse in (parse_switch, parse_knob_set):
        with pytest.raises(ValueError, match=r"abc is set when a run starts \(--abc\)"):
            parse("abc=gpu")
    assert "abc=" not in switch_help()
    cfg = load_config(None, backend="sim", abc="gpu")
    ctl = Controller(Knobs.from_config(cfg), lambda *a, **k: None)
    with pytest.raises(ValueError, match="set when a run starts"):
        ctl.set("abc", "host")
    assert ctl.snapshot().abc == "gpu"
    with pytest.raises(Exception, match="abc"):
        load_config(None, backend="sim", abc="tpu")
