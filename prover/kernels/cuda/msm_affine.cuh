// msm_affine.cuh: batch-affine rounds for the first accumulation level of the MSM (setting
// msm_acc = "affine"). After msm_scatter each bucket's entries are contiguous; a round halves every
// bucket's list: output k of bucket b is in[2k] + in[2k+1] (an odd last entry is carried), in
// affine coordinates, with ONE field inversion per thread for all the pairs it owns (Montgomery's
// trick: prefix products of the denominators, one inversion, walk back).
//   general add: lambda = (y2 - y1) / (x2 - x1)   doubling (P == Q): lambda = 3 x1^2 / (2 y1)
//   x3 = lambda^2 - x1 - x2, y3 = lambda (x1 - x3) - y1
// Edge pairs take denominator 1 and a copy: Q = inf (also the carried entry) -> P, P = inf -> Q,
// P == -Q -> inf (0, 0). Products a pair: 1 (prefix) + 2 (walk back) + 3 (lambda, lambda^2,
// lambda (x1 - x3)) = 6, plus the thread's inversion (~485 products, affine_inv) over its K
// pairs; XYZZ's mixed addition takes 10.
// The prefix products are kept in the outputs' x (global scratch), not in registers.
// The rounds' lists then go to the XYZZ pieces (msm_acc0_list: msm_acc0_t over the list) and levels
// of msm_impl.cuh.
#pragma once
#include "msm_impl.cuh"

template <class F, class Src>  // Src: EntryPoints (round 0) or ListPoints (later rounds), msm_impl.cuh
struct PairSrc {
    Src load;               // input e's point
    const u32* icnt;        // entries a bucket in the input
    const u32* iincl;       // inclusive prefix of icnt
    const u32* oincl;       // inclusive prefix of ceil(icnt / 2)

    __device__ __forceinline__ u32 ostart(u32 b) const { return b ? oincl[b - 1] : 0; }
    // move b to the bucket holding output j (either direction; empty buckets are skipped)
    __device__ __forceinline__ void locate(u32 j, u32& b) const {
        while (j >= oincl[b]) b++;
        while (j < ostart(b)) b--;
    }
    // the pair of output j in bucket b; q = infinity for a carried single entry
    __device__ __forceinline__ void pair(u32 j, u32 b, Affine<F>& p, Affine<F>& q) const {
        const u32 i0 = iincl[b] - icnt[b] + 2 * (j - ostart(b));
        p = load(i0);
        if (i0 + 1 < iincl[b]) q = load(i0 + 1);
        else { q.x = F::zero(); q.y = F::zero(); }
    }
};

// a^(p-2) by fixed 4-bit windows: 14 products for the table a^0..a^15, 380 squarings and one
// product a nonzero window (~90): ~485 products instead of field.cuh's bit-by-bit 608 (its
// share of a pair is 608/K; this makes it ~485/K). Montgomery in and out; 0 -> 0.
HDNI Fp affine_inv(const Fp& a)
{
    Fp t[16];
    t[0] = Fp::one_mont();
    t[1] = a;
    for (int i = 2; i < 16; i++) t[i] = Fp::mul(t[i - 1], a);
    u32 e_[Fp::N];
    u64 bw = 2;  // exponent p - 2, borrow propagated
    for (int i = 0; i < Fp::N; i++) {
        const u64 v = (u64)FpP::mod(i) - bw;
        e_[i] = (u32)v;
        bw = (v >> 63) & 1;
    }
    Fp r = Fp::one_mont();
    bool started = false;
    for (int i = Fp::N - 1; i >= 0; i--) {
        for (int k = 7; k >= 0; k--) {
            if (started) { r = Fp::sqr(r); r = Fp::sqr(r); r = Fp::sqr(r); r = Fp::sqr(r); }
            const u32 d = (e_[i] >> (4 * k)) & 15u;
            if (d) { r = started ? Fp::mul(r, t[d]) : t[d]; started = true; }
        }
    }
    return r;
}
// 1/(a0 + a1 u) = (a0 - a1 u) / (a0^2 + a1^2), as Fp2::inv
HDNI Fp2 affine_inv(const Fp2& a)
{
    const Fp d = affine_inv(Fp::add(Fp::sqr(a.c0), Fp::sqr(a.c1)));
    Fp2 r;
    r.c0 = Fp::mul(a.c0, d);
    r.c1 = Fp::neg(Fp::mul(a.c1, d));
    return r;
}

