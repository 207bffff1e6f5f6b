"""Groth16 proving and verifying keys as compact arrays (uint8 point encodings).

A proving key's five queries are host arrays, or, for a key set up on the GPU and kept there
(settings key_resident = "device"), device-resident points (prover/kernels/setup_gpu.py
ResidentPoints: len(), shape and to_host() like the array they stand for): then the key's host
bytes are its presence bits and the few fixed points, and its tens of GiB are on the device,
where the MSMs read them.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Iterator

import numpy as np

QUERIES = ("a_query", "b_g1_query", "b_g2_query", "l_query", "h_query")


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
    a_query: Any  # (num_vars, 96); each query a host array or device-resident points
    b_g1_query: Any  # (num_vars, 96)
    b_g2_query: Any  # (num_vars, 192)
    l_query: Any  # (num_vars - num_inputs, 96)
    h_query: Any  # (n, 96)
    num_inputs: int  # including the constant one
    # which query points are present, per variable (prover/groth16/prep_nb.py presence's bits),
    # known at set-up for a resident key (its points are not on the host to read); not stored
    presence: np.ndarray | None = field(default=None, compare=False, repr=False)

    def arrays(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("num_inputs", "presence")}

    def host_arrays(self) -> Iterator[tuple[str, np.ndarray]]:
        """(name, host array) in arrays()' order, a resident query brought to the host when its
        turn comes (one at a time: the key cache's writer holds one query, not the key)."""
        for name, a in self.arrays().items():
            yield name, a if isinstance(a, np.ndarray) else a.to_host()

    @property
    def resident(self) -> bool:
        """Whether any query lives on a device."""
        return any(not isinstance(getattr(self, q), np.ndarray) for q in QUERIES)

    @property
    def nbytes(self) -> int:
        """Host bytes: the arrays on the host, and the presence bits."""
        host = sum(int(a.nbytes) for a in self.arrays().values() if isinstance(a, np.ndarray))
        return host + (0 if self.presence is None else int(self.presence.nbytes))

    @property
    def device_bytes(self) -> int:
        """Bytes of the queries resident on a device (0 for a host key)."""
        return sum(int(a.nbytes) for a in self.arrays().values() if not isinstance(a, np.ndarray))

    @staticmethod
    def size_for(num_vars: int, num_inputs: int, domain: int) -> int:
        """`nbytes` of the key of a circuit of this shape, known before it is set up or read
        (the key ring counts a key's host bytes before it loads it)."""
        g1, g2 = 96, 192
        fixed = 3 * g1 + 2 * g2  # alpha, beta, delta in G1; beta, delta in G2
        return fixed + num_vars * (2 * g1 + g2) + (num_vars - num_inputs) * g1 + domain * g1

    @staticmethod
    def resident_host_size_for(num_vars: int) -> int:
        """`nbytes` of a resident key of that shape: the fixed points and the presence bits."""
        return 3 * 96 + 2 * 192 + num_vars


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
