"""The engine's NTT-H on a real GPU reads the pre-staged buffers (pytest -m gpu).

A CudaDevice engine proves a few partitions natively (profile native, modelled size = proved
size, every discipline). Every NTT-H call must get device arrays that lie exactly where the
upload put a, b, c (a at d_a + 0, b at d_bc + 0, c at d_bc + nbytes/2), hold the same values
as the synthesis, give the CPU reference's h, and no call may take the host-copy path
(ntt_h_gpu); every proof verifies and no GPU call fell back to the CPU. Both where the host
made a, b, c and uploaded them (abc host) and where the R1CS kernel made them there (abc gpu).
"""
from __future__ import annotations

import sys
import threading
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.gpu

cuda_mod = pytest.importorskip("prover.device.cuda")
ok, why = cuda_mod.available()
if not ok:
    pytest.skip(f"no CUDA: {why}", allow_module_level=True)



@pytest.mark.timeout(300)
@pytest.mark.parametrize("abc", ["host", "gpu"])  # a, b, c uploaded, or made there by the R1CS kernel (issue 41)
@pytest.mark.parametrize("lock_mode", ["single", "narrow", "two-lock", "reserved"])
def test_engine_ntt_h_reads_prestaged_buffers(lock_mode, abc, monkeypatch, tmp_path):
    import cupy as cp

    from tests.helpers.invariants import InvariantChecker
    from prover.config import load_config
    from prover.device.cuda import CudaDevice
    from prover.groth16 import phases as P
    from prover.kernels import ntt
    from prover.pipeline.engine import Engine
    from prover.fold.apply import fold

    lock = threading.Lock()
    buffers: dict[str, list[tuple[int, int]]] = {"d_a": [], "d_bc": []}  # (ptr, nbytes) of every allocation
    calls: list[dict] = []
    copies: list[int] = []

    real_alloc = CudaDevice._device_alloc

    def alloc(self, buf, stream):
        real_alloc(self, buf, stream)
        with lock:
            buffers.setdefault(buf.name, []).append((int(buf.handle.ptr), buf.nbytes))

    real_ntt_h_device = ntt.ntt_h_device

    def ntt_h_device(d_a, d_b, d_c, stream=None, ks=None):  # the backend passes its settings
        ins = [cp.asnumpy(x) for x in (d_a, d_b, d_c)]  # before the in-place transform
        ptrs = [int(x.data.ptr) for x in (d_a, d_b, d_c)]
        h = real_ntt_h_device(d_a, d_b, d_c, stream, ks)
        with lock:
            calls.append({"ptrs": ptrs, "ins": ins, "h": cp.asnumpy(h)})
        return h

    real_ntt_h_gpu = ntt.ntt_h_gpu

    def ntt_h_gpu(*a, **k):
        with lock:
            copies.append(1)
        return real_ntt_h_gpu(*a, **k)

    monkeypatch.setattr(CudaDevice, "_device_alloc", alloc)
    monkeypatch.setattr(ntt, "ntt_h_device", ntt_h_device)
    monkeypatch.setattr(ntt, "ntt_h_gpu", ntt_h_gpu)

    log2, parts = 12, 4
    cfg = load_config(None, backend="cuda", profile="native", constraints_log2=log2, modelled_log2=log2,
                      sectors=1, partitions=parts, workers_per_gpu=2, lock_mode=lock_mode, mem_sync="stream",
                      seed=3, cache_dir=str(tmp_path), abc=abc)
    chk = InvariantChecker()
    eng = Engine(cfg, [chk])
    eng.start()
    assert eng.wait(240)
    assert chk.final() == []
    st = fold(chk.events)
    assert st.proofs_ok == parts and st.proofs_failed == 0 and st.partitions_failed == 0
    assert st.knobs["b_g2"] == "gpu"  # b_g2 "auto" on cuda with the kernels
    warns = [e.text for e in chk.events if e.kind == "note" and e.level in ("warn", "error")]
    assert not [w for w in warns if "on the GPU failed" in w], warns

    assert copies == []  # no NTT-H uploaded a, b, c again
    assert len(calls) == parts
    d_a = {p: n for p, n in buffers["d_a"]}
    d_bc = {p: n for p, n in buffers["d_bc"]}
    circuit = P.make_circuit(log2, 3)
    syns = {}
    for call in calls:
        pa, pb, pc = call["ptrs"]
        assert pa in d_a and pb in d_bc and pc == pb + d_bc[pb] // 2
        # the inputs are some instance's synthesis a, b, c; h is the CPU reference's
        a, b, c = call["ins"]
        assert a.shape == (1 << log2, 4)
        match = None
        for inst in range(parts + 2):
            syn = syns.get(inst) or syns.setdefault(inst, P.synthesize(circuit, inst))
            if np.array_equal(syn.a, a):
                match = syn
                break
        assert match is not None, "NTT-H input a is no instance's synthesis"
        assert np.array_equal(match.b, b) and np.array_equal(match.c, c)
        assert np.array_equal(call["h"], P.ntt_h(match.a, match.b, match.c))
