// msm_impl.cuh: Pippenger MSM (G1 over Fp, G2 over Fp2), batch addition and fixed-base multiplication.
// Points on the device: Affine<F> in Montgomery form (converted once at upload); infinity = (0, 0).
// Scalars: canonical Fr (8 x u32 LE).
// MSM flow (host drives it, all on one stream, no host sync):
//   digits     signed c-bit windows; histogram of (window, |digit|) buckets        (atomics)
//   scatter    counting sort of (point index | sign) by bucket                     (atomics)
//   acc0/accN  buckets split into pieces of <= LC entries; each piece summed by one thread;
//              repeated over the piece sums until each bucket has one sum (skew-proof)
//   reduce     per window: sum_v v*S_v by running sums over segments, then a tree
//   final      Horner over windows, affine, canonical output
#pragma once
#include "curve.cuh"

template <class F>
__device__ __forceinline__ Affine<F> load_affine(const Affine<F>* p, u32 i) { return p[i]; }

template <class F>
__device__ void points_to_mont_t(Affine<F>* pts, u32 n)
{
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Affine<F> a = pts[i];
    a.x = F::to_mont(a.x);
    a.y = F::to_mont(a.y);
    pts[i] = a;
}
extern "C" __global__ void g1_points_to_mont(Affine<Fp>* pts, u32 n) { points_to_mont_t<Fp>(pts, n); }
extern "C" __global__ void g2_points_to_mont(Affine<Fp2>* pts, u32 n) { points_to_mont_t<Fp2>(pts, n); }

// bits [pos, pos + c) of a 256-bit scalar (c <= 24)
__device__ __forceinline__ u32 scalar_bits(const u32* s, int pos, int c)
{
    if (pos >= 256) return 0;
    const int li = pos >> 5, sh = pos & 31;
    u64 w = s[li];
    if (li + 1 < 8) w |= (u64)s[li + 1] << 32;
    return (u32)(w >> sh) & ((1u << c) - 1);
}

// digits[w*n + i] = signed digit; counts[w*bstride + |d|-1]++ for d != 0 (B = 2^(c-1) buckets a
// window; bstride = B gives each window its own buckets, 0 shares one set across windows, for
// points precomputed as 2^(c*w) * P_i)
extern "C" __global__ void msm_digits(const u32* __restrict__ scalars, u32 n, int c, int W, u32 bstride,
                                      i32* __restrict__ digits, u32* __restrict__ counts)
{
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    u32 s[8];
    const uint4* sp = reinterpret_cast<const uint4*>(scalars + (u64)i * 8);
    uint4 q0 = sp[0], q1 = sp[1];
    s[0] = q0.x; s[1] = q0.y; s[2] = q0.z; s[3] = q0.w; s[4] = q1.x; s[5] = q1.y; s[6] = q1.z; s[7] = q1.w;
    const u32 B = 1u << (c - 1);
    u32 carry = 0;
    for (int w = 0; w < W; w++) {
        u32 raw = scalar_bits(s, w * c, c) + carry;
        i32 d;
        if (raw > B) { d = (i32)raw - (i32)(1u << c); carry = 1; }
        else { d = (i32)raw; carry = 0; }
        digits[(u64)w * n + i] = d;
        if (d != 0) {
            const u32 a = d < 0 ? (u32)(-d) : (u32)d;
            atomicAdd(&counts[(u64)w * bstride + a - 1], 1u);
        }
    }
}

// entries[cursor[bucket]++] = (i + w*pstride) | sign << 31 (pstride = n when window w reads the
// precomputed points 2^(c*w) * P, stored after each other; else 0)
extern "C" __global__ void msm_scatter(const i32* __restrict__ digits, u32 n, int c, int W, u32 bstride, u32 pstride,
                                       u32* __restrict__ cursor, u32* __restrict__ entries)
{
    const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= (u64)n * W) return;
    const i32 d = digits[t];
    if (d == 0) return;
    const u32 w = (u32)(t / n), i = (u32)(t % n);
    const u32 a = d < 0 ? (u32)(-d) : (u32)d;
    const u32 pos = atomicAdd(&cursor[(u64)w * bstride + a - 1], 1u);
    entries[pos] = (i + w * pstride) | (d < 0 ? 0x80000000u : 0u);
}

