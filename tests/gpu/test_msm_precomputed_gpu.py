"""MSMs over precomputed window shifts (DevicePoints.precompute) equal py_arkworks: fresh random
scalars with edge values, G1 and G2, several sizes and window widths, fewer scalars than points,
and the proving key's H query precomputed by ProvingKeyOnDevice."""
from __future__ import annotations

import numpy as np
import pytest

from prover.kernels import msm
from prover.field.ref import fr_from_ints

from tests.gpu.test_kernels_gpu import ark, sizes
from tests.helpers.inputs import msm_inputs as _msm_inputs


@pytest.mark.parametrize("L", sizes(0, 4, 8, 12, 16, 18, 20))
def test_precomputed_g1_matches_arkworks(L):
    objs, xy, scal, s = _msm_inputs("g1", L, f"pre1{L}")
    want = ark.G1Point.multiexp_unchecked(objs, scal).to_xy_bytes_le()
    pre = msm.DevicePoints("g1", xy).precompute()
    assert pre.pre is not None and pre.d.shape[0] == pre.pre[1] * pre.n
    assert msm.msm_g1_gpu(pre, s) == want
    assert msm._to_bytes(msm._msm_device(pre, s), None) == want  # device-side final step


@pytest.mark.parametrize("c", [3, 9, 13, 20])
def test_precomputed_other_windows_and_prefix(c):
    objs, xy, scal, s = _msm_inputs("g1", 12, f"prec{c}")
    pre = msm.DevicePoints("g1", xy).precompute(c)
    assert msm.msm_g1_gpu(pre, s) == ark.G1Point.multiexp_unchecked(objs, scal).to_xy_bytes_le()
    k = 1000  # fewer scalars than points: the first k points
    assert msm.msm_g1_gpu(pre, s[:k]) == ark.G1Point.multiexp_unchecked(objs[:k], scal[:k]).to_xy_bytes_le()


def test_precomputed_skewed_zero_and_take():
    objs, xy, scal, s = _msm_inputs("g1", 12, "preskew")
    pre = msm.DevicePoints("g1", xy).precompute()
    seven = fr_from_ints([7] * len(objs))
    assert msm.msm_g1_gpu(pre, seven) == ark.G1Point.multiexp_unchecked(objs, [ark.Scalar(7)] * len(objs)).to_xy_bytes_le()
    assert msm.msm_g1_gpu(pre, fr_from_ints([0] * len(objs))) == bytes(96)
    idx = np.arange(0, len(objs), 3)
    sub = pre.take(idx)  # a tail's points: plain, not precomputed
    assert sub.pre is None and sub.n == len(idx)
    want = ark.G1Point.multiexp_unchecked([objs[i] for i in idx], [scal[i] for i in idx]).to_xy_bytes_le()
    assert msm.msm_g1_gpu(sub, s[idx]) == want
    assert msm.batch_add_g1_gpu(pre, idx) == msm.batch_add_g1_gpu(xy, idx)


@pytest.mark.parametrize("L", sizes(4, 10, 14))
def test_precomputed_g2_matches_arkworks(L):
    objs, xy, scal, s = _msm_inputs("g2", L, f"pre2{L}")
    pre = msm.DevicePoints("g2", xy).precompute()
    assert msm.msm_g2_gpu(pre, s) == ark.G2Point.multiexp_unchecked(objs, scal).to_xy_bytes_le()


def test_proving_key_precomputes_h_only():
    objs, xy, scal, s = _msm_inputs("g1", 10, "pkpre")
    d = msm.ProvingKeyOnDevice(precompute="h", h=xy, l=xy)
    assert d["h"].pre is not None and d["l"].pre is None
    assert msm.msm_g1_gpu(d["h"], s) == msm.msm_g1_gpu(d["l"], s)
    assert msm.ProvingKeyOnDevice(precompute="none", h=xy)["h"].pre is None
