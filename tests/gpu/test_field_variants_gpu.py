"""Every FIELD_MUL product variant of prover/kernels/cuda/field.cuh on the GPU against Python integers,
and the real kernels (ntt.cu, msm_g1.cu, msm_g2.cu) built with the even/odd products (pytest -m gpu).

benchmarks/bench_field.py does the same checks at 2^16 and times the products; this keeps a
smaller version in the GPU test suite.
"""
from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest


import bench_field as bf  # noqa: E402
from prover.kernels import msm, ntt  # noqa: E402
from prover.kernels import loader  # noqa: E402
from prover.field.ref import R_MOD, fr_random, fr_to_ints, ntt_ref  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("variant", bf.VARIANTS)
@pytest.mark.parametrize("n", [1, 1000, 1 << 14])
def test_products_match_python_ints(variant, n):
    import cupy as cp

    mod = cp.RawModule(code=bf.source(variant), options=bf.options(variant), backend="nvrtc")
    rng = random.Random(n * 31 + len(variant))
    for name, (m, nl) in bf.FIELDS.items():
        rinv = pow(1 << (32 * nl), -1, m)
        a, b = bf.inputs(m, nl, n, rng)
        da, db = cp.asarray(bf.to_limbs(a, nl)), cp.asarray(bf.to_limbs(b, nl))
        out = cp.empty_like(da)
        k = mod.get_function(f"{name}_elem")
        for op in (0, 1, 2):
            k(((len(a) + 127) // 128,), (128,), (da, db, out, np.int32(len(a)), np.int32(op)))
            assert bf.from_limbs(cp.asnumpy(out)) == bf.want(op, a, b, m, rinv), (variant, name, op)


@pytest.fixture(params=["eo", "eo_c", "eo_k", "eo_k2", "eo_sq2", "eo_k+r4", "eo_sq+r4"])
def eo_build(request, monkeypatch):
    """The real modules compiled with -DFIELD_MUL=<variant> (fresh loader cache, restored afterwards);
    the issue-38 products through the settings' field_mul, as the engine selects them (+r4: the
    NTT passes' radix-4 rounds, ntt_radix=4)."""
    from prover.settings import KernelSettings

    monkeypatch.setattr(loader, "_cache", {})
    monkeypatch.setattr(ntt, "_plans", {})
    if request.param in ("eo", "eo_c"):
        return KernelSettings(nvrtc_opts="-DFIELD_MUL=" + request.param)
    name, _, r4 = request.param.partition("+")
    return KernelSettings(field_mul=name, ntt_radix=4 if r4 else 2)


def test_real_kernels_with_eo(eo_build):
    ark = pytest.importorskip("py_arkworks_bls12381")
    rng = np.random.default_rng(11)
    a = fr_random(1 << 12, rng)
    ai = fr_to_ints(a)
    for inverse in (False, True):
        assert fr_to_ints(ntt.ntt_gpu(a, inverse=inverse, coset=True, ks=eo_build)) == ntt_ref(ai, inverse=inverse, coset=True)
    # NTT-H at 2^13: passes of 10 and 3 stages (radix-4 rounds and an odd radix-2 one)
    from prover import backend as B

    a13, b13, c13 = (fr_random(1 << 13, rng) for _ in range(3))
    assert np.array_equal(np.asarray(ntt.ntt_h_gpu(a13, b13, c13, ks=eo_build)), B.REFERENCE.ntt_h(a13, b13, c13))
    r = random.Random(12)
    for group, G in (("g1", ark.G1Point), ("g2", ark.G2Point)):
        n = 1 << (12 if group == "g1" else 8)
        uniq = [G() * ark.Scalar(r.randrange(1, R_MOD)) for _ in range(64)]
        objs = (uniq * (n // 64))[:n]
        xy = np.stack([np.frombuffer(p.to_xy_bytes_le(), dtype=np.uint8) for p in objs])
        s = fr_random(n, rng)
        scal = [ark.Scalar.from_le_bytes(v.to_bytes(32, "little")) for v in fr_to_ints(s)]
        want = G.multiexp_unchecked(objs, scal).to_xy_bytes_le()
        f = msm.msm_g1_gpu if group == "g1" else msm.msm_g2_gpu
        assert f(xy, s, ks=eo_build) == want, group