// pieces[b] = ceil(cnt[b] / LC)
extern "C" __global__ void msm_pieces(const u32* __restrict__ cnt, u32* __restrict__ pieces, u32 nb, u32 LC)
{
    const u32 b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nb) return;
    pieces[b] = (cnt[b] + LC - 1) / LC;
}

// the smallest b < nb with incl[b] > x (incl: an inclusive prefix sum; x < incl[nb - 1])
__device__ __forceinline__ u32 first_above(const u32* incl, u32 nb, u32 x)
{
    u32 lo = 0, hi = nb - 1;
    while (lo < hi) {
        const u32 mid = (lo + hi) >> 1;
        if (incl[mid] > x) hi = mid; else lo = mid + 1;
    }
    return lo;
}

// piece p -> (bucket b, item range [start, end)); false when p is past the total
__device__ __forceinline__ bool piece_range(u32 p, const u32* cnt, const u32* incl, const u32* pc, const u32* pincl,
                                            u32 nb, u32 LC, u32& start, u32& end)
{
    if (p >= pincl[nb - 1]) return false;
    const u32 b = first_above(pincl, nb, p);
    const u32 q = p - (pincl[b] - pc[b]);
    const u32 first = incl[b] - cnt[b];
    start = first + q * LC;
    end = start + LC;
    if (end > incl[b]) end = incl[b];
    return true;
}

// Where a first-level piece (or a batch-affine round) reads its points: the sorted entries
// (point index | sign << 31) into the points, or a list of points in place (msm_affine.cuh).
template <class F>
struct EntryPoints {
    const u32* entries;
    const Affine<F>* pts;
    __device__ __forceinline__ Affine<F> operator()(u32 e) const {
        const u32 v = entries[e];
        Affine<F> a = pts[v & 0x7fffffffu];
        if (v >> 31) a.y = F::neg(a.y);  // neg(0) = 0: infinity stays infinity
        return a;
    }
};
template <class F>
struct ListPoints {
    const Affine<F>* lst;
    __device__ __forceinline__ Affine<F> operator()(u32 e) const { return lst[e]; }
};

template <class F, class Src>
__device__ void msm_acc0_t(const Src src, const u32* cnt, const u32* incl, const u32* pc, const u32* pincl, u32 nb,
                           u32 LC, Xyzz<F>* out)
{
    const u32 p = blockIdx.x * blockDim.x + threadIdx.x;
    u32 start, end;
    if (!piece_range(p, cnt, incl, pc, pincl, nb, LC, start, end)) return;
    Xyzz<F> acc = Xyzz<F>::inf();
    for (u32 e = start; e < end; e++) {
        const Affine<F> a = src(e);
        if (a.is_inf()) continue;
        acc = Xyzz<F>::add_affine(acc, a.x, a.y);
    }
    out[p] = acc;
}
template <class F>
__device__ void msm_accn_t(const Xyzz<F>* in, const u32* cnt, const u32* incl, const u32* pc, const u32* pincl,
                           u32 nb, u32 LC, Xyzz<F>* out)
{
    const u32 p = blockIdx.x * blockDim.x + threadIdx.x;
    u32 start, end;
    if (!piece_range(p, cnt, incl, pc, pincl, nb, LC, start, end)) return;
    Xyzz<F> acc = in[start];
    for (u32 e = start + 1; e < end; e++) acc = Xyzz<F>::add(acc, in[e]);
    out[p] = acc;
}
// buckets[b] = the single remaining piece sum of bucket b, or infinity
template <class F>
__device__ void msm_bucket_final_t(const Xyzz<F>* in, const u32* pc, const u32* pincl, u32 nb, Xyzz<F>* buckets)
{
    const u32 b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nb) return;
    buckets[b] = pc[b] ? in[pincl[b] - 1] : Xyzz<F>::inf();
}

