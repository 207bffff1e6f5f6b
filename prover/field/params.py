"""BLS12-381's constants, once: the scalar field Fr (modulus r, its 2-adic structure, the
generator 7 that is also the NTT's coset shift) and the base field Fp (modulus p), with the
Montgomery constants every representation derives from them (numpy in fr.py/mont.py, numba in
fr_nb.py/fp_nb.py, Python ints in curve_int.py/ref.py, CUDA in kernels/cuda/field.cuh, which a
test checks against `cuh_tables`).

Interchange formats (project-wide):
  FrArray  numpy uint64 (n, 4), little-endian 64-bit limbs, canonical values in [0, r)
  G1 xy    numpy uint8 (n, 96): x || y, 48-byte little-endian canonical each; identity = zeros
  G2 xy    numpy uint8 (n, 192): x.c0 || x.c1 || y.c0 || y.c1, 48-byte LE each
"""
from __future__ import annotations

import numpy as np

R_MOD = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001  # |Fr|
P_MOD = 0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB  # |Fp|

FR_LIMBS32, FP_LIMBS32 = 8, 12  # 32-bit limbs of an element (the kernels' and fr's working form)
FR_MONT_R = 1 << (32 * FR_LIMBS32)  # Montgomery radix of Fr, 2^256
FP_MONT_R = 1 << (32 * FP_LIMBS32)  # Montgomery radix of Fp, 2^384

GENERATOR = 7  # multiplicative generator of Fr*; also the coset shift of NTT-H
TWO_ADICITY = 32  # 2^32 divides r - 1
ROOT_OF_UNITY = pow(GENERATOR, (R_MOD - 1) >> TWO_ADICITY, R_MOD)  # primitive 2^32-th root


def root_of_unity(log_n: int) -> int:
    """Primitive 2^log_n-th root of unity: 7^((r-1)/2^32) squared down to order 2^log_n."""
    if not 0 <= log_n <= TWO_ADICITY:
        raise ValueError(f"2^{log_n}-th roots of unity need 0 <= log_n <= {TWO_ADICITY}")
    return pow(ROOT_OF_UNITY, 1 << (TWO_ADICITY - log_n), R_MOD)


def limbs32(x: int, n: int) -> np.ndarray:
    """x as n little-endian 32-bit limbs in uint64 slots (numpy and numba's working form)."""
    return np.array([(x >> (32 * i)) & 0xFFFFFFFF for i in range(n)], dtype=np.uint64)


def limbs64(x: int, n: int) -> np.ndarray:
    """x as n little-endian 64-bit limbs (the FrArray row of x for n = 4)."""
    return np.array([(x >> (64 * i)) & 0xFFFFFFFFFFFFFFFF for i in range(n)], dtype=np.uint64)


def mont_n0(m: int) -> int:
    """-m^-1 mod 2^32, the word REDC multiplies by."""
    return (-pow(m, -1, 1 << 32)) % (1 << 32)


def cuh_tables() -> dict[str, list[int]]:
    """The tables kernels/cuda/field.cuh spells out as u32 literals, from the moduli here."""
    out: dict[str, list[int]] = {}
    for name, m, n in (("FrP", R_MOD, FR_LIMBS32), ("FpP", P_MOD, FP_LIMBS32)):
        radix = 1 << (32 * n)
        out[f"{name}.mod"] = [int(v) for v in limbs32(m, n)]
        out[f"{name}.r2"] = [int(v) for v in limbs32(radix * radix % m, n)]
        out[f"{name}.one"] = [int(v) for v in limbs32(radix % m, n)]
        out[f"{name}.INV"] = [mont_n0(m)]
    return out
