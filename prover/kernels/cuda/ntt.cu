// ntt.cu: NTT family over BLS12-381 Fr for the NTT-H phase.
// Data stay CANONICAL (the FrArray interchange format, 8 x u32 LE per element); every constant
// table (twiddles, coset factors) is in Montgomery form, so mont_mul(x, c_mont) = x*c canonical.
//   DIF (natural -> bit-reversed) and DIT (bit-reversed -> natural) radix-2 stages, fused into
//   passes of up to 10 stages in shared memory; per-stage twiddle table tws[2^s + j] = w_{2^(s+1)}^j
//   (j < 2^s; n entries in all), so a block's twiddles of one stage are contiguous runs.
#include "field.cuh"

__device__ __forceinline__ u32 bitrev_bits(u32 x, int bits) { return bits == 0 ? 0u : (__brev(x) >> (32 - bits)); }

// One pass of S radix-2 stages [lo, lo+S) over groups {base + k*2^lo : k < 2^S}; each block holds
// C = 2^lc groups with adjacent low indices (coalesced 32*C-byte runs). dif: stages run descending.
// Index math uses shifts and masks only (a runtime division costs ~20 instructions a butterfly),
// and stage 0 skips its product: every twiddle there is 1. The pieces (PassGeom, pass_stages)
// are shared by the fused passes below, which fold the step before or after a pass into it.
struct PassGeom {
    u32 cmask, E, lowBase, base;
    int lo, S, lc;
    __device__ PassGeom(int lo_, int S_, int lc_) : lo(lo_), S(S_), lc(lc_) {
        cmask = (1u << lc) - 1;
        E = 1u << (S + lc);
        const int bph = lo - lc;  // log2 of blocks per high index
        const u32 b = blockIdx.x;
        lowBase = (b & ((1u << bph) - 1)) << lc;
        base = ((b >> bph) << (lo + S)) + lowBase;
    }
    __device__ u32 pos(u32 e) const { return base + (e & cmask) + ((e >> lc) << lo); }  // element e's index in x
};

// One radix-2 butterfly in registers: DIT (a, b) -> (a + w b, a - w b), DIF (a + b, (a - b) w);
// one == true: w = 1 (stage 0), no product.
__device__ __forceinline__ void bfly(Fr& a, Fr& b, const Fr& w, bool one, bool dif)
{
    if (one) {
        const Fr s = Fr::add(a, b);
        b = Fr::sub(a, b);
        a = s;
    } else if (!dif) {
        const Fr m = Fr::mul(b, w);
        b = Fr::sub(a, m);
        a = Fr::add(a, m);
    } else {
        const Fr s = Fr::add(a, b);
        b = Fr::mul(Fr::sub(a, b), w);
        a = s;
    }
}

// Stage t's butterflies of the pass, radix 2 through shared memory: butterfly u of 2^(S-1) per
// group pairs elements k0 and k0 + 2^t (k0: bit t clear) of group column c.
__device__ void stage_r2(Fr* sh, const Fr* __restrict__ tw, const PassGeom& g, int t, bool dif)
{
    const int s = g.lo + t;
    const u32 tmask = (1u << t) - 1;
    for (u32 u = threadIdx.x; u < (g.E >> 1); u += blockDim.x) {
        const u32 c = u & g.cmask, v = u >> g.lc;
        const u32 k0 = ((v >> t) << (t + 1)) | (v & tmask);
        const u32 i0 = (k0 << g.lc) + c, i1 = i0 + (1u << (t + g.lc));
        Fr a = sh[i0], b = sh[i1];
        const Fr w = s == 0 ? a : tw[(1u << s) + g.lowBase + c + ((k0 & tmask) << g.lo)];
        bfly(a, b, w, s == 0, dif);
        sh[i0] = a;
        sh[i1] = b;
    }
}

