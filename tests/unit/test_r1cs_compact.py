"""The compact R1CS form (prover/groth16/r1cs.py): the circuit family's matrices are the ones the
FrArray form built before (their old digest, recorded from that code, is reproduced from the new
arrays), and CSR from entries in any order is the stable row-major order."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

from prover.field import fr
from prover.groth16 import phases as P
from prover.groth16.r1cs import SparseMatrix, compact
from prover.host.matvec import BIG

# sha256 over (name:k:seed, then per matrix indptr, int64 indices, FrArray coefficients): the
# digest of the FrArray-form builder this replaced, at commit c745f34
_LEGACY = {(8, 1): "02b8f1217a737f58f31ca68027a94c532a1381c20368df56d84ce63f0ee023bb",
           (11, 5): "96705b350de83ae95d0d8054b489dd8a0883150eb08b1ce58238a1ea6afccdd1"}


def _legacy_digest(circuit) -> str:
    h = hashlib.sha256(f"porep-like-v1:{circuit.constraints_log2}:{circuit.seed}".encode())
    for m in (circuit.a, circuit.b, circuit.c):
        for part in (m.indptr, m.indices.astype(np.int64), m.coeffs):
            h.update(np.ascontiguousarray(part).data)
    return h.hexdigest()


@pytest.mark.parametrize("k,seed", sorted(_LEGACY))
def test_the_family_builds_the_same_matrices(k: int, seed: int) -> None:
    circuit = P.make_circuit(k, seed)
    assert _legacy_digest(circuit) == _LEGACY[(k, seed)]
    assert circuit.digest() == P.make_circuit(k, seed).digest() != _LEGACY[(k, seed)]
    assert circuit.a.indices.dtype == np.int32 and circuit.a.codes.dtype == np.uint8
    assert len(circuit.a.big) == max(1, (1 << k) // 1024)  # the round-0 accumulators: full-size


def test_from_triples_in_any_order_is_row_major_and_keeps_coefficients() -> None:
    rng = np.random.default_rng(3)
    m = 500
    rows, cols = rng.integers(0, 40, m), rng.integers(0, 30, m)
    small = rng.choice([1, -1, 2, 1 << 33, -(1 << 20), 7], m)
    coeffs = fr.from_i64(small)
    big = rng.random(m) < 0.1
    coeffs[big] = fr.random(int(big.sum()), 9)
    got = SparseMatrix.from_triples(rows, cols, coeffs, 40, 30)
    order = np.argsort(rows * 30 + cols, kind="stable")
    assert np.array_equal(got.indices, cols[order]) and np.array_equal(got.row_ids(), rows[order])
    assert np.array_equal(got.coeffs, coeffs[order])
    t = got.transpose()
    assert np.array_equal(t.transpose().coeffs, got.coeffs) and np.array_equal(t.transpose().indices, got.indices)
    z = fr.random(30, 4)
    dense = np.zeros((40, 30), dtype=object)
    for r, c, v in zip(rows, cols, fr.to_ints(coeffs)):
        dense[r, c] = (dense[r, c] + v) % fr.R_MOD
    want = [sum(int(dense[r, c]) * x for c, x in enumerate(fr.to_ints(z))) % fr.R_MOD for r in range(40)]
    assert fr.to_ints(got.matvec(z)) == want


def test_compact_demotes_values_past_the_code_table() -> None:
    small = np.arange(300, dtype=np.int64) - 150  # 300 distinct values: 255 codes, 45 stored in full
    small = np.concatenate([small, small[:255]])  # the first 255 are used twice: those keep codes
    codes, values, big = compact(small, np.zeros(len(small), bool), np.zeros((0, 4), np.uint64))
    assert len(values) == 255 and int((codes == BIG).sum()) == 45 == len(big)
    back = np.where(codes == BIG, 0, values[np.minimum(codes, 254)])
    full = fr.from_i64(back)
    full[codes == BIG] = big
    assert np.array_equal(full, fr.from_i64(small))
