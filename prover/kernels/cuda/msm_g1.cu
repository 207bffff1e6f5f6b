// msm_g1.cu: G1 (over Fp) instantiation of msm_impl.cuh and fixed_base.cuh.
// The host wrapper compiles it with -DFP_MUL_CALL (Fp products are calls: the default, ~4 s with
// NVRTC) unless another MSM build is asked for (inlined products: slower on the H200, 30-100 s).
#include "msm_impl.cuh"
#include "msm_affine.cuh"
#include "fixed_base.cuh"

MSM_INSTANTIATE(g1, Fp)
MSM_AFFINE_INSTANTIATE(g1, Fp)  // msm_acc = "affine": batch-affine rounds

// Fixed-base: out[i] = scalars[i] * B from a table tab[w*256 + d] = d * 2^(8w) * B (Montgomery
// affine, d = 0 -> infinity); canonical affine out; FB_K outputs a thread (fixed_base.cuh).
FIXED_BASE_INSTANTIATE(g1, Fp)
