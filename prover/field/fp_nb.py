"""The last host step of a GPU MSM, compiled: the Horner sum of the window sums
(sum_w 2^(c w) S_w) and the affine conversion, for G1 (Fp) and G2 (Fp2), in numba with the GIL
released. The pure-Python version (prover.field.curve_int) took ~10 ms a partition at 2^22
and held the GIL for all of it, beside every other worker's Python.

Values stay in the GPU's form: 32-bit Montgomery limbs (R = 2^384) held in uint64 slots, as
prover.field.fr_nb does for Fr (a 32x32-bit product fits a uint64 and sums of a few dozen stay
exact). An Fp2 element is a (2, NL) array (c0, c1), an Fp one (1, NL), so one set of XYZZ
formulas serves both groups: `d` says which. The formulas are host_curve's, so the points and
the bytes are the same.
"""
from __future__ import annotations

import numpy as np
from prover.field.jit import njit  # numba.njit, cached where numba can cache

from prover.field.params import FP_LIMBS32, FP_MONT_R, P_MOD, limbs32, mont_n0

NL = FP_LIMBS32
M32 = np.uint64(0xFFFFFFFF)
S32 = np.uint64(32)
ZERO = np.uint64(0)
ONE = np.uint64(1)
B32 = np.uint64(1 << 32)


def _limbs(x: int) -> np.ndarray:
    return limbs32(x, NL)


P32 = _limbs(P_MOD)
N0 = np.uint64(mont_n0(P_MOD))
ONE_M = _limbs(FP_MONT_R % P_MOD)  # 1 in Montgomery form
PLAIN_ONE = _limbs(1)  # mont_mul(x, 1) leaves Montgomery form
EXP_INV = np.array([int(b) for b in bin(P_MOD - 2)[2:]], dtype=np.uint8)  # p - 2, most significant first

_jit = njit(nogil=True)


@_jit
def _geq_p(x: np.ndarray) -> bool:
    for j in range(NL - 1, -1, -1):
        if x[j] != P32[j]:
            return x[j] > P32[j]
    return True


@_jit
def _sub_p(x: np.ndarray) -> None:
    borrow = ZERO
    for j in range(NL):
        d = x[j] + B32 - P32[j] - borrow
        x[j] = d & M32
        borrow = ONE - (d >> S32)


@_jit
def reduce_full(x: np.ndarray) -> None:
    """Normalised limbs < 2^384 -> x mod p, in place (at most a few subtractions: 2^384 < 11p)."""
    while _geq_p(x):
        _sub_p(x)


