"""Setup with the GPU's fixed-base kernel gives the same key bytes as the CPU setup."""
from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("log2", [12, 14])
def test_gpu_setup_equals_cpu_setup(log2: int, monkeypatch) -> None:
    from prover.groth16 import phases as P
    from prover.groth16 import setup as S

    circuit = P.make_circuit(log2, 21)
    assert S.gpu_fixed_base_g1() is not None
    pk_gpu, vk_gpu = S.setup(circuit, 21)
    monkeypatch.setenv("C2TUI_SETUP_GPU", "0")
    pk_cpu, vk_cpu = S.setup(circuit, 21)
    for name in ("a_query", "b_g1_query", "l_query", "h_query"):
        assert np.array_equal(getattr(pk_cpu, name), getattr(pk_gpu, name)), name
    syn = P.synthesize(circuit, 1)
    proof = P.prove(circuit, pk_gpu, 1, *P.randomisers(21, 1))
    assert P.verify(vk_gpu, syn.public_ints(), proof)
