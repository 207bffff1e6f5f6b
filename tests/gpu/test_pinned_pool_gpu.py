"""pin_prep's page-locked copies go back to CuPy's pinned pool and are taken again: a run of
partitions with varying prep sizes holds a bounded set of blocks (exact sizes grew the pool
by one block per array per partition)."""
from __future__ import annotations

import gc

import numpy as np
import pytest

pytestmark = pytest.mark.gpu


def test_pinned_copies_reuse_pool_blocks() -> None:
    import cupy as cp

    from prover.kernels.pinned import pinned_copy

    pool = cp.get_default_pinned_memory_pool()
    pool.free_all_blocks()
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(950_000, 1_050_000))
        x = rng.integers(0, 2**63, size=(n, 4), dtype=np.uint64)
        p = pinned_copy(x)
        assert p.shape == x.shape and np.array_equal(p, x)
        d = cp.asarray(p)  # the DMA path the engine's uploads take
        assert int(d[-1, 3]) == int(x[-1, 3])
        del p, d
        gc.collect()
    assert pool.n_free_blocks() <= 3, pool.n_free_blocks()
