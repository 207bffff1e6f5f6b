"""Witness generation for the circuit family of ``prover.groth16.circuit`` as one compiled
nogil kernel: the same assignment as the numpy reference (``prover.groth16.witness``),
bit for bit, with the density class of every value written on the way (prep_msm reads it).
Lanes are independent, so a partition's lanes are split over its host threads (`threads`).

Round-major over lanes (the layout allocates each round's variables for all lanes together,
so the writes into z walk forward through memory). Words are uint64 scalars: x = u ^ v,
a = u & v, s = x + a + k_r (33 bits), u' = rotl32(s, rot_r), v' = x; the y^5 mixing is
three Montgomery products per lane and round.
"""
from __future__ import annotations

import numpy as np
from prover.field.jit import njit  # numba.njit, cached where numba can cache

from prover.field import fr
from prover.groth16.circuit import NUM_PUBLIC, WORD, Circuit, output_vars
from prover.groth16.witness import _pack, instance_bits
from prover.field import fr_nb as F
from prover.host import threads as host_threads

ZERO_CLS, ONE_CLS, OTHER_CLS = 0, 1, 2
_W32 = np.uint64(WORD)


@njit(nogil=True)
def _write_bits(word: np.uint64, idx: np.ndarray, nbits: int, z: np.ndarray, cls: np.ndarray) -> None:
    """Bits of `word` as whole FrArray rows (all four limbs: z is not zeroed first) and their classes."""
    for i in range(nbits):
        bit = (word >> np.uint64(i)) & F.ONE
        v = idx[i]
        z[v, 0] = bit
        z[v, 1] = F.ZERO
        z[v, 2] = F.ZERO
        z[v, 3] = F.ZERO
        cls[v] = np.uint8(bit)


@njit(nogil=True)
def classify(z: np.ndarray, row: int) -> np.uint8:
    """ZERO / ONE / OTHER of one FrArray row (the reference's ``density``)."""
    if z[row, 1] != F.ZERO or z[row, 2] != F.ZERO or z[row, 3] != F.ZERO or z[row, 0] > F.ONE:
        return np.uint8(OTHER_CLS)
    return np.uint8(z[row, 0])


@njit(nogil=True)
def _store_field(x_m: np.ndarray, var: int, z: np.ndarray, cls: np.ndarray, t: np.ndarray, plain: np.ndarray) -> None:
    """z[var] = from_mont(x_m), and its class."""
    for k in range(2 * F.NL + 1):
        t[k] = F.ZERO
    for k in range(F.NL):
        t[k] = x_m[k]
    F.redc(t, plain)
    F.store64(plain, z, var)
    cls[var] = classify(z, var)


@njit(nogil=True)
def witness_kernel(u0: np.ndarray, v0: np.ndarray, acc0: np.ndarray, init_u: np.ndarray, init_v: np.ndarray,
                   xi: np.ndarray, ai: np.ndarray, si: np.ndarray, yi: np.ndarray, t2i: np.ndarray, t4i: np.ndarray,
                   acci: np.ndarray, consts: np.ndarray, rots: np.ndarray, z: np.ndarray, cls: np.ndarray) -> None:
    """Fill z[:, :] and cls for every layout variable (every limb written: no zeroing needed)."""
    witness_lanes(u0, v0, acc0, init_u, init_v, xi, ai, si, yi, t2i, t4i, acci, consts, rots, z, cls, 0, u0.shape[0])