// Window reduction, sum_v v * S_v for v = 1..B. Block bx = w * SB + sb, G threads: segment
// (sb * G + g) of window w covers bucket values [vlo, vhi] and computes
// sum (v - vlo + 1) S_v by running sums, plus (vlo - 1) * sum S_v; a tree over the block's G
// segments (in scratch) gives out[bx]. A reduce_xyzz over each window's SB results follows.
template <class F>
__device__ void msm_window_reduce_t(const Xyzz<F>* buckets, u32 B, u32 SB, Xyzz<F>* scratch, Xyzz<F>* out)
{
    const u32 bx = blockIdx.x, g = threadIdx.x, G = blockDim.x;
    const u32 w = bx / SB, sb = bx % SB;
    const u32 segs = SB * G;
    const u32 per = (B + segs - 1) / segs;
    const u32 vlo = (sb * G + g) * per + 1;
    u32 vhi = vlo + per - 1;
    if (vhi > B) vhi = B;
    Xyzz<F> T = Xyzz<F>::inf(), R = Xyzz<F>::inf();
    if (vlo <= vhi) {
        for (u32 v = vhi; v >= vlo; v--) {
            T = Xyzz<F>::add(T, buckets[(u64)w * B + v - 1]);
            R = Xyzz<F>::add(R, T);
        }
        if (vlo > 1) R = Xyzz<F>::add(R, Xyzz<F>::mul_small(T, vlo - 1));
    }
    Xyzz<F>* sc = scratch + (u64)bx * G;
    sc[g] = R;
    __syncthreads();
    for (u32 st = 1; st < G; st <<= 1) {
        if ((g % (2 * st)) == 0 && g + st < G) sc[g] = Xyzz<F>::add(sc[g], sc[g + st]);
        __syncthreads();
    }
    if (g == 0) out[bx] = sc[0];
}

// Horner over windows: sum_w 2^(c w) win[w]; writes the canonical affine result.
template <class F>
__device__ void msm_final_t(const Xyzz<F>* win, int W, int c, Affine<F>* out)
{
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    Xyzz<F> acc = win[W - 1];
    for (int w = W - 2; w >= 0; w--) {
        for (int k = 0; k < c; k++) acc = Xyzz<F>::dbl(acc);
        acc = Xyzz<F>::add(acc, win[w]);
    }
    Affine<F> a = Xyzz<F>::to_affine(acc);
    a.x = F::from_mont(a.x);
    a.y = F::from_mont(a.y);
    out[0] = a;
}

// Precomputed windows: out[w*n + i] = 2^(c*w) * pts[i] (Montgomery affine) for w < W, so that one
// set of buckets serves every window (no per-window reduction, so wider windows pay off). One
// Fermat inversion per output point: this runs once per proving key, not per MSM.
template <class F>
__device__ void msm_precompute_t(const Affine<F>* pts, u32 n, int c, int W, Affine<F>* out)
{
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const Affine<F> p = pts[i];
    out[i] = p;
    if (p.is_inf()) {
        for (int w = 1; w < W; w++) out[(u64)w * n + i] = p;
        return;
    }
    Xyzz<F> acc = Xyzz<F>::from_affine(p);
    for (int w = 1; w < W; w++) {
        for (int k = 0; k < c; k++) acc = Xyzz<F>::dbl(acc);
        out[(u64)w * n + i] = Xyzz<F>::to_affine(acc);
    }
}

