"""Whole proofs made with the GPU phases verify and equal the CPU proof byte for byte."""
from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("log2", [8, 10, 12, 14])
def test_gpu_proof_equals_cpu_proof(log2: int, tmp_path) -> None:
    import cupy as cp

    from prover.backend import settle
    from prover.groth16 import compose
    from prover.groth16 import phases as P
    from prover.kernels.cuda_backend import CudaBackend
    from prover.settings import KernelSettings

    fns = compose.GpuCompute.over(CudaBackend(KernelSettings()))  # the bare backend: a failure fails here
    circuit = P.make_circuit(log2, 5)
    pk, vk = P.load_or_setup(circuit, 5, cache_dir=tmp_path)
    for instance in (1, 2):
        syn = P.synthesize(circuit, instance)
        prep = P.prep_msm(syn, pk)
        pinned = fns.pin_prep(prep)  # page-locked copies, uploaded asynchronously
        r, s = P.seeded_randomisers(5, instance)
        with cp.cuda.Stream(non_blocking=True):
            h_gpu = fns.ntt_h(syn.a, syn.b, syn.c)
            # the host step is deferred (finished after the GPU section in the engine)
            g1_gpu = settle(fns.msm_g1(pinned, h_gpu, pk))
            bg2_gpu = settle(fns.b_g2_msm(pinned, pk))
        h_cpu = P.ntt_h(syn.a, syn.b, syn.c)
        h_host = cp.asnumpy(h_gpu) if isinstance(h_gpu, cp.ndarray) else h_gpu  # the adapter keeps h on the device
        assert np.array_equal(h_host, h_cpu)
        assert g1_gpu == P.msm_g1(prep, h_cpu, pk)
        assert bg2_gpu == P.b_g2_msm(prep, pk)
        proof_gpu = P.assemble(syn, g1_gpu, bg2_gpu, pk, r, s)
        proof_cpu = P.prove(circuit, pk, instance, r, s)
        assert proof_gpu.to_bytes() == proof_cpu.to_bytes()
        assert P.verify(vk, syn.public_ints(), proof_gpu)