#if defined(NTT_R4)
// Stages t and t+1 at once, radix 4 in registers (kernel setting ntt_radix=4): unit u holds
// elements k + x 2^t + y 2^(t+1) (x, y in {0, 1}) of column c, so the block's data cross shared
// memory and a barrier once per two stages. Same butterflies, same twiddles (stage t: one for
// both pairs; stage t+1: two), same order of stages as stage_r2: bit-identical.
__device__ void stage_r4(Fr* sh, const Fr* __restrict__ tw, const PassGeom& g, int t, bool dif)
{
    const int s = g.lo + t;
    const u32 tmask = (1u << t) - 1;
    for (u32 u = threadIdx.x; u < (g.E >> 2); u += blockDim.x) {
        const u32 c = u & g.cmask, v = u >> g.lc;
        const u32 k = ((v >> t) << (t + 2)) | (v & tmask);
        const u32 i00 = (k << g.lc) + c, d0 = 1u << (t + g.lc), d1 = d0 << 1;
        Fr x00 = sh[i00], x10 = sh[i00 + d0], x01 = sh[i00 + d1], x11 = sh[i00 + d0 + d1];
        const u32 j = g.lowBase + c + ((k & tmask) << g.lo);
        const Fr w1a = tw[(2u << s) + j], w1b = tw[(2u << s) + j + (1u << s)];
        const Fr w0 = s == 0 ? x00 : tw[(1u << s) + j];
        if (!dif) {
            bfly(x00, x10, w0, s == 0, false);  // stage t
            bfly(x01, x11, w0, s == 0, false);
            bfly(x00, x01, w1a, false, false);  // stage t+1
            bfly(x10, x11, w1b, false, false);
        } else {
            bfly(x00, x01, w1a, false, true);   // stage t+1
            bfly(x10, x11, w1b, false, true);
            bfly(x00, x10, w0, s == 0, true);   // stage t
            bfly(x01, x11, w0, s == 0, true);
        }
        sh[i00] = x00;
        sh[i00 + d0] = x10;
        sh[i00 + d1] = x01;
        sh[i00 + d0 + d1] = x11;
    }
}
#endif

// Radix 4 holds 4 elements and 3 twiddles a thread (~130 registers with eo_k): cap the pass
// kernels at 128 so that two blocks of 256 fit an SM.
#if defined(NTT_R4)
#  define NTT_BOUNDS __launch_bounds__(256, 2)
#else
#  define NTT_BOUNDS
#endif

// The S stages on the block's elements in shared memory; every thread of the block calls it.
// DIT runs the stages ascending, DIF descending; with NTT_R4 two at a time (an odd one left: radix 2).
__device__ void pass_stages(Fr* sh, const Fr* __restrict__ tw, const PassGeom& g, bool dif)
{
    for (int done = 0; done < g.S;) {
#if defined(NTT_R4)
        if (g.S - done >= 2) {
            stage_r4(sh, tw, g, dif ? g.S - done - 2 : done, dif);
            done += 2;
            __syncthreads();
            continue;
        }
#endif
        stage_r2(sh, tw, g, dif ? g.S - 1 - done : done, dif);
        done += 1;
        __syncthreads();
    }
}

// The block's groups into shared memory (all threads, then a barrier), and back out.
__device__ __forceinline__ void pass_load(Fr* sh, const Fr* __restrict__ x, const PassGeom& g)
{
    for (u32 e = threadIdx.x; e < g.E; e += blockDim.x) sh[e] = x[g.pos(e)];
    __syncthreads();
}
__device__ __forceinline__ void pass_store(Fr* __restrict__ x, const Fr* sh, const PassGeom& g)
{
    for (u32 e = threadIdx.x; e < g.E; e += blockDim.x) x[g.pos(e)] = sh[e];
}

__device__ __forceinline__ Fr* pass_smem()
{
    extern __shared__ uint4 smem_raw[];
    return reinterpret_cast<Fr*>(smem_raw);
}

// A * B two-level power table entry: base^r * scale for r < 2^L (A[k] = base^k * scale, B[k] = base^(k << loBits))
__device__ __forceinline__ Fr pow_entry(const Fr* __restrict__ A, const Fr* __restrict__ B, int loBits, u32 r)
{
    return Fr::mul(A[r & ((1u << loBits) - 1)], B[r >> loBits]);
}

extern "C" __global__ void NTT_BOUNDS ntt_pass(Fr* __restrict__ x, const Fr* __restrict__ tw, int L, int lo, int S, int lc, int dif)
{
    Fr* sh = pass_smem();
    const PassGeom g(lo, S, lc);
    pass_load(sh, x, g);
    pass_stages(sh, tw, g, dif != 0);
    pass_store(x, sh, g);
}

