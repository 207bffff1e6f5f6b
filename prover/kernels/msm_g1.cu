// msm_g1.cu: G1 (over Fp) instantiation of msm_impl.cuh and fixed_base.cuh.
// The host wrapper compiles this file twice at most: with -DFP_MUL_CALL (Fp products are calls:
// ~6 s to compile) or without (inlined PTX products: ~35 s to compile, fewer local-memory moves).
#include "msm_impl.cuh"
#include "fixed_base.cuh"

MSM_INSTANTIATE(g1, Fp)

// Fixed-base: out[i] = scalars[i] * B from a table tab[w*256 + d] = d * 2^(8w) * B (Montgomery
// affine, d = 0 -> infinity); canonical affine out; FB_K outputs a thread (fixed_base.cuh).
FIXED_BASE_INSTANTIATE(g1, Fp)
