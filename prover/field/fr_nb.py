"""BLS12-381 Fr in compiled scalar code (numba, nogil): the per-element counterpart of
``prover.field.fr``'s vectorised numpy arithmetic, for the host kernels of a partition.

Values are eight little-endian 32-bit limbs held in ``uint64`` slots (a 32x32-bit product
fits a uint64 exactly and sums of a few dozen stay exact, the same reasoning as fr.py), so
the Montgomery product is the same separated-operand-scanning product and REDC as fr.py's,
one element at a time, with no 128-bit type needed. Every helper writes into caller-given
scratch (allocation inside a hot loop costs more than the arithmetic in numba).

Every integer literal is a typed ``np.uint64`` global: numba types ``uint64 op int64`` as
float64, which would silently lose bits.
"""
from __future__ import annotations

import numpy as np
from prover.field.jit import njit  # numba.njit, cached where numba can cache

from prover.field import mont
from prover.field.params import R_MOD, limbs64

NL = 8  # limbs
M32 = np.uint64(0xFFFFFFFF)
S32 = np.uint64(32)
ZERO = np.uint64(0)
ONE = np.uint64(1)
B32 = np.uint64(1 << 32)
N0 = np.uint64(mont.N0)
P32 = mont.P32.copy()  # r in 32-bit limbs
R2_32 = mont._int_to_limbs32(mont.R2)  # R^2 mod r: mont_mul(x, R2) = x * R
P64 = limbs64(R_MOD, 4)

_jit = njit(nogil=True)


@_jit
def cond_sub_p(x: np.ndarray) -> None:
    """Normalised limbs x < 2r -> x mod r, in place."""
    ge = True
    for j in range(NL - 1, -1, -1):
        if x[j] != P32[j]:
            ge = x[j] > P32[j]
            break
    if ge:
        borrow = ZERO
        for j in range(NL):
            d = x[j] + B32 - P32[j] - borrow  # never below zero: limbs < 2^32
            x[j] = d & M32
            borrow = ONE - (d >> S32)


@_jit
def redc(t: np.ndarray, out: np.ndarray) -> None:
    """Montgomery reduction of an unnormalised 17-limb accumulator t (value < r * 2^256, limbs
    < ~2^60): out = t * 2^-256 mod r, canonical. t is clobbered."""
    for i in range(NL):
        m = (t[i] * N0) & M32
        for j in range(NL):
            q = m * P32[j]
            t[i + j] += q & M32
            t[i + j + 1] += q >> S32
        t[i + 1] += t[i] >> S32
    carry = ZERO
    for j in range(NL):
        v = t[NL + j] + carry
        out[j] = v & M32
        carry = v >> S32
    # the value is < 2r < 2^256, so nothing is left in carry
    cond_sub_p(out)


@_jit
def mont_mul(a: np.ndarray, b: np.ndarray, out: np.ndarray, t: np.ndarray) -> None:
    """out = a * b * 2^-256 mod r (a, b canonical limbs; t: 17-limb scratch). out may alias a or b."""
    for k in range(2 * NL + 1):
        t[k] = ZERO
    for i in range(NL):
        ai = a[i]
        for j in range(NL):
            p = ai * b[j]
            t[i + j] += p & M32
            t[i + j + 1] += p >> S32
    redc(t, out)


@_jit
def add_mod(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """out = a + b mod r (canonical limbs; out may alias a or b)."""
    carry = ZERO
    for j in range(NL):
        v = a[j] + b[j] + carry
        out[j] = v & M32
        carry = v >> S32
    cond_sub_p(out)  # a + b < 2r < 2^256: no carry out


@_jit
def load64(z: np.ndarray, row: int, out: np.ndarray) -> None:
    """Row ``row`` of an (n, 4) FrArray -> 32-bit limbs."""
    for j in range(4):
        w = z[row, j]
        out[2 * j] = w & M32
        out[2 * j + 1] = w >> S32


@_jit
def store64(x: np.ndarray, z: np.ndarray, row: int) -> None:
    """Normalised 32-bit limbs -> row ``row`` of an (n, 4) FrArray."""
    for j in range(4):
        z[row, j] = x[2 * j] | (x[2 * j + 1] << S32)


@_jit
def sub_small64(s: np.uint64, z: np.ndarray, row: int) -> None:
    """Row ``row`` of an FrArray = r - s for 0 < s < 2^63 (the canonical value of -s)."""
    borrow = ONE if P64[0] < s else ZERO
    z[row, 0] = P64[0] - s
    for j in range(1, 4):
        z[row, j] = P64[j] - borrow
        borrow = ONE if P64[j] < borrow else ZERO


@_jit
def reduce_wide(acc: np.ndarray, t: np.ndarray, out: np.ndarray) -> None:
    """out = (value of the unnormalised 10-limb acc) mod r for a value < r * 2^256: one REDC
    gives v * 2^-256, a Montgomery product with R^2 gives v back, reduced."""
    for k in range(10):
        t[k] = acc[k]
    for k in range(10, 2 * NL + 1):
        t[k] = ZERO
    redc(t, out)
    mont_mul(out, R2_32, out, t)
