// sass_probe.cu: each field product and curve formula as a function of its own, so that
// benchmarks/sass_counts.py can count its SASS instructions (nvdisasm names every
// non-inlined callee). Built like the MSM modules: -DFP_MUL_CALL=1 plus the product variant's
// -DFIELD_MUL=<name>. Never launched.
#include "curve.cuh"

__device__ __noinline__ Fr probe_fr_mul(Fr a, Fr b) { return Fr::mul_fast(a, b); }
__device__ __noinline__ Fr probe_fr_sqr(Fr a) { return Fr::sqr_fast(a); }
__device__ __noinline__ Fr probe_fr_add(Fr a, Fr b) { return Fr::add(a, b); }
__device__ __noinline__ Fr probe_fr_sub(Fr a, Fr b) { return Fr::sub(a, b); }
__device__ __noinline__ Fp probe_fp_mul(Fp a, Fp b) { return Fp::mul_fast(a, b); }
__device__ __noinline__ Fp probe_fp_sqr(Fp a) { return Fp::sqr_fast(a); }
__device__ __noinline__ Fp probe_fp_add(Fp a, Fp b) { return Fp::add(a, b); }
__device__ __noinline__ Fp probe_fp_sub(Fp a, Fp b) { return Fp::sub(a, b); }

extern "C" __global__ void sass_probe(const Fr* fr, const Fp* fp, Fr* ofr, Fp* ofp, Xyzz<Fp>* oxy)
{
    const u32 i = threadIdx.x;
    ofr[i] = probe_fr_sub(probe_fr_add(probe_fr_sqr(probe_fr_mul(fr[i], fr[i + 1])), fr[i + 2]), fr[i + 3]);
    ofp[i] = probe_fp_sub(probe_fp_add(probe_fp_sqr(probe_fp_mul(fp[i], fp[i + 1])), fp[i + 2]), fp[i + 3]);
    Xyzz<Fp> p = Xyzz<Fp>::from_affine(Affine<Fp>{fp[i], fp[i + 1]});
    p = Xyzz<Fp>::add_affine(p, fp[i + 2], fp[i + 3]);  // madd-2008-s (the MSM's first level)
    p = Xyzz<Fp>::add(p, oxy[i]);                       // add-2008-s (piece levels, reductions)
    oxy[i] = Xyzz<Fp>::dbl(p);                           // dbl-2008-s-1
}
