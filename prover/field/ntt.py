"""Number-theoretic transforms over the 2-adic subgroup of Fr (two-adicity 32).

All transforms take and return ``FrArray`` (n, 4) canonical values in natural order;
internally they run in Montgomery form, one radix-2 butterfly layer per step, each layer a
handful of numpy calls over the whole array (iterative Cooley-Tukey after a bit-reversal
permutation). The CUDA kernels must reproduce these results bit for bit; being exact field
arithmetic, any correct NTT does.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from prover.field import fr
from prover.field.params import GENERATOR, ROOT_OF_UNITY, TWO_ADICITY  # noqa: F401  (re-exported)
from prover.field.params import root_of_unity as _root_of_unity_log2


def root_of_unity(n: int) -> int:
    """Primitive n-th root of unity for n = 2^k, k <= 32."""
    return _root_of_unity_log2(_log2(n))


def _log2(n: int) -> int:
    k = n.bit_length() - 1
    if n <= 0 or n != 1 << k or k > TWO_ADICITY:
        raise ValueError(f"NTT size must be a power of two <= 2^32, got {n}")
    return k


@lru_cache(maxsize=8)
def _bit_reverse(n: int) -> np.ndarray:
    k = _log2(n)
    idx = np.arange(n, dtype=np.int64)
    rev = np.zeros(n, dtype=np.int64)
    for b in range(k):
        rev |= ((idx >> b) & 1) << (k - 1 - b)
    return rev


@lru_cache(maxsize=8)
def _twiddles(n: int, inverse: bool) -> fr.Mont:
    """(8, n/2) Montgomery powers w^0..w^(n/2-1) of the (inverse) n-th root; a layer of
    half-size h uses every (n/2h)-th entry."""
    w = root_of_unity(n)
    if inverse:
        w = pow(w, -1, fr.R_MOD)
    return fr.mont_powers(w, max(n // 2, 1))


SEGMENT = 1 << 13  # elements a butterfly step works on at once: a few MiB, cache-sized


def _small_layers(x: fr.Mont, tw: fr.Mont, n: int) -> fr.Mont:
    """All layers whose butterflies stay inside x (8, m), m <= SEGMENT, vectorised over
    the blocks of each layer."""
    m = x.shape[1]
    h = 1
    while h < m:
        blocks = x.reshape(fr.NLIMBS, m // (2 * h), 2, h)
        w = tw[:, :: n // (2 * h)][:, None, :h]  # (8, 1, h) broadcast over blocks
        u = blocks[:, :, 0, :]
        v = fr.mont_mul(blocks[:, :, 1, :], w)
        out = np.empty_like(blocks)
        out[:, :, 0, :] = fr.mont_add(u, v)
        out[:, :, 1, :] = fr.mont_sub(u, v)
        x = out.reshape(fr.NLIMBS, m)
        h *= 2
    return x


def _large_layer(x: fr.Mont, tw: fr.Mont, h: int) -> None:
    """One layer with half-size h >= SEGMENT, in place, SEGMENT contiguous pairs at a time."""
    n = x.shape[1]
    stride = n // (2 * h)
    for blk in range(0, n, 2 * h):
        for j in range(0, h, SEGMENT):
            lo, hi = blk + j, blk + h + j
            w = tw[:, j * stride : (j + SEGMENT) * stride : stride]
            u = x[:, lo : lo + SEGMENT]
            v = fr.mont_mul(x[:, hi : hi + SEGMENT], w)
            x[:, lo : lo + SEGMENT], x[:, hi : hi + SEGMENT] = fr.mont_add(u, v), fr.mont_sub(u, v)


def _ntt_mont(x: fr.Mont, inverse: bool) -> fr.Mont:
    """DIT NTT of an (8, n) Montgomery array after a bit-reversal gather; returns a new
    array. The first log2(SEGMENT) layers run segment by segment and the later ones in
    SEGMENT-sized pieces, so every numpy step works on cache-resident data (without this,
    2^20 was several times slower per element than 2^14)."""
    n = x.shape[1]
    if n == 1:
        return x.copy()
    x = x[:, _bit_reverse(n)]
    tw = _twiddles(n, inverse)
    seg = min(n, SEGMENT)
    for lo in range(0, n, seg):
        x[:, lo : lo + seg] = _small_layers(x[:, lo : lo + seg], tw, n)
    h = seg
    while h < n:
        _large_layer(x, tw, h)
        h *= 2
    return x


def _scale(x: fr.Mont, c: int) -> fr.Mont:
    return fr.mont_mul(x, fr.mont_const(c))


@lru_cache(maxsize=8)
def _coset_powers(n: int, inverse: bool) -> fr.Mont:
    g = pow(GENERATOR, -1, fr.R_MOD) if inverse else GENERATOR
    return fr.mont_powers(g, n)


# Montgomery-level API (used by the prover to avoid converting between steps) -------------
def ntt_mont(x: fr.Mont) -> fr.Mont:
    """Coefficients -> evaluations at w^i."""
    return _ntt_mont(x, inverse=False)


def intt_mont(x: fr.Mont) -> fr.Mont:
    """Evaluations at w^i -> coefficients."""
    n = x.shape[1]
    return _scale(_ntt_mont(x, inverse=True), pow(n, -1, fr.R_MOD))


def coset_ntt_mont(x: fr.Mont) -> fr.Mont:
    """Coefficients -> evaluations at g*w^i (g = 7)."""
    return ntt_mont(fr.mont_mul(x, _coset_powers(x.shape[1], False)))


def coset_intt_mont(x: fr.Mont) -> fr.Mont:
    """Evaluations at g*w^i -> coefficients."""
    return fr.mont_mul(intt_mont(x), _coset_powers(x.shape[1], True))


# FrArray API -------------------------------------------------------------------------------
def ntt(a: fr.FrArray) -> fr.FrArray:
    return fr.from_mont(ntt_mont(fr.to_mont(a)))


def intt(a: fr.FrArray) -> fr.FrArray:
    return fr.from_mont(intt_mont(fr.to_mont(a)))


def coset_ntt(a: fr.FrArray) -> fr.FrArray:
    return fr.from_mont(coset_ntt_mont(fr.to_mont(a)))


def coset_intt(a: fr.FrArray) -> fr.FrArray:
    return fr.from_mont(coset_intt_mont(fr.to_mont(a)))


def ntt_h(a: fr.FrArray, b: fr.FrArray, c: fr.FrArray) -> fr.FrArray:
    """h = (a*b - c) / Z on the coset g*H (g = 7), as its n evaluations h(g w^i) in natural
    order: iNTT each of a, b, c (evaluations over the domain), coset NTT, multiply pointwise
    and divide by Z(g w^i) = g^n - 1 (constant on the coset). Six transforms: h's coefficients
    are never formed, because the key's H query is in coset-Lagrange form
    ([L_i^coset(tau) Z(tau) / delta], prover/groth16/setup.py), so sum_i h(g w^i) H_i is
    h(tau) Z(tau) / delta as the proof needs. `h_coefficients` recovers the coefficients."""
    n = a.shape[0]
    ea, eb, ec = (coset_ntt_mont(intt_mont(fr.to_mont(x))) for x in (a, b, c))
    z_inv = pow((pow(GENERATOR, n, fr.R_MOD) - 1) % fr.R_MOD, -1, fr.R_MOD)
    q = fr.mont_mul(fr.mont_sub(fr.mont_mul(ea, eb), ec), fr.mont_const(z_inv))
    return fr.from_mont(q)


def h_coefficients(h_coset: fr.FrArray) -> fr.FrArray:
    """h's coefficients from ntt_h's coset evaluations (the seventh transform, which the prover
    no longer runs): for checks that h * Z = a*b - c as polynomials."""
    return coset_intt(h_coset)
