"""CI check of the GPU fixed-base kernel template (prover/kernels/cuda/fixed_base.cuh) compiled for the
CPU with g++ and run thread by thread (tests/unit/fixed_base_host.cpp): G1 and G2 results equal
py_arkworks, including zero / one / r-1 scalars, the FB_K-outputs-a-thread layout with tails and
idle threads, and the shared (Montgomery's trick) inversion around infinities. Also the host
wrapper's table and launch arithmetic. Skipped cleanly where g++ is missing."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from prover.field import curve, fr
from prover.kernels import fixed_base as fb
from prover.kernels import loader

GXX = shutil.which("g++")
HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def fixed_base_host(tmp_path_factory):
    if GXX is None:
        pytest.skip("g++ not installed")
    d = tmp_path_factory.mktemp("fixed_base")
    exe = d / "fixed_base_host"
    subprocess.run([GXX, "-O1", "-std=c++17", "-w", "-I", str(loader.CUDA_DIR), "-o", str(exe),
                    str(HERE / "fixed_base_host.cpp")], check=True, capture_output=True, timeout=300)
    tables = {}

    def run(group: str, base_xy: bytes, scalars: np.ndarray, threads: int | None = None) -> np.ndarray:
        if (group, base_xy) not in tables:
            tables[group, base_xy] = fb.fixed_base_table(group, np.frombuffer(base_xy, np.uint8))
        (d / "tab").write_bytes(tables[group, base_xy].tobytes())
        (d / "sc").write_bytes(np.ascontiguousarray(scalars, dtype="<u8").tobytes())
        T = threads or fb.fixed_base_threads(len(scalars))
        subprocess.run([str(exe), group, str(T), str(d / "tab"), str(d / "sc"), str(d / "out")], check=True,
                       capture_output=True, timeout=300)
        return np.frombuffer((d / "out").read_bytes(), np.uint8).reshape(len(scalars), fb._BYTES[group])

    return run


def _edge_and_random(n: int, seed: int) -> np.ndarray:
    edge = fr.from_ints([0, 1, fr.R_MOD - 1, 2, 255, 256, 0, (1 << 254) + 12345, 0])
    return np.concatenate([edge, fr.random(max(0, n - len(edge)), seed)])[:n]


def _reference(group: str, base_xy: bytes, scalars: np.ndarray) -> np.ndarray:
    if group == "g1":
        base = curve.g1_from_bytes(base_xy)
        return curve.g1_array([base * s for s in curve.scalars(scalars)])
    base = curve.g2_from_bytes(base_xy)
    return curve.g2_array([base * s for s in curve.scalars(scalars)])


@pytest.mark.parametrize("group,n", [("g1", 1), ("g1", 9), ("g1", 300), ("g1", 1100), ("g2", 9), ("g2", 150)])
def test_kernel_template_equals_arkworks(fixed_base_host, group: str, n: int) -> None:
    base = (curve.g1_generator() * curve.Scalar(987654321)).to_xy_bytes_le() if group == "g1" \
        else curve.g2_generator().to_xy_bytes_le()
    scalars = _edge_and_random(n, 100 + n)
    got = fixed_base_host(group, base, scalars)
    assert np.array_equal(got, _reference(group, base, scalars))


def test_threads_with_many_outputs_each_and_all_zero_runs(fixed_base_host) -> None:
    """Fewer threads than usual (every thread makes FB_K outputs) and a thread whose outputs are
    all infinity (zero scalars): the shared inversion skips them."""
    base = curve.g1_generator().to_xy_bytes_le()
    scalars = fr.random(128 * fb.FB_K, 7)
    scalars[::128] = 0  # thread 0's outputs are t, t + T, ...: all zero for t = 0
    got = fixed_base_host("g1", base, scalars, threads=128)
    assert not got[::128].any()
    assert np.array_equal(got, _reference("g1", base, scalars))


def test_launch_covers_every_output() -> None:
    for n in (1, 7, 8, 9, 127, 1024, 1025, (1 << 20) + 3):
        T = fb.fixed_base_threads(n)
        assert T % fb.FB_TPB == 0 and T * fb.FB_K >= n and T >= fb.FB_TPB


def test_fb_k_matches_the_kernel_source() -> None:
    src = (loader.CUDA_DIR / "fixed_base.cuh").read_text()
    assert f"#define FB_K {fb.FB_K}\n" in src


@pytest.mark.parametrize("group", ["g1", "g2"])
def test_table_rows_are_multiples_of_the_base(group: str) -> None:
    gen = curve.g1_generator() if group == "g1" else curve.g2_generator()
    tab = fb.fixed_base_table(group, np.frombuffer(gen.to_xy_bytes_le(), np.uint8))
    assert tab.shape == (8192, fb._BYTES[group]) and not tab[0].any() and not tab[256 * 5].any()
    for w, d in ((0, 1), (0, 255), (1, 1), (7, 200), (31, 255)):
        want = (gen * curve.Scalar(d * (1 << (8 * w)) % fr.R_MOD)).to_xy_bytes_le()
        assert tab[w * 256 + d].tobytes() == want, (w, d)


def test_table_takes_bytes_or_arrays():
    # np.asarray(bytes, dtype=uint8) parses the bytes as a number: the H200 run caught it
    import py_arkworks_bls12381 as ark

    from prover.kernels.fixed_base import fixed_base_table

    for G, group in ((ark.G1Point, "g1"), (ark.G2Point, "g2")):
        base = (G() * ark.Scalar(5)).to_xy_bytes_le()
        t = fixed_base_table(group, base)
        assert (t == fixed_base_table(group, np.frombuffer(base, dtype=np.uint8))).all()
        assert t[1].tobytes() == base and not t[0].any()
        assert t[256 + 1].tobytes() == (G() * ark.Scalar(5 * 256)).to_xy_bytes_le()