// Fused passes (kernel setting ntt_fused). Each replaces two or three launches and one or two
// round trips of the whole array through memory with one pass; the arithmetic is the same,
// element for element, so results are bit-identical to the unfused steps.

// The pass at lo = 0 of NTT-H's change of domain: the inverse NTT's last DIF stages, the scaling
// of bit-reversed coefficient j by g^bitrev(j) / n, and the forward NTT's first DIT stages.
extern "C" __global__ void NTT_BOUNDS ntt_pass_mid(Fr* __restrict__ x, const Fr* __restrict__ tw_inv, const Fr* __restrict__ tw_fwd,
                                        const Fr* __restrict__ A, const Fr* __restrict__ B, int loBits, int L, int S)
{
    Fr* sh = pass_smem();
    const PassGeom g(0, S, 0);
    pass_load(sh, x, g);
    pass_stages(sh, tw_inv, g, true);
    for (u32 e = threadIdx.x; e < g.E; e += blockDim.x)
        sh[e] = Fr::mul(sh[e], pow_entry(A, B, loBits, bitrev_bits(g.pos(e), L)));
    __syncthreads();
    pass_stages(sh, tw_fwd, g, false);
    pass_store(x, sh, g);
}

// NTT-H's top pass: c's last DIT stages (its coset evaluations), the quotient
// a = (a*b - c) * zinv (pointwise_h's arithmetic), and the coset iNTT's first DIF stages on it.
// a and b hold their coset evaluations already; the result is written to a.
extern "C" __global__ void NTT_BOUNDS ntt_pass_top_h(Fr* __restrict__ a, const Fr* __restrict__ b, const Fr* __restrict__ c,
                                          const Fr* __restrict__ k, const Fr* __restrict__ tw_fwd,
                                          const Fr* __restrict__ tw_inv, int lo, int S, int lc)
{
    Fr* sh = pass_smem();
    const PassGeom g(lo, S, lc);
    pass_load(sh, c, g);
    pass_stages(sh, tw_fwd, g, false);
    Fr one = Fr::zero();
    one.v[0] = 1;
    const Fr kz = k[0];
    for (u32 e = threadIdx.x; e < g.E; e += blockDim.x) {
        const u32 i = g.pos(e);
        sh[e] = Fr::mul(Fr::sub(Fr::mul(a[i], b[i]), Fr::mul(sh[e], one)), kz);
    }
    __syncthreads();
    pass_stages(sh, tw_inv, g, true);
    pass_store(a, sh, g);
}

// An inverse NTT's last pass (lo = 0), scaled and bit-reversed on the way out:
// out[r] = x_j * A[r & mask] * B[r >> loBits], r = bitrev(j) (scale_bitrev + bitrev_permute).
extern "C" __global__ void NTT_BOUNDS ntt_pass_last_scatter(const Fr* __restrict__ x, Fr* __restrict__ out, const Fr* __restrict__ tw,
                                                 const Fr* __restrict__ A, const Fr* __restrict__ B, int loBits, int L, int S)
{
    Fr* sh = pass_smem();
    const PassGeom g(0, S, 0);
    pass_load(sh, x, g);
    pass_stages(sh, tw, g, true);
    for (u32 e = threadIdx.x; e < g.E; e += blockDim.x) {
        const u32 r = bitrev_bits(g.pos(e), L);
        out[r] = Fr::mul(sh[e], pow_entry(A, B, loBits, r));
    }
}

// A forward NTT's first pass (lo = 0), gathering its input in bit-reversed order and scaling it:
// sh[j] = x[r] * A[r & mask] * B[r >> loBits] (scaled = 1) or x[r] (scaled = 0), r = bitrev(j),
// written to out (bitrev_permute + scale_bitrev + the pass, out of place).
extern "C" __global__ void NTT_BOUNDS ntt_pass_first_gather(const Fr* __restrict__ x, Fr* __restrict__ out, const Fr* __restrict__ tw,
                                                 const Fr* __restrict__ A, const Fr* __restrict__ B, int loBits, int L,
                                                 int S, int scaled)
{
    Fr* sh = pass_smem();
    const PassGeom g(0, S, 0);
    for (u32 e = threadIdx.x; e < g.E; e += blockDim.x) {
        const u32 r = bitrev_bits(g.pos(e), L);
        sh[e] = scaled ? Fr::mul(x[r], pow_entry(A, B, loBits, r)) : x[r];
    }
    __syncthreads();
    pass_stages(sh, tw, g, false);
    pass_store(out, sh, g);
}

