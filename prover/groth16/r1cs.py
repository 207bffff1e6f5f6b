"""Sparse R1CS matrices in CSR form with Fr coefficients, and their products with vectors."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import threading

import numpy as np

from prover.field import fr
from prover.host.matvec import MatrixPlan, make_plan
from prover.host.matvec import matvec as host_matvec


def _csr_order(rows: np.ndarray, cols: np.ndarray, n_rows: int, n_cols: int) -> tuple[np.ndarray, np.ndarray]:
    """The row-major order of (row, col) int64 pairs, columns ascending within a row, and the
    CSR indptr. A stable sort of one int64 key is the order of np.lexsort((cols, rows)) and
    several times faster (the triples arrive nearly sorted)."""
    order = np.argsort(rows * max(int(n_cols), 1) + cols, kind="stable")
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
    return order, indptr


_PLAN_LOCK = threading.Lock()


@dataclass(frozen=True)
class SparseMatrix:
    """CSR: row i holds ``coeffs[indptr[i]:indptr[i+1]]`` at columns ``indices[...]``."""

    indptr: np.ndarray  # (rows + 1,) int64
    indices: np.ndarray  # (nnz,) int64
    coeffs: fr.FrArray  # (nnz, 4)
    n_cols: int

    @property
    def n_rows(self) -> int:
        return len(self.indptr) - 1

    @property
    def nnz(self) -> int:
        return len(self.indices)

    @classmethod
    def from_triples(cls, rows: np.ndarray, cols: np.ndarray, coeffs: fr.FrArray, n_rows: int, n_cols: int) -> SparseMatrix:
        rows, cols = np.asarray(rows, np.int64), np.asarray(cols, np.int64)
        order, indptr = _csr_order(rows, cols, n_rows, n_cols)
        return cls(indptr, fr.take_rows(cols, order), fr.take_rows(coeffs, order), n_cols)

    def row_ids(self) -> np.ndarray:
        """Row index of every stored entry."""
        return np.repeat(np.arange(self.n_rows, dtype=np.int64), np.diff(self.indptr))

    def transpose(self) -> SparseMatrix:
        """The transposed matrix (same as from_triples of the swapped triples)."""
        rows = self.row_ids()
        order, indptr = _csr_order(self.indices, rows, self.n_cols, self.n_rows)
        return SparseMatrix(indptr, fr.take_rows(rows, order), fr.take_rows(self.coeffs, order), self.n_rows)

    @cached_property
    def coeffs_mont(self) -> fr.Mont:
        return fr.to_mont(self.coeffs)

    @property
    def host_plan(self) -> MatrixPlan:
        """The coefficients recoded for the compiled host kernel, made once per matrix: under
        a lock, since worker threads all reach their first partition together (and
        cached_property has no lock from Python 3.12)."""
        plan = self.__dict__.get("_host_plan")
        if plan is None:
            with _PLAN_LOCK:
                plan = self.__dict__.get("_host_plan")
                if plan is None:
                    plan = self.__dict__["_host_plan"] = make_plan(self.indptr, self.indices, self.coeffs, self.n_cols)
        return plan

    def matvec_host(self, z: fr.FrArray, density: np.ndarray, out: np.ndarray | None = None) -> fr.FrArray:
        """M . z by the compiled nogil kernel (same bytes as matvec); density: z's classes;
        out: where to write it (see prover.host.matvec.matvec)."""
        return host_matvec(self.host_plan, z, density, out)

    def matvec(self, z: fr.FrArray) -> fr.FrArray:
        return self.matvec_mont(fr.to_mont(z))

    def matvec_mont(self, z: fr.Mont) -> fr.FrArray:
        """M . z in Fr for z in Montgomery form (8, n_cols), returned as a canonical
        FrArray: one Montgomery product per stored entry, then per-row sums with a single
        reduction."""
        coeffs, indices = self.coeffs_mont, self.indices
        # per block of rows: gather, products, sums (on fr's thread pool for large matrices)
        return fr.csr_sums(lambda e0, e1: fr.mont_mul(coeffs[:, e0:e1], z[:, indices[e0:e1]]), self.indptr)
