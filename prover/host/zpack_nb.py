"""z's upload form (prover/host/zpack.py) built by compiled nogil kernels from the witness's
classes, in two passes over ranges of words, split over a partition's host threads (`threads`):

  bits   each word's `ones` and `others` from its 32 class bytes, read 8 at a time (a class is
         0, 1 or 2: bit 0 of a byte says one, bit 1 field value; a multiply gathers the 8 flags
         of a u64 into a byte), and the range's field values counted;
  fill   the counts' prefix sums say where each range's values go; each word's rank is written
         and its field values copied (a word with none is skipped: the family's field values lie
         in runs of a round's lanes, so most words have none and the rest are full).

The same arrays at any thread count (each range writes its own words and values)."""
from __future__ import annotations

import numpy as np

from prover.field.jit import njit  # numba.njit, cached where numba can cache
from prover.host import threads as host_threads
from prover.host.zpack import OTHER_CLS, TAB_COLS, WORD_VARS, ZPack, empty, words

MIN_WORDS = 1 << 12  # words a chunk at least (131,072 variables)
_LOW = np.uint64(0x0101010101010101)  # bit 0 of each byte
_GATHER = np.uint64(0x0102040810204080)  # (flags at bits 8i) * this >> 56: flag i at bit i
_SUM = _LOW  # (flags at bits 8i) * this >> 56: their count
_U1, _U8, _U56 = np.uint64(1), np.uint64(8), np.uint64(56)
_OTHER, _ONE = np.uint8(OTHER_CLS), np.uint8(1)


@njit(nogil=True)
def _bits_range(cls: np.ndarray, cls8: np.ndarray, tab: np.ndarray, w0: int, w1: int) -> int:
    """Words [w0, w1): ones and others into the table; returns the field values counted. `cls8`:
    cls's whole u64s (8 classes each; empty where cls is not 8-byte aligned: bytes then)."""
    n = cls.shape[0]
    fast = cls8.shape[0] // 4  # words whose 32 classes lie in cls8
    total = 0
    for w in range(w0, w1):
        ones, others = np.uint64(0), np.uint64(0)
        if w < fast:
            for q in range(4):
                x = cls8[4 * w + q]
                m1, m2 = x & _LOW, (x >> _U1) & _LOW
                sh = np.uint64(8 * q)
                ones |= ((m1 * _GATHER) >> _U56) << sh
                others |= ((m2 * _GATHER) >> _U56) << sh
                total += int((m2 * _SUM) >> _U56)
        else:
            base = w * WORD_VARS
            for j in range(min(WORD_VARS, n - base)):
                k = cls[base + j]
                if k == _ONE:
                    ones |= _U1 << np.uint64(j)
                elif k == _OTHER:
                    others |= _U1 << np.uint64(j)
                    total += 1
        tab[w, 0] = ones
        tab[w, 1] = others
    return total


@njit(nogil=True)
def _fill_range(z: np.ndarray, tab: np.ndarray, vals: np.ndarray, w0: int, w1: int, rank0: int) -> None:
    """Words [w0, w1): each rank, and the field values from position `rank0` of vals (none past its
    end: the caller sees the count and does not use the form then)."""
    cap = vals.shape[0]
    r = rank0
    for w in range(w0, w1):
        tab[w, 2] = r
        others = np.uint64(tab[w, 1])
        if others == 0:
            continue
        base = w * WORD_VARS
        for j in range(WORD_VARS):
            if (others >> np.uint64(j)) & _U1:
                if r < cap:
                    for limb in range(4):
                        vals[r, limb] = z[base + j, limb]
                r += 1


def pack(z: np.ndarray, cls: np.ndarray, capacity: int, out: tuple[np.ndarray, np.ndarray] | None = None,
         threads: int = 1) -> ZPack:
    """The upload form of witness `z` with classes `cls`, at most `capacity` field values (the
    plan's); `out`: a worker's (tab, vals) to write into (page-locked on CUDA; a smaller circuit
    writes their first rows). `ZPack.fits` False when the witness has more (nothing past the end)."""
    n = int(cls.shape[0])
    nw = words(n)
    if out is None:
        tab, vals = empty(n, capacity)
    else:
        tab, vals = out[0][:nw], out[1][: max(1, int(capacity))]
        if tab.shape != (nw, TAB_COLS) or tab.dtype != np.uint32 or vals.dtype != np.uint64 or vals.shape[1:] != (4,):
            raise ValueError(f"z's upload form: need a ({nw}, {TAB_COLS}) uint32 table and (k, 4) uint64 values, "
                             f"got {tab.dtype} {tab.shape} and {vals.dtype} {vals.shape}")
    cls = np.ascontiguousarray(cls, dtype=np.uint8)
    whole = (n // WORD_VARS) * WORD_VARS
    cls8 = cls[:whole].view(np.uint64) if cls.ctypes.data % 8 == 0 else np.zeros(0, np.uint64)
    chunks = host_threads.chunk_count(threads, nw, MIN_WORDS)
    bounds = host_threads.even_bounds(nw, chunks)
    counts = np.zeros(chunks, dtype=np.int64)

    def bits(i: int) -> None:
        counts[i] = _bits_range(cls, cls8, tab, bounds[i], bounds[i + 1])

    host_threads.run_chunks(chunks, threads, bits)
    starts = np.cumsum(counts) - counts
    host_threads.run_chunks(chunks, threads,
                            lambda i: _fill_range(z, tab, vals, bounds[i], bounds[i + 1], int(starts[i])))
    return ZPack(tab, vals, int(counts.sum()))
