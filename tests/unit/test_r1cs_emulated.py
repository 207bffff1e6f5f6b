"""The R1CS products on the device (prover/kernels/r1cs.py, cuda/r1cs.cu) on the CPU emulator,
reading z through its upload form (prover/host/zpack.py: the table of ones, others and ranks, the
field values packed): bit for bit the host kernel's a, b, c for the circuit family's witness, plus
a matrix whose coefficients are full-size and whose z mixes field values, ones and zeros in every
pattern a word can hold (every branch of the kernel, ranks across words)."""
from __future__ import annotations

import numpy as np

from prover.field import fr
from prover.field.ref import fr_random
from prover.groth16 import phases as P
from prover.groth16.r1cs import SparseMatrix
from prover.host import zpack_nb
from tests.helpers.cudaemu.fixture import cuda_emulator  # noqa: F401  (the fixture)
from tests.helpers.inputs import rng_for


def _classes(z: np.ndarray) -> np.ndarray:
    return np.array([0 if not row.any() else 1 if (row[0] == 1 and not row[1:].any()) else 2 for row in z], np.uint8)


def test_products_equal_the_host_kernel(cuda_emulator) -> None:  # noqa: F811
    from prover.kernels.r1cs import matvec_gpu

    circuit = P.make_circuit(8, 0)
    syn = P.synthesize(circuit, 3)
    zp = zpack_nb.pack(syn.z, syn.density, circuit.field_vars)
    assert zp.fits and zp.count == circuit.field_vars  # the bound is met exactly by the family
    for m, want in ((circuit.a, syn.a), (circuit.b, syn.b), (circuit.c, syn.c)):
        got = matvec_gpu(m.host_plan, zp.vals, zp.tab)
        assert np.array_equal(np.asarray(got), want)


def test_full_size_coefficients_and_field_values(cuda_emulator) -> None:  # noqa: F811
    from prover.kernels.r1cs import matvec_gpu

    rng = rng_for("r1cs-emu")
    n, rows, nnz = 200, 64, 900  # 7 words, the last part-full
    r, c = rng.integers(0, rows, nnz), rng.integers(0, n, nnz)
    coeffs = fr_random(nnz, rng)
    coeffs[::3] = fr.zeros(1)[0]
    coeffs[::3, 0] = rng.integers(0, 5, len(coeffs[::3]))  # small ones too (0 included)
    m = SparseMatrix.from_triples(r, c, coeffs, rows, n)
    z = fr_random(n, rng)
    z[rng.random(n) < 0.3] = fr.zeros(1)[0]
    z[rng.random(n) < 0.3] = fr.ones(1)[0]
    z[32:64] = fr_random(32, rng)  # a word of field values only, bit 31 included
    z[64:96] = fr.ones(1)[0]  # a word of ones only
    z[96:128] = fr.zeros(1)[0]  # and of zeros
    cls = _classes(z)
    zp = zpack_nb.pack(z, cls, int((cls == 2).sum()))
    got = matvec_gpu(m.host_plan, zp.vals, zp.tab)
    assert np.array_equal(np.asarray(got), m.matvec(z))


def test_the_device_form_is_the_bytes_the_room_holds_for_it() -> None:
    """The GPU's room holds a matrix's bytes before it is uploaded (MatrixPlan.device_bytes):
    they are exactly its device form's, and it is the slim one (about 35 B a row for the three)."""
    from prover.kernels.r1cs import NAMES, device_arrays

    circuit = P.make_circuit(12, 0)
    total = 0
    for m in (circuit.a, circuit.b, circuit.c):
        arrays = device_arrays(m.host_plan)
        assert tuple(arrays) == NAMES
        assert sum(a.nbytes for a in arrays.values()) == m.host_plan.device_bytes()
        total += m.host_plan.device_bytes()
    assert 34 < total / circuit.domain_size < 37
