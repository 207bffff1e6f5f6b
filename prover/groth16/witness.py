"""Vectorised witness generation for the circuit family of ``circuit.py``.

All lanes advance together, one round at a time: bit logic on uint8 arrays of shape
(lanes, 32), word sums on uint64, and the y^5 mixing as Montgomery Fr arrays over lanes.
"""
from __future__ import annotations

import numpy as np

from prover.field import fr
from prover.groth16.circuit import NUM_PUBLIC, WORD, Circuit, output_vars

_POW2 = (np.uint64(1) << np.arange(WORD + 1, dtype=np.uint64))


def _pack(bits: np.ndarray) -> np.ndarray:
    """(lanes, w) bits -> (lanes,) uint64 words."""
    return (bits.astype(np.uint64) * _POW2[: bits.shape[1]]).sum(axis=1, dtype=np.uint64)


def _unpack(words: np.ndarray, width: int) -> np.ndarray:
    return ((words[:, None] >> np.arange(width, dtype=np.uint64)) & np.uint64(1)).astype(np.uint8)


def instance_bits(circuit: Circuit, instance: int) -> tuple[np.ndarray, np.ndarray]:
    """The private input words u0, v0 (lanes, 32) of an instance."""
    rng = np.random.default_rng([circuit.seed, circuit.constraints_log2, instance, 0x1A])
    lanes = circuit.layout.lanes
    return (rng.integers(0, 2, size=(lanes, WORD), dtype=np.uint8), rng.integers(0, 2, size=(lanes, WORD), dtype=np.uint8))


def generate_witness(circuit: Circuit, instance: int) -> tuple[fr.FrArray, fr.FrArray]:
    """Full assignment z (num_vars, 4) with z[0] = 1, z[1..4] public; and the publics."""
    lay = circuit.layout
    z = fr.zeros(circuit.num_vars)
    bits = np.zeros(circuit.num_vars, dtype=np.uint64)  # bit/word-valued variables
    u, v = instance_bits(circuit, instance)
    bits[lay.init_u], bits[lay.init_v] = u, v
    acc = fr.to_mont(lay.acc0)
    field_idx, field_vals = [], []
    for r in range(lay.rounds):
        x, a = u ^ v, u & v
        total = _pack(x) + _pack(a) + lay.round_consts[r]
        s = _unpack(total, WORD + 1)
        bits[lay.x[r]], bits[lay.a[r]], bits[lay.s[r]] = x, a, s
        y = fr.mont_add(acc, fr.to_mont(fr.from_u64(_pack(s[:, :WORD]))))
        t2 = fr.mont_mul(y, y)
        t4 = fr.mont_mul(t2, t2)
        acc = fr.mont_mul(t4, y)
        field_idx += [lay.y[r], lay.t2[r], lay.t4[r], lay.acc[r]]
        field_vals += [y, t2, t4, acc]
        u, v = np.roll(s[:, :WORD], int(lay.rotations[r]), axis=1), x
    z[:, 0] = bits
    z[np.concatenate(field_idx)] = fr.from_mont(np.concatenate(field_vals, axis=1))
    public = z[output_vars(lay)]
    z[0] = fr.ones(1)[0]
    z[1 : 1 + NUM_PUBLIC] = public
    return z, public
