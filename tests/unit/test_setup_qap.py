"""The key setup's QAP products (A^T, B^T, C^T times the Lagrange values) by the compiled
host kernel in row blocks equal the numpy reference's rows, whatever the block size."""
from __future__ import annotations

import numpy as np
import pytest

from prover.field import fr
from prover.groth16 import phases as P
from prover.groth16 import setup


@pytest.mark.parametrize("log2,chunk", [(10, 64), (12, 1000), (14, fr.CHUNK)])
def test_qap_products_equal_the_reference(log2: int, chunk: int, monkeypatch) -> None:
    circuit = P.make_circuit(log2, 3)
    lag = fr.random(circuit.domain_size, log2)
    lag[:3] = fr.from_ints([0, 1, 1])  # the kernel's 0 / 1 shortcuts are taken too
    monkeypatch.setattr(fr, "CHUNK", chunk)  # many blocks: each starts mid-way through the big coefficients
    for m in (circuit.a, circuit.b, circuit.c):
        want = m.transpose().matvec(lag)
        got = setup._transpose_times(m, lag)
        assert got.dtype == np.uint64 and np.array_equal(got, want)
