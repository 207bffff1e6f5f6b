"""Curve glue: compact point arrays, MSM vs naive sums, batch addition + tail split."""
from __future__ import annotations

import numpy as np

from prover.field import curve, fr
from prover.backend import REFERENCE
from prover.groth16 import compose
from prover.groth16.phases import OTHER, ONE, QuerySplit, density


def _points_g1(n: int, seed: int) -> np.ndarray:
    g = curve.g1_generator()
    return curve.g1_array([g * s for s in curve.scalars(fr.random(n, seed))])


def test_identity_encoding_is_zero_bytes() -> None:
    assert curve.g1_to_bytes(curve.G1.identity()) == bytes(96)
    assert curve.g2_to_bytes(curve.G2.identity()) == bytes(192)
    assert curve.g1_from_bytes(bytes(96)) == curve.G1.identity()


def test_array_round_trip() -> None:
    pts = _points_g1(5, 1)
    assert pts.shape == (5, 96) and pts.dtype == np.uint8
    assert np.array_equal(curve.g1_array(curve.g1_points(pts)), pts)


def test_msm_g1_equals_naive_sum() -> None:
    pts, k = _points_g1(9, 2), fr.random(9, 3)
    naive = curve.G1.identity()
    for p, s in zip(curve.g1_points(pts), curve.scalars(k)):
        naive = naive + p * s
    assert curve.msm_g1(pts, k) == naive
    assert curve.msm_g1(pts[:0], k[:0]) == curve.G1.identity()


def test_msm_g2_equals_naive_sum() -> None:
    h = curve.g2_generator()
    pts = curve.g2_array([h * s for s in curve.scalars(fr.random(5, 4))])
    k = fr.random(5, 5)
    naive = curve.G2.identity()
    for p, s in zip(curve.g2_points(pts), curve.scalars(k)):
        naive = naive + p * s
    assert curve.msm_g2(pts, k) == naive
    assert curve.batch_add_g2(pts) == sum(curve.g2_points(pts)[1:], curve.g2_points(pts)[0])


def test_fixed_base_tables_match_scalar_multiplication() -> None:
    k = fr.random(70, 6)
    k[0] = 0  # zero coefficient: identity
    g, h = curve.g1_generator(), curve.g2_generator()
    assert np.array_equal(curve.fixed_base_g1(g, k), curve.g1_array([g * s for s in curve.scalars(k)]))
    assert np.array_equal(curve.fixed_base_g2(h, k[:20]), curve.g2_array([h * s for s in curve.scalars(k[:20])]))


def test_batch_add_plus_tail_equals_plain_msm() -> None:
    n = 40
    pts = _points_g1(n, 7)
    rng = np.random.default_rng(8)
    kinds = rng.integers(0, 3, n)  # 0, 1 or a full field element
    vals = np.where(kinds[:, None] == 2, fr.random(n, 9), fr.from_u64(kinds.astype(np.uint64)))
    cls = density(vals)
    assert np.array_equal(cls == ONE, kinds == 1) and np.array_equal(cls == OTHER, kinds == 2)
    ones, tail = np.flatnonzero(cls == ONE), np.flatnonzero(cls == OTHER)
    split = QuerySplit(ones=ones, tail=tail, tail_scalars=vals[tail])
    parts = compose._fetch(compose._split(REFERENCE, pts, split, "g1"))  # batch addition + tail MSM
    assert compose.add_g1(compose._finished(parts)) == curve.g1_to_bytes(curve.msm_g1(pts, vals))