@njit(nogil=True)
def witness_lanes(u0: np.ndarray, v0: np.ndarray, acc0: np.ndarray, init_u: np.ndarray, init_v: np.ndarray,
                  xi: np.ndarray, ai: np.ndarray, si: np.ndarray, yi: np.ndarray, t2i: np.ndarray, t4i: np.ndarray,
                  acci: np.ndarray, consts: np.ndarray, rots: np.ndarray, z: np.ndarray, cls: np.ndarray,
                  l0: int, l1: int) -> None:
    """witness_kernel for lanes [l0, l1): a lane's variables are its own (no lane reads
    another's), so ranges of lanes run on threads of their own, round-major within each."""
    n = l1 - l0
    rounds = consts.shape[0]
    u, v = u0[l0:l1].copy(), v0[l0:l1].copy()
    acc = np.empty((n, F.NL), dtype=np.uint64)  # Montgomery accumulators
    t = np.empty(2 * F.NL + 1, dtype=np.uint64)
    w, y = np.zeros(F.NL, dtype=np.uint64), np.zeros(F.NL, dtype=np.uint64)
    t2, t4, plain = np.zeros(F.NL, dtype=np.uint64), np.zeros(F.NL, dtype=np.uint64), np.zeros(F.NL, dtype=np.uint64)
    for i in range(n):
        lane = l0 + i
        F.load64(acc0, lane, plain)
        F.mont_mul(plain, F.R2_32, acc[i], t)
        _write_bits(u[i], init_u[lane], WORD, z, cls)
        _write_bits(v[i], init_v[lane], WORD, z, cls)
    for r in range(rounds):
        k_r, rot = consts[r], np.uint64(rots[r])
        for i in range(n):
            lane = l0 + i
            x = u[i] ^ v[i]
            a = u[i] & v[i]
            s = x + a + k_r
            _write_bits(x, xi[r, lane], WORD, z, cls)
            _write_bits(a, ai[r, lane], WORD, z, cls)
            _write_bits(s, si[r, lane], WORD + 1, z, cls)
            s32 = s & F.M32
            w[0] = s32
            for k in range(1, F.NL):
                w[k] = F.ZERO
            F.mont_mul(w, F.R2_32, w, t)  # to Montgomery form
            F.add_mod(acc[i], w, y)
            F.mont_mul(y, y, t2, t)
            F.mont_mul(t2, t2, t4, t)
            F.mont_mul(t4, y, acc[i], t)
            _store_field(y, yi[r, lane], z, cls, t, plain)
            _store_field(t2, t2i[r, lane], z, cls, t, plain)
            _store_field(t4, t4i[r, lane], z, cls, t, plain)
            _store_field(acc[i], acci[r, lane], z, cls, t, plain)
            u[i] = ((s32 << rot) | (s32 >> (_W32 - rot))) & F.M32
            v[i] = x


MIN_LANES = 64  # lanes a chunk at least (a chunk's call and temporaries cost ~microseconds)


def generate_witness(circuit: Circuit, instance: int, z: fr.FrArray | None = None,
                     threads: int = 1, cls: np.ndarray | None = None) -> tuple[fr.FrArray, fr.FrArray, np.ndarray]:
    """(z, public inputs, density classes): z and the publics equal
    ``prover.groth16.witness.generate_witness``'s, the classes ``phases.density(z)``.
    z: a (num_vars, 4) uint64 array to reuse (every limb is written, so it is not zeroed): a
    worker's z keeps its pages, where a fresh 512 MiB one at 2^24 costs ~10^5 page faults.
    threads: lanes split over that many threads (prover/host/threads.py), the same bytes.
    cls: a (num_vars,) uint8 array to reuse for the classes (a worker's page-locked one, abc=gpu)."""
    lay = circuit.layout
    u, v = instance_bits(circuit, instance)
    if z is None:
        z = np.empty((circuit.num_vars, 4), dtype=np.uint64)
    elif z.shape != (circuit.num_vars, 4) or z.dtype != np.uint64 or not z.flags.c_contiguous:
        raise ValueError(f"witness z: need a C-contiguous uint64 array of shape {(circuit.num_vars, 4)}, "
                         f"got {z.dtype} {z.shape}")
    if cls is None:
        cls = np.empty(circuit.num_vars, dtype=np.uint8)  # every entry written too
    elif cls.shape != (circuit.num_vars,) or cls.dtype != np.uint8 or not cls.flags.c_contiguous:
        raise ValueError(f"witness classes: need a C-contiguous uint8 array of {circuit.num_vars}, "
                         f"got {cls.dtype} {cls.shape}")
    args = (_pack(u), _pack(v), lay.acc0, lay.init_u, lay.init_v, lay.x, lay.a, lay.s, lay.y, lay.t2, lay.t4,
            lay.acc, lay.round_consts, lay.rotations, z, cls)
    chunks = host_threads.chunk_count(threads, lay.lanes, MIN_LANES)
    bounds = host_threads.even_bounds(lay.lanes, chunks)
    host_threads.run_chunks(chunks, threads, lambda i: witness_lanes(*args, bounds[i], bounds[i + 1]))
    out = output_vars(lay)
    public = z[out]
    z[0] = fr.ones(1)[0]
    z[1 : 1 + NUM_PUBLIC] = public
    cls[0] = ONE_CLS
    cls[1 : 1 + NUM_PUBLIC] = cls[out]
    return z, public, cls
