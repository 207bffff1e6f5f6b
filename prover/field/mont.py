"""Fr's working form, vectorised over numpy: ``Mont`` -- ``numpy.uint64`` (8, ...), eight
little-endian 32-bit limbs of ``x * 2^256 mod r``; limb-major so every step of an operation is
one numpy call.

32-bit limbs in uint64 words: a 32x32-bit product fits exactly and sums of a few dozen
still fit, so the Montgomery product adds limb products *without* carries and resolves them
once at the end (~14 numpy calls per limb round, not ~80 for CIOS; docs/prover.md).
Large operations run in blocks of blocks.CHUNK elements on blocks' pool.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from prover.field import blocks as B
from prover.field.params import FR_LIMBS32 as NLIMBS
from prover.field.params import FR_MONT_R, R_MOD, limbs32, mont_n0

MASK32 = np.uint64(0xFFFFFFFF)
SHIFT32 = np.uint64(32)
R2 = FR_MONT_R * FR_MONT_R % R_MOD  # to_mont multiplies by R^2 (then REDC divides by R)
N0 = mont_n0(R_MOD)  # -r^-1 mod 2^32 for REDC

FrArray = np.ndarray  # (n, 4) uint64, canonical, little-endian 64-bit limbs
Mont = np.ndarray  # (8, ...) uint64, 32-bit limbs of x*R mod r


def _int_to_limbs32(x: int) -> np.ndarray:
    return limbs32(x, NLIMBS)


P32 = _int_to_limbs32(R_MOD)
_NEGP32 = _int_to_limbs32((1 << 256) - R_MOD)  # 2^256 - r
# r with borrows pre-applied: limb0 + 2^32, limbs 1..6 + 2^32 - 1, limb7 - 1 (same value)
P32_BORROWED = P32 + np.array([1 << 32] + [(1 << 32) - 1] * 6 + [0], dtype=np.uint64) - np.array([0] * 7 + [1], dtype=np.uint64)
_N0_U64 = np.uint64(N0)


def _col(limbs: np.ndarray, ndim: int) -> np.ndarray:
    """Reshape an (8,) constant so that it broadcasts against an (8, ...) array."""
    return limbs.reshape((NLIMBS,) + (1,) * (ndim - 1))


def _split32(a: FrArray) -> np.ndarray:
    """(n, 4) 64-bit limbs -> (8, n) 32-bit limbs (plain, not Montgomery)."""
    a = np.ascontiguousarray(a, dtype=np.uint64)
    out = np.empty((NLIMBS, a.shape[0]), dtype=np.uint64)

    def block(lo: int) -> None:
        blk = a[lo : lo + B.CHUNK]
        out[0::2, lo : lo + B.CHUNK] = (blk & MASK32).T
        out[1::2, lo : lo + B.CHUNK] = (blk >> SHIFT32).T

    B.for_blocks(a.shape[0], block)
    return out


def _join32(x: np.ndarray) -> FrArray:
    """(8, n) normalised 32-bit limbs -> (n, 4) 64-bit limbs."""
    n = x.shape[1]
    out = np.empty((n, 4), dtype=np.uint64)

    def block(lo: int) -> None:
        out[lo : lo + B.CHUNK] = (x[0::2, lo : lo + B.CHUNK] | (x[1::2, lo : lo + B.CHUNK] << SHIFT32)).T

    B.for_blocks(n, block)
    return out


# Montgomery core --------------------------------------------------------------------------
def _cond_sub_p(x: np.ndarray) -> np.ndarray:
    """Normalised (8, ...) limbs < 2r -> canonical limbs < r.

    x >= r exactly when x + (2^256 - r) carries out of 256 bits; unsigned limb adds with
    one carry pass, no signed casts."""
    s = _normalise(_with_carry_limb(x + _col(_NEGP32, x.ndim)))
    return np.where(s[NLIMBS].astype(bool), s[:NLIMBS], x)


def _redc(t: np.ndarray) -> np.ndarray:
    """Montgomery reduction of an unnormalised (17, ...) accumulator: t * R^-1 mod r.

    Limb values may exceed 32 bits (up to ~2^40); only the low 32 bits of the current
    lowest limb determine the reduction multiplier, so no carry chain is needed inside
    the loop. Requires the value < r * R; returns canonical (8, ...) limbs in [0, r).
    """
    p = _col(P32, t.ndim)
    for i in range(NLIMBS):
        m = (t[i] * _N0_U64) & MASK32
        q = m * p
        t[i : i + NLIMBS] += q & MASK32
        t[i + 1 : i + NLIMBS + 1] += q >> SHIFT32
        t[i + 1] += t[i] >> SHIFT32  # low 32 bits of t[i] are now zero
    return _cond_sub_p(_normalise(t[NLIMBS : 2 * NLIMBS + 1])[:NLIMBS])


def _normalise(x: np.ndarray) -> np.ndarray:
    """Propagate carries so every limb is < 2^32 (the last limb keeps the overflow)."""
    x = x.copy()
    for i in range(x.shape[0] - 1):
        x[i + 1] += x[i] >> SHIFT32
        x[i] &= MASK32
    return x



def take_columns(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """x[:, idx] for a (k, m) array (e.g. Montgomery limbs), gathered in blocks on the pool."""
    out = np.empty((x.shape[0], len(idx)), dtype=x.dtype)

    def block(lo: int) -> None:
        out[:, lo : lo + B.CHUNK] = x[:, idx[lo : lo + B.CHUNK]]

    B.for_blocks(len(idx), block)
    return out


def take_rows(a: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """a[idx] for an (m, ...) array (e.g. an FrArray), gathered in blocks on the pool."""
    out = np.empty((len(idx),) + a.shape[1:], dtype=a.dtype)

    def block(lo: int) -> None:
        out[lo : lo + B.CHUNK] = a[idx[lo : lo + B.CHUNK]]

    B.for_blocks(len(idx), block)
    return out


def _blockwise(op: Callable[..., np.ndarray]) -> Callable[..., np.ndarray]:
    """Run an elementwise op on (8, ...) arrays in flat blocks of CHUNK elements.

    numpy temporaries of a few MiB and more are slower per element by up to ~5x here
    (cache misses and fresh pages on every allocation; measured in docs/prover.md), so
    large operations are cut into blocks; small ones run directly. Blocks of a large
    operation run on a thread pool (_for_blocks)."""

    def run(*arrays: np.ndarray) -> np.ndarray:
        shape = np.broadcast_shapes(*(a.shape for a in arrays))[1:]
        size = int(np.prod(shape))
        if size <= 2 * B.CHUNK:
            return op(*arrays)
        # a constant (8, 1) stays a broadcast column; other operands are flattened
        flat = [a.reshape(NLIMBS, 1) if a[0].size == 1 else np.broadcast_to(a, (NLIMBS,) + shape).reshape(NLIMBS, size) for a in arrays]
        out = np.empty((NLIMBS, size), dtype=np.uint64)

        def block(lo: int) -> None:
            out[:, lo : lo + B.CHUNK] = op(*(f if f.shape[1] == 1 else f[:, lo : lo + B.CHUNK] for f in flat))

        B.for_blocks(size, block)
        return out.reshape((NLIMBS,) + shape)

    run.__doc__, run.__name__ = op.__doc__, op.__name__
    return run


@_blockwise
def mont_mul(a: Mont, b: Mont) -> Mont:
    """Montgomery product a*b*R^-1 mod r of two (8, ...) arrays (broadcasting)."""
    shape = np.broadcast_shapes(a.shape, b.shape)[1:]
    t = np.zeros((2 * NLIMBS + 1,) + shape, dtype=np.uint64)
    for i in range(NLIMBS):
        prod = a[i] * b  # each product < 2^64: one limb of a against all limbs of b
        t[i : i + NLIMBS] += prod & MASK32
        t[i + 1 : i + NLIMBS + 1] += prod >> SHIFT32
    return _redc(t)


def _with_carry_limb(x: np.ndarray) -> np.ndarray:
    """Append a zero limb so that normalising an (8, ...) sum keeps its overflow bit."""
    return np.concatenate([x, np.zeros((1,) + x.shape[1:], np.uint64)])


@_blockwise
def mont_add(a: Mont, b: Mont) -> Mont:
    """a + b mod r (same formula for Montgomery and plain limbs)."""
    return _cond_sub_p(_normalise(_with_carry_limb(a + b))[:NLIMBS])


@_blockwise
def mont_sub(a: Mont, b: Mont) -> Mont:
    """a - b mod r, computed as a + (r - b) in [1, 2r) then one conditional subtraction.

    r - b is taken limbwise against a borrow-preloaded copy of r (``P32_BORROWED``: same
    value, every limb but the top raised by 2^32 - 1 or 2^32), so no limb goes negative;
    the top limb may wrap below zero mid-way, which uint64 arithmetic mod 2^64 undoes once
    the carries arrive."""
    d = a + (_col(P32_BORROWED, a.ndim) - b)
    return _cond_sub_p(_normalise(d))


def mont_neg(a: Mont) -> Mont:
    return mont_sub(np.zeros_like(a), a)


def to_mont(a: FrArray) -> Mont:
    """FrArray (n, 4) -> Montgomery (8, n)."""
    return mont_mul(_split32(a), _col(_int_to_limbs32(R2), 2))


def from_mont(x: Mont) -> FrArray:
    """Montgomery (8, n) -> canonical FrArray (n, 4)."""
    return _join32(_from_mont_limbs(x))


@_blockwise
def _from_mont_limbs(x: Mont) -> np.ndarray:
    t = np.zeros((2 * NLIMBS + 1,) + x.shape[1:], dtype=np.uint64)
    t[:NLIMBS] = x
    return _redc(t)


def mont_const(value: int) -> Mont:
    """A single constant in Montgomery form, shaped (8, 1) to broadcast over (8, n)."""
    return _int_to_limbs32(value % R_MOD * FR_MONT_R % R_MOD).reshape(NLIMBS, 1)


def mont_pow(x: Mont, e: int) -> Mont:
    """x^e elementwise by left-to-right square and multiply (common exponent e >= 0)."""
    result = np.broadcast_to(mont_const(1), x.shape).copy()
    for bit in bin(e)[2:] if e else "":
        result = mont_mul(result, result)
        if bit == "1":
            result = mont_mul(result, x)
    return result


def mont_powers(base: int, n: int) -> Mont:
    """(8, n) Montgomery array [base^0, base^1, ..., base^(n-1)] by doubling blocks."""
    out = np.empty((NLIMBS, n), dtype=np.uint64)
    out[:, :1] = mont_const(1)
    filled, step = 1, base % R_MOD
    while filled < n:
        take = min(filled, n - filled)
        out[:, filled : filled + take] = mont_mul(out[:, :take], mont_const(step))
        filled += take
        step = step * step % R_MOD
    return out


def mont_batch_inverse(x: Mont) -> Mont:
    """Elementwise inverse over (8, n) by a product tree (O(n) multiplies, vectorised per
    level); zero maps to zero."""
    n = x.shape[1]
    if n == 0:
        return x.copy()
    is_zero = ~x.any(axis=0)
    one = mont_const(1)
    x = np.where(is_zero, one, x)
    size = 1 << (n - 1).bit_length()
    levels = [np.concatenate([x, np.broadcast_to(one, (NLIMBS, size - n))], axis=1)]
    while levels[-1].shape[1] > 1:
        cur = levels[-1]
        levels.append(mont_mul(cur[:, 0::2], cur[:, 1::2]))
    inv = mont_pow(levels[-1], R_MOD - 2)  # one Fermat inversion for the whole tree
    for cur in reversed(levels[:-1]):
        nxt = np.empty_like(cur)
        nxt[:, 0::2] = mont_mul(inv, cur[:, 1::2])
        nxt[:, 1::2] = mont_mul(inv, cur[:, 0::2])
        inv = nxt
    inv = inv[:, :n]
    return np.where(is_zero, np.uint64(0), inv)


def _segment_sums_block(terms: Mont, indptr: np.ndarray) -> np.ndarray:
    """(8, len(indptr)-1) canonical plain limbs of the segment sums of terms (indptr from 0)."""
    prefix = np.zeros((NLIMBS, terms.shape[1] + 1), dtype=np.uint64)
    np.cumsum(terms, axis=1, out=prefix[:, 1:])
    sums = prefix[:, indptr[1:]] - prefix[:, indptr[:-1]]
    return _from_mont_limbs(sums)


def segment_sums_from_mont(terms: Mont, indptr: np.ndarray) -> FrArray:
    """Sum Montgomery terms (8, nnz) over CSR segments [indptr[i], indptr[i+1]) and return
    canonical *plain* FrArray values: the limbwise prefix sums stay exact in uint64
    (< 2^57 for nnz < 2^25), and one REDC both reduces the sum mod r and removes the
    Montgomery factor R. Runs over blocks of CHUNK segments (on the pool when large)."""
    return csr_sums(lambda e0, e1: terms[:, e0:e1], indptr)


def csr_sums(terms_of: Callable[[int, int], Mont], indptr: np.ndarray) -> FrArray:
    """segment_sums_from_mont over blocks of CHUNK segments, the Montgomery terms of entries
    [e0, e1) made per block by terms_of(e0, e1) (so the (8, nnz) terms never exist at once)."""
    n = len(indptr) - 1
    out = np.empty((NLIMBS, n), dtype=np.uint64)

    def block(lo: int) -> None:
        hi = min(lo + B.CHUNK, n)
        e0, e1 = int(indptr[lo]), int(indptr[hi])
        out[:, lo:hi] = _segment_sums_block(terms_of(e0, e1), indptr[lo : hi + 1] - e0)

    B.for_blocks(n, block)
    return _join32(out)


