"""prep_msm's host work as compiled nogil kernels: from the witness's density classes and
which query points exist, the four MSM splits (ones for batch addition, the tail and its
scalars), in one counting pass and one filling pass over the variables.

Which points of a query are present (non-identity) depends only on the proving key, so it
is found once per key (first use) and kept for the key's lifetime, not re-read from the
multi-GiB point arrays every partition. Both passes split over a partition's host threads
(ranges of variables; `threads`), the same arrays.
"""
from __future__ import annotations

import threading
import weakref

import numpy as np
from prover.field.jit import njit  # numba.njit, cached where numba can cache

from prover.groth16.circuit import Circuit
from prover.groth16.keys import ProvingKey
from prover.host import threads as host_threads

QUERIES = ("a", "b_g1", "b_g2", "l")  # bit q of the presence byte: point present in query q
ONE, OTHER = 1, 2
_Z, _1 = np.uint64(0), np.uint64(1)

_cache: dict[int, tuple[weakref.ref, np.ndarray]] = {}
_cache_lock = threading.RLock()  # re-entrant: a weakref callback may run inside it (GC)


@njit(nogil=True)
def _present_rows(points: np.ndarray, bit: np.uint8, offset: int, out: np.ndarray) -> None:
    """out[offset + i] |= bit where row i of a point array is not all zero bytes."""
    for i in range(points.shape[0]):
        for j in range(points.shape[1]):
            if points[i, j] != 0:
                out[offset + i] |= bit
                break


def mark_present(points: np.ndarray, bit: np.uint8, offset: int, out: np.ndarray) -> None:
    """out[offset + i] |= bit where row i of a query's point array is not the identity."""
    _present_rows(np.ascontiguousarray(points), bit, offset, out)


def presence(pk: ProvingKey) -> np.ndarray:
    """(num_vars,) uint8 presence bits of the A, B_G1, B_G2 and L query points per variable
    (a resident key carries them from its set-up)."""
    if pk.presence is not None:
        return pk.presence
    key = id(pk)
    with _cache_lock:  # held while a first reading runs: every worker wants the same bits
        hit = _cache.get(key)
        if hit is not None and hit[0]() is pk:
            return hit[1]
        out = np.zeros(len(pk.a_query), dtype=np.uint8)
        for q, name in enumerate(QUERIES):
            points = np.ascontiguousarray(getattr(pk, f"{name}_query"))
            _present_rows(points, np.uint8(1 << q), pk.num_inputs if name == "l" else 0, out)
        _cache[key] = (weakref.ref(pk, lambda _r: _pop(key)), out)
        return out


def _pop(key: int) -> None:
    with _cache_lock:
        _cache.pop(key, None)


@njit(nogil=True)
def _count(cls: np.ndarray, present: np.ndarray, ni: int) -> np.ndarray:
    """counts[q, 0] ones and counts[q, 1] tail entries of query q."""
    return _count_range(cls, present, ni, 0, cls.shape[0])


@njit(nogil=True)
def _count_range(cls: np.ndarray, present: np.ndarray, ni: int, v0: int, v1: int) -> np.ndarray:
    """_count over the variables [v0, v1)."""
    counts = np.zeros((4, 2), dtype=np.int64)
    for v in range(v0, v1):
        k = cls[v]
        if k == 0:
            continue
        slot = 0 if k == ONE else 1
        bits = present[v]
        for q in range(3):
            if bits & (1 << q):
                counts[q, slot] += 1
        if v >= ni and bits & 8:
            counts[3, slot] += 1
    return counts


@njit(nogil=True)
def _fill(cls: np.ndarray, present: np.ndarray, ni: int, z: np.ndarray, ones: tuple, tails: tuple, scalars: tuple) -> None:
    _fill_range(cls, present, ni, z, ones, tails, scalars, 0, cls.shape[0], np.zeros((4, 2), dtype=np.int64))


@njit(nogil=True)
def _fill_range(cls: np.ndarray, present: np.ndarray, ni: int, z: np.ndarray, ones: tuple, tails: tuple,
                scalars: tuple, v0: int, v1: int, pos: np.ndarray) -> None:
    """_fill over the variables [v0, v1), writing from `pos` ((4, 2): where this range's first
    one and tail entry of each query go, from the counting pass; advanced in place)."""
    for v in range(v0, v1):
        k = cls[v]
        if k == 0:
            continue
        bits = present[v]
        for q in range(4):
            if q == 3:
                if v < ni or not bits & 8:
                    continue
                idx = v - ni
            else:
                if not bits & (1 << q):
                    continue
                idx = v
            if k == ONE:
                ones[q][pos[q, 0]] = idx
                pos[q, 0] += 1
            else:
                i = pos[q, 1]
                tails[q][i] = idx
                for j in range(4):
                    scalars[q][i, j] = z[v, j]
                pos[q, 1] += 1


