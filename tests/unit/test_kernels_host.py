"""CI check of the CUDA arithmetic headers compiled for the CPU (g++) against Python integers.

prover/kernels/cuda/{field,curve}.cuh are the very headers the GPU kernels include; tests/unit/host_check.cpp
drives them line by line. Skipped cleanly where g++ is missing.
"""
from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from prover.field.ref import P_MOD, R_MOD
from prover.kernels import loader

GXX = shutil.which("g++")
pytestmark = pytest.mark.skipif(GXX is None, reason="g++ not installed")


# The default build, and the products of mont_wide.cuh (carry.cuh's primitives run the device's
# instruction sequence on the CPU): Karatsuba with the Fr reduction rows, and one reduction for
# the XYZZ formulas' sums of two products (Fe::mul2), each through every test of this module.
HOST_VARIANTS = [None, "eo_k", "eo_k2", "eo_sq2"]


@pytest.fixture(scope="module", params=HOST_VARIANTS, ids=lambda v: v or "default")
def host_check(tmp_path_factory, request):
    exe = tmp_path_factory.mktemp("kernels") / "host_check"
    src = Path(__file__).with_name("host_check.cpp")
    defs = [f"-DFIELD_MUL={request.param}", "-DFP_MUL_CALL=1"] if request.param else []
    subprocess.run([GXX, "-O1", "-std=c++17", *defs, "-I", str(loader.CUDA_DIR), "-o", str(exe), str(src)],
                   check=True, capture_output=True, timeout=300)

    def run(lines: list[str]) -> list[str]:
        out = subprocess.run([str(exe)], input="\n".join(lines) + "\n", capture_output=True, text=True,
                             check=True, timeout=120)
        return out.stdout.split("\n")[: len(lines)]

    return run


def h(x: int) -> str:
    return format(x, "x")


def edge_values(m: int) -> list[int]:
    # the last two: both Karatsuba halves (Fr 128 bits, Fp 192) near their top, so the sums carry
    return [0, 1, 2, m - 1, m - 2, (m - 1) // 2, (m + 1) // 2, (1 << 32) - 1, 1 << 64, m - (1 << 32)] + [
        (((m >> s) - 1) << s) | ((1 << s) - 1) for s in (128, 192)]


@pytest.mark.parametrize("prefix,m", [("fr", R_MOD), ("fp", P_MOD)])
def test_field_ops_match_python_ints(host_check, prefix, m):
    rng = random.Random(1234 + m % 1000)
    vals = edge_values(m) + [rng.randrange(m) for _ in range(200)]
    pairs = [(a, b) for a in vals[:12] for b in vals[:12]] + [(rng.choice(vals), rng.choice(vals)) for _ in range(300)]
    lines, want = [], []
    for a, b in pairs:
        for op, f in (("mul", lambda x, y: x * y), ("add", lambda x, y: x + y), ("sub", lambda x, y: x - y)):
            lines.append(f"{prefix}_{op} {h(a)} {h(b)}")
            want.append(f(a, b) % m)
    for a in vals:
        lines.append(f"{prefix}_sqr {h(a)}"); want.append(a * a % m)
        lines.append(f"{prefix}_neg {h(a)}"); want.append(-a % m)
    for a in vals[:40]:
        lines.append(f"{prefix}_inv {h(a)}"); want.append(pow(a, m - 2, m))
    got = host_check(lines)
    bad = [(line, g, w) for line, g, w in zip(lines, got, want) if int(g, 16) != w]
    assert not bad, bad[:5]


def test_fp2_ops_match_python_ints(host_check):
    rng = random.Random(99)
    p = P_MOD

    def mul(a, b):
        return ((a[0] * b[0] - a[1] * b[1]) % p, (a[0] * b[1] + a[1] * b[0]) % p)

    def inv(a):
        d = pow((a[0] * a[0] + a[1] * a[1]) % p, p - 2, p)
        return (a[0] * d % p, -a[1] * d % p)

    lines, want = [], []
    for _ in range(100):
        a = (rng.randrange(p), rng.randrange(p))
        b = (rng.randrange(p), rng.randrange(p))
        lines.append(f"fp2_mul {h(a[0])} {h(a[1])} {h(b[0])} {h(b[1])}"); want.append(mul(a, b))
        lines.append(f"fp2_sqr {h(a[0])} {h(a[1])}"); want.append(mul(a, a))
        lines.append(f"fp2_inv {h(a[0])} {h(a[1])}"); want.append(inv(a))
    got = host_check(lines)
    for line, g, w in zip(lines, got, want):
        assert tuple(int(x, 16) for x in g.split()) == w, line


