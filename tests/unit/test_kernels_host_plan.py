"""CI replay (Python integers, no GPU) of the index logic of the CUDA kernels and their host
plans: the NTT pass decomposition of ntt.cu's `ntt_pass` with per-stage twiddle tables, and the
MSM pipeline of msm_impl.cuh (signed digits, counting sort, piece levels, window reduction by
running sums, Horner), with points replaced by integers mod a prime. A mirror of the kernels'
indexing: if one changes, change the other."""
from __future__ import annotations

import random
from itertools import accumulate

import pytest

from prover.kernels import msm, ntt
from prover.field.ref import R_MOD, ntt_ref, root_of_unity


def _brev(x: int, L: int) -> int:
    return int(format(x, f"0{L}b")[::-1], 2) if L else 0


def _stage_table(w: int, L: int) -> list[int]:
    n = 1 << L
    P = [pow(w, i, R_MOD) for i in range(max(n // 2, 1))]
    return [P[0]] + [P[(i - (1 << (i.bit_length() - 1))) << (L - i.bit_length())] for i in range(1, n)]


def _run_passes(x, tw, L, passes, dif):
    """ntt.cu's ntt_pass, index for index (shifts and masks; stage 0 without a product)."""
    n = 1 << L
    for lo, S in (reversed(passes) if dif else passes):
        lc = min(2, lo)
        cm, E, bph = (1 << lc) - 1, 1 << (S + lc), lo - lc
        for b in range(n // E):
            low_base = (b & ((1 << bph) - 1)) << lc
            base = ((b >> bph) << (lo + S)) + low_base
            sh = [x[base + (e & cm) + ((e >> lc) << lo)] for e in range(E)]
            for st in range(S):
                t = S - 1 - st if dif else st
                s, tm = lo + t, (1 << t) - 1
                for u in range(E // 2):
                    c, v = u & cm, u >> lc
                    k0 = ((v >> t) << (t + 1)) | (v & tm)
                    i0 = (k0 << lc) + c
                    i1 = i0 + (1 << (t + lc))
                    w = 1 if s == 0 else tw[(1 << s) + low_base + c + ((k0 & tm) << lo)]
                    a, bb = sh[i0], sh[i1]
                    if dif:
                        sh[i0], sh[i1] = (a + bb) % R_MOD, (a - bb) * w % R_MOD
                    else:
                        m = bb * w % R_MOD
                        sh[i0], sh[i1] = (a + m) % R_MOD, (a - m) % R_MOD
            for e in range(E):
                x[base + (e & cm) + ((e >> lc) << lo)] = sh[e]


@pytest.mark.parametrize("L,passes", [(1, None), (3, None), (10, None), (11, [(0, 4), (4, 3), (7, 4)]),
                                      (12, [(0, 5), (5, 7)])])
def test_ntt_pass_indexing(L, passes):
    n = 1 << L
    passes = passes or ntt.NttPlan._plan(L)
    assert sum(S for _, S in passes) == L
    rng = random.Random(L)
    a = [rng.randrange(R_MOD) for _ in range(n)]
    w = root_of_unity(L)
    fwd, inv = _stage_table(w, L), _stage_table(pow(w, R_MOD - 2, R_MOD), L)
    x = [a[_brev(i, L)] for i in range(n)]
    _run_passes(x, fwd, L, passes, dif=False)
    assert x == ntt_ref(a)
    y = list(a)
    _run_passes(y, inv, L, passes, dif=True)
    ninv = pow(n, R_MOD - 2, R_MOD)
    z = [0] * n
    for i in range(n):
        z[_brev(i, L)] = y[i] * ninv % R_MOD
    assert z == ntt_ref(a, inverse=True)


def test_ntt_plans_cover_every_size():
    for L in range(1, 29):
        p = ntt.NttPlan._plan(L)
        assert sum(S for _, S in p) == L and p[0][0] == 0 and all(S <= 10 for _, S in p)
        assert all(lo + S == p[i + 1][0] for i, (lo, S) in enumerate(p[:-1]))


Q = (1 << 127) - 1  # the "group": integers mod a prime, infinity = 0


def _window_sums(buckets, B, WB):
    """msm_window_reduce + reduce_xyzz: per window, the running sums of its buckets in SB * G
    segments, each segment's offset added once."""
    G = min(128, B)
    SB = max(1, min(B // G // 4, max(32, 256 // WB)))
    per = (B + SB * G - 1) // (SB * G)
    win = []
    for w in range(WB):
        tot = 0
        for g in range(SB * G):
            vlo = g * per + 1
            vhi = min(vlo + per - 1, B)
            T = R = 0
            for v in range(vhi, vlo - 1, -1):
                T = (T + buckets[w * B + v - 1]) % Q
                R = (R + T) % Q
            if vlo <= vhi and vlo > 1:
                R = (R + (vlo - 1) * T) % Q
            tot = (tot + R) % Q
        win.append(tot)
    return win


def _msm_emu(P, s, c=None, pre=False):
    """pre: the precomputed-windows mode (points 2^(c*w) * P_i after each other, one shared
    set of buckets, bstride 0 / pstride n in the kernels)."""
    n = len(s)
    c = c or (msm.msm_window_bits_precomputed(n) if pre else msm.msm_window_bits(n))
    W = msm._num_windows(c)
    B = 1 << (c - 1)
    WB, bstride, pstride = (1, 0, n) if pre else (W, B, 0)
    nb = WB * B
    if pre:
        P = [p * (1 << (c * w)) % Q for w in range(W) for p in P]
    digits = [[0] * n for _ in range(W)]
    counts = [0] * nb
    for i in range(n):
        carry = 0
        for w in range(W):
            raw = (((s[i] >> (w * c)) & ((1 << c) - 1)) if w * c < 256 else 0) + carry
            d, carry = (raw - (1 << c), 1) if raw > B else (raw, 0)
            digits[w][i] = d
            if d:
                counts[w * bstride + abs(d) - 1] += 1
        assert carry == 0
    incl = list(accumulate(counts))
    cursor = [incl[b] - counts[b] for b in range(nb)]
    entries = [None] * (n * W)
    for w in range(W):
        for i in range(n):
            d = digits[w][i]
            if d:
                b = w * bstride + abs(d) - 1
                entries[cursor[b]] = (i + w * pstride, d < 0)
                cursor[b] += 1

    def level(items, cnt, incl, LC, first):
        pc = [(x + LC - 1) // LC for x in cnt]
        pincl = list(accumulate(pc))
        out = []
        for p in range(pincl[-1]):
            lo, hi = 0, nb - 1
            while lo < hi:
                mid = (lo + hi) // 2
                if pincl[mid] > p:
                    hi = mid
                else:
                    lo = mid + 1
            b = lo
            start = incl[b] - cnt[b] + (p - (pincl[b] - pc[b])) * LC
            acc = 0
            for e in range(start, min(start + LC, incl[b])):
                if first:
                    i, neg = items[e]
                    acc = (acc + (-P[i] if neg else P[i])) % Q
                else:
                    acc = (acc + items[e]) % Q
            out.append(acc)
        return out, pc, pincl

    part, pc, pincl = level(entries, counts, incl, msm.LC0, True)
    bound = -(-(n * (W if pre else 1)) // msm.LC0)
    while bound > 1:
        part, pc, pincl = level(part, pc, pincl, msm.LCN, False)
        bound = -(-bound // msm.LCN)
    assert max(pc) <= 1
    buckets = [part[pincl[b] - 1] if pc[b] else 0 for b in range(nb)]
    win = _window_sums(buckets, B, WB)
    acc = win[-1]
    for w in range(len(win) - 2, -1, -1):
        acc = (acc * (1 << c) + win[w]) % Q
    return acc


@pytest.mark.parametrize("pre", [False, True], ids=["plain", "precomputed"])
@pytest.mark.parametrize("n,c", [(1, None), (16, None), (300, 3), (300, 7), (700, 11), (600, 16), (3000, None), (2000, 20)])
def test_msm_pipeline_indexing(n, c, pre):
    rng = random.Random(n * 31 + (c or 0))
    P = [rng.randrange(Q) for _ in range(n)]
    s = [rng.randrange(R_MOD) for _ in range(n)]
    if n > 20:
        s[:8] = [0, 1, R_MOD - 1, 2, (1 << 16) - 1, 1 << 200, R_MOD - 2, 5]
    assert _msm_emu(P, s, c, pre) == sum(a * b for a, b in zip(P, s)) % Q


def test_msm_pipeline_skewed_bucket():
    rng = random.Random(3)
    P = [rng.randrange(Q) for _ in range(5000)]
    assert _msm_emu(P, [7] * 5000) == sum(P) * 7 % Q


def test_window_counts_fit_the_top_carry():
    for c in range(2, 25):
        W = msm._num_windows(c)
        assert ((R_MOD - 1) >> (c * (W - 1))) + 1 <= 1 << (c - 1)


def test_msm_precomputed_every_window_in_one_bucket():
    # the same digit in every window: one shared bucket holds W * n entries (more levels)
    c = 9
    W = msm._num_windows(c)
    k = sum(5 << (c * w) for w in range(W - 1))
    rng = random.Random(5)
    P = [rng.randrange(Q) for _ in range(3000)]
    assert _msm_emu(P, [k] * 3000, c, pre=True) == sum(P) * k % Q
