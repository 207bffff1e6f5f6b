"""Glue over py_arkworks_bls12381: compact point arrays, MSM, batch addition.

Points are stored as numpy ``uint8`` arrays -- G1 ``(n, 96)`` affine ``x || y`` and G2
``(n, 192)`` ``x.c0 || x.c1 || y.c0 || y.c1``, 48-byte little-endian coordinates, the
identity encoded as all zeros (arkworks' own convention) -- so that a 2^16-constraint
proving key is a few arrays, not hundreds of thousands of Python objects. Points become
arkworks objects only for the duration of an MSM (``from_xy_bytes_unchecked_le`` costs
~0.6 us per G1 point; the key was produced by us, so the subgroup check is skipped).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Generic, TypeVar
from functools import reduce
from operator import add, getitem

import numpy as np
from py_arkworks_bls12381 import GT, G1Point, G2Point, Scalar  # noqa: F401  (GT, Scalar re-exported)

from prover.field import fr

G1_BYTES = 96
G2_BYTES = 192
G1 = G1Point  # re-exported so callers need not import the binding
G2 = G2Point


def g1_generator() -> G1Point:
    return G1Point()


def g2_generator() -> G2Point:
    return G2Point()


# conversions ------------------------------------------------------------------------------
def g1_to_bytes(p: G1Point) -> bytes:
    return p.to_xy_bytes_le()


def g2_to_bytes(p: G2Point) -> bytes:
    return p.to_xy_bytes_le()


def g1_from_bytes(b: bytes | np.ndarray) -> G1Point:
    return G1Point.from_xy_bytes_unchecked_le(bytes(b))


def g2_from_bytes(b: bytes | np.ndarray) -> G2Point:
    return G2Point.from_xy_bytes_unchecked_le(bytes(b))


def g1_array(points: Sequence[G1Point]) -> np.ndarray:
    """arkworks G1 points -> (n, 96) uint8."""
    raw = b"".join(p.to_xy_bytes_le() for p in points)
    return np.frombuffer(raw, dtype=np.uint8).reshape(len(points), G1_BYTES).copy()


def g2_array(points: Sequence[G2Point]) -> np.ndarray:
    raw = b"".join(p.to_xy_bytes_le() for p in points)
    return np.frombuffer(raw, dtype=np.uint8).reshape(len(points), G2_BYTES).copy()


def g1_points(arr: np.ndarray) -> list[G1Point]:
    """(n, 96) uint8 -> arkworks G1 points (on-curve check only)."""
    raw = np.ascontiguousarray(arr, dtype=np.uint8).tobytes()
    return [G1Point.from_xy_bytes_unchecked_le(raw[i : i + G1_BYTES]) for i in range(0, len(raw), G1_BYTES)]


def g2_points(arr: np.ndarray) -> list[G2Point]:
    raw = np.ascontiguousarray(arr, dtype=np.uint8).tobytes()
    return [G2Point.from_xy_bytes_unchecked_le(raw[i : i + G2_BYTES]) for i in range(0, len(raw), G2_BYTES)]


def scalars(a: fr.FrArray) -> list[Scalar]:
    """FrArray -> arkworks Scalars (the (n, 4) LE limbs are exactly 32 LE bytes a row)."""
    raw = np.ascontiguousarray(a, dtype="<u8").tobytes()
    return [Scalar.from_le_bytes(raw[i : i + 32]) for i in range(0, len(raw), 32)]


# MSM and batch addition ----------------------------------------------------------------------
def msm_g1(points: np.ndarray, coeffs: fr.FrArray) -> G1Point:
    """sum_i coeffs[i] * points[i] (Pippenger in arkworks)."""
    if len(points) == 0:
        return G1Point.identity()
    return G1Point.multiexp_unchecked(g1_points(points), scalars(coeffs))


def msm_g2(points: np.ndarray, coeffs: fr.FrArray) -> G2Point:
    if len(points) == 0:
        return G2Point.identity()
    return G2Point.multiexp_unchecked(g2_points(points), scalars(coeffs))


def batch_add_g1(points: np.ndarray) -> G1Point:
    """Sum of points (the scalar-equals-one share of an MSM). arkworks' multiexp with all
    scalars one is ~10x cheaper per point than with full scalars (measured), and much
    cheaper than a Python loop of additions."""
    if len(points) == 0:
        return G1Point.identity()
    pts = g1_points(points)
    return G1Point.multiexp_unchecked(pts, [Scalar(1)] * len(pts))


batch_add = batch_add_g1  # the name the pipeline uses for the G1 batch-addition step


def batch_add_g2(points: np.ndarray) -> G2Point:
    if len(points) == 0:
        return G2Point.identity()
    pts = g2_points(points)
    return G2Point.multiexp_unchecked(pts, [Scalar(1)] * len(pts))


# fixed-base multiplication (setup) ----------------------------------------------------------------
P = TypeVar("P", G1Point, G2Point)  # one group at a time: G1 + G2 is not defined


class FixedBaseTable(Generic[P]):
    """Byte-windowed table T[j][d] = d * 256^j * base, so c * base is the sum of the 32
    entries picked by the bytes of c: 31 additions instead of a double-and-add ladder.
    Measured here: ~47 us per G1 point vs ~300 us for ``base * Scalar(c)`` with full
    255-bit scalars (G2: ~0.1 ms vs ~0.8 ms); the table costs 8192 additions."""

    WINDOWS = 32  # bytes of a scalar

    def __init__(self, base: P) -> None:
        identity = type(base).identity()
        self.table: list[list[P]] = []
        for _ in range(self.WINDOWS):
            row = [identity]
            for _ in range(255):
                row.append(row[-1] + base)
            self.table.append(row)
            base = row[-1] + base  # 256 * previous base

    def mul_many(self, coeffs: fr.FrArray) -> list[P]:
        digits = np.ascontiguousarray(coeffs, dtype="<u8").view(np.uint8).reshape(-1, self.WINDOWS).tolist()
        table = self.table
        return [reduce(add, map(getitem, table, d)) for d in digits]


def fixed_base_g1(base: G1Point, coeffs: fr.FrArray) -> np.ndarray:
    """[c * base for c in coeffs] as an (n, 96) array."""
    if len(coeffs) < 64:  # the table does not pay for a handful of points
        return g1_array([base * s for s in scalars(coeffs)])
    return g1_array(FixedBaseTable(base).mul_many(coeffs))  # type: ignore[arg-type]


def fixed_base_g2(base: G2Point, coeffs: fr.FrArray) -> np.ndarray:
    if len(coeffs) < 16:
        return g2_array([base * s for s in scalars(coeffs)])
    return g2_array(FixedBaseTable(base).mul_many(coeffs))  # type: ignore[arg-type]
