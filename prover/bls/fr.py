"""BLS12-381 scalar field Fr, vectorised over numpy arrays. Two representations:

* ``FrArray`` -- the interchange format other code (and the CUDA kernels) depends on:
  ``numpy.uint64`` (n, 4), little-endian 64-bit limbs, canonical in ``[0, r)``, not Montgomery.
* ``Mont`` -- the working form: ``numpy.uint64`` (8, ...), eight little-endian 32-bit limbs of
  ``x * 2^256 mod r``; limb-major so every step of an operation is one numpy call.

32-bit limbs in uint64 words: a 32x32-bit product fits exactly and sums of a few dozen
still fit, so the Montgomery product adds limb products *without* carries and resolves them
once at the end (~14 numpy calls per limb round, not ~80 for CIOS; docs/prover.md).
Python ints appear only at the boundary (``from_ints``/``to_ints``) and in constants.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from prover import settings

# the field modulus and its constants --------------------------------------------------
R_MOD = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001
NLIMBS = 8  # 32-bit limbs
MASK32 = np.uint64(0xFFFFFFFF)
SHIFT32 = np.uint64(32)
_R = 1 << 256  # Montgomery radix
_R2 = _R * _R % R_MOD  # to_mont multiplies by R^2 (then REDC divides by R)
_N0 = (-pow(R_MOD, -1, 1 << 32)) % (1 << 32)  # -r^-1 mod 2^32 for REDC

FrArray = np.ndarray  # (n, 4) uint64, canonical, little-endian 64-bit limbs
Mont = np.ndarray  # (8, ...) uint64, 32-bit limbs of x*R mod r


def _int_to_limbs32(x: int) -> np.ndarray:
    return np.array([(x >> (32 * i)) & 0xFFFFFFFF for i in range(NLIMBS)], dtype=np.uint64)


_P32 = _int_to_limbs32(R_MOD)
_NEG_P32 = _int_to_limbs32((1 << 256) - R_MOD)  # 2^256 - r
# r with borrows pre-applied: limb0 + 2^32, limbs 1..6 + 2^32 - 1, limb7 - 1 (same value)
_P32_BORROWED = _P32 + np.array([1 << 32] + [(1 << 32) - 1] * 6 + [0], dtype=np.uint64) - np.array([0] * 7 + [1], dtype=np.uint64)
_N0_U64 = np.uint64(_N0)


def _col(limbs: np.ndarray, ndim: int) -> np.ndarray:
    """Reshape an (8,) constant so that it broadcasts against an (8, ...) array."""
    return limbs.reshape((NLIMBS,) + (1,) * (ndim - 1))


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


def _split32(a: FrArray) -> np.ndarray:
    """(n, 4) 64-bit limbs -> (8, n) 32-bit limbs (plain, not Montgomery)."""
    a = np.ascontiguousarray(a, dtype=np.uint64)
    out = np.empty((NLIMBS, a.shape[0]), dtype=np.uint64)

    def block(lo: int) -> None:
        blk = a[lo : lo + CHUNK]
        out[0::2, lo : lo + CHUNK] = (blk & MASK32).T
        out[1::2, lo : lo + CHUNK] = (blk >> SHIFT32).T

    _for_blocks(a.shape[0], block)
    return out


def _join32(x: np.ndarray) -> FrArray:
    """(8, n) normalised 32-bit limbs -> (n, 4) 64-bit limbs."""
    n = x.shape[1]
    out = np.empty((n, 4), dtype=np.uint64)

    def block(lo: int) -> None:
        out[lo : lo + CHUNK] = (x[0::2, lo : lo + CHUNK] | (x[1::2, lo : lo + CHUNK] << SHIFT32)).T

    _for_blocks(n, block)
    return out


# Montgomery core --------------------------------------------------------------------------
def _cond_sub_p(x: np.ndarray) -> np.ndarray:
    """Normalised (8, ...) limbs < 2r -> canonical limbs < r.

    x >= r exactly when x + (2^256 - r) carries out of 256 bits; unsigned limb adds with
    one carry pass, no signed casts."""
    s = _normalise(_with_carry_limb(x + _col(_NEG_P32, x.ndim)))
    return np.where(s[NLIMBS].astype(bool), s[:NLIMBS], x)


def _redc(t: np.ndarray) -> np.ndarray:
    """Montgomery reduction of an unnormalised (17, ...) accumulator: t * R^-1 mod r.

    Limb values may exceed 32 bits (up to ~2^40); only the low 32 bits of the current
    lowest limb determine the reduction multiplier, so no carry chain is needed inside
    the loop. Requires the value < r * R; returns canonical (8, ...) limbs in [0, r).
    """
    p = _col(_P32, t.ndim)
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


CHUNK = 1 << 13  # elements per block of a large operation: temporaries stay cache-sized
# Blocks of one large operation run on a thread pool (numpy releases the GIL in its loops and
# blocks are independent: same bytes; 2^22+ set-ups take minutes on one core). fr_threads=1: off.
THREADS: int | None = None  # set: overrides the settings (tests)
PARALLEL_MIN = 16 * CHUNK  # below this the blocks run inline
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_in_worker = threading.local()


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(_threads(), thread_name_prefix="fr-block",
                                       initializer=lambda: setattr(_in_worker, "active", True))
        return _pool


def _threads() -> int:
    return THREADS or settings.current().fr_thread_count()


def _for_blocks(size: int, body: Callable[[int], None]) -> None:
    """body(lo) for lo in range(0, size, CHUNK), on the pool when large (never nested)."""
    starts = range(0, size, CHUNK)
    if size >= PARALLEL_MIN and _threads() > 1 and not getattr(_in_worker, "active", False):
        list(_executor().map(body, starts))
    else:
        for lo in starts:
            body(lo)


def for_row_blocks(n: int, body: Callable[[int, int], None]) -> None:
    """body(lo, hi) over [0, n) in blocks of CHUNK rows, on the pool when large: for compiled
    nogil kernels that take a row range (setup's one-off products and scalars)."""
    _for_blocks(n, lambda lo: body(lo, min(lo + CHUNK, n)))


def take_columns(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """x[:, idx] for a (k, m) array (e.g. Montgomery limbs), gathered in blocks on the pool."""
    out = np.empty((x.shape[0], len(idx)), dtype=x.dtype)

    def block(lo: int) -> None:
        out[:, lo : lo + CHUNK] = x[:, idx[lo : lo + CHUNK]]

    _for_blocks(len(idx), block)
    return out


def take_rows(a: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """a[idx] for an (m, ...) array (e.g. an FrArray), gathered in blocks on the pool."""
    out = np.empty((len(idx),) + a.shape[1:], dtype=a.dtype)

    def block(lo: int) -> None:
        out[lo : lo + CHUNK] = a[idx[lo : lo + CHUNK]]

    _for_blocks(len(idx), block)
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
        if size <= 2 * CHUNK:
            return op(*arrays)
        # a constant (8, 1) stays a broadcast column; other operands are flattened
        flat = [a.reshape(NLIMBS, 1) if a[0].size == 1 else np.broadcast_to(a, (NLIMBS,) + shape).reshape(NLIMBS, size) for a in arrays]
        out = np.empty((NLIMBS, size), dtype=np.uint64)

        def block(lo: int) -> None:
            out[:, lo : lo + CHUNK] = op(*(f if f.shape[1] == 1 else f[:, lo : lo + CHUNK] for f in flat))

        _for_blocks(size, block)
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

    r - b is taken limbwise against a borrow-preloaded copy of r (``_P32_BORROWED``: same
    value, every limb but the top raised by 2^32 - 1 or 2^32), so no limb goes negative;
    the top limb may wrap below zero mid-way, which uint64 arithmetic mod 2^64 undoes once
    the carries arrive."""
    d = a + (_col(_P32_BORROWED, a.ndim) - b)
    return _cond_sub_p(_normalise(d))


def mont_neg(a: Mont) -> Mont:
    return mont_sub(np.zeros_like(a), a)


def to_mont(a: FrArray) -> Mont:
    """FrArray (n, 4) -> Montgomery (8, n)."""
    return mont_mul(_split32(a), _col(_int_to_limbs32(_R2), 2))


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
    return _int_to_limbs32(value % R_MOD * _R % R_MOD).reshape(NLIMBS, 1)


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
        hi = min(lo + CHUNK, n)
        e0, e1 = int(indptr[lo]), int(indptr[hi])
        out[:, lo:hi] = _segment_sums_block(terms_of(e0, e1), indptr[lo : hi + 1] - e0)

    _for_blocks(n, block)
    return _join32(out)


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
