"""What is device-specific about the CUDA kernels, on fresh random inputs (pytest -m gpu): both
NTT builds, window widths and MSM builds, streams and device-resident inputs, the field
products. Every primitive against the reference at 2^8..2^22 is tests/backends/test_conformance.py.

References: Python integers (prover.field.ref, the same conventions as prover.field.ntt and
prover.groth16.phases.ntt_h) and py_arkworks_bls12381 for curve results.
"""
from __future__ import annotations

import os
import random

import numpy as np
import pytest

from prover.kernels import msm, ntt
from tests.helpers.inputs import msm_inputs
from prover.field.ref import (P_MOD, R_MOD, fr_from_ints, fr_random, fr_to_ints, ntt_h_ref, ntt_ref,
                                  root_of_unity)

pytestmark = pytest.mark.gpu
SEED = int(os.environ.get("KERNEL_TEST_SEED", random.SystemRandom().randrange(1 << 30)))
MAX_LOG = int(os.environ.get("KERNEL_TEST_MAX_LOG", "20"))


def rng_for(tag: str) -> np.random.Generator:
    return np.random.default_rng([SEED, abs(hash(tag)) % (1 << 31)])


def sizes(*logs):
    return [L for L in logs if L <= MAX_LOG]


@pytest.fixture(params=["c", "ptx"])
def ntt_variant(request, monkeypatch):
    """Both builds of ntt.cu: portable C++ and PTX carry-chain Montgomery products."""
    from prover.settings import KernelSettings

    return KernelSettings(ntt_variant=request.param)  # passed to the kernels, never installed


# --------------------------------------------------------------------------- fields ----
def test_field_elementwise(ntt_variant):
    rng = random.Random(SEED)
    for prefix, m, words in (("fr", R_MOD, 4), ("fp", P_MOD, 6)):
        edge = [0, 1, 2, m - 1, m - 2, (1 << 64) - 1, m >> 1]
        a = edge + [rng.randrange(m) for _ in range(4089)]
        b = [rng.randrange(m) for _ in range(7)] + [rng.randrange(m) for _ in range(4089)]
        rng.shuffle(b)

        def arr(vals):
            mask = (1 << 64) - 1
            return np.array([[(v >> (64 * i)) & mask for i in range(words)] for v in vals], dtype=np.uint64)

        def ints(x):
            return [sum(int(r[i]) << (64 * i) for i in range(words)) for r in x]

        f = ntt.fr_elementwise_gpu if prefix == "fr" else ntt.fp_elementwise_gpu
        A, B = arr(a), arr(b)
        for op, ref in (("mul", lambda x, y: x * y % m), ("add", lambda x, y: (x + y) % m),
                        ("sub", lambda x, y: (x - y) % m), ("sqr", lambda x, y: x * x % m)):
            assert ints(f(A, B, op, ks=ntt_variant)) == [ref(x, y) for x, y in zip(a, b)], (prefix, op)
        k = 64
        assert ints(f(A[:k], B[:k], "inv", ks=ntt_variant)) == [pow(x, m - 2, m) for x in a[:k]], (prefix, "inv")


# ------------------------------------------------------------------------------ NTT ----
@pytest.mark.parametrize("L", [1, 2, 5, 8, 10, 11, 12, 13])
def test_ntt_family_exact(L, ntt_variant):
    a = fr_random(1 << L, rng_for(f"ntt{L}"))
    ai = fr_to_ints(a)
    for inverse in (False, True):
        for coset in (False, True):
            got = fr_to_ints(ntt.ntt_gpu(a, inverse=inverse, coset=coset, ks=ntt_variant))
            assert got == ntt_ref(ai, inverse=inverse, coset=coset), (L, inverse, coset)


@pytest.mark.parametrize("L", [1, 3, 8, 11, 12])
def test_ntt_h_exact(L, ntt_variant):
    rng = rng_for(f"ntth{L}")
    a, b, c = (fr_random(1 << L, rng) for _ in range(3))
    want = ntt_h_ref(fr_to_ints(a), fr_to_ints(b), fr_to_ints(c))
    got = ntt.ntt_h_gpu(a, b, c, ks=ntt_variant)
    assert got.dtype == np.uint64 and got.shape == (1 << L, 4)
    assert fr_to_ints(got) == want
    # inputs untouched
    assert fr_to_ints(a) == fr_to_ints(a.copy())


def _horner(coeffs, x):
    acc = 0
    for cf in reversed(coeffs):
        acc = (acc * x + cf) % R_MOD
    return acc


