"""Inputs for the primitives' tests: seeded Fr arrays, point sets (a few hundred distinct
points tiled, with identities) and scalars with edge values (0, 1, r-1, small, repeated)."""
from __future__ import annotations

import random

import numpy as np
import py_arkworks_bls12381 as ark

from prover.field.params import R_MOD
from prover.field.ref import fr_from_ints, fr_random, fr_to_ints

SEED = 20261201


def rng_for(tag: str) -> np.random.Generator:
    return np.random.default_rng([SEED, sum(map(ord, tag)) * 7919 + len(tag)])


def random_points(group: str, k: int, seed: int) -> tuple[list, np.ndarray]:
    G = ark.G1Point if group == "g1" else ark.G2Point
    r = random.Random(seed)
    pts = [G() * ark.Scalar(r.randrange(1, R_MOD)) for _ in range(k)]
    return pts, np.stack([np.frombuffer(p.to_xy_bytes_le(), dtype=np.uint8) for p in pts])


def msm_inputs(group: str, L: int, tag: str) -> tuple[list, np.ndarray, list, np.ndarray]:
    """(point objects, xy array, arkworks scalars, FrArray scalars) of 2^L terms."""
    n = 1 << L
    rng = rng_for(tag)
    uniq, uniq_xy = random_points(group, min(n, 257), int(rng.integers(1 << 30)))
    G = ark.G1Point if group == "g1" else ark.G2Point
    reps = -(-n // len(uniq))
    objs = (uniq * reps)[:n]
    xy = np.tile(uniq_xy, (reps, 1))[:n].copy()
    if n >= 16:
        for i in (3, n // 2):
            objs[i] = G.identity()
            xy[i] = 0
    s = fr_random(n, rng)
    si = fr_to_ints(s)
    if n >= 16:
        special = [0, 1, R_MOD - 1, 2, 3, (1 << 16) - 1, 1 << 200, R_MOD - 2]
        for j, v in enumerate(special):
            si[5 + j] = v
        for j in range(13, min(n, 40)):
            si[j] = 5  # a crowded bucket
        s = fr_from_ints(si)
    scal = [ark.Scalar.from_le_bytes(v.to_bytes(32, "little")) for v in si]
    return objs, xy, scal, s
