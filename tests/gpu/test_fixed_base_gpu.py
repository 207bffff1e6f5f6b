"""GPU batched fixed-base multiplication (prover.kernels.fixed_base) equals py_arkworks on fresh
random scalars, G2 and G1, 2^8..2^20: every output at small sizes, a random sample at large ones;
plus zero / one / r-1 scalars, a base other than the generator, device output, and a stream.
The seed is printed (FIXED_BASE_TEST_SEED reproduces a run)."""
from __future__ import annotations

import os
import time

import numpy as np
import pytest

from prover.field import curve, fr

pytestmark = pytest.mark.gpu

SEED = int(os.environ.get("FIXED_BASE_TEST_SEED", "0")) or int.from_bytes(os.urandom(4), "little")
print(f"FIXED_BASE_TEST_SEED={SEED}")

ALL_UP_TO = {"g1": 1 << 12, "g2": 1 << 10}  # check every output up to here, a sample above
SAMPLE = 300


def _gen(group: str):
    return curve.g1_generator() if group == "g1" else curve.g2_generator()


def _ref_rows(group: str, base, scalars: np.ndarray) -> np.ndarray:
    if len(scalars) >= 64:
        fn = curve.fixed_base_g1 if group == "g1" else curve.fixed_base_g2
        return fn(base, scalars)
    arr = curve.g1_array if group == "g1" else curve.g2_array
    return arr([base * s for s in curve.scalars(scalars)])


def _edge_scalars() -> np.ndarray:
    return fr.from_ints([0, 1, fr.R_MOD - 1, 2, 0, fr.R_MOD - 2, 255, 256, (1 << 254) + 1, 7])


def _run(group: str, base_xy, scalars, **kw):
    from prover.kernels import fixed_base as fb

    return fb.fixed_base_gpu(group, base_xy, scalars, **kw)


@pytest.mark.parametrize("group", ["g2", "g1"])
@pytest.mark.parametrize("log2", [8, 10, 12, 14, 16, 18, 20])
def test_fixed_base_equals_arkworks(group: str, log2: int) -> None:
    import cupy as cp

    n = 1 << log2
    rng = np.random.default_rng([SEED, log2, group == "g2"])
    scalars = fr.random(n, SEED * 31 + log2)
    pos = rng.choice(n, size=len(_edge_scalars()), replace=False)
    scalars[pos] = _edge_scalars()
    # a random base (not the generator) half of the time
    base = _gen(group) * curve.Scalar(int(rng.integers(2, 2**62))) if log2 % 4 == 2 else _gen(group)
    base_xy = np.frombuffer(base.to_xy_bytes_le(), np.uint8)
    _run(group, base_xy, scalars[:16])  # compile + table outside the timing
    cp.cuda.get_current_stream().synchronize()
    t = time.perf_counter()
    got = _run(group, base_xy, scalars)
    dt = time.perf_counter() - t
    print(f"{group} fixed base 2^{log2}: {dt * 1e3:.1f} ms ({n / dt / 1e6:.2f} M/s incl. transfers)")
    nbytes = 96 if group == "g1" else 192
    assert got.shape == (n, nbytes) and got.dtype == np.uint8
    zeros = np.flatnonzero(~scalars.any(axis=1))
    assert not got[zeros].any(), "zero scalars must give the identity (all-zero bytes)"
    check = np.arange(n) if n <= ALL_UP_TO[group] else np.union1d(rng.choice(n, SAMPLE, replace=False), pos)
    want = _ref_rows(group, base, scalars[check])
    bad = np.flatnonzero((got[check] != want).any(axis=1))
    assert not len(bad), f"{len(bad)} of {len(check)} differ, first at row {check[bad[0]]}"


@pytest.mark.parametrize("group", ["g2", "g1"])
def test_edge_scalars_device_output_and_stream(group: str) -> None:
    import cupy as cp

    scalars = _edge_scalars()
    base_xy = np.frombuffer(_gen(group).to_xy_bytes_le(), np.uint8)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        d = _run(group, base_xy, cp.asarray(scalars), stream=stream, out_device=True)
        assert isinstance(d, cp.ndarray)
        got = cp.asnumpy(d, stream=stream)
    stream.synchronize()
    want = _ref_rows(group, _gen(group), scalars)
    assert np.array_equal(got, want)
    # r - 1 gives -B: same x, y negated
    neg = (-_gen(group)).to_xy_bytes_le()
    assert got[2].tobytes() == neg and got[1].tobytes() == _gen(group).to_xy_bytes_le()


def test_empty_batch_and_reexports() -> None:
    from prover.kernels import fixed_base

    assert fixed_base.fixed_base_g2_gpu(np.frombuffer(curve.g2_generator().to_xy_bytes_le(), np.uint8), fr.zeros(0)).shape == (0, 192)
    assert fixed_base.fixed_base_g1_gpu(np.frombuffer(curve.g1_generator().to_xy_bytes_le(), np.uint8), fr.zeros(0)).shape == (0, 96)
