"""a/b/c made on the GPU (abc gpu, issue 41) end to end on the CPU emulator (tests/helpers/cudaemu):
the engine on backend cuda with a real CudaDevice over the emulated CuPy (its pools, streams and
views), the circuit's matrices resident in each GPU's room, every partition's pre-stage uploading
z's compact form (prover/host/zpack.py: the table of classes and ranks into z_cls, the field values
packed into z) and the real R1CS kernel (cuda/r1cs.cu) writing a, b, c into d_a and d_bc, which
NTT-H then reads in place. Every proof verifies; the host never builds a, b, c; the plan allocated
is Sizing.buffers' and the resident bytes the room held; 0 OOM and every invariant.

The first test keeps the reference's NTT and MSMs behind a stand-in backend (the R1CS kernel is the
real one) and checks the kernel's a, b, c against the host products bit for bit; the second runs
every kernel of the real CudaBackend on the emulator."""
from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from prover import backend as B
from tests.helpers.cudaemu.fixture import cuda_emulator  # noqa: F401  (the fixture)
from tests.helpers.invariants import InvariantChecker


def _standin_module(seen: list):
    """prover.kernels.cuda_backend as a stand-in: the reference's NTT and MSMs, the real R1CS
    kernel; its in-place NTT-H keeps a host copy of the views it was given (a, b, c as the kernel
    made them)."""
    from prover.kernels import r1cs

    class StandIn(B.ReferenceBackend):
        name, impl = "cuda", "cuda"
        capabilities = (B.ALL - {B.PINNED, B.SETUP_DEVICE, B.LANES}) | {B.NTT_H_STAGED, B.R1CS}

        def __init__(self, settings):
            self.settings = settings

        def r1cs_arrays(self, plan):
            return r1cs.device_arrays(plan)

        def r1cs_matrix(self, plan, arrays):
            return r1cs.DeviceMatrix(plan, arrays)

        def r1cs(self, mats, vals, tab, outs):
            for m, out in zip(mats, outs):
                r1cs.matvec_gpu(m, vals, tab, out=out)
            return True

        def ntt_h_staged(self, d_a, d_b, d_c, host=None):
            seen.append(tuple(B.on_host(v) for v in (d_a, d_b, d_c)))
            return self.ntt_h(d_a, d_b, d_c)

        def device_key(self):
            return 0

    mod = types.ModuleType("prover.kernels.cuda_backend")
    mod.CudaBackend = StandIn
    return mod


def _run(cfg_kw: dict, tmp_path) -> tuple[InvariantChecker, object]:
    from prover.config import load_config
    from prover.pipeline.engine import Engine

    cfg = load_config(None, backend="cuda", profile="native", constraints_log2=8, sectors=1, abc="gpu",
                      insecure_seeded_proofs=True, cache_dir=str(tmp_path), faults={"nvml_missing": True}, **cfg_kw)
    chk = InvariantChecker()
    eng = Engine(cfg, [chk])
    eng.start()
    assert eng.wait(240)
    return chk, eng


