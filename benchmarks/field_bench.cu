// field_bench.cu: micro-benchmark and check of the field product variants of field.cuh
// (benchmarks/bench_field.py builds it once per -DFIELD_MUL=<variant>, with -DFP_MUL_CALL=1 like
// the MSM builds). Values are raw N-limb integers < modulus; the kernels compute Montgomery
// products mont(a, b) = a*b*2^(-32N) mod m.
#include "field.cuh"

// out[i] = mont(a[i], b[i]) (op 0), mont(a[i], a[i]) through sqr (op 1), or a*b - b*a' through
// mul_sub (op 2: mont(a, b) - mont(b, a ^ 1 mod m) style, one reduction with FIELD_MUL2), where a'
// = a[(i + 1) % n] (so that the two products differ)
template <class F>
__device__ __forceinline__ F elem(const F* a, const F* b, int i, int n, int op)
{
    if (op == 0) return F::mul(a[i], b[i]);
    if (op == 1) return F::sqr(a[i]);
    return F::mul_sub(a[i], b[i], b[i], a[(i + 1) % n]);
}
extern "C" __global__ void fr_elem(const Fr* __restrict__ a, const Fr* __restrict__ b, Fr* __restrict__ out, int n, int op)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = elem(a, b, i, n, op);
}
extern "C" __global__ void fp_elem(const Fp* __restrict__ a, const Fp* __restrict__ b, Fp* __restrict__ out, int n, int op)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = elem(a, b, i, n, op);
}

// Throughput: each thread runs K independent chains x_k <- mont(x_k, y) of `iters` dependent
// products (y is one value for the whole grid, so the host checks x_k * (y/R)^iters); MODE 2:
// x_k <- sqr(x_k) (host check: x_k^(2^iters) / R^(2^iters - 1)).
#define CHAIN_K 4
template <class F, int MODE>
__device__ __forceinline__ void chain(F* __restrict__ x, const F* __restrict__ y, int iters)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    F v[CHAIN_K];
UNROLL
    for (int k = 0; k < CHAIN_K; k++) v[k] = x[t * CHAIN_K + k];
    const F c = y[0];
    for (int it = 0; it < iters; it++) {
UNROLL
        for (int k = 0; k < CHAIN_K; k++)
            v[k] = MODE == 0 ? F::mul(v[k], c) : MODE == 1 ? F::mul_fast(v[k], c) : F::sqr(v[k]);
    }
UNROLL
    for (int k = 0; k < CHAIN_K; k++) x[t * CHAIN_K + k] = v[k];
}
extern "C" __global__ void fr_chain(Fr* x, const Fr* y, int iters) { chain<Fr, 0>(x, y, iters); }
// Fp::mul: a call under FP_MUL_CALL (the MSM builds); Fp::mul_fast: the product inlined
extern "C" __global__ void fp_chain_call(Fp* x, const Fp* y, int iters) { chain<Fp, 0>(x, y, iters); }
extern "C" __global__ void fp_chain_inline(Fp* x, const Fp* y, int iters) { chain<Fp, 1>(x, y, iters); }
// squarings through Fe::sqr (the Fp one a call under FP_MUL_CALL)
extern "C" __global__ void fr_sqr_chain(Fr* x, const Fr* y, int iters) { chain<Fr, 2>(x, y, iters); }
extern "C" __global__ void fp_sqr_chain(Fp* x, const Fp* y, int iters) { chain<Fp, 2>(x, y, iters); }
