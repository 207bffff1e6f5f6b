// msm_g1.cu: G1 (over Fp) instantiation of msm_impl.cuh, plus fixed-base multiplication.
// The host wrapper compiles this file twice at most: with -DFP_MUL_CALL (Fp products are calls:
// ~6 s to compile) or without (inlined PTX products: ~35 s to compile, fewer local-memory moves).
#include "msm_impl.cuh"

MSM_INSTANTIATE(g1, Fp)

// Fixed-base: out[i] = scalars[i] * B from a table tab[w*256 + d] = d * 2^(8w) * B (Montgomery
// affine, d = 0 -> infinity); canonical affine out.
extern "C" __global__ void g1_fixed_base(const Affine<Fp>* __restrict__ tab, const u32* __restrict__ scalars, u32 n, Affine<Fp>* __restrict__ out)
{
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Xyzz<Fp> acc = Xyzz<Fp>::inf();
    for (int l = 0; l < 8; l++) {
        const u32 s = scalars[(u64)i * 8 + l];
        for (int k = 0; k < 4; k++) {
            const u32 d = (s >> (8 * k)) & 0xffu;
            if (d) acc = Xyzz<Fp>::add_affine(acc, tab[(l * 4 + k) * 256 + d]);
        }
    }
    Affine<Fp> a = Xyzz<Fp>::to_affine(acc);
    a.x = Fp::from_mont(a.x);
    a.y = Fp::from_mont(a.y);
    out[i] = a;
}