@pytest.mark.parametrize("L", sizes(14, 16, 18, 20))
def test_ntt_large_properties(L):
    """At sizes where the Python reference is too slow: round trips, spot evaluations."""
    n = 1 << L
    rng = rng_for(f"nttL{L}")
    a = fr_random(n, rng)
    ai = fr_to_ints(a)
    ev = ntt.ntt_gpu(a)
    assert (ntt.ntt_gpu(ev, inverse=True) == a).all()
    cev = ntt.ntt_gpu(a, coset=True)
    assert (ntt.ntt_gpu(cev, inverse=True, coset=True) == a).all()
    w = root_of_unity(L)
    for i in (0, 1, n - 1, int(rng.integers(n))):
        x = pow(w, i, R_MOD)
        assert fr_to_ints(ev[i:i + 1])[0] == _horner(ai, x), i
        assert fr_to_ints(cev[i:i + 1])[0] == _horner(ai, 7 * x % R_MOD), i


@pytest.mark.parametrize("L", sizes(14, 16, 20))
def test_ntt_h_satisfied_identity(L, ntt_variant):
    """c = a*b on the domain (a satisfied circuit): deg h <= n-2 and h(t) Z(t) = A(t)B(t) - C(t)."""
    n = 1 << L
    rng = rng_for(f"ntthL{L}")
    a, b = fr_random(n, rng), fr_random(n, rng)
    ai, bi = fr_to_ints(a), fr_to_ints(b)
    c = fr_from_ints([x * y % R_MOD for x, y in zip(ai, bi)])
    from prover.field import ntt as host_ntt

    h = fr_to_ints(host_ntt.h_coefficients(ntt.ntt_h_gpu(a, b, c, ks=ntt_variant)))  # coset -> coefficients
    assert h[-1] == 0
    t = random.Random(SEED + L).randrange(R_MOD)
    A, B, C = (_horner(fr_to_ints(ntt.ntt_gpu(x, inverse=True, ks=ntt_variant)), t) for x in (a, b, c))
    assert _horner(h, t) * (pow(t, n, R_MOD) - 1) % R_MOD == (A * B - C) % R_MOD


def test_ntt_h_on_a_stream_with_device_inputs():
    import cupy as cp

    L = 10
    rng = rng_for("stream")
    a, b, c = (fr_random(1 << L, rng) for _ in range(3))
    want = ntt_h_ref(fr_to_ints(a), fr_to_ints(b), fr_to_ints(c))
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        da, db, dc = (cp.asarray(x) for x in (a, b, c))
    h = ntt.ntt_h_gpu(da, db, dc, stream=s)
    s.synchronize()
    assert isinstance(h, cp.ndarray)
    assert fr_to_ints(cp.asnumpy(h)) == want


# ------------------------------------------------------------------------------ MSM ----
ark = pytest.importorskip("py_arkworks_bls12381")


_msm_inputs = msm_inputs


@pytest.mark.parametrize("L", sizes(0, 4, 8, 12, 16, 20))
def test_msm_g1_matches_arkworks(L):
    objs, xy, scal, s = _msm_inputs("g1", L, f"msm1{L}")
    want = ark.G1Point.multiexp_unchecked(objs, scal).to_xy_bytes_le()
    assert msm.msm_g1_gpu(xy, s) == want
    if L in (8, 12):
        dp = msm.DevicePoints("g1", xy)
        for c in (3, 7, 11, 18):  # other window widths, reusing an upload
            assert msm.msm_g1_gpu(dp, s, c=c) == want, c
        # the other G1 builds, and the device-side final step
        for v in ("call", "ptx_call"):
            assert msm.msm_bytes(dp, s, variant=v) == want, v
            assert msm._to_bytes(msm._msm_device(dp, s, variant=v), None) == want, v


@pytest.mark.parametrize("L", sizes(14, 16, 18))
def test_msm_g1_ptx_build(L):
    objs, xy, scal, s = _msm_inputs("g1", L, f"msmptx{L}")
    want = ark.G1Point.multiexp_unchecked(objs, scal).to_xy_bytes_le()
    assert msm.msm_bytes(msm.DevicePoints("g1", xy), s, variant="ptx_call") == want


def test_msm_g1_skewed_and_all_zero():
    objs, xy, scal, s = _msm_inputs("g1", 12, "skew")
    si = [7] * len(scal)  # every scalar in one bucket: multi-level piece reduction
    s2 = fr_from_ints(si)
    want = ark.G1Point.multiexp_unchecked(objs, [ark.Scalar(7)] * len(objs)).to_xy_bytes_le()
    assert msm.msm_g1_gpu(xy, s2) == want
    assert msm.msm_g1_gpu(xy, fr_from_ints([0] * len(scal))) == bytes(96)


@pytest.mark.parametrize("L", sizes(4, 8, 12, 14, 16, 18, 20))
def test_msm_g2_matches_arkworks(L):
    objs, xy, scal, s = _msm_inputs("g2", L, f"msm2{L}")
    want = ark.G2Point.multiexp_unchecked(objs, scal).to_xy_bytes_le()
    assert msm.msm_g2_gpu(xy, s) == want
    if L in (8, 12):
        dp = msm.DevicePoints("g2", xy)
        assert msm.msm_bytes(dp, s, variant="ptx_call") == want
        assert msm._to_bytes(msm._msm_device(dp, s), None) == want
