"""a/b/c made on the GPU (abc gpu, issue 41) on a real device (pytest -m gpu; written in a session
with no device: they run in the next one).

A native engine run proves through the new path: the circuit's matrices resident in the room
(owner r1cs:2^N, allocated through the device), each partition's pre-stage uploading z's compact
form (prover/host/zpack.py: the field values into z, the table of classes and ranks into z_cls)
from page-locked memory and the R1CS kernel writing a, b, c into d_a and d_bc, NTT-H reading them
in place. Every proof verified, 0 OOM, the host never made a partition's a, b, c,
the kernel's a, b, c equal to the host products bit for bit, and the VRAM plan what was
allocated: every partition's Alloc events are Sizing.buffers, the resident ones the bytes the
room held, and CuPy's pool handed out at least that (its blocks rounded up, no more than a few
KiB a buffer)."""
from __future__ import annotations

import threading

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

cuda_mod = pytest.importorskip("prover.device.cuda")
ok, why = cuda_mod.available()
if not ok:
    pytest.skip(f"no CUDA: {why}", allow_module_level=True)

POOL_ROUND = 1 << 20  # the async pool's granularity at most (CuPy rounds a block to 512 B; cudaMallocAsync to its own)


def _run(log2: int, parts: int, workers: int, lock_mode: str, tmp_path, monkeypatch, abc: str = "gpu"):
    import cupy as cp

    from prover.config import load_config
    from prover.device.cuda import CudaDevice
    from prover.groth16 import phases as P
    from prover.kernels import ntt
    from prover.pipeline.engine import Engine
    from prover.pipeline.partition import PartitionFlow
    from tests.helpers.invariants import InvariantChecker

    lock = threading.Lock()
    real: list[tuple[str, str, int, int]] = []  # (owner, name, bytes asked, bytes the pool gave)
    built: list[int] = []  # log2 of every host product made
    wants: list[tuple] = []  # the host products at each NTT-H (made for the check only)
    seen: list[tuple] = []  # what NTT-H read in place

    real_alloc = CudaDevice._device_alloc

    def alloc(self, buf, stream):
        real_alloc(self, buf, stream)
        with lock:
            real.append((buf.owner, buf.name, buf.nbytes, int(buf.handle.mem.size)))

    real_products = P.products
    real_host = PartitionFlow._host_abc
    real_ntt = ntt.ntt_h_device

    def host_abc(self, s):
        h = real_host(self, s)
        if s.part.id.endswith("p0"):  # one partition a sector: the check costs a host product
            with lock:
                wants.append(real_products(s.part.key.circuit, s.syn))
        return h

    def ntt_h_device(d_a, d_b, d_c, stream=None, ks=None):
        with lock:
            if len(seen) < len(wants):
                seen.append(tuple(cp.asnumpy(x) for x in (d_a, d_b, d_c)))
        return real_ntt(d_a, d_b, d_c, stream, ks)

    handed: list[bool] = []  # z's form: whether each worker's arrays were page-locked (host_zpack)
    real_zpack = CudaDevice.host_zpack

    def host_zpack(self, worker, num_vars, capacity):
        got = real_zpack(self, worker, num_vars, capacity)
        handed.append(got is not None and all(self._pinned(a) for a in got))
        return got

    monkeypatch.setattr(CudaDevice, "host_zpack", host_zpack)
    monkeypatch.setattr(CudaDevice, "_device_alloc", alloc)
    monkeypatch.setattr(P, "products", lambda c, *a, **k: built.append(c.constraints_log2) or real_products(c, *a, **k))
    monkeypatch.setattr(PartitionFlow, "_host_abc", host_abc)
    monkeypatch.setattr(ntt, "ntt_h_device", ntt_h_device)
    cfg = load_config(None, backend="cuda", profile="native", constraints_log2=log2, modelled_log2=log2, sectors=1,
                      partitions=parts, workers_per_gpu=workers, lock_mode=lock_mode, mem_sync="stream", abc=abc,
                      seed=7, cache_dir=str(tmp_path), verify_share=1.0)
    chk = InvariantChecker()
    eng = Engine(cfg, [chk])
    eng.start()
    assert eng.wait(540)
    eng.zpack_pinned = handed  # type: ignore[attr-defined]
    return chk, eng, real, built, wants, seen


@pytest.mark.timeout(600)
@pytest.mark.parametrize("lock_mode", ["two-lock", "single"])
def test_native_2_22_proves_through_the_r1cs_path(lock_mode, tmp_path, monkeypatch):
    from prover.fold.apply import fold
    from prover.pipeline.gpu.resident import matrix_bytes

    log2, parts = 22, 10
    chk, eng, real, built, wants, seen = _run(log2, parts, 4, lock_mode, tmp_path, monkeypatch)
    st = fold(chk.events)
    assert chk.final() == [], chk.final()
    assert st.proofs_ok == parts and st.proofs_failed == 0 and st.proofs_unchecked == 0
    assert chk.kinds["oom"] == 0 and chk.kinds["fallback"] == 0
    assert st.knobs["abc"] == "gpu"
    # the host made no partition's a, b, c (the check's own products are made unpatched)
    assert built.count(log2) == 0 and len(wants) == 1
    assert seen and all(all(np.array_equal(v, w) for v, w in zip(got, want)) for got, want in zip(seen, wants))
    r1cs = [e for e in chk.events if e.kind == "phase_start" and e.phase.value == "r1cs"]
    assert len(r1cs) == parts and {e.impl for e in r1cs} == {"cuda"}
    # the VRAM plan is what was allocated
    plan = eng.sizing.buffers
    circuit = eng.keys.entry(log2).circuit
    assert set(plan) == {"d_a", "d_bc", "z", "z_cls"}
    assert plan["z"] == 32 * circuit.field_vars and plan["z_cls"] == 12 * (-(-circuit.num_vars // 32))
    by_part: dict = {}
    for e in chk.events:
        if e.kind == "alloc" and e.part is not None:
            by_part.setdefault(e.part, {})[e.name] = e.bytes
    assert len(by_part) == parts and all(b == plan for b in by_part.values())
    resident = {name: n for owner, name, n, _ in real if owner == f"r1cs:2^{log2}"}
    assert resident == matrix_bytes(circuit)
    assert all(asked <= gave <= asked + POOL_ROUND for _, _, asked, gave in real), real[:8]
    assert all(d.pool.used == 0 for d in eng.devices.values())
    assert len(eng.zpack_pinned) == parts and all(eng.zpack_pinned)  # the upload a DMA from page-locked memory


@pytest.mark.timeout(600)
def test_the_host_path_still_proves_and_uploads_a_b_c(tmp_path, monkeypatch):
    """abc host on the same device: the plan d_a + d_bc, no matrices resident, no r1cs phase."""
    from prover.fold.apply import fold

    chk, eng, real, built, _, _ = _run(16, 4, 2, "two-lock", tmp_path, monkeypatch, abc="host")
    st = fold(chk.events)
    assert chk.final() == [] and st.proofs_ok == 4 and chk.kinds["oom"] == 0
    assert set(eng.sizing.buffers) == {"d_a", "d_bc"} and not any(o.startswith("r1cs:") for o, *_ in real)
    assert not [e for e in chk.events if e.kind == "phase_start" and e.phase.value == "r1cs"]
