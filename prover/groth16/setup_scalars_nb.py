"""The key setup's per-variable scalars as compiled nogil kernels, in row blocks on fr's pool:

    ic / l:  (beta * u_i + alpha * v_i + w_i) / gamma (inputs) or / delta (the rest)
    h:       L^coset_i(tau) * (tau^n - 1) / delta, for i < n (times(): a vector times a constant)

The numpy path made ~10 passes over 2^24-row arrays with GiB temporaries (52 s of a 2^24
setup on 32 cores); here each row is read once. The same canonical rows: a value mod r has
one canonical form, whatever computes it.
"""
from __future__ import annotations

import numpy as np
from prover.field.jit import njit  # numba.njit, cached where numba can cache

from prover.field import fr
from prover.field import fr_nb as F


def _mont(k: int) -> np.ndarray:
    """k * R mod r in 32-bit limbs: mont_mul(_mont(k), x) is the plain k * x."""
    return fr.mont_const(k)[:, 0].copy()


def _plain(k: int) -> np.ndarray:
    return fr._int_to_limbs32(k % fr.R_MOD)


@njit(nogil=True)
def _combo_rows(u: np.ndarray, v: np.ndarray, w: np.ndarray, beta: np.ndarray, alpha: np.ndarray,
                inv_gamma: np.ndarray, inv_delta: np.ndarray, ni: int, out: np.ndarray, r0: int, r1: int) -> None:
    x = np.zeros(F.NL, dtype=np.uint64)
    y = np.zeros(F.NL, dtype=np.uint64)
    s = np.zeros(F.NL, dtype=np.uint64)
    t = np.zeros(2 * F.NL + 1, dtype=np.uint64)
    for i in range(r0, r1):
        F.load64(u, i, x)
        F.mont_mul(beta, x, s, t)
        F.load64(v, i, x)
        F.mont_mul(alpha, x, y, t)
        F.add_mod(s, y, s)
        F.load64(w, i, x)
        F.add_mod(s, x, s)
        F.mont_mul(inv_gamma if i < ni else inv_delta, s, y, t)
        F.store64(y, out, i)


@njit(nogil=True)
def _power_rows(start: np.ndarray, step: np.ndarray, k: np.ndarray, out: np.ndarray, r0: int, r1: int) -> None:
    """out[i] = tau^i * k for i in [r0, r1); start = tau^r0 * R, step = tau * R (Montgomery),
    k plain."""
    x = start.copy()
    y = np.zeros(F.NL, dtype=np.uint64)
    t = np.zeros(2 * F.NL + 1, dtype=np.uint64)
    for i in range(r0, r1):
        F.mont_mul(x, k, y, t)  # tau^i * R * k / R: plain
        F.store64(y, out, i)
        F.mont_mul(x, step, x, t)


@njit(nogil=True)
def _times_rows(x: np.ndarray, k: np.ndarray, out: np.ndarray, r0: int, r1: int) -> None:
    """out[i] = x[i] * k for i in [r0, r1); k = the constant * R (Montgomery): plain products."""
    y = np.zeros(F.NL, dtype=np.uint64)
    v = np.zeros(F.NL, dtype=np.uint64)
    t = np.zeros(2 * F.NL + 1, dtype=np.uint64)
    for i in range(r0, r1):
        F.load64(x, i, v)
        F.mont_mul(v, k, y, t)
        F.store64(y, out, i)


def times(x: fr.FrArray, k: int) -> fr.FrArray:
    """[x_i * k]: the H query's scalars, L^coset_i(tau) times Z(tau) / delta."""
    n = len(x)
    out = np.empty((n, 4), dtype=np.uint64)
    src, km = np.ascontiguousarray(x, dtype=np.uint64), _mont(k)
    fr.for_row_blocks(n, lambda lo, hi: _times_rows(src, km, out, lo, hi))
    return out


def combo(u: fr.FrArray, v: fr.FrArray, w: fr.FrArray, alpha: int, beta: int, gamma: int, delta: int,
          ni: int) -> fr.FrArray:
    """(beta*u + alpha*v + w) / gamma for the first ni rows, / delta for the rest."""
    r = fr.R_MOD
    n = len(u)
    out = np.empty((n, 4), dtype=np.uint64)
    args = [np.ascontiguousarray(a, dtype=np.uint64) for a in (u, v, w)]
    consts = (_mont(beta), _mont(alpha), _mont(pow(gamma, -1, r)), _mont(pow(delta, -1, r)))

    fr.for_row_blocks(n, lambda lo, hi: _combo_rows(*args, *consts, ni, out, lo, hi))
    return out


def powers_times(tau: int, n: int, k: int) -> fr.FrArray:
    """[tau^i * k for i < n], each block starting from its own tau^lo."""
    r = fr.R_MOD
    out = np.empty((n, 4), dtype=np.uint64)
    step, kp = _mont(tau), _plain(k)

    fr.for_row_blocks(n, lambda lo, hi: _power_rows(_mont(pow(tau, lo, r)), step, kp, out, lo, hi))
    return out
