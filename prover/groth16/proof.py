"""A Groth16 proof (A in G1, B in G2, C in G1) and its compressed byte form."""
from __future__ import annotations

from dataclasses import dataclass

from prover.field import curve

PROOF_BYTES = 48 + 96 + 48


@dataclass(frozen=True)
class Proof:
    a: curve.G1
    b: curve.G2
    c: curve.G1

    def to_bytes(self) -> bytes:
        """Compressed A || B || C (192 bytes)."""
        return self.a.to_compressed_bytes() + self.b.to_compressed_bytes() + self.c.to_compressed_bytes()

    @classmethod
    def from_bytes(cls, data: bytes) -> Proof:
        """Parse and check (on curve, in subgroup); raises ValueError on anything else."""
        if len(data) != PROOF_BYTES:
            raise ValueError(f"a proof is {PROOF_BYTES} bytes, got {len(data)}")
        try:
            return cls(
                curve.G1.from_compressed_bytes(data[:48]),
                curve.G2.from_compressed_bytes(data[48:144]),
                curve.G1.from_compressed_bytes(data[144:]),
            )
        except Exception as exc:  # the binding raises its own error types
            raise ValueError(f"invalid proof point: {exc}") from exc

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Proof) and self.to_bytes() == other.to_bytes()

    def __hash__(self) -> int:
        return hash(self.to_bytes())
