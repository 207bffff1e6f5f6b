"""Batch-affine rounds of an MSM's first accumulation level (settings' msm_acc = "affine";
kernels in cuda/msm_affine.cuh). Each round halves every bucket's sorted list with affine pair
additions, one field inversion a thread shared by its pairs (Montgomery's trick; the inversion
by 4-bit windows, affine_inv); the last round's list then goes to the XYZZ pieces
(msm_acc0_list) and the levels above, as the entries would.

Memory: round r writes an affine list of at most ceil(M / 2^r) + nb points (M entries, nb
buckets; 96 B a G1 point, 192 B G2), and two consecutive lists are alive at once: the peak is
about 0.75 M points (72 B an entry for G1, 18x the 4-byte entries array)."""
from __future__ import annotations

from typing import Callable

import numpy as np

from prover.kernels.cupy_util import _TPB, _cp, _grid

AUTO_THREADS = 1 << 17  # threads a round aims at when the batch is auto (~1000 an SM of the H200)
AUTO_MIN, AUTO_MAX = 128, 512  # pairs a thread: the inversion (~485 products) over >= 128 pairs (<= 3.8 each)


def batch_size(pairs: int, setting: int) -> int:
    """Pairs a thread owns: the setting, or the power of two that gives ~AUTO_THREADS threads."""
    if setting:
        return setting
    k = AUTO_MIN
    while k < AUTO_MAX and k * AUTO_THREADS < pairs:
        k *= 2
    return k


def pair_rounds(k: Callable, kk: Callable, entries, pts, counts, incl, nb: int, m_bound: int, aw: int,
                rounds: int, batch: int):
    """Run `rounds` halving rounds over the sorted entries (index | sign) of `pts`; returns the
    affine list (rows of aw u32), its per-bucket counts and their inclusive prefix."""
    cp = _cp()
    u32 = cp.uint32
    lst, cnt, inc = None, counts, incl
    for r in range(rounds):
        ocnt = cp.empty(nb, dtype=u32)
        kk("msm_pieces")(_grid(nb), (_TPB,), (cnt, ocnt, np.uint32(nb), np.uint32(2)))  # ceil(cnt / 2)
        oinc = cp.cumsum(ocnt, dtype=u32)
        m_bound = min(m_bound, -(-m_bound // 2) + nb)
        out = cp.empty((max(m_bound, 1), aw), dtype=u32)
        K = batch_size(m_bound, batch)
        grid = _grid(-(-m_bound // K), 128)
        if r == 0:
            k("msm_pair_round0")(grid, (128,), (entries, pts, cnt, inc, oinc, np.uint32(nb), np.uint32(K), out))
        else:
            k("msm_pair_round")(grid, (128,), (lst, cnt, inc, oinc, np.uint32(nb), np.uint32(K), out))
        lst, cnt, inc = out, ocnt, oinc
    return lst, cnt, inc
