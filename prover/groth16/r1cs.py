"""Sparse R1CS matrices in CSR form with compact coefficients, and their products with vectors.

A coefficient is stored as a one-byte code: an index into a table of at most 255 small signed
integers (1, -1, 2, 2^i, k_r: almost every coefficient of the circuit family), or BIG (255) for a
full-size field element, kept in `big` in entry order. Columns are int32. Five bytes an entry
where an FrArray of coefficients and int64 columns took forty: at 2^27 the three matrices are
~3 GiB of entries instead of ~25 GiB, and the compiled host kernel (prover/host/matvec.py) and the
GPU set-up read this form as it is. `coeffs` gives the canonical FrArray back (tests, the numpy
reference).
"""
from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from prover.field.jit import njit  # numba.njit, cached where numba can cache

from prover.field import fr
from prover.host.matvec import BIG, SMALL_BITS, MatrixPlan
from prover.host.matvec import matvec as host_matvec

_PLAN_LOCK = threading.Lock()


@njit(nogil=True)
def _csr_perm(rows: np.ndarray, cols: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """The row-major order of the entries (rows ascending, columns ascending within a row,
    ties in entry order): a counting sort by row, then an insertion sort of each row's few
    entries by column. The order of np.argsort(rows * n_cols + cols, kind="stable")."""
    n_rows = indptr.shape[0] - 1
    pos = indptr[:-1].copy()
    perm = np.empty(rows.shape[0], dtype=np.int64)
    for e in range(rows.shape[0]):
        r = rows[e]
        perm[pos[r]] = e
        pos[r] += 1
    for r in range(n_rows):
        lo, hi = indptr[r], indptr[r + 1]
        for i in range(lo + 1, hi):
            e = perm[i]
            c = cols[e]
            j = i - 1
            while j >= lo and cols[perm[j]] > c:
                perm[j + 1] = perm[j]
                j -= 1
            perm[j + 1] = e
    return perm


def _indptr(rows: np.ndarray, n_rows: int) -> np.ndarray:
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
    return indptr


def _big_order(codes: np.ndarray, perm: np.ndarray, new_codes: np.ndarray) -> np.ndarray:
    """The rows of `big` (BIG entries in the old entry order) in the new entry order."""
    old_pos = np.flatnonzero(codes == BIG)  # ascending: row k of big is the k-th of these
    return np.searchsorted(old_pos, perm[new_codes == BIG])


_SLOTS = 1024  # open-addressing table of the distinct small values (the family has < 64)


_LIMIT = 1 << SMALL_BITS


@njit(nogil=True)
def _count_values(small: np.ndarray, is_big: np.ndarray, keys: np.ndarray, counts: np.ndarray) -> int:
    """Distinct values of the small entries (not is_big, |v| < 2^SMALL_BITS) and their counts in
    a hash table; -1 if it gets over half full."""
    mask, used = keys.shape[0] - 1, 0
    filled = np.zeros(keys.shape[0], dtype=np.bool_)
    for e in range(small.shape[0]):
        v = small[e]
        if is_big[e] or v >= _LIMIT or v <= -_LIMIT:
            continue
        h = (v * 0x9E3779B97F4A7C15) & mask
        while filled[h] and keys[h] != v:
            h = (h + 1) & mask
        if not filled[h]:
            used += 1
            if 2 * used > keys.shape[0]:
                return -1
            filled[h], keys[h] = True, v
        counts[h] += 1
    return used


@njit(nogil=True)
def _encode(small: np.ndarray, is_big: np.ndarray, keep: np.ndarray, big_code: np.uint8) -> tuple[np.ndarray, int]:
    """(codes, demoted): codes[e] = the index of small[e] in the sorted `keep`, or big_code;
    demoted: small entries that got big_code (their value is not in `keep`)."""
    codes = np.empty(small.shape[0], dtype=np.uint8)
    demoted = 0
    for e in range(small.shape[0]):
        codes[e] = big_code
        if not is_big[e]:
            i = np.searchsorted(keep, small[e])
            if i < keep.shape[0] and keep[i] == small[e]:
                codes[e] = np.uint8(i)
            else:
                demoted += 1
    return codes, demoted


def _distinct(small: np.ndarray, is_big: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    keys = np.zeros(_SLOTS, dtype=np.int64)
    counts = np.zeros(_SLOTS, dtype=np.int64)
    if _count_values(small, is_big, keys, counts) >= 0:
        hit = counts > 0
        return keys[hit], counts[hit]
    ok = ~is_big & (np.abs(small) < _LIMIT)
    return np.unique(small[ok], return_counts=True)  # many distinct values: not this family


def compact(small: np.ndarray, is_big: np.ndarray, big: fr.FrArray) -> tuple[np.ndarray, np.ndarray, fr.FrArray]:
    """(codes, values, big) from per-entry small signed ints (where not is_big) and the full-size
    coefficients of the is_big entries (in entry order). The 255 most used small values below
    2^SMALL_BITS get codes; any other small value becomes a full-size coefficient too."""
    small = np.ascontiguousarray(small, dtype=np.int64)
    is_big = np.ascontiguousarray(is_big, dtype=np.bool_)
    distinct, counts = _distinct(small, is_big)
    order = np.lexsort((distinct, -counts))  # most used first, ties by value: a deterministic pick
    keep = np.sort(distinct[order[:BIG]]).astype(np.int64)
    codes, demoted = _encode(small, is_big, keep, np.uint8(BIG))
    if demoted:  # a rare small value: stored in full, in entry order with the others
        where = np.flatnonzero(codes == BIG)
        was_big = is_big[where]
        full = np.zeros((len(where), 4), dtype=np.uint64)
        full[was_big] = big
        full[~was_big] = fr.from_i64(small[where[~was_big]])
        big = full
    return codes, keep, np.ascontiguousarray(big, dtype=np.uint64).reshape(-1, 4)


@dataclass(frozen=True)
class SparseMatrix:
    """CSR: row i holds entries indptr[i]:indptr[i+1], at columns ``indices``, with
    coefficients ``values[codes]`` (or the next row of ``big`` where the code is BIG)."""

    indptr: np.ndarray  # (rows + 1,) int64
    indices: np.ndarray  # (nnz,) int32
    codes: np.ndarray  # (nnz,) uint8
    values: np.ndarray  # (<= 255,) int64, sorted
    big: fr.FrArray  # (number of BIG codes, 4) canonical, in entry order
    n_cols: int

    @property
    def n_rows(self) -> int:
        return len(self.indptr) - 1

    @property
    def nnz(self) -> int:
        return len(self.indices)

    @property
    def nbytes(self) -> int:
        """Host bytes of the matrix (its host plan shares them, but for the Montgomery big rows)."""
        return sum(int(a.nbytes) for a in (self.indptr, self.indices, self.codes, self.values, self.big))

    @classmethod
    def from_entries(cls, rows: np.ndarray, cols: np.ndarray, codes: np.ndarray, values: np.ndarray,
                     big: fr.FrArray, n_rows: int, n_cols: int) -> SparseMatrix:
        """Entries in any order (codes against `values`, `big` in that entry order) to CSR."""
        if n_rows >= 1 << 31 or n_cols >= 1 << 31:
            raise ValueError("a matrix dimension over 2^31 (int32 columns)")
        rows, cols = np.asarray(rows), np.asarray(cols)
        indptr = _indptr(rows, n_rows)
        perm = _csr_perm(rows, cols, indptr)
        codes = np.asarray(codes, dtype=np.uint8)
        new_codes = codes[perm]
        big = np.asarray(big, dtype=np.uint64).reshape(-1, 4)
        big_sorted = big[_big_order(codes, perm, new_codes)] if len(big) else big
        return cls(indptr, cols[perm].astype(np.int32), new_codes, np.asarray(values, np.int64),
                   np.ascontiguousarray(big_sorted), n_cols)

    @classmethod
    def from_triples(cls, rows: np.ndarray, cols: np.ndarray, coeffs: fr.FrArray, n_rows: int, n_cols: int) -> SparseMatrix:
        """From (row, col, canonical coefficient) triples (a small signed integer is found as
        such: c or r - c below 2^SMALL_BITS)."""
        from prover.host.matvec import _signed_small

        small_mask, value = _signed_small(np.asarray(coeffs, dtype=np.uint64).reshape(-1, 4))
        codes, values, big = compact(value, ~small_mask, np.asarray(coeffs, np.uint64).reshape(-1, 4)[~small_mask])
        return cls.from_entries(rows, cols, codes, values, big, n_rows, n_cols)

    @property
    def coeffs(self) -> fr.FrArray:
        """The canonical coefficients in entry order (materialised: 32 B an entry)."""
        out = fr.from_i64(self.values[np.minimum(self.codes, max(len(self.values) - 1, 0))]) if len(self.values) \
            else np.zeros((self.nnz, 4), dtype=np.uint64)
        out[self.codes == BIG] = self.big
        return out

    def row_ids(self) -> np.ndarray:
        """Row index of every stored entry."""
        return np.repeat(np.arange(self.n_rows, dtype=np.int32), np.diff(self.indptr))

    def transpose(self) -> SparseMatrix:
        """The transposed matrix (rows <-> columns, the same coefficients)."""
        return SparseMatrix.from_entries(self.indices, self.row_ids(), self.codes, self.values, self.big,
                                         self.n_cols, self.n_rows)

    def digest_into(self, h: "hashlib._Hash") -> None:
        for part in (self.indptr, self.indices, self.codes, self.values, self.big):
            a = np.ascontiguousarray(part)
            h.update(f"{a.dtype.str}:{a.shape}".encode())
            h.update(a.data)

    @cached_property
    def coeffs_mont(self) -> fr.Mont:
        return fr.to_mont(self.coeffs)

    @property
    def host_plan(self) -> MatrixPlan:
        """The form the compiled host kernel reads: this matrix's own arrays, plus the big
        coefficients in Montgomery form, made once (under a lock: worker threads all reach
        their first partition together, and cached_property has no lock from Python 3.12)."""
        plan = self.__dict__.get("_host_plan")
        if plan is None:
            with _PLAN_LOCK:
                plan = self.__dict__.get("_host_plan")
                if plan is None:
                    if np.diff(self.indptr).max(initial=0) >= 1 << (63 - SMALL_BITS):
                        raise ValueError("matrix too large for the host kernel (int64 row sums)")
                    big_mont = (np.ascontiguousarray(fr.to_mont(self.big).T) if len(self.big)
                                else np.zeros((0, 8), np.uint64))
                    plan = self.__dict__["_host_plan"] = MatrixPlan(self.indptr, self.indices, self.codes,
                                                                    self.values, self.big, big_mont)
        return plan

    def matvec_host(self, z: fr.FrArray, density: np.ndarray, out: np.ndarray | None = None,
                    threads: int = 1) -> fr.FrArray:
        """M . z by the compiled nogil kernel (same bytes as matvec); density: z's classes;
        out: where to write it; threads: its rows split over them (see prover.host.matvec.matvec)."""
        return host_matvec(self.host_plan, z, density, out, threads)

    def matvec(self, z: fr.FrArray) -> fr.FrArray:
        return self.matvec_mont(fr.to_mont(z))

    def matvec_mont(self, z: fr.Mont) -> fr.FrArray:
        """M . z in Fr for z in Montgomery form (8, n_cols), returned as a canonical
        FrArray: one Montgomery product per stored entry, then per-row sums with a single
        reduction (the numpy reference)."""
        coeffs, indices = self.coeffs_mont, self.indices
        # per block of rows: gather, products, sums (on fr's thread pool for large matrices)
        return fr.csr_sums(lambda e0, e1: fr.mont_mul(coeffs[:, e0:e1], z[:, indices[e0:e1]]), self.indptr)
