"""The compiled MSM last step (prover/field/fp_nb.py) gives host_curve's bytes, and the right
point: sum_w 2^(c w) P_w checked against py_arkworks."""
from __future__ import annotations

import numpy as np
import pytest

from prover.field import fp_nb
from prover.field import curve_int as host_curve
from prover.field.ref import P_MOD

R = 1 << 384


def _words(x: int) -> list[int]:
    """x in Montgomery form as 12 u32 words (the GPU's layout)."""
    m = x * R % P_MOD
    return [(m >> (32 * j)) & 0xFFFFFFFF for j in range(12)]


@pytest.mark.parametrize("group", ["g1", "g2"])
@pytest.mark.parametrize("c", [1, 5, 13])
def test_same_bytes_as_the_python_step(group: str, c: int) -> None:
    rng = np.random.default_rng(c)
    width = 48 if group == "g1" else 96
    for W in (1, 2, 7):
        win = np.array([[w for _ in range(width // 12) for w in _words(int(rng.integers(1, 2**62)) ** 6 % P_MOD)]
                        for _ in range(W)], dtype=np.uint32)
        assert fp_nb.finish_windows(win, c, group) == host_curve.finish_windows_reference(win, c, group)
        win[-1] = 0  # an identity window on top, and an all-identity sum
        assert fp_nb.finish_windows(win, c, group) == host_curve.finish_windows_reference(win, c, group)
        assert fp_nb.finish_windows(np.zeros_like(win), c, group) == bytes(2 * width)


def _xyzz(xy: bytes, group: str) -> list[int]:
    """An affine point's bytes as XYZZ words with ZZ = ZZZ = 1."""
    n = 48
    coords = [int.from_bytes(xy[i:i + n], "little") for i in range(0, len(xy), n)]
    d = 1 if group == "g1" else 2
    one = [1] + [0] * (d - 1)
    out: list[int] = []
    for v in coords + one + one:
        out += _words(v)
    return out


@pytest.mark.parametrize("group", ["g1", "g2"])
def test_the_horner_sum_is_the_point(group: str) -> None:
    import py_arkworks_bls12381 as ark

    G = ark.G1Point if group == "g1" else ark.G2Point
    c, pts = 9, [G() * ark.Scalar(k) for k in (3, 17, 1, 12345)]  # G(): the generator
    win = np.array([_xyzz(p.to_xy_bytes_le(), group) for p in pts], dtype=np.uint32)
    want = G.identity()
    for w, p in enumerate(pts):
        want = want + p * ark.Scalar(1 << (c * w))
    assert fp_nb.finish_windows(win, c, group) == want.to_xy_bytes_le()
    # P + P on the way (the add's doubling branch): S_0 = 2^c S_1 exactly
    two = [pts[0] * ark.Scalar(1 << c), pts[0]]
    win2 = np.array([_xyzz(p.to_xy_bytes_le(), group) for p in two], dtype=np.uint32)
    assert fp_nb.finish_windows(win2, c, group) == (pts[0] * ark.Scalar(2 << c)).to_xy_bytes_le()
