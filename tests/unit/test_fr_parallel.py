"""fr's thread pool (large element-wise ops, transposes, CSR sums, gathers in blocks) gives the
same bytes as the serial code, and nested or concurrent use neither deadlocks nor mixes blocks."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from prover.field import blocks, fr


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(blocks, "CHUNK", 64)
    monkeypatch.setattr(blocks, "PARALLEL_MIN", 128)
    monkeypatch.setattr(blocks, "_threads", 4)
    monkeypatch.setattr(blocks, "_pool", None)


def _serial(monkeypatch, fn):
    monkeypatch.setattr(blocks, "_threads", 1)
    try:
        return fn()
    finally:
        monkeypatch.setattr(blocks, "_threads", 4)


def test_pooled_ops_equal_serial(monkeypatch, small_blocks) -> None:
    a, b = fr.random(1000, 1), fr.random(1000, 2)
    am, bm = fr.to_mont(a), fr.to_mont(b)
    indptr = np.concatenate([[0], np.sort(np.random.default_rng(3).integers(0, 1000, 299)), [1000]])
    idx = np.random.default_rng(4).permutation(1000)
    ops = {
        "mul": lambda: fr.mul(a, b),
        "add": lambda: fr.add(a, b),
        "sub": lambda: fr.sub(a, b),
        "mont_mul": lambda: fr.mont_mul(am, bm),
        "from_mont": lambda: fr.from_mont(am),
        "split_join": lambda: fr._join32(fr._split32(a)),
        "csr": lambda: fr.segment_sums_from_mont(fr.mont_mul(am, bm), indptr),
        "rows": lambda: fr.take_rows(a, idx),
        "cols": lambda: fr.take_columns(am, idx),
    }
    for name, op in ops.items():
        assert np.array_equal(op(), _serial(monkeypatch, op)), name
    assert np.array_equal(fr.take_rows(a, idx), a[idx]) and np.array_equal(fr.take_columns(am, idx), am[:, idx])
    assert fr.to_ints(fr.mul(a[:5], b[:5])) == [x * y % fr.R_MOD for x, y in zip(fr.to_ints(a[:5]), fr.to_ints(b[:5]))]


def test_concurrent_callers_and_nested_use(small_blocks) -> None:
    a, b = fr.random(600, 5), fr.random(600, 6)
    want = fr.mul(a, b)
    with ThreadPoolExecutor(6) as ex:  # callers on their own threads share the pool
        outs = list(ex.map(lambda _: fr.mul(a, b), range(12)))
    assert all(np.array_equal(o, want) for o in outs)
    # an op running inside a pool worker runs its blocks inline (no deadlock)
    got = blocks.executor().submit(lambda: fr.mul(a, b)).result(timeout=60)
    assert np.array_equal(got, want)
