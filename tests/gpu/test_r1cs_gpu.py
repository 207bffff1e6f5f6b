"""The R1CS products on the GPU (prover/kernels/r1cs.py) equal the host kernel's, bit for bit,
for the circuit family's witnesses, z read through its upload form (prover/host/zpack.py)
(pytest -m gpu)."""
from __future__ import annotations

import numpy as np
import pytest

from prover.groth16 import phases as P
from prover.host import zpack_nb

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("L", [10, 16, 20])
def test_products_equal_the_host_kernel(L):
    import cupy as cp

    from prover.kernels.r1cs import matvec_gpu

    circuit = P.make_circuit(L, 0)
    syn = P.synthesize(circuit, 5)
    stream = cp.cuda.Stream(non_blocking=True)
    zp = zpack_nb.pack(syn.z, syn.density, circuit.field_vars)
    assert zp.fits
    d_vals, d_tab = cp.asarray(zp.vals[: zp.count]), cp.asarray(zp.tab)
    for m, want in ((circuit.a, syn.a), (circuit.b, syn.b), (circuit.c, syn.c)):
        got = matvec_gpu(m.host_plan, d_vals, d_tab, stream)
        assert np.array_equal(cp.asnumpy(got, stream=stream), want)
