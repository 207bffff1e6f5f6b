"""A.z, B.z, C.z as compiled nogil kernels that exploit the witness: ~97% of its values are
0 or 1, and almost every coefficient is a small signed integer (1, -1, 2, 2^i, k_r), so most
terms are skipped (z = 0) or are one int64 add of the coefficient (z = 1). Only a product
with a field-valued z, or with one of the few full-size coefficients (the round-0 starting
accumulators), goes through 256-bit arithmetic, into a wide accumulator reduced once a row.

Same canonical FrArray rows as ``SparseMatrix.matvec_mont`` (the value of a sum mod r is
unique, so any exact method gives the same bytes).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from prover.field.jit import njit  # numba.njit, cached where numba can cache

from prover.field import fr
from prover.field import fr_nb as F
from prover.host import threads as host_threads

SMALL_BITS = 40  # |coefficient| < 2^40: an int64 row sum of < 2^23 such terms cannot overflow
BIG = 255  # code of a full-size coefficient: the k-th such entry (in entry order) is big row k
_SMALL = np.uint64(1 << SMALL_BITS)


@dataclass(frozen=True)
class MatrixPlan:
    """A matrix's coefficients recoded once per circuit for the host kernel: 5 bytes an entry
    (the kernel is bound by memory traffic, not arithmetic)."""

    indptr: np.ndarray  # (rows + 1,) int64
    cols: np.ndarray  # (nnz,) int32
    codes: np.ndarray  # (nnz,) uint8: index into values, or BIG
    values: np.ndarray  # (<= 255,) int64 the distinct small signed coefficients
    big_plain: np.ndarray  # (nb, 4) uint64 canonical full-size coefficients, in entry order
    big_mont: np.ndarray  # (nb, 8) uint64 their Montgomery forms, 32-bit limbs
    big_pos: np.ndarray | None = None  # (nb,) int64 entry positions of the BIG codes (made on first use)

    def device_bytes(self) -> int:
        """Bytes of its form on a GPU (prover/kernels/r1cs.py device_arrays: u32 row pointers,
        int32 columns, u8 codes, the small and full-size coefficients plain and in Montgomery
        form, the full-size ones' u32 entry positions), known before it is made: the GPU's room
        holds them before the upload."""
        nnz, rows = int(self.indptr[-1]), len(self.indptr) - 1
        nb = int(np.count_nonzero(self.codes == BIG))
        return 4 * (rows + 1) + 5 * nnz + 64 * max(len(self.values), 1) + 68 * max(nb, 1)

    def big_before(self, entry: int) -> int:
        """Full-size coefficients among the entries before `entry`: where a range of rows
        starting there reads its first one (`matvec_rows`' bi0)."""
        pos = self.big_pos
        if pos is None:  # one pass over the codes a plan, kept (a frozen dataclass: set once)
            pos = np.flatnonzero(self.codes == BIG).astype(np.int64)
            object.__setattr__(self, "big_pos", pos)
        return int(np.searchsorted(pos, entry))


def _small_of(c: fr.FrArray) -> np.ndarray:
    """Mask of canonical values below 2^SMALL_BITS."""
    return ~c[:, 1:].any(axis=1) & (c[:, 0] < _SMALL)


def _signed_small(coeffs: fr.FrArray) -> tuple[np.ndarray, np.ndarray]:
    """(mask, value): entries whose coefficient is a small signed integer, and that integer."""
    value = np.zeros(len(coeffs), dtype=np.int64)
    pos = _small_of(coeffs)
    value[pos] = coeffs[pos, 0].astype(np.int64)
    rest = np.flatnonzero(~pos)
    negated = fr.neg(coeffs[rest])
    neg = _small_of(negated)
    value[rest[neg]] = -negated[neg, 0].astype(np.int64)
    mask = pos.copy()
    mask[rest[neg]] = True
    return mask, value


def make_plan(indptr: np.ndarray, indices: np.ndarray, coeffs: fr.FrArray, n_cols: int) -> MatrixPlan:
    if np.diff(indptr).max(initial=0) >= 1 << (63 - SMALL_BITS) or n_cols >= 1 << 31:
        raise ValueError("matrix too large for the host kernel (int64 row sums, int32 columns)")
    small, value = _signed_small(coeffs)
    distinct, counts = np.unique(value[small], return_counts=True)
    keep = distinct[np.argsort(-counts, kind="stable")[:BIG]]  # the 255 most used (all, here)
    codes = np.full(len(coeffs), BIG, dtype=np.uint8)
    coded = small & np.isin(value, keep)
    table = np.sort(keep)
    codes[coded] = np.searchsorted(table, value[coded]).astype(np.uint8)
    big_plain = np.ascontiguousarray(coeffs[~coded])
    big_mont = np.ascontiguousarray(fr.to_mont(big_plain).T) if len(big_plain) else np.zeros((0, F.NL), np.uint64)
    return MatrixPlan(np.ascontiguousarray(indptr, np.int64), indices.astype(np.int32), codes, table.astype(np.int64),
                      big_plain, big_mont)


@njit(nogil=True)
def _mul_small_add(acc: np.ndarray, x: np.ndarray, mag: np.uint64) -> None:
    """acc += x * mag for 32-bit limbs x and mag < 2^64 (acc: 10 unnormalised limbs)."""
    lo, hi = mag & F.M32, mag >> F.S32
    for j in range(F.NL):
        p = x[j] * lo
        acc[j] += p & F.M32
        acc[j + 1] += p >> F.S32
        p = x[j] * hi
        acc[j + 1] += p & F.M32
        acc[j + 2] += p >> F.S32


@njit(nogil=True)
def _neg_limbs(x: np.ndarray) -> None:
    """x = r - x for canonical non-zero limbs, in place."""
    borrow = F.ZERO
    for j in range(F.NL):
        d = F.P32[j] + F.B32 - x[j] - borrow
        x[j] = d & F.M32
        borrow = F.ONE - (d >> F.S32)


@njit(nogil=True)
def _add_limbs(acc: np.ndarray, x: np.ndarray) -> None:
    for j in range(F.NL):
        acc[j] += x[j]


@njit(nogil=True)
def _reduce_few(acc: np.ndarray, out: np.ndarray) -> None:
    """out = acc mod r for a sum of a few canonical values (each < r): normalise, then
    subtract r until below it (once per term at most)."""
    for j in range(9):
        acc[j + 1] += acc[j] >> F.S32
        acc[j] &= F.M32
    while True:
        ge = acc[9] != F.ZERO or acc[8] != F.ZERO
        if not ge:
            ge = True
            for j in range(F.NL - 1, -1, -1):
                if acc[j] != F.P32[j]:
                    ge = acc[j] > F.P32[j]
                    break
        if not ge:
            break
        borrow = F.ZERO
        for j in range(10):
            p = F.P32[j] if j < F.NL else F.ZERO
            d = acc[j] + F.B32 - p - borrow
            acc[j] = d & F.M32
            borrow = F.ONE - (d >> F.S32)
    for j in range(F.NL):
        out[j] = acc[j]


@njit(nogil=True)
def matvec_kernel(indptr: np.ndarray, cols: np.ndarray, codes: np.ndarray, values: np.ndarray, big_plain: np.ndarray,
                  big_mont: np.ndarray, z: np.ndarray, cls: np.ndarray, out: np.ndarray) -> None:
    """out[row] = sum_e coeff_e * z[cols[e]] mod r, canonical, for every row."""
    matvec_rows(indptr, cols, codes, values, big_plain, big_mont, z, cls, out, 0, indptr.shape[0] - 1, 0)


@njit(nogil=True)
def matvec_rows(indptr: np.ndarray, cols: np.ndarray, codes: np.ndarray, values: np.ndarray, big_plain: np.ndarray,
                big_mont: np.ndarray, z: np.ndarray, cls: np.ndarray, out: np.ndarray, r0: int, r1: int,
                bi0: int) -> None:
    """matvec_kernel for rows [r0, r1); bi0: the full-size coefficients in entries before row r0."""
    acc = np.zeros(10, dtype=np.uint64)
    x = np.zeros(F.NL, dtype=np.uint64)
    prod = np.zeros(F.NL, dtype=np.uint64)
    res = np.zeros(F.NL, dtype=np.uint64)
    t = np.zeros(2 * F.NL + 1, dtype=np.uint64)
    tmp = np.zeros((1, 4), dtype=np.uint64)
    bi = bi0  # full-size coefficients seen so far
    for row in range(r0, r1):
        s = 0
        wide = False
        scaled = False  # a small multiple (|c| > 1) of a field value is in acc
        for e in range(indptr[row], indptr[row + 1]):
            code = codes[e]
            if code == BIG:
                b = bi
                bi += 1
            k = cls[cols[e]]
            if k == 0:
                continue
            if code != BIG:
                c = values[code]
                if k == 1:
                    s += c
                    continue
            if not wide:
                wide = True
                for j in range(10):
                    acc[j] = F.ZERO
            if code != BIG:  # small coefficient, field-valued z
                F.load64(z, cols[e], x)
                if c < 0:
                    _neg_limbs(x)
                    c = -c
                if c == 1:
                    _add_limbs(acc, x)
                else:
                    scaled = True
                    _mul_small_add(acc, x, np.uint64(c))
            elif k == 1:  # full-size coefficient times one
                F.load64(big_plain, b, x)
                _add_limbs(acc, x)
            else:
                F.load64(z, cols[e], x)
                F.mont_mul(big_mont[b], x, prod, t)  # coeff*R times plain z: plain product
                _add_limbs(acc, prod)
        if not wide:
            if s >= 0:
                out[row, 0] = np.uint64(s)
                out[row, 1] = F.ZERO
                out[row, 2] = F.ZERO
                out[row, 3] = F.ZERO
            else:
                F.sub_small64(np.uint64(-s), out, row)
            continue
        if s > 0:
            acc[0] += np.uint64(s) & F.M32
            acc[1] += np.uint64(s) >> F.S32
        elif s < 0:
            F.sub_small64(np.uint64(-s), tmp, 0)  # r - |s|
            F.load64(tmp, 0, x)
            _add_limbs(acc, x)
        if scaled:
            F.reduce_wide(acc, t, res)
        else:
            _reduce_few(acc, res)
        F.store64(res, out, row)


MIN_ROWS = 4096  # rows a chunk at least (a kernel call and its temporaries)


def _out(plan: MatrixPlan, out: np.ndarray | None) -> np.ndarray:
    shape = (len(plan.indptr) - 1, 4)
    if out is None:
        return np.empty(shape, dtype=np.uint64)
    if out.shape != shape or out.dtype != np.uint64 or not out.flags.c_contiguous:
        raise ValueError(f"matvec out: need a C-contiguous uint64 array of shape {shape}, got {out.dtype} {out.shape}")
    return out


def row_chunks(plan: MatrixPlan, chunks: int) -> list[tuple[int, int, int]]:
    """(first row, end row, bi0) of `chunks` row ranges holding about equal entries (the
    kernel's work is its entries), empty ones dropped."""
    rows = len(plan.indptr) - 1
    nnz = int(plan.indptr[-1])
    cuts = np.searchsorted(plan.indptr, np.linspace(0, nnz, chunks + 1)[1:-1], side="left")
    bounds = np.unique(np.concatenate(([0], np.clip(cuts, 0, rows), [rows])))
    return [(int(lo), int(hi), plan.big_before(int(plan.indptr[lo]))) for lo, hi in zip(bounds[:-1], bounds[1:])
            if hi > lo]


def matvec(plan: MatrixPlan, z: fr.FrArray, cls: np.ndarray, out: np.ndarray | None = None,
           threads: int = 1) -> fr.FrArray:
    """M . z as a canonical FrArray, given z's density classes (``phases.density(z)``);
    written into `out` ((rows, 4) uint64, e.g. a page-locked buffer) when given; its rows on
    `threads` threads (prover/host/threads.py), the same bytes."""
    return matvec_many([plan], z, cls, [out], threads)[0]


def matvec_many(plans: list[MatrixPlan], z: fr.FrArray, cls: np.ndarray, outs: list[np.ndarray | None],
                threads: int = 1) -> list[fr.FrArray]:
    """matvec of several matrices over one z (A.z, B.z, C.z), their row ranges in one list
    on `threads` threads: a thread done with A's rows takes B's, none waits for a matrix."""
    res = [_out(p, o) for p, o in zip(plans, outs)]
    if threads <= 1:
        for p, o in zip(plans, res):
            matvec_kernel(p.indptr, p.cols, p.codes, p.values, p.big_plain, p.big_mont, z, cls, o)
        return res
    work = []
    for p, o in zip(plans, res):
        n = len(p.indptr) - 1
        work += [(p, o, lo, hi, bi) for lo, hi, bi in row_chunks(p, host_threads.chunk_count(threads, n, MIN_ROWS))]

    def one(i: int) -> None:
        p, o, lo, hi, bi = work[i]
        matvec_rows(p.indptr, p.cols, p.codes, p.values, p.big_plain, p.big_mont, z, cls, o, lo, hi, bi)

    host_threads.run_chunks(len(work), threads, one)
    return res


def matvec_blocks(plan: MatrixPlan, z: fr.FrArray, cls: np.ndarray) -> fr.FrArray:
    """matvec with its rows in blocks on fr's thread pool (the kernel releases the GIL): for
    the one-off products of a key setup, where no other worker keeps the cores busy."""
    n = len(plan.indptr) - 1
    out = np.empty((n, 4), dtype=np.uint64)

    def block(lo: int, hi: int) -> None:
        matvec_rows(plan.indptr, plan.cols, plan.codes, plan.values, plan.big_plain, plan.big_mont, z, cls, out,
                    lo, hi, plan.big_before(int(plan.indptr[lo])))

    fr.for_row_blocks(n, block)
    return out
