"""Python-integer XYZZ arithmetic for the last, tiny step of an MSM: the Horner sum of the
window sums (2^c-fold doublings) and the conversion to affine. On the GPU it would be one
latency-bound thread. `finish_windows` runs the compiled, GIL-free version
(prover.field.fp_nb); `finish_windows_reference` here is what it is tested against."""
from __future__ import annotations

import numpy as np

from prover.field.params import FP_MONT_R, P_MOD

_RINV = pow(FP_MONT_R, -1, P_MOD)


class Fp:
    zero, one = 0, 1

    @staticmethod
    def add(a, b): return (a + b) % P_MOD
    @staticmethod
    def sub(a, b): return (a - b) % P_MOD
    @staticmethod
    def mul(a, b): return a * b % P_MOD
    @staticmethod
    def is_zero(a): return a == 0
    @staticmethod
    def inv(a): return pow(a, P_MOD - 2, P_MOD)
    @staticmethod
    def words(w: np.ndarray, i: int) -> int:  # 12 u32 limbs at w[i:i+12], Montgomery -> canonical
        return int.from_bytes(w[i:i + 12].astype("<u4").tobytes(), "little") * _RINV % P_MOD
    width = 12

    @staticmethod
    def to_bytes(a) -> bytes: return a.to_bytes(48, "little")


class Fp2:
    zero, one = (0, 0), (1, 0)

    @staticmethod
    def add(a, b): return ((a[0] + b[0]) % P_MOD, (a[1] + b[1]) % P_MOD)
    @staticmethod
    def sub(a, b): return ((a[0] - b[0]) % P_MOD, (a[1] - b[1]) % P_MOD)
    @staticmethod
    def mul(a, b): return ((a[0] * b[0] - a[1] * b[1]) % P_MOD, (a[0] * b[1] + a[1] * b[0]) % P_MOD)
    @staticmethod
    def is_zero(a): return a[0] == 0 and a[1] == 0
    @staticmethod
    def inv(a):
        d = pow((a[0] * a[0] + a[1] * a[1]) % P_MOD, P_MOD - 2, P_MOD)
        return (a[0] * d % P_MOD, -a[1] * d % P_MOD)
    @staticmethod
    def words(w: np.ndarray, i: int):
        return (Fp.words(w, i), Fp.words(w, i + 12))
    width = 24

    @staticmethod
    def to_bytes(a) -> bytes: return a[0].to_bytes(48, "little") + a[1].to_bytes(48, "little")


def dbl(F, p):
    X, Y, ZZ, ZZZ = p
    if F.is_zero(ZZ):
        return p
    U = F.add(Y, Y); V = F.mul(U, U); W = F.mul(U, V); S = F.mul(X, V)  # noqa: E702
    X2 = F.mul(X, X); M = F.add(F.add(X2, X2), X2)  # noqa: E702
    X3 = F.sub(F.mul(M, M), F.add(S, S))
    Y3 = F.sub(F.mul(M, F.sub(S, X3)), F.mul(W, Y))
    return (X3, Y3, F.mul(V, ZZ), F.mul(W, ZZZ))


def add(F, p, q):
    if F.is_zero(p[2]):
        return q
    if F.is_zero(q[2]):
        return p
    U1 = F.mul(p[0], q[2]); U2 = F.mul(q[0], p[2])  # noqa: E702
    S1 = F.mul(p[1], q[3]); S2 = F.mul(q[1], p[3])  # noqa: E702
    P = F.sub(U2, U1); R = F.sub(S2, S1)  # noqa: E702
    if F.is_zero(P):
        return dbl(F, p) if F.is_zero(R) else (F.zero, F.zero, F.zero, F.zero)
    PP = F.mul(P, P); PPP = F.mul(P, PP); Q = F.mul(U1, PP)  # noqa: E702
    X3 = F.sub(F.sub(F.mul(R, R), PPP), F.add(Q, Q))
    Y3 = F.sub(F.mul(R, F.sub(Q, X3)), F.mul(S1, PPP))
    return (X3, Y3, F.mul(F.mul(p[2], q[2]), PP), F.mul(F.mul(p[3], q[3]), PPP))


def to_xy_bytes(F, p) -> bytes:
    X, Y, ZZ, ZZZ = p
    if F.is_zero(ZZ):
        return bytes(2 * 48 * (F.width // 12))
    izzz = F.inv(ZZZ)
    t = F.mul(izzz, ZZ)
    izz = F.mul(t, t)
    return F.to_bytes(F.mul(X, izz)) + F.to_bytes(F.mul(Y, izzz))


def finish_windows(win: np.ndarray, c: int, group: str) -> bytes:
    """win: (W, xyzz words) u32 Montgomery XYZZ window sums -> xy bytes of sum_w 2^(c w) win[w]
    (compiled; the same bytes as finish_windows_reference)."""
    from prover.field import fp_nb

    return fp_nb.finish_windows(win, c, group)


def finish_windows_reference(win: np.ndarray, c: int, group: str) -> bytes:
    """finish_windows in Python integers (~4 ms for G1, ~9 ms for G2 at 20 windows, under the GIL)."""
    F = Fp if group == "g1" else Fp2
    pts = [tuple(F.words(row, k * F.width) for k in range(4)) for row in np.asarray(win, dtype=np.uint32)]
    acc = pts[-1]
    for w in range(len(pts) - 2, -1, -1):
        for _ in range(c):
            acc = dbl(F, acc)
        acc = add(F, acc, pts[w])
    return to_xy_bytes(F, acc)
