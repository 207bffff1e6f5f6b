"""Sparse R1CS matrices in CSR form with Fr coefficients, and their products with vectors."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from prover.bls import fr


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
        order = np.lexsort((cols, rows))  # row-major, columns ascending within a row
        rows, cols, coeffs = rows[order], cols[order], coeffs[order]
        indptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
        return cls(indptr, cols.astype(np.int64), np.ascontiguousarray(coeffs), n_cols)

    def row_ids(self) -> np.ndarray:
        """Row index of every stored entry."""
        return np.repeat(np.arange(self.n_rows, dtype=np.int64), np.diff(self.indptr))

    def transpose(self) -> SparseMatrix:
        return SparseMatrix.from_triples(self.indices, self.row_ids(), self.coeffs, self.n_cols, self.n_rows)

    @cached_property
    def coeffs_mont(self) -> fr.Mont:
        return fr.to_mont(self.coeffs)

    def matvec(self, z: fr.FrArray) -> fr.FrArray:
        return self.matvec_mont(fr.to_mont(z))

    def matvec_mont(self, z: fr.Mont) -> fr.FrArray:
        """M . z in Fr for z in Montgomery form (8, n_cols), returned as a canonical
        FrArray: one Montgomery product per stored entry, then per-row sums with a single
        reduction."""
        terms = fr.mont_mul(self.coeffs_mont, z[:, self.indices])
        return fr.segment_sums_from_mont(terms, self.indptr)

    def digest_bytes(self) -> bytes:
        return self.indptr.tobytes() + self.indices.tobytes() + self.coeffs.tobytes()
