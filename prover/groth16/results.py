"""The data the phases of a prove hand each other: a synthesis (witness and constraint
evaluations), prep_msm's splits of each query, the G1 MSMs' results."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from prover.field import fr
from prover.host.zpack import ZPack

ZERO, ONE, OTHER = 0, 1, 2  # density classes of witness values


@dataclass(frozen=True)
class Synthesis:
    z: fr.FrArray  # (num_vars, 4): [1, public..., private...]
    public_inputs: fr.FrArray  # (num_public, 4)
    a: fr.FrArray | None  # (n, 4) evaluations A.z over the domain (None: a witness alone, the GPU makes them)
    b: fr.FrArray | None
    c: fr.FrArray | None
    # ZERO / ONE / OTHER per value of z when the host kernels made it (prep_msm reuses it)
    density: np.ndarray | None = field(default=None, compare=False, repr=False)
    # z's upload form (prover/host/zpack.py) where the GPU makes a, b, c (abc gpu): what goes up
    zpack: ZPack | None = field(default=None, compare=False, repr=False)

    def public_ints(self) -> list[int]:
        return fr.to_ints(self.public_inputs)


@dataclass(frozen=True)
class QuerySplit:
    """One MSM split: rows summed by batch addition (scalar 1) and the tail MSM (other)."""

    ones: np.ndarray  # (k,) int64 row indices into the query
    tail: np.ndarray  # (t,) int64 row indices
    tail_scalars: fr.FrArray  # (t, 4)


@dataclass(frozen=True)
class MsmPrep:
    density: np.ndarray  # (num_vars,) uint8: ZERO / ONE / OTHER per witness value
    a: QuerySplit
    b_g1: QuerySplit
    b_g2: QuerySplit
    l: QuerySplit  # indices relative to the L query (private variables)


@dataclass(frozen=True)
class G1Msms:
    """MSM results as 96-byte affine xy encodings."""

    h: bytes
    l: bytes
    a: bytes
    b_g1: bytes