// tws[2^s + j] = P[j << (L - 1 - s)] for 1 <= i = 2^s + j < n (P[i] = w^i, i < n/2); tws[0] unused
extern "C" __global__ void twiddle_stages(const Fr* __restrict__ P, Fr* __restrict__ tws, int L)
{
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (1u << L)) return;
    if (i == 0) { tws[0] = P[0]; return; }
    const int s = 31 - __clz(i);
    const u32 j = i - (1u << s);
    tws[i] = P[j << (L - 1 - s)];
}

// out[i] = A[i & mask] * B[i >> loBits] (Montgomery), i < count: builds power tables from two
// small host-made tables (A[k] = g^k * s, B[k] = g^(k << loBits), both Montgomery).
extern "C" __global__ void powers_table(Fr* __restrict__ out, const Fr* __restrict__ A, const Fr* __restrict__ B, int loBits, u32 count)
{
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    out[i] = Fr::mul(A[i & ((1u << loBits) - 1)], B[i >> loBits]);
}

// x[j] *= A[r & mask] * B[r >> loBits] with r = bitrev(j): scales bit-reversed coefficients by
// g^r / n (coset shift + 1/n of the inverse NTT) without a table of size n.
extern "C" __global__ void scale_bitrev(Fr* __restrict__ x, const Fr* __restrict__ A, const Fr* __restrict__ B, int loBits, int L)
{
    const u32 j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= (1u << L)) return;
    const u32 r = bitrev_bits(j, L);
    x[j] = Fr::mul(x[j], pow_entry(A, B, loBits, r));
}

// a[i] = (a[i]*b[i] - c[i]) * zinv, all canonical; k = zinv * R^2 mod r (so two Montgomery
// reductions cancel): mont(a,b) - mont(c,1) = (ab - c)/R, then mont(., k) = (ab - c) * zinv.
extern "C" __global__ void pointwise_h(Fr* __restrict__ a, const Fr* __restrict__ b, const Fr* __restrict__ c, const Fr* __restrict__ k, u32 n)
{
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Fr one = Fr::zero();
    one.v[0] = 1;
    const Fr t = Fr::sub(Fr::mul(a[i], b[i]), Fr::mul(c[i], one));
    a[i] = Fr::mul(t, k[0]);
}

// out[bitrev(i)] = in[i]
extern "C" __global__ void bitrev_permute(const Fr* __restrict__ in, Fr* __restrict__ out, int L)
{
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (1u << L)) return;
    out[bitrev_bits(i, L)] = in[i];
}

// Element-wise field ops for tests (canonical in/out): op 0 mul, 1 add, 2 sub, 3 sqr, 4 inv.
extern "C" __global__ void fr_elementwise(const Fr* __restrict__ a, const Fr* __restrict__ b, Fr* __restrict__ out, u32 n, int op)
{
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const Fr x = Fr::to_mont(a[i]), y = Fr::to_mont(b[i]);
    Fr r;
    if (op == 0) r = Fr::mul(x, y);
    else if (op == 1) r = Fr::add(x, y);
    else if (op == 2) r = Fr::sub(x, y);
    else if (op == 3) r = Fr::sqr(x);
    else r = Fr::inv(x);
    out[i] = Fr::from_mont(r);
}

extern "C" __global__ void fp_elementwise(const Fp* __restrict__ a, const Fp* __restrict__ b, Fp* __restrict__ out, u32 n, int op)
{
    const u32 i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const Fp x = Fp::to_mont(a[i]), y = Fp::to_mont(b[i]);
    Fp r;
    if (op == 0) r = Fp::mul(x, y);
    else if (op == 1) r = Fp::add(x, y);
    else if (op == 2) r = Fp::sub(x, y);
    else if (op == 3) r = Fp::sqr(x);
    else r = Fp::inv(x);
    out[i] = Fp::from_mont(r);
}