@_jit
def mont_mul(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """out = a * b * 2^-384 mod p (a, b < p; out may alias a or b)."""
    t = np.zeros(2 * NL + 1, dtype=np.uint64)
    for i in range(NL):
        ai = a[i]
        for j in range(NL):
            p = ai * b[j]
            t[i + j] += p & M32
            t[i + j + 1] += p >> S32
    for i in range(NL):
        m = (t[i] * N0) & M32
        for j in range(NL):
            q = m * P32[j]
            t[i + j] += q & M32
            t[i + j + 1] += q >> S32
        t[i + 1] += t[i] >> S32
    carry = ZERO
    for j in range(NL):
        v = t[NL + j] + carry
        out[j] = v & M32
        carry = v >> S32
    reduce_full(out)  # < 2p


@_jit
def add_mod(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    carry = ZERO
    for j in range(NL):
        v = a[j] + b[j] + carry
        out[j] = v & M32
        carry = v >> S32
    reduce_full(out)  # a + b < 2p < 2^384: no carry out


@_jit
def sub_mod(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """out = a - b mod p: a + (p - b), reduced."""
    borrow = ZERO
    nb = np.empty(NL, dtype=np.uint64)
    for j in range(NL):
        d = P32[j] + B32 - b[j] - borrow
        nb[j] = d & M32
        borrow = ONE - (d >> S32)
    add_mod(a, nb, out)


@_jit
def is_zero(a: np.ndarray) -> bool:
    for j in range(a.shape[0]):
        if a[j] != ZERO:
            return False
    return True


@_jit
def mont_inv(a: np.ndarray, out: np.ndarray) -> None:
    """out = a^-1 in Montgomery form (a^(p-2) by square and multiply); a != 0."""
    acc = ONE_M.copy()
    for bit in EXP_INV:
        mont_mul(acc, acc, acc)
        if bit:
            mont_mul(acc, a, acc)
    out[:] = acc


# --- Fp (d = 1) and Fp2 (d = 2, u^2 = -1) elements: (d, NL) arrays --------------------------
@_jit
def e_zero(a: np.ndarray) -> bool:
    for k in range(a.shape[0]):
        if not is_zero(a[k]):
            return False
    return True


@_jit
def e_add(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    for k in range(a.shape[0]):
        add_mod(a[k], b[k], out[k])


@_jit
def e_sub(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    for k in range(a.shape[0]):
        sub_mod(a[k], b[k], out[k])


@_jit
def e_mul(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    if a.shape[0] == 1:
        mont_mul(a[0], b[0], out[0])
        return
    t0 = np.empty(NL, dtype=np.uint64)
    t1 = np.empty(NL, dtype=np.uint64)
    t2 = np.empty(NL, dtype=np.uint64)
    t3 = np.empty(NL, dtype=np.uint64)
    mont_mul(a[0], b[0], t0)
    mont_mul(a[1], b[1], t1)
    mont_mul(a[0], b[1], t2)
    mont_mul(a[1], b[0], t3)
    sub_mod(t0, t1, out[0])
    add_mod(t2, t3, out[1])


@_jit
def e_inv(a: np.ndarray, out: np.ndarray) -> None:
    if a.shape[0] == 1:
        mont_inv(a[0], out[0])
        return
    n = np.empty(NL, dtype=np.uint64)
    t = np.empty(NL, dtype=np.uint64)
    mont_mul(a[0], a[0], n)
    mont_mul(a[1], a[1], t)
    add_mod(n, t, n)
    mont_inv(n, n)
    c0 = np.empty(NL, dtype=np.uint64)
    mont_mul(a[0], n, c0)
    mont_mul(a[1], n, t)
    sub_mod(np.zeros(NL, dtype=np.uint64), t, out[1])
    out[0] = c0


# --- XYZZ points: (4, d, NL) = X, Y, ZZ, ZZZ (host_curve's formulas) --------------------------
@_jit
def _chord(m: np.ndarray, s: np.ndarray, extra: np.ndarray, w: np.ndarray, y: np.ndarray, out: np.ndarray) -> None:
    """The shared tail of dbl and add: X3 = m^2 - extra - 2s, Y3 = m (s - X3) - w y."""
    x3 = np.empty_like(m)
    t = np.empty_like(m)
    e_mul(m, m, x3)
    e_sub(x3, extra, x3)
    e_add(s, s, t)
    e_sub(x3, t, x3)
    e_sub(s, x3, t)
    e_mul(m, t, out[1])
    e_mul(w, y, t)
    e_sub(out[1], t, out[1])
    out[0] = x3


@_jit
def dbl(p: np.ndarray, out: np.ndarray) -> None:
    """out = 2p (out must not alias p)."""
    if e_zero(p[2]):
        out[:] = p
        return
    X, Y = p[0], p[1]
    U = np.empty_like(X)
    V = np.empty_like(X)
    W = np.empty_like(X)
    S = np.empty_like(X)
    M = np.empty_like(X)
    e_add(Y, Y, U)
    e_mul(U, U, V)
    e_mul(U, V, W)
    e_mul(X, V, S)
    e_mul(X, X, M)
    e_add(M, M, U)
    e_add(U, M, M)  # 3 X^2
    e_mul(V, p[2], out[2])
    e_mul(W, p[3], out[3])
    _chord(M, S, np.zeros_like(X), W, Y, out)


@_jit
def add(p: np.ndarray, q: np.ndarray, out: np.ndarray) -> None:
    """out = p + q (out must not alias p or q)."""
    if e_zero(p[2]):
        out[:] = q
        return
    if e_zero(q[2]):
        out[:] = p
        return
    U1 = np.empty_like(p[0])
    U2 = np.empty_like(U1)
    S1 = np.empty_like(U1)
    S2 = np.empty_like(U1)
    e_mul(p[0], q[2], U1)
    e_mul(q[0], p[2], U2)
    e_mul(p[1], q[3], S1)
    e_mul(q[1], p[3], S2)
    e_sub(U2, U1, U2)  # P
    e_sub(S2, S1, S2)  # R
    if e_zero(U2):
        if e_zero(S2):
            dbl(p, out)
        else:
            out[:] = 0
        return
    PP = np.empty_like(U1)
    PPP = np.empty_like(U1)
    t = np.empty_like(U1)
    e_mul(U2, U2, PP)
    e_mul(U2, PP, PPP)
    e_mul(U1, PP, U1)  # Q
    e_mul(p[2], q[2], t)
    e_mul(t, PP, out[2])
    e_mul(p[3], q[3], t)
    e_mul(t, PPP, out[3])
    _chord(S2, U1, PPP, S1, PPP, out)


@_jit
def _load(words: np.ndarray, d: int, out: np.ndarray) -> None:
    """One XYZZ point of u32 Montgomery words (4 coordinates x d x NL) -> reduced limbs."""
    i = 0
    for c in range(4):
        for k in range(d):
            for j in range(NL):
                out[c, k, j] = np.uint64(words[i])
                i += 1
            reduce_full(out[c, k])


@_jit
def _store(x: np.ndarray, out: np.ndarray, at: int) -> None:
    """Montgomery limbs -> 48 canonical little-endian bytes at out[at:]."""
    plain = np.empty(NL, dtype=np.uint64)
    mont_mul(x, PLAIN_ONE, plain)
    for j in range(NL):
        v = plain[j]
        for b in range(4):
            out[at + 4 * j + b] = np.uint8((v >> np.uint64(8 * b)) & np.uint64(0xFF))


@_jit
def finish_windows_kernel(win: np.ndarray, c: int, d: int, out: np.ndarray) -> None:
    """win: (W, 4 d NL) u32 XYZZ window sums -> out: 2 d 48 bytes of sum_w 2^(c w) win[w] as xy
    (all zero for the identity)."""
    W = win.shape[0]
    pts = np.empty((W, 4, d, NL), dtype=np.uint64)
    for w in range(W):
        _load(win[w], d, pts[w])
    acc = pts[W - 1].copy()
    tmp = np.empty_like(acc)
    for w in range(W - 2, -1, -1):
        for _ in range(c):
            dbl(acc, tmp)
            acc[:] = tmp
        add(acc, pts[w], tmp)
        acc[:] = tmp
    out[:] = 0
    if e_zero(acc[2]):
        return
    izzz = np.empty((d, NL), dtype=np.uint64)
    e_inv(acc[3], izzz)
    t = np.empty_like(izzz)
    e_mul(izzz, acc[2], t)
    izz = np.empty_like(izzz)
    e_mul(t, t, izz)
    e_mul(acc[0], izz, t)
    for k in range(d):
        _store(t[k], out, 48 * k)
    e_mul(acc[1], izzz, t)
    for k in range(d):
        _store(t[k], out, 48 * (d + k))


def finish_windows(win: np.ndarray, c: int, group: str) -> bytes:
    """host_curve.finish_windows, compiled and without the GIL: xy bytes of sum_w 2^(c w) win[w]."""
    d = 1 if group == "g1" else 2
    w = np.ascontiguousarray(np.asarray(win, dtype=np.uint32).reshape(-1, 4 * d * NL))
    out = np.empty(2 * d * 48, dtype=np.uint8)
    finish_windows_kernel(w, int(c), d, out)
    return out.tobytes()