def _xy_ints(b: bytes, width: int) -> list[int]:
    return [int.from_bytes(b[i:i + 48], "little") for i in range(0, len(b), 48)][:width]


@pytest.mark.parametrize("group", ["g1", "g2"])
def test_curve_formulas_match_arkworks(host_check, group):
    ark = pytest.importorskip("py_arkworks_bls12381")
    G = ark.G1Point if group == "g1" else ark.G2Point
    rng = random.Random(7 if group == "g1" else 8)
    lines, want = [], []
    for _ in range(20):
        a = G() * ark.Scalar(rng.randrange(1, 1 << 64))
        b = G() * ark.Scalar(rng.randrange(1, 1 << 64))
        ai = " ".join(h(x) for x in _xy_ints(a.to_xy_bytes_le(), 4))
        bi = " ".join(h(x) for x in _xy_ints(b.to_xy_bytes_le(), 4))
        two = ark.Scalar(2)
        k = rng.randrange(0, 1 << 20)
        cases = [
            (f"{group}_dbl {ai}", a * two),
            (f"{group}_madd {ai} {bi}", a * two + b),
            (f"{group}_add {ai} {bi}", a * two + b * two),
            (f"{group}_madd {ai} {ai}", a * ark.Scalar(3)),       # P != 0 path with related points
            (f"{group}_add {ai} {ai}", a * ark.Scalar(4)),        # doubling branch of add
            (f"{group}_addsame {ai}", a * two),                   # doubling branch of add_affine, add(r,-r)
            (f"{group}_mulsmall {ai} {k}", a * ark.Scalar(k)),
        ]
        for line, pt in cases:
            lines.append(line)
            want.append(pt.to_xy_bytes_le())
    # a + (-a) through the mixed add: infinity encodes as zeros
    a = G() * ark.Scalar(12345)
    na = a * ark.Scalar(R_MOD - 2)  # -2a
    ai = " ".join(h(x) for x in _xy_ints(a.to_xy_bytes_le(), 4))
    nai = " ".join(h(x) for x in _xy_ints(na.to_xy_bytes_le(), 4))
    lines.append(f"{group}_madd {ai} {nai}")
    want.append(G.identity().to_xy_bytes_le())
    got = host_check(lines)
    width = 2 if group == "g1" else 4
    for line, g, w in zip(lines, got, want):
        assert g != "ERR", line
        gi = [int(x, 16) for x in g.split()]
        assert gi == _xy_ints(w, width), line


@pytest.mark.parametrize("variant", ["cios_v", "eo", "eo_c", "eo_sq"])
def test_field_mul_variant_builds(tmp_path, variant):
    """host_check built with -DFIELD_MUL=<variant> -DFP_MUL_CALL=1: the variant selection compiles
    on the host and the host path (portable CIOS; by-value Fp call and, for eo_sq, the separate sqr call) stays exact.
    The device products (PTX) are checked on the GPU by benchmarks/bench_field.py and
    tests/gpu/test_field_variants_gpu.py."""
    exe = tmp_path / "host_check"
    src = Path(__file__).with_name("host_check.cpp")
    subprocess.run([GXX, "-O1", "-std=c++17", f"-DFIELD_MUL={variant}", "-DFP_MUL_CALL=1", "-I", str(loader.CUDA_DIR),
                    "-o", str(exe), str(src)], check=True, capture_output=True, timeout=300)
    rng = random.Random(hash(variant) % 1000)
    lines, want = [], []
    for prefix, m in (("fr", R_MOD), ("fp", P_MOD)):
        vals = edge_values(m) + [rng.randrange(m) for _ in range(40)]
        for a in vals:
            b = rng.choice(vals)
            lines.append(f"{prefix}_mul {h(a)} {h(b)}"); want.append(a * b % m)
            lines.append(f"{prefix}_sqr {h(a)}"); want.append(a * a % m)
    out = subprocess.run([str(exe)], input="\n".join(lines) + "\n", capture_output=True, text=True, check=True,
                         timeout=120).stdout.split("\n")
    assert [int(g, 16) for g in out[:len(lines)]] == want


def test_unknown_field_mul_is_an_error(tmp_path):
    r = subprocess.run([GXX, "-fsyntax-only", "-std=c++17", "-DFIELD_MUL=nope", "-I", str(loader.CUDA_DIR),
                        str(Path(__file__).with_name("host_check.cpp"))], capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and "unknown FIELD_MUL" in r.stderr