MIN_VARS = 1 << 15  # variables a chunk at least


def splits(cls: np.ndarray, z: np.ndarray, pk: ProvingKey, threads: int = 1) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(ones, tail, tail_scalars) for the A, B_G1, B_G2 and L queries, in that order; the
    same arrays as the reference's per-query flatnonzero masks."""
    return split_arrays(cls, z, presence(pk), pk.num_inputs, threads)


def split_arrays(cls: np.ndarray, z: np.ndarray, present: np.ndarray, num_inputs: int,
                 threads: int = 1) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """splits, given the presence bits (``presence``) and the key's num_inputs. With threads,
    both passes run over ranges of variables: each range counts its entries, the counts'
    prefix sums say where each range writes, so the arrays are the one-pass arrays."""
    n = cls.shape[0]
    chunks = host_threads.chunk_count(threads, n, MIN_VARS)
    bounds = host_threads.even_bounds(n, chunks)
    counts = np.zeros((chunks, 4, 2), dtype=np.int64)

    def count(i: int) -> None:
        counts[i] = _count_range(cls, present, num_inputs, bounds[i], bounds[i + 1])

    host_threads.run_chunks(chunks, threads, count)
    starts = np.cumsum(counts, axis=0) - counts  # (chunks, 4, 2): where each range's entries begin
    total = counts.sum(axis=0)
    ones = tuple(np.empty(int(n_), dtype=np.int64) for n_ in total[:, 0])
    tails = tuple(np.empty(int(n_), dtype=np.int64) for n_ in total[:, 1])
    scalars = tuple(np.empty((int(n_), 4), dtype=np.uint64) for n_ in total[:, 1])

    def fill(i: int) -> None:
        _fill_range(cls, present, num_inputs, z, ones, tails, scalars, bounds[i], bounds[i + 1], starts[i].copy())

    host_threads.run_chunks(chunks, threads, fill)
    return list(zip(ones, tails, scalars))


def presence_from_circuit(circuit: Circuit) -> np.ndarray:
    """The presence bits a key of ``circuit`` has (with probability 1 - O(n/r)): a query
    point is the identity exactly when its polynomial at tau is zero, i.e. when the variable
    has no entry in A (A query), B (B queries) or any of A, B, C (L query). For measuring
    prep_msm at sizes whose setup is not worth running; ``presence`` reads a real key."""
    used = [np.bincount(m.indices, minlength=circuit.num_vars) > 0 for m in (circuit.a, circuit.b, circuit.c)]
    out = used[0].astype(np.uint8) | (used[1].astype(np.uint8) * np.uint8(6))
    l_bit = (used[0] | used[1] | used[2]) & (np.arange(circuit.num_vars) >= circuit.num_inputs)
    return out | (l_bit.astype(np.uint8) << np.uint8(3))


@njit(nogil=True)
def _density_kernel(z: np.ndarray, out: np.ndarray) -> None:
    _density_range(z, out, 0, z.shape[0])


@njit(nogil=True)
def _density_range(z: np.ndarray, out: np.ndarray, v0: int, v1: int) -> None:
    for v in range(v0, v1):
        if z[v, 1] != _Z or z[v, 2] != _Z or z[v, 3] != _Z or z[v, 0] > _1:
            out[v] = OTHER
        else:
            out[v] = z[v, 0]


def density(z: np.ndarray, threads: int = 1) -> np.ndarray:
    """ZERO / ONE / OTHER class of each value (as ``phases.density``), compiled."""
    z = np.ascontiguousarray(z)
    out = np.empty(len(z), dtype=np.uint8)
    chunks = host_threads.chunk_count(threads, len(z), MIN_VARS)
    bounds = host_threads.even_bounds(len(z), chunks)
    host_threads.run_chunks(chunks, threads, lambda i: _density_range(z, out, bounds[i], bounds[i + 1]))
    return out


def warm_up(cls: np.ndarray, z: np.ndarray) -> None:
    """Compile the split kernels with the types a real key gives (no key needed)."""
    points = np.zeros((len(z), 96), dtype=np.uint8)
    points[::2, 0] = 1
    present = np.zeros(len(z), dtype=np.uint8)
    _present_rows(points, np.uint8(1), 0, present)
    split_arrays(cls, z, present, 5)