// Batch addition: thread t sums pts[idx[t + k*T]] (mixed adds) into part[t].
template <class F>
__device__ void batch_add_t(const Affine<F>* pts, const u32* idx, u32 m, Xyzz<F>* part)
{
    const u32 t = blockIdx.x * blockDim.x + threadIdx.x, T = gridDim.x * blockDim.x;
    Xyzz<F> acc = Xyzz<F>::inf();
    for (u32 k = t; k < m; k += T) acc = Xyzz<F>::add_affine(acc, pts[idx[k]]);
    part[t] = acc;
}
// Block g reduces in[g*per, min((g+1)*per, count)) into out[g]; scratch holds gridDim*blockDim.
template <class F>
__device__ void reduce_xyzz_t(const Xyzz<F>* in, u32 count, u32 per, Xyzz<F>* scratch, Xyzz<F>* out)
{
    const u32 g = blockIdx.x, t = threadIdx.x, G = blockDim.x;
    const u32 lo = g * per;
    u32 hi = lo + per;
    if (hi > count) hi = count;
    Xyzz<F> acc = Xyzz<F>::inf();
    for (u32 k = lo + t; k < hi; k += G) acc = Xyzz<F>::add(acc, in[k]);
    Xyzz<F>* sc = scratch + (u64)g * G;
    sc[t] = acc;
    __syncthreads();
    for (u32 st = 1; st < G; st <<= 1) {
        if ((t % (2 * st)) == 0 && t + st < G) sc[t] = Xyzz<F>::add(sc[t], sc[t + st]);
        __syncthreads();
    }
    if (t == 0) out[g] = sc[0];
}
template <class F>
__device__ void xyzz_to_affine_t(const Xyzz<F>* in, u32 n, Affine<F>* out)
{
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Affine<F> a = Xyzz<F>::to_affine(in[i]);
    a.x = F::from_mont(a.x);
    a.y = F::from_mont(a.y);
    out[i] = a;
}

#define MSM_INSTANTIATE(P, F)                                                                                   \
    extern "C" __global__ void P##_msm_acc0(const u32* entries, const Affine<F>* pts, const u32* cnt,           \
        const u32* incl, const u32* pc, const u32* pincl, u32 nb, u32 LC, Xyzz<F>* out)                         \
    { msm_acc0_t<F>(EntryPoints<F>{entries, pts}, cnt, incl, pc, pincl, nb, LC, out); }                                    \
    extern "C" __global__ void P##_msm_accn(const Xyzz<F>* in, const u32* cnt, const u32* incl, const u32* pc,  \
        const u32* pincl, u32 nb, u32 LC, Xyzz<F>* out)                                                         \
    { msm_accn_t<F>(in, cnt, incl, pc, pincl, nb, LC, out); }                                                   \
    extern "C" __global__ void P##_msm_bucket_final(const Xyzz<F>* in, const u32* pc, const u32* pincl, u32 nb, \
        Xyzz<F>* buckets)                                                                                       \
    { msm_bucket_final_t<F>(in, pc, pincl, nb, buckets); }                                                      \
    extern "C" __global__ void P##_msm_window_reduce(const Xyzz<F>* buckets, u32 B, u32 SB, Xyzz<F>* scratch,   \
        Xyzz<F>* out)                                                                                           \
    { msm_window_reduce_t<F>(buckets, B, SB, scratch, out); }                                                       \
    extern "C" __global__ void P##_msm_final(const Xyzz<F>* win, int W, int c, Affine<F>* out)                  \
    { msm_final_t<F>(win, W, c, out); }                                                                         \
    extern "C" __global__ void P##_batch_add(const Affine<F>* pts, const u32* idx, u32 m, Xyzz<F>* part)        \
    { batch_add_t<F>(pts, idx, m, part); }                                                                      \
    extern "C" __global__ void P##_reduce_xyzz(const Xyzz<F>* in, u32 count, u32 per, Xyzz<F>* scratch,         \
        Xyzz<F>* out)                                                                                           \
    { reduce_xyzz_t<F>(in, count, per, scratch, out); }                                                         \
    extern "C" __global__ void P##_xyzz_to_affine(const Xyzz<F>* in, u32 n, Affine<F>* out)                     \
    { xyzz_to_affine_t<F>(in, n, out); }                                                                        \
    extern "C" __global__ void P##_msm_precompute(const Affine<F>* pts, u32 n, int c, int W, Affine<F>* out)    \
    { msm_precompute_t<F>(pts, n, c, W, out); }

