"""Groth16 proving and verifying keys as compact arrays (uint8 point encodings)."""
from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np


@dataclass(frozen=True)
class ProvingKey:
    """Points are xy little-endian encodings (G1 96 bytes, G2 192 bytes, identity = 0s).

    Query rows are indexed by variable (A, B_G1, B_G2: all variables; L: private variables
    only, i.e. variable ``num_inputs + i``; H: the coset-Lagrange points
    ``[L^coset_i(tau) Z(tau) / delta]``, ``i < n``, in the order of NTT-H's coset evaluations).
    """

    alpha_g1: np.ndarray  # (96,)
    beta_g1: np.ndarray
    beta_g2: np.ndarray  # (192,)
    delta_g1: np.ndarray
    delta_g2: np.ndarray
    a_query: np.ndarray  # (num_vars, 96)
    b_g1_query: np.ndarray  # (num_vars, 96)
    b_g2_query: np.ndarray  # (num_vars, 192)
    l_query: np.ndarray  # (num_vars - num_inputs, 96)
    h_query: np.ndarray  # (n, 96)
    num_inputs: int  # including the constant one

    def arrays(self) -> dict[str, np.ndarray]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "num_inputs"}

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays().values())

    @staticmethod
    def size_for(num_vars: int, num_inputs: int, domain: int) -> int:
        """`nbytes` of the key of a circuit of this shape, known before it is set up or read
        (the key ring counts a key's host bytes before it loads it)."""
        g1, g2 = 96, 192
        fixed = 3 * g1 + 2 * g2  # alpha, beta, delta in G1; beta, delta in G2
        return fixed + num_vars * (2 * g1 + g2) + (num_vars - num_inputs) * g1 + domain * g1


@dataclass(frozen=True)
class VerifyingKey:
    alpha_g1: np.ndarray  # (96,)
    beta_g2: np.ndarray  # (192,)
    gamma_g2: np.ndarray
    delta_g2: np.ndarray
    ic: np.ndarray  # (num_inputs, 96)
    # how the setup drew its toxic waste: "random" (OS randomness), "insecure-seeded" (from a
    # seed: anyone who knows it can forge proofs), "unknown" (read from a file without a label)
    setup_label: str = "random"

    def arrays(self) -> dict[str, np.ndarray]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "setup_label"}

    @property
    def insecure(self) -> bool:
        return self.setup_label == "insecure-seeded"

    @property
    def num_public(self) -> int:
        return len(self.ic) - 1
