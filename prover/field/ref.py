"""Python-integer references (independent of numpy's and the CUDA code's arithmetic): the NTT
and NTT-H the backends' conformance tests and the kernels' tests check against, and test data.
Formats: params.py's docstring."""
from __future__ import annotations

import numpy as np

from prover.field.fr import from_ints as fr_from_ints  # noqa: F401  (re-exported for the tests)
from prover.field.fr import to_ints as _to_ints
from prover.field.params import FP_MONT_R, FR_MONT_R, P_MOD, R_MOD, TWO_ADICITY, root_of_unity  # noqa: F401
from prover.field.params import GENERATOR as FR_GENERATOR


def fr_to_ints(a: np.ndarray) -> list[int]:
    return _to_ints(np.ascontiguousarray(a, dtype=np.uint64).reshape(-1, 4))


def fr_random(n: int, rng: np.random.Generator) -> np.ndarray:
    """n uniform canonical Fr values (rejection sampling on 255 bits)."""
    out = np.empty((n, 4), dtype=np.uint64)
    filled = 0
    top = np.uint64(R_MOD >> 192)
    while filled < n:
        cand = rng.integers(0, 2**63, size=(n, 4), dtype=np.uint64, endpoint=False)
        cand[:, :3] = rng.integers(0, 2**64 - 1, size=(n, 3), dtype=np.uint64, endpoint=True)
        ok = cand[:, 3] < top  # strictly below r's top limb: always < r
        take = cand[ok][: n - filled]
        out[filled:filled + len(take)] = take
        filled += len(take)
    return out


def ntt_ref(vals: list[int], inverse: bool = False, coset: bool = False) -> list[int]:
    """Natural-order NTT over the 2^k subgroup (or the coset g*H, g = 7) with Python ints.

    forward: out[i] = sum_j a_j (g w^i)^j ; inverse: the exact inverse of forward.
    """
    n = len(vals)
    L = n.bit_length() - 1
    assert 1 << L == n
    w = root_of_unity(L)
    if inverse:
        w = pow(w, R_MOD - 2, R_MOD)
    a = list(vals)
    if coset and not inverse:
        g, s = FR_GENERATOR, 1
        for i in range(n):
            a[i] = a[i] * s % R_MOD
            s = s * g % R_MOD
    # bit-reverse then iterative Cooley-Tukey
    j = 0
    for i in range(1, n):
        bit = n >> 1
        while j & bit:
            j ^= bit
            bit >>= 1
        j |= bit
        if i < j:
            a[i], a[j] = a[j], a[i]
    m = 1
    while m < n:
        wm = pow(w, n // (2 * m), R_MOD)
        for k in range(0, n, 2 * m):
            t = 1
            for jj in range(m):
                u = a[k + jj]
                v = a[k + jj + m] * t % R_MOD
                a[k + jj] = (u + v) % R_MOD
                a[k + jj + m] = (u - v) % R_MOD
                t = t * wm % R_MOD
        m *= 2
    if inverse:
        ninv = pow(n, R_MOD - 2, R_MOD)
        a = [x * ninv % R_MOD for x in a]
        if coset:
            ginv, s = pow(FR_GENERATOR, R_MOD - 2, R_MOD), 1
            for i in range(n):
                a[i] = a[i] * s % R_MOD
                s = s * ginv % R_MOD
    return a


def ntt_h_ref(a: list[int], b: list[int], c: list[int]) -> list[int]:
    """h on the coset g*H: (coset_NTT(iNTT a) * coset_NTT(iNTT b) - coset_NTT(iNTT c)) / (g^n - 1),
    n evaluations in natural order (prover.field.ntt.ntt_h; its coefficients are
    ntt_ref(h, inverse=True, coset=True))."""
    n = len(a)
    ea, eb, ec = (ntt_ref(ntt_ref(x, inverse=True), coset=True) for x in (a, b, c))
    zinv = pow((pow(FR_GENERATOR, n, R_MOD) - 1) % R_MOD, R_MOD - 2, R_MOD)
    return [(x * y - z) * zinv % R_MOD for x, y, z in zip(ea, eb, ec)]
