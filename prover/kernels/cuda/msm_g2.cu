// msm_g2.cu: G2 (over Fp2) instantiation of msm_impl.cuh and fixed_base.cuh (g2_fixed_base).
// Fp products are calls here (FP_MUL_CALL): inlining them inside Fp2 formulas made NVRTC take minutes.
#ifndef FP_MUL_CALL
#define FP_MUL_CALL 1
#endif
#include "msm_impl.cuh"
#include "msm_affine.cuh"
#include "fixed_base.cuh"

MSM_INSTANTIATE(g2, Fp2)
MSM_AFFINE_INSTANTIATE(g2, Fp2)  // msm_acc = "affine": batch-affine rounds
FIXED_BASE_INSTANTIATE(g2, Fp2)
