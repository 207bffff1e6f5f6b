"""Proof bytes for fixed seeds equal the ones recorded before the backend refactor (issue 23).

CI checks 2^10 and 2^12 (a few seconds); C2TUI_PROOF_BYTES_ALL=1 checks every recorded size
(2^10..2^14, ~20 s here)."""
from __future__ import annotations

import os

import pytest

from tests.backends.proof_bytes import SIZES, proof_hex, recorded

_ALL = os.environ.get("C2TUI_PROOF_BYTES_ALL") == "1"


@pytest.mark.parametrize("k", SIZES)
def test_proof_bytes_unchanged(k: int) -> None:
    if k not in (10, 12) and not _ALL:
        pytest.skip("set C2TUI_PROOF_BYTES_ALL=1 for every recorded size")
    assert proof_hex(k) == recorded()[str(k)]


def _prove_on(backend):  # type: ignore[no-untyped-def]
    """The prove composed over `backend` (groth16/compose.py), as the engine's GPU section runs it."""
    from prover.backend import settle
    from prover.groth16 import compose
    from prover.groth16 import phases as P

    fns = compose.GpuCompute.over(backend, P)

    def prove(circuit, pk, instance, r, s):  # type: ignore[no-untyped-def]
        syn = P.synthesize(circuit, instance)
        prep = P.prep_msm(syn, pk)
        pinned = fns.pin_prep(prep)
        h = fns.ntt_h(syn.a, syn.b, syn.c)
        g1 = settle(fns.msm_g1(pinned, h, pk))
        b2 = settle(fns.b_g2_msm(pinned, pk))
        return P.assemble(syn, g1, b2, pk, r, s)
    return prove


@pytest.mark.gpu
@pytest.mark.parametrize("k", SIZES)
def test_proof_bytes_on_the_gpu(k: int) -> None:
    """The same bytes from the CUDA backend (bare, not behind the fallback: a failure fails)."""
    try:
        from prover.kernels.cuda_backend import CudaBackend
        from prover.settings import KernelSettings

        backend = CudaBackend(KernelSettings())
    except Exception as exc:
        pytest.skip(f"no CUDA backend here ({type(exc).__name__}: {exc})")
    assert proof_hex(k, _prove_on(backend)) == recorded()[str(k)]


def test_proof_bytes_over_a_device_backend_double() -> None:
    """The composition over a device backend (a double of the CPU primitives) gives the bytes too."""
    from prover import backend as B

    class Double(B.ReferenceBackend):
        name, impl = "double", "double"

        def device_key(self):  # type: ignore[no-untyped-def]
            return 0
    assert proof_hex(10, _prove_on(Double())) == recorded()["10"]