def _check_plan(chk: InvariantChecker, eng) -> None:
    """Per partition the plan's buffers exactly (z, z_cls, d_a, d_bc), the matrices as held, all freed."""
    from prover.fold.apply import fold
    from prover.pipeline.gpu.resident import matrix_bytes

    st = fold(chk.events)
    assert chk.final() == [], chk.final()
    assert chk.kinds["oom"] == 0 and st.proofs_failed == 0 and st.proofs_ok == len(chk.done)
    plan = eng.sizing.buffers
    circuit = eng.keys.entry(8).circuit
    assert set(plan) == {"d_a", "d_bc", "z", "z_cls"}  # z's form: its field values, its table a 32 variables
    assert plan["z"] == 32 * circuit.field_vars and plan["z_cls"] == 12 * (-(-circuit.num_vars // 32))
    by_part: dict = {}
    resident = {}
    for e in chk.events:
        if e.kind == "alloc" and e.part is not None:
            by_part.setdefault(e.part, {})[e.name] = e.bytes
        elif e.kind == "alloc":
            resident[e.name] = e.bytes
    assert by_part and all(bufs == plan for bufs in by_part.values()), (by_part, plan)
    assert resident == matrix_bytes(circuit)
    r1cs = [e for e in chk.events if e.kind == "phase_start" and e.phase.value == "r1cs"]
    assert len(r1cs) == len(by_part) and {e.impl for e in r1cs} == {"cuda"}
    assert st.knobs["abc"] == "gpu"


@pytest.mark.timeout(300)
def test_the_engine_proves_with_a_b_c_made_by_the_r1cs_kernel(cuda_emulator, monkeypatch, tmp_path):  # noqa: F811
    from prover.groth16 import phases as P
    from prover.pipeline.partition import PartitionFlow

    seen: list = []
    monkeypatch.setitem(sys.modules, "prover.kernels.cuda_backend", _standin_module(seen))
    built, hosts = [], []
    real_products, real_host = P.products, PartitionFlow._host_abc
    monkeypatch.setattr(P, "products", lambda c, *a, **k: built.append(c.constraints_log2) or real_products(c, *a, **k))

    def host_abc(self, s):  # what NTT-H would read on the host (made only if asked): made here, for the check
        h = real_host(self, s)
        assert callable(h)  # not made yet: the GPU made a, b, c
        hosts.append(real_products(s.part.key.circuit, s.syn))  # now: the worker's z is reused by its next partition
        return h

    monkeypatch.setattr(PartitionFlow, "_host_abc", host_abc)
    from prover.device.cuda import CudaDevice

    handed, real_zpack = [], CudaDevice.host_zpack

    def host_zpack(self, worker, num_vars, capacity):  # z's form: each worker's page-locked arrays
        got = real_zpack(self, worker, num_vars, capacity)
        handed.append((worker, got, all(self._pinned(a) for a in got)))
        return got

    monkeypatch.setattr(CudaDevice, "host_zpack", host_zpack)
    chk, eng = _run(dict(partitions=3, workers_per_gpu=2, lock_mode="two-lock", mem_sync="stream"), tmp_path)
    _check_plan(chk, eng)
    # nothing made a partition's a, b, c on the host (host_bytes' probe of the family, 2^14, is no partition)
    assert 8 not in built and len(seen) == len(hosts) == 3
    assert len(handed) == 3 and all(ok for _, _, ok in handed)  # page-locked: the upload a DMA, not waited for
    circuit = eng.keys.entry(8).circuit
    assert all(len(got[1]) == circuit.field_vars for _, got, _ in handed)
    by_worker = {}
    for w, got, _ in handed:  # made once a worker, reused partition after partition
        assert by_worker.setdefault(w, got[0]) is got[0]
    for views, want in zip(seen, hosts):  # the kernel's a, b, c are the host products' bytes
        assert all(np.array_equal(v, w) for v, w in zip(views, want))
    notes = [e.text for e in chk.events if e.kind == "note" and e.text.startswith("host RAM:")]
    assert notes and "a/b/c made on the GPU" in notes[0] and "abc " not in notes[0].split("(")[1]


@pytest.mark.timeout(300)
def test_a_witness_with_more_field_values_than_the_plan_holds_is_proved_on_the_host_in_words(
        cuda_emulator, monkeypatch, tmp_path):  # noqa: F811
    """Not this family (Circuit.field_vars bounds every witness of it, test_zpack.py): a plan with
    room for one field value fewer gives a form that does not fit; the r1cs sub-phase says so in a
    note and makes a, b, c on the host; every proof verifies, 0 OOM."""
    from prover.fold.apply import fold
    from prover.groth16.circuit import Circuit

    monkeypatch.setitem(sys.modules, "prover.kernels.cuda_backend", _standin_module([]))
    real = Circuit.field_vars
    monkeypatch.setattr(Circuit, "field_vars", property(lambda c: real.fget(c) - 1))
    chk, eng = _run(dict(partitions=2, workers_per_gpu=1, lock_mode="two-lock", mem_sync="stream"), tmp_path)
    st = fold(chk.events)
    assert chk.final() == [] and chk.kinds["oom"] == 0 and st.proofs_ok == 2 and st.proofs_failed == 0
    notes = [e.text for e in chk.events if e.kind == "note" and "field values in z" in e.text]
    assert len(notes) == 2 and all("a, b, c made on the host" in t and "\n" not in t for t in notes), notes
    assert {e.impl for e in chk.events if e.kind == "phase_start" and e.phase.value == "r1cs"} != {"cuda"}


@pytest.mark.timeout(600)
@pytest.mark.parametrize("lock_mode", ["single", "two-lock"])
def test_every_kernel_on_the_emulator_proves_through_the_r1cs_path(cuda_emulator, tmp_path, lock_mode):  # noqa: F811
    """The real CudaBackend (NTT-H in place over the kernel's a, b, c, the MSMs, B over G2), two
    partitions."""
    chk, eng = _run(dict(partitions=2, workers_per_gpu=2, lock_mode=lock_mode), tmp_path)
    _check_plan(chk, eng)
    impls = {e.impl for e in chk.events if e.kind == "phase_start" and e.phase.value in ("ntt_h", "msm")}
    assert impls == {"cuda"}


def test_a_failed_r1cs_kernel_falls_back_to_the_host_in_words():
    """The backend's fallback: a failing R1CS launch says so (a note) and answers False, so the
    pre-stage's sub-phase makes a, b, c on the host; NTT-H's host arrays are then made when asked."""
    from prover.groth16.compose import GpuCompute

    class Broken(B.ReferenceBackend):
        name, impl = "cuda", "cuda"
        capabilities = B.ReferenceBackend.capabilities | {B.R1CS}

        def r1cs(self, mats, vals, tab, outs):
            raise RuntimeError("CUDA_ERROR_ILLEGAL_ADDRESS (double)")

        def device_key(self):
            return 0

    notes: list = []
    fb = B.Fallback(Broken(), lambda cls, **kw: notes.append(kw.get("text", "")))
    gpu = GpuCompute.over(fb)
    assert gpu.r1cs_on_device and "r1cs" in gpu.in_use()
    assert gpu.r1cs(("A", "B", "C"), "z", "cls", ("a", "b", "c")) is False
    assert notes and "r1cs on the GPU failed, CPU reference used" in notes[0]
    assert gpu.r1cs(None, "z", "cls", ("a", "b", "c")) is False  # nothing resident: the host's, without a word
    made = []
    host = lambda: made.append(1) or (np.zeros((4, 4), np.uint64),) * 3  # noqa: E731
    assert B.host_arrays(host)[0].shape == (4, 4) and made == [1]