enum { PAIR_ADD = 0, PAIR_P = 1, PAIR_Q = 2, PAIR_INF = 3 };

// the pair's kind and lambda's denominator d (1 for the copies and infinity)
template <class F>
__device__ __forceinline__ int pair_kind(const Affine<F>& p, const Affine<F>& q, F& d)
{
    d = F::one_mont();
    if (q.is_inf()) return PAIR_P;
    if (p.is_inf()) return PAIR_Q;
    if (!p.x.eq(q.x)) { d = F::sub(q.x, p.x); return PAIR_ADD; }
    if (p.y.eq(q.y)) { d = F::dbl(p.y); return PAIR_ADD; }  // doubling (y != 0: no 2-torsion)
    return PAIR_INF;
}

// p + q given 1/d from the walk back
template <class F>
__device__ __forceinline__ Affine<F> pair_finish(const Affine<F>& p, const Affine<F>& q, int kind, const F& id)
{
    if (kind == PAIR_P) return p;
    if (kind == PAIR_Q) return q;
    Affine<F> r;
    if (kind == PAIR_INF) { r.x = F::zero(); r.y = F::zero(); return r; }
    F num;
    if (p.x.eq(q.x)) { const F x2 = F::sqr(p.x); num = F::add(F::dbl(x2), x2); }
    else num = F::sub(q.y, p.y);
    const F lam = F::mul(num, id);
    r.x = F::sub(F::sub(F::sqr(lam), p.x), q.x);
    r.y = F::sub(F::mul(lam, F::sub(p.x, r.x)), p.y);
    return r;
}

// Thread t owns outputs [t*K, min((t+1)*K, total)), total = oincl[nb-1].
template <class F, class Src>
__device__ void msm_pair_round_t(const PairSrc<F, Src> s, u32 nb, u32 K, Affine<F>* out)
{
    const u64 j0w = ((u64)blockIdx.x * blockDim.x + threadIdx.x) * K;
    const u32 total = s.oincl[nb - 1];
    if (j0w >= total) return;
    const u32 j0 = (u32)j0w, j1 = (u32)(j0w + K < total ? j0w + K : total);
    u32 b = first_above(s.oincl, nb, j0);
    Affine<F> p, q;
    F d, acc = F::one_mont();
    for (u32 j = j0; j < j1; j++) {  // prefix products, kept in out[j].x
        s.locate(j, b);
        s.pair(j, b, p, q);
        pair_kind(p, q, d);
        acc = F::mul(acc, d);
        out[j].x = acc;
    }
    F inv = affine_inv(acc);  // 1 / (d_j0 ... d_j) at step j of the walk back
    for (u32 j = j1; j-- > j0;) {
        s.locate(j, b);
        s.pair(j, b, p, q);
        const int kind = pair_kind(p, q, d);
        const F id = j > j0 ? F::mul(inv, out[j - 1].x) : inv;  // 1 / d_j
        inv = F::mul(inv, d);
        out[j] = pair_finish(p, q, kind, id);
    }
}

#define MSM_AFFINE_INSTANTIATE(P, F)                                                                           \
    extern "C" __global__ void P##_msm_pair_round0(const u32* entries, const Affine<F>* pts, const u32* icnt,  \
        const u32* iincl, const u32* oincl, u32 nb, u32 K, Affine<F>* out)                                     \
    { msm_pair_round_t<F>(PairSrc<F, EntryPoints<F>>{{entries, pts}, icnt, iincl, oincl}, nb, K, out); }        \
    extern "C" __global__ void P##_msm_pair_round(const Affine<F>* in, const u32* icnt, const u32* iincl,      \
        const u32* oincl, u32 nb, u32 K, Affine<F>* out)                                                       \
    { msm_pair_round_t<F>(PairSrc<F, ListPoints<F>>{{in}, icnt, iincl, oincl}, nb, K, out); }                   \
    extern "C" __global__ void P##_msm_acc0_list(const Affine<F>* lst, const u32* cnt, const u32* incl,        \
        const u32* pc, const u32* pincl, u32 nb, u32 LC, Xyzz<F>* out)                                         \
    { msm_acc0_t<F>(ListPoints<F>{lst}, cnt, incl, pc, pincl, nb, LC, out); }
