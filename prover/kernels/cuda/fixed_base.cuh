// fixed_base.cuh: batched fixed-base scalar multiplication out[i] = s_i * B, generic over the base
// field (Fp for G1, Fp2 for G2); instantiated in msm_g1.cu (g1_fixed_base) and msm_g2.cu
// (g2_fixed_base).
//
// Table (Montgomery affine, made once per base by the host): tab[w*256 + d] = d * 2^(8w) * B for
// the 32 byte-windows w of a scalar, d = 0 -> infinity. A scalar costs at most 32 mixed additions
// (~10 field products each), no doublings.
//
// The affine conversion needs 1/ZZZ; one Fermat inversion (~570 field products) would cost more
// than the additions, so each thread makes FB_K outputs and inverts their ZZZ together
// (Montgomery's trick: 3 products per output + one inversion per thread). Thread t of T handles
// outputs t, t + T, ..., t + (FB_K-1) T (coalesced scalar loads and stores); the host launches
// T >= ceil(n / FB_K) threads. Scalars: canonical Fr (8 x u32 LE); out: canonical affine,
// infinity = (0, 0).
#pragma once
#include "curve.cuh"

#ifndef FB_K
#define FB_K 8
#endif

template <class F, int K>
__device__ void fixed_base_t(const Affine<F>* __restrict__ tab, const u32* __restrict__ scalars, u32 n,
                             Affine<F>* __restrict__ out)
{
    const u64 T = (u64)gridDim.x * blockDim.x;
    const u64 t = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    Xyzz<F> acc[K];
    F pre[K];  // pre[k] = product of the ZZZ of the finite acc[0..k]
    F run = F::one_mont();
#pragma unroll 1
    for (int k = 0; k < K; k++) {
        const u64 i = t + (u64)k * T;
        Xyzz<F> a = Xyzz<F>::inf();
        if (i < n) {
            const uint4* sp = reinterpret_cast<const uint4*>(scalars + i * 8);
            const uint4 q0 = sp[0], q1 = sp[1];
            const u32 s[8] = {q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w};
#pragma unroll 1
            for (int l = 0; l < 8; l++) {
#pragma unroll 1
                for (int b = 0; b < 4; b++) {
                    const u32 d = (s[l] >> (8 * b)) & 0xffu;
                    if (d) a = Xyzz<F>::add_affine(a, tab[(l * 4 + b) * 256 + d]);
                }
            }
        }
        acc[k] = a;
        if (!a.is_inf()) run = F::mul(run, a.ZZZ);
        pre[k] = run;
    }
    F inv = F::inv(run);  // 1 / pre[K-1]
#pragma unroll 1
    for (int k = K - 1; k >= 0; k--) {
        const u64 i = t + (u64)k * T;
        const Xyzz<F>& a = acc[k];
        Affine<F> r;
        if (a.is_inf()) {
            r.x = F::zero();
            r.y = F::zero();
        } else {
            // invariant: inv = 1 / pre[k]
            const F izzz = k > 0 ? F::mul(inv, pre[k - 1]) : inv;
            inv = F::mul(inv, a.ZZZ);          // 1 / pre[k-1]
            const F iz = F::mul(izzz, a.ZZ);   // ZZ/ZZZ = 1/Z
            const F izz = F::sqr(iz);
            r.x = F::from_mont(F::mul(a.X, izz));
            r.y = F::from_mont(F::mul(a.Y, izzz));
        }
        if (i < n) out[i] = r;
    }
}

#define FIXED_BASE_INSTANTIATE(P, F)                                                                          \
    extern "C" __global__ void P##_fixed_base(const Affine<F>* __restrict__ tab, const u32* __restrict__ scalars, \
                                              u32 n, Affine<F>* __restrict__ out)                             \
    { fixed_base_t<F, FB_K>(tab, scalars, n, out); }
