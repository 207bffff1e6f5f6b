"""BLS12-381 scalar field Fr over numpy arrays: ``FrArray`` -- the interchange format other
code (and the CUDA kernels) depends on: ``numpy.uint64`` (n, 4), little-endian 64-bit limbs,
canonical in ``[0, r)``, not Montgomery. The working form ``Mont`` and its arithmetic live in
mont.py and are re-exported here, so ``fr`` is the one name callers import.
Python ints appear only at the boundary (``from_ints``/``to_ints``) and in constants.
"""
from __future__ import annotations

import numpy as np

from prover.field.blocks import CHUNK, for_row_blocks  # noqa: F401  (re-exported)
from prover.field.mont import (  # noqa: F401  (re-exported: fr is the public face of Fr)
    NLIMBS, FrArray, Mont, _int_to_limbs32, _join32, _split32, csr_sums, from_mont, mont_add, mont_batch_inverse,
    mont_const, mont_mul, mont_neg, mont_pow, mont_powers, mont_sub, segment_sums_from_mont, take_columns, take_rows,
    to_mont)
from prover.field.params import R_MOD, limbs64  # noqa: F401


# conversions ----------------------------------------------------------------------------
def from_ints(values: list[int] | tuple[int, ...]) -> FrArray:
    """Python ints -> FrArray (reduced mod r). Boundary/test use only."""
    out = np.empty((len(values), 4), dtype=np.uint64)
    for i, v in enumerate(values):
        v %= R_MOD
        out[i] = [(v >> (64 * j)) & 0xFFFFFFFFFFFFFFFF for j in range(4)]
    return out


def to_ints(a: FrArray) -> list[int]:
    """FrArray -> Python ints. Boundary/test use only."""
    return [int(r[0]) | int(r[1]) << 64 | int(r[2]) << 128 | int(r[3]) << 192 for r in a]


def from_u64(values: np.ndarray) -> FrArray:
    """Small non-negative integers (uint64) -> FrArray, vectorised."""
    out = np.zeros((len(values), 4), dtype=np.uint64)
    out[:, 0] = values
    return out


def from_i64(values: np.ndarray) -> FrArray:
    """Small signed integers -> FrArray (negatives become r - |v|), vectorised."""
    values = np.asarray(values, dtype=np.int64)
    out = from_u64(np.abs(values).astype(np.uint64))
    negative = np.flatnonzero(values < 0)
    if len(negative):
        out[negative] = neg(out[negative])
    return out


def zeros(n: int) -> FrArray:
    return np.zeros((n, 4), dtype=np.uint64)


def ones(n: int) -> FrArray:
    out = zeros(n)
    out[:, 0] = 1
    return out


# public FrArray operations ------------------------------------------------------------------
def add(a: FrArray, b: FrArray) -> FrArray:
    """(a + b) mod r; works on canonical values directly (no Montgomery needed)."""
    return _join32(mont_add(_split32(a), _split32(b)))


def sub(a: FrArray, b: FrArray) -> FrArray:
    return _join32(mont_sub(_split32(a), _split32(b)))


def neg(a: FrArray) -> FrArray:
    return _join32(mont_neg(_split32(a)))


def mul(a: FrArray, b: FrArray) -> FrArray:
    return from_mont(mont_mul(to_mont(a), to_mont(b)))


def mul_const(a: FrArray, k: int) -> FrArray:
    """a * k for one constant k, in one Montgomery pass: plain limbs times k*R, reduced once,
    are the plain product (no to_mont / from_mont passes)."""
    return _join32(mont_mul(_split32(a), mont_const(k)))


def from_mont_mul_const(x: Mont, k: int) -> FrArray:
    """from_mont(x) * k in one pass: x*R times plain k, reduced once, is the plain x*k."""
    return _join32(mont_mul(x, _int_to_limbs32(k % R_MOD).reshape(NLIMBS, 1)))


def pow_(a: FrArray, e: int) -> FrArray:
    """a^e elementwise for a common exponent e."""
    return from_mont(mont_pow(to_mont(a), e))


def batch_inverse(a: FrArray) -> FrArray:
    """Elementwise inverse; 0 maps to 0."""
    return from_mont(mont_batch_inverse(to_mont(a)))


def inverse(a: FrArray) -> FrArray:
    """Inverse of a single element (shape (1, 4)); raises on zero."""
    if not a.any():
        raise ZeroDivisionError("inverse of zero in Fr")
    return from_mont(mont_pow(to_mont(a), R_MOD - 2))


def random(n: int, seed: int) -> FrArray:
    """n uniform field elements from a seeded generator (rejection sampling on 255 bits)."""
    rng = np.random.default_rng(seed)
    out = np.empty((0, 4), dtype=np.uint64)
    while out.shape[0] < n:
        cand = rng.integers(0, 2**64, size=(2 * (n - out.shape[0]) + 8, 4), dtype=np.uint64, endpoint=False)
        cand[:, 3] &= np.uint64((1 << 63) - 1)  # 255-bit candidates; r > 2^254 so > 1/2 accepted
        out = np.concatenate([out, cand[less_than_r(cand)]])
    return np.ascontiguousarray(out[:n])


def less_than_r(a: FrArray) -> np.ndarray:
    """Boolean mask of rows whose 256-bit value is < r (compare from the top limb)."""
    r64 = [np.uint64((R_MOD >> (64 * j)) & 0xFFFFFFFFFFFFFFFF) for j in range(4)]
    lt = np.zeros(a.shape[0], dtype=bool)
    eq = np.ones(a.shape[0], dtype=bool)
    for j in (3, 2, 1, 0):
        lt |= eq & (a[:, j] < r64[j])
        eq &= a[:, j] == r64[j]
    return lt


def equal(a: FrArray, b: FrArray) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a, b))


def is_canonical(a: FrArray) -> bool:
    return a.ndim == 2 and a.shape[1] == 4 and a.dtype == np.uint64 and bool(less_than_r(a).all())
