// field.cuh: Montgomery arithmetic over 32-bit limbs for BLS12-381 Fr (8 limbs), Fp (12 limbs)
// and Fp2 = Fp[u]/(u^2+1). Portable C++ (g++ compiles the very same code for CI; 32x32->64
// products map to IMAD.WIDE.U32 on the GPU), with optional PTX device products (FIELD_MUL below).
// Storage: limbs little-endian, so an Fr is the same 32 bytes as a (4,) uint64 LE row.
#pragma once
#include "compat.cuh"

// Product variants, chosen at build time with -DFIELD_MUL=<name> (e.g. through
// C2TUI_NVRTC_OPTS="-DFIELD_MUL=eo"); without it the build is eo_sq (or ptx with
// -DFIELD_PTX; FIELD_MUL wins over FIELD_PTX, so gpu_phases' ptx builds become the FIELD_MUL
// variant too). benchmarks/bench_field.py measures and checks every one of them on the GPU
// (figures: benchmarks/RESULTS.md).
//   cios    portable C++ CIOS with u64 accumulators; the Fp call (FP_MUL_CALL) takes const&
//   ptx     PTX CIOS, 4N^2 separate lo/hi rows (= -DFIELD_PTX)
//   cios_v  cios, but the Fp call takes and returns values: operands stay in registers instead of
//           being stored to the caller's stack and read back through generic loads
//   eo      even/odd carry chains (sppark-style, see mul_eo) + by-value call
//   eo_r    eo with the const& call (isolates the call convention)
//   eo_c    eo with the modulus and INV read from __constant__ memory. For Fr (INV = -1,
//           p[0] = 1) ptxas otherwise specialises m = -t0 and then splits every m*p[j] into
//           IMAD.X + IMAD.HI.U32.X (2 instructions instead of one IMAD.WIDE.U32.X): Fr 176 -> 136
//           multiply instructions per product, +15% Fr products/s on the H200. Fp: no change.
//   eo_sq   eo_c + a dedicated squaring (sqr_eo: the N(N-1)/2 cross products once, doubled, plus
//           the diagonal, then an eo-style reduction without the a*b rows): ~3N^2 instead of 4N^2
//           multiply-adds; used by Fe::sqr (the Fp one a call under FP_MUL_CALL, like mul)
//   eo_k    eo_sq, with products from mont_wide.cuh: one Karatsuba level for a*b (3N^2/4 wide
//           multiply-adds instead of N^2) and, for Fr, reduction rows whose two low limbs are adds
//           (p[0] = 1, p[1] = 2^32 - 1). Written with carry.cuh's primitives, so g++ runs the same
//           algorithm on the CPU (the host check and the CUDA emulator test it)
//   eo_k2   eo_k + Fe::mul2 = one reduction for a sum of two products (the XYZZ formulas' Y3)
//   eo_sq2  eo_sq + Fe::mul2 (schoolbook rows)
#define FIELD_MUL_ID_cios 1
#define FIELD_MUL_ID_ptx 2
#define FIELD_MUL_ID_cios_v 3
#define FIELD_MUL_ID_eo 4
#define FIELD_MUL_ID_eo_r 5
#define FIELD_MUL_ID_eo_c 6
#define FIELD_MUL_ID_eo_sq 7
#define FIELD_MUL_ID_eo_k 8
#define FIELD_MUL_ID_eo_k2 9
#define FIELD_MUL_ID_eo_sq2 10
#define FIELD_CAT_(a, b) a##b
#define FIELD_CAT(a, b) FIELD_CAT_(a, b)
#if defined(FIELD_MUL)
#  define FIELD_MUL_ID FIELD_CAT(FIELD_MUL_ID_, FIELD_MUL)
#  if !(FIELD_MUL_ID >= 1 && FIELD_MUL_ID <= 10)
#    error "unknown FIELD_MUL (cios, ptx, cios_v, eo, eo_r, eo_c, eo_sq, eo_k, eo_k2, eo_sq2)"
#  endif
#elif defined(FIELD_PTX)
#  define FIELD_MUL_ID 2
#else
#  define FIELD_MUL_ID 7  // eo_sq: the fastest on the H200 (benchmarks/RESULTS.md)
#endif
// device product: 0 portable C++, 1 PTX rows, 2 even/odd
#if FIELD_MUL_ID == 2
#  define FIELD_DEV_MUL 1
#elif FIELD_MUL_ID >= 4
#  define FIELD_DEV_MUL 2
#else
#  define FIELD_DEV_MUL 0
#endif
// the Fp call takes values (1) or const& (0)
#if FIELD_MUL_ID == 3 || FIELD_MUL_ID == 4 || FIELD_MUL_ID >= 6
#  define FIELD_CALL_BYVAL 1
#else
#  define FIELD_CALL_BYVAL 0
#endif
// modulus and INV from __constant__ memory (eo_c, eo_sq)
#if FIELD_MUL_ID >= 6
#  define FIELD_CMOD 1
#else
#  define FIELD_CMOD 0
#endif
// dedicated squaring (eo_sq and its successors)
#if FIELD_MUL_ID >= 7
#  define FIELD_SQR 1
#else
#  define FIELD_SQR 0
#endif
// mont_wide.cuh's Karatsuba product, on the device and (emulated carries) on the host
#if FIELD_MUL_ID == 8 || FIELD_MUL_ID == 9
#  define FIELD_KARA 1
#else
#  define FIELD_KARA 0
#endif
// ... for Fr too (else Fr takes schoolbook steps + its ALU reduction rows)
#ifndef FIELD_KARA_FR
#  define FIELD_KARA_FR 1
#endif
// Fe::mul2: a*b + c*d with one reduction (else two products and an addition)
#if FIELD_MUL_ID == 9 || FIELD_MUL_ID == 10
#  define FIELD_MUL2 1
#else
#  define FIELD_MUL2 0
#endif

struct FrP {
    static constexpr int N = 8;
    static constexpr u32 INV = 0xffffffffu;  // -r^-1 mod 2^32
    static constexpr bool LOW_ONES = true;   // p[0] = 1, p[1] = 2^32 - 1 (mont_wide.cuh)
#if FIELD_CMOD && defined(__CUDA_ARCH__)
    __device__ static u32 mod_dev(int i);
#endif
    HD static u32 mod(int i) {
        const u32 M[8] = {0x00000001u, 0xffffffffu, 0xfffe5bfeu, 0x53bda402u,
                          0x09a1d805u, 0x3339d808u, 0x299d7d48u, 0x73eda753u};
        return M[i];
    }
    HD static u32 r2(int i) {
        const u32 M[8] = {0xf3f29c6du, 0xc999e990u, 0x87925c23u, 0x2b6cedcbu,
                          0x7254398fu, 0x05d31496u, 0x9f59ff11u, 0x0748d9d9u};
        return M[i];
    }
    HD static u32 one(int i) {
        const u32 M[8] = {0xfffffffeu, 0x00000001u, 0x00034802u, 0x5884b7fau,
                          0xecbc4ff5u, 0x998c4fefu, 0xacc5056fu, 0x1824b159u};
        return M[i];
    }
};

struct FpP {
    static constexpr int N = 12;
    static constexpr u32 INV = 0xfffcfffdu;  // -p^-1 mod 2^32
    static constexpr bool LOW_ONES = false;
#if FIELD_CMOD && defined(__CUDA_ARCH__)
    __device__ static u32 mod_dev(int i);
#endif
    HD static u32 mod(int i) {
        const u32 M[12] = {0xffffaaabu, 0xb9feffffu, 0xb153ffffu, 0x1eabfffeu, 0xf6b0f624u, 0x6730d2a0u,
                           0xf38512bfu, 0x64774b84u, 0x434bacd7u, 0x4b1ba7b6u, 0x397fe69au, 0x1a0111eau};
        return M[i];
    }
    HD static u32 r2(int i) {
        const u32 M[12] = {0x1c341746u, 0xf4df1f34u, 0x09d104f1u, 0x0a76e6a6u, 0x4c95b6d5u, 0x8de5476cu,
                           0x939d83c0u, 0x67eb88a9u, 0xb519952du, 0x9a793e85u, 0x92cae3aau, 0x11988fe5u};
        return M[i];
    }
    HD static u32 one(int i) {
        const u32 M[12] = {0x0002fffdu, 0x76090000u, 0xc40c0002u, 0xebf4000bu, 0x53c758bau, 0x5f489857u,
                           0x70525745u, 0x77ce5853u, 0xa256ec6du, 0x5c071a97u, 0xfa80e493u, 0x15f65ec3u};
        return M[i];
    }
};

#if FIELD_CMOD && defined(__CUDA_ARCH__)
// eo_c: the moduli as constant-bank operands of the reduction rows
__constant__ u32 FIELD_FR_MOD[8] = {0x00000001u, 0xffffffffu, 0xfffe5bfeu, 0x53bda402u,
                                    0x09a1d805u, 0x3339d808u, 0x299d7d48u, 0x73eda753u};
__constant__ u32 FIELD_FP_MOD[12] = {0xffffaaabu, 0xb9feffffu, 0xb153ffffu, 0x1eabfffeu, 0xf6b0f624u, 0x6730d2a0u,
                                     0xf38512bfu, 0x64774b84u, 0x434bacd7u, 0x4b1ba7b6u, 0x397fe69au, 0x1a0111eau};
__constant__ u32 FIELD_INV[2] = {0xffffffffu, 0xfffcfffdu};
__device__ __forceinline__ u32 FrP::mod_dev(int i) { return FIELD_FR_MOD[i]; }
__device__ __forceinline__ u32 FpP::mod_dev(int i) { return FIELD_FP_MOD[i]; }
#endif
#if FIELD_KARA || FIELD_MUL2
#  include "mont_wide.cuh"
#endif

// A field element: N little-endian 32-bit limbs, value < modulus. Montgomery or canonical is the
// caller's convention (kernels document which).
template <class P>
struct alignas(16) Fe {
    static constexpr int N = P::N;
    u32 v[P::N];

    HD static Fe zero() {
        Fe r;
UNROLL
        for (int i = 0; i < N; i++) r.v[i] = 0;
        return r;
    }
    HD static Fe one_mont() {
        Fe r;
UNROLL
        for (int i = 0; i < N; i++) r.v[i] = P::one(i);
        return r;
    }
    HD static Fe modulus() {
        Fe r;
UNROLL
        for (int i = 0; i < N; i++) r.v[i] = P::mod(i);
        return r;
    }

    HD bool is_zero() const {
        u32 acc = 0;
UNROLL
        for (int i = 0; i < N; i++) acc |= v[i];
        return acc == 0;
    }
    HD bool eq(const Fe& o) const {
        u32 acc = 0;
UNROLL
        for (int i = 0; i < N; i++) acc |= v[i] ^ o.v[i];
        return acc == 0;
    }

    // r = a + b mod m
    HD static Fe add(const Fe& a, const Fe& b) {
        Fe r, s;
        u64 c = 0;
UNROLL
        for (int i = 0; i < N; i++) { c += (u64)a.v[i] + b.v[i]; r.v[i] = (u32)c; c >>= 32; }
        // s = r - m; moduli are < 2^(32N-1) so the sum never overflows N limbs (c == 0)
        i32 bw = 0;  // borrow as 0/-1
        u64 t;
UNROLL
        for (int i = 0; i < N; i++) {
            t = (u64)r.v[i] - P::mod(i) + (u64)(long long)bw;
            s.v[i] = (u32)t; bw = (i32)(t >> 32);  // 0 or 0xffffffff
        }
        // if borrow: r < m, keep r
        const bool keep = bw != 0;
UNROLL
        for (int i = 0; i < N; i++) r.v[i] = keep ? r.v[i] : s.v[i];
        return r;
    }
    // r = a - b mod m
    HD static Fe sub(const Fe& a, const Fe& b) {
        Fe r;
        i32 bw = 0;
        u64 t;
UNROLL
        for (int i = 0; i < N; i++) {
            t = (u64)a.v[i] - b.v[i] + (u64)(long long)bw;
            r.v[i] = (u32)t; bw = (i32)(t >> 32);
        }
        if (bw) {
            u64 c = 0;
UNROLL
            for (int i = 0; i < N; i++) { c += (u64)r.v[i] + P::mod(i); r.v[i] = (u32)c; c >>= 32; }
        }
        return r;
    }
    HD static Fe neg(const Fe& a) {
        if (a.is_zero()) return a;
        return sub(modulus(), a);
    }
    HD static Fe dbl(const Fe& a) { return add(a, a); }

    // Montgomery product a*b*2^(-32N) mod m. Inlined (define FP_MUL_CALL to make
    // the Fp one a call: smaller code, faster compiles).
    HD static Fe mul(const Fe& a, const Fe& b) {
#if defined(FP_MUL_CALL)
        if constexpr (N == 12) return mul_call(a, b);
        else
#endif
        return mul_fast(a, b);
    }
#if FIELD_CALL_BYVAL
    // by value: the ABI passes the 2x12 limbs in registers (the const& form makes every caller
    // store its operands to the stack and the callee read them back with generic loads)
    HDNI static Fe mul_call(Fe a, Fe b) { return mul_fast(a, b); }
    HDNI static Fe sqr_call(Fe a) { return sqr_fast(a); }
#  if FIELD_MUL2
    HDNI static Fe mul2_call(Fe a, Fe b, Fe c, Fe d) { return mul2_fast(a, b, c, d); }
#  endif
#else
    HDNI static Fe mul_call(const Fe& a, const Fe& b) { return mul_fast(a, b); }
#endif
    // the device product of the FIELD_MUL variant; portable C++ on the host
    HD static Fe mul_fast(const Fe& a, const Fe& b) {
#if FIELD_KARA
        Fe r;
        mw::mul<P, N, N == 12 || FIELD_KARA_FR, true>(r.v, a.v, b.v);
        return r;
#elif defined(__CUDA_ARCH__) && FIELD_DEV_MUL == 1
        return mul_ptx(a, b);
#elif defined(__CUDA_ARCH__) && FIELD_DEV_MUL == 2
        return mul_eo(a, b);
#else
        return mul_impl(a, b);
#endif
    }
    // a*b - c*d (the XYZZ formulas' Y3): with FIELD_MUL2 one reduction for both products
    HD static Fe mul_sub(const Fe& a, const Fe& b, const Fe& c, const Fe& d) {
#if FIELD_MUL2
        return mul2(a, b, neg(c), d);
#else
        return sub(mul(a, b), mul(c, d));
#endif
    }
#if FIELD_MUL2
    HD static Fe mul2(const Fe& a, const Fe& b, const Fe& c, const Fe& d) {
#  if defined(FP_MUL_CALL)
        if constexpr (N == 12) return mul2_call(a, b, c, d);
        else
#  endif
        return mul2_fast(a, b, c, d);
    }
    HD static Fe mul2_fast(const Fe& a, const Fe& b, const Fe& c, const Fe& d) {
        Fe r;
        mw::mul2<P, N, FIELD_KARA == 1, FIELD_KARA == 1>(r.v, a.v, b.v, c.v, d.v);
        return r;
    }
#endif
    // CIOS
    HD static Fe mul_impl(const Fe& a, const Fe& b) {
        u32 t[N + 2];
UNROLL
        for (int i = 0; i < N + 2; i++) t[i] = 0;
UNROLL
        for (int i = 0; i < N; i++) {
            u64 C = 0;
            const u32 bi = b.v[i];
UNROLL
            for (int j = 0; j < N; j++) {
                u64 s = (u64)a.v[j] * bi + t[j] + C;
                t[j] = (u32)s; C = s >> 32;
            }
            u64 s = (u64)t[N] + C;
            t[N] = (u32)s; t[N + 1] = (u32)(s >> 32);
            const u32 m = t[0] * P::INV;
            s = (u64)m * P::mod(0) + t[0];
            C = s >> 32;
UNROLL
            for (int j = 1; j < N; j++) {
                s = (u64)m * P::mod(j) + t[j] + C;
                t[j - 1] = (u32)s; C = s >> 32;
            }
            s = (u64)t[N] + C;
            t[N - 1] = (u32)s;
            t[N] = t[N + 1] + (u32)(s >> 32);
        }
        // result in t[0..N] < 2m; subtract m once if needed
        Fe r, s2;
        i32 bw = 0;
        u64 q;
UNROLL
        for (int i = 0; i < N; i++) {
            r.v[i] = t[i];
            q = (u64)t[i] - P::mod(i) + (u64)(long long)bw;
            s2.v[i] = (u32)q; bw = (i32)(q >> 32);
        }
        const bool keep = (t[N] == 0) && (bw != 0);
UNROLL
        for (int i = 0; i < N; i++) r.v[i] = keep ? r.v[i] : s2.v[i];
        return r;
    }
#if defined(__CUDA_ARCH__)
    // CIOS with PTX carry chains (asm volatile: the carry flag is invisible to the compiler, which
    // otherwise reorders the statements of a chain - seen on the H200, wrong products); per limb of b, a lo row and a hi row of a*b[i] into t, then
    // the same for m*p; 4N^2 multiply-adds. Same result as mul_impl (checked on the GPU
    // against Python integers by tests/gpu).
    __device__ __forceinline__ static Fe mul_ptx(const Fe& a, const Fe& b) {
        u32 t[N + 2];
UNROLL
        for (int i = 0; i < N + 2; i++) t[i] = 0;
UNROLL
        for (int i = 0; i < N; i++) {
            const u32 bi = b.v[i];
            asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[0]) : "r"(a.v[0]), "r"(bi));
UNROLL
            for (int j = 1; j < N; j++) asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[j]) : "r"(a.v[j]), "r"(bi));
            asm volatile("addc.cc.u32 %0, %0, 0;" : "+r"(t[N]));
            asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));  // t[N+1] == 0 here
            asm volatile("mad.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[1]) : "r"(a.v[0]), "r"(bi));
UNROLL
            for (int j = 1; j < N; j++) asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[j + 1]) : "r"(a.v[j]), "r"(bi));
            asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));
            const u32 m = t[0] * P::INV;
            asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[0]) : "r"(m), "r"(P::mod(0)));
UNROLL
            for (int j = 1; j < N; j++) asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(t[j]) : "r"(m), "r"(P::mod(j)));
            asm volatile("addc.cc.u32 %0, %0, 0;" : "+r"(t[N]));
            asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));
            asm volatile("mad.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[1]) : "r"(m), "r"(P::mod(0)));
UNROLL
            for (int j = 1; j < N; j++) asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(t[j + 1]) : "r"(m), "r"(P::mod(j)));
            asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[N + 1]));
            // t[0] == 0: shift down one limb
UNROLL
            for (int j = 0; j <= N; j++) t[j] = t[j + 1];
            t[N + 1] = 0;
        }
        Fe r, s2;
        u32 bw;
        asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(s2.v[0]) : "r"(t[0]), "r"(P::mod(0)));
UNROLL
        for (int i = 1; i < N; i++) asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(s2.v[i]) : "r"(t[i]), "r"(P::mod(i)));
        asm volatile("subc.u32 %0, %1, 0;" : "=r"(bw) : "r"(t[N]));
        // bw = t[N] - borrow: 0xffffffff when t < m (keep t), else 0 (take t - m)
        const bool keep = bw != 0;
UNROLL
        for (int i = 0; i < N; i++) r.v[i] = keep ? t[i] : s2.v[i];
        return r;
    }

    // Even/odd carry chains (the sppark mont_t scheme, our code). The running value T is kept as
    // X + 2^32*Y: X gets the products a[j]*bi of even j (lo at limb j, hi at j+1: pairs that never
    // overlap, so one mad.lo.cc/madc.hi.cc chain adds a whole row), Y those of odd j, one limb
    // up. Per limb of b: Y += a_odd*bi (fused with the shift of the previous step), X += a_even*bi,
    // m = X[0]*INV, Y += m*p_odd, X += m*p_even; then T/2^32 swaps the roles: the new X is Y, the
    // new Y is X shifted down two limbs (X[0] == 0, X[1] is added to Y[0]). 4N^2 + O(N)
    // multiply-adds in two independent chains, no separate carry rows. Needs the spare top bit
    // of our moduli: T < 2^(32(N+1)) and Y alone never carries out (so the last madc of a Y row
    // drops no carry). All asm volatile (the carry flag is invisible to the compiler).
    __device__ __forceinline__ static void eo_mul_row(u32* X, const u32* a, u32 bi) {
        // X[0..N) = sum_{j even} a[j]*bi*2^(32j), no carries between pairs
UNROLL
        for (int j = 0; j < N; j += 2)
            asm volatile("mul.lo.u32 %0, %2, %3; mul.hi.u32 %1, %2, %3;" : "=r"(X[j]), "=r"(X[j + 1]) : "r"(a[j]), "r"(bi));
    }
    __device__ __forceinline__ static void eo_mad_row(u32* X, const u32* a, u32 bi) {
        // X += sum_{j even} a[j]*bi*2^(32j); leaves the carry out of X[N-1] in CC.CF
        asm volatile("mad.lo.cc.u32 %0, %2, %3, %0; madc.hi.cc.u32 %1, %2, %3, %1;" : "+r"(X[0]), "+r"(X[1]) : "r"(a[0]), "r"(bi));
UNROLL
        for (int j = 2; j < N; j += 2)
            asm volatile("madc.lo.cc.u32 %0, %2, %3, %0; madc.hi.cc.u32 %1, %2, %3, %1;" : "+r"(X[j]), "+r"(X[j + 1]) : "r"(a[j]), "r"(bi));
    }
    __device__ __forceinline__ static void eo_step(u32* X, u32* Y, const u32* a, u32 bi, bool first) {
        if (first) {
            eo_mul_row(X, a, bi);
            eo_mul_row(Y, a + 1, bi);
        } else {
            // entering: X = previous Y (limbs 0..N-1), Y = previous X (X[0] == 0)
            // T/2^32 = X + Y[1] + 2^32 * (Y[2..N) as limbs 0..N-3); add a_odd*bi while shifting Y
            asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(X[0]) : "r"(Y[1]));
UNROLL
            for (int j = 0; j < N - 2; j += 2)
                asm volatile("madc.lo.cc.u32 %0, %2, %3, %4; madc.hi.cc.u32 %1, %2, %3, %5;"
                             : "=r"(Y[j]), "=r"(Y[j + 1]) : "r"(a[j + 1]), "r"(bi), "r"(Y[j + 2]), "r"(Y[j + 3]));
            asm volatile("madc.lo.cc.u32 %0, %2, %3, 0; madc.hi.u32 %1, %2, %3, 0;" : "=r"(Y[N - 2]), "=r"(Y[N - 1]) : "r"(a[N - 1]), "r"(bi));
            eo_mad_row(X, a, bi);
            asm volatile("addc.u32 %0, %0, 0;" : "+r"(Y[N - 1]));
        }
#if FIELD_CMOD
        const u32 m = X[0] * FIELD_INV[N == 8 ? 0 : 1];
#else
        const u32 m = X[0] * P::INV;
#endif
        u32 pm[N];
UNROLL
#if FIELD_CMOD
        for (int j = 0; j < N; j++) pm[j] = P::mod_dev(j);
#else
        for (int j = 0; j < N; j++) pm[j] = P::mod(j);
#endif
        // Y += m*p_odd (no carry out: Y < 2^(32N)), then X += m*p_even (X[0] becomes 0)
        asm volatile("mad.lo.cc.u32 %0, %2, %3, %0; madc.hi.cc.u32 %1, %2, %3, %1;" : "+r"(Y[0]), "+r"(Y[1]) : "r"(pm[1]), "r"(m));
UNROLL
        for (int j = 2; j < N - 2; j += 2)
            asm volatile("madc.lo.cc.u32 %0, %2, %3, %0; madc.hi.cc.u32 %1, %2, %3, %1;" : "+r"(Y[j]), "+r"(Y[j + 1]) : "r"(pm[j + 1]), "r"(m));
        asm volatile("madc.lo.cc.u32 %0, %2, %3, %0; madc.hi.u32 %1, %2, %3, %1;" : "+r"(Y[N - 2]), "+r"(Y[N - 1]) : "r"(pm[N - 1]), "r"(m));
        eo_mad_row(X, pm, m);
        asm volatile("addc.u32 %0, %0, 0;" : "+r"(Y[N - 1]));
    }
    // conditional subtraction of the modulus from r < 2m (N limbs)
    __device__ __forceinline__ static Fe eo_final(const u32* r) {
        Fe o, s2;
        u32 bw;
        asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(s2.v[0]) : "r"(r[0]), "r"(P::mod(0)));
UNROLL
        for (int i = 1; i < N; i++) asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(s2.v[i]) : "r"(r[i]), "r"(P::mod(i)));
        asm volatile("subc.u32 %0, 0, 0;" : "=r"(bw));
        // bw = 0xffffffff when r < m: keep r
UNROLL
        for (int i = 0; i < N; i++) o.v[i] = bw ? r[i] : s2.v[i];
        return o;
    }
    __device__ __forceinline__ static Fe mul_eo(const Fe& a, const Fe& b) {
        u32 ev[N], od[N];
UNROLL
        for (int i = 0; i < N; i += 2) {
            eo_step(ev, od, a.v, b.v[i], i == 0);
            eo_step(od, ev, a.v, b.v[i + 1], false);
        }
        // N even: the last step had X = od, Y = ev; result = T/2^32 = ev + od[1..N)
        asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(ev[0]) : "r"(od[1]));
UNROLL
        for (int i = 1; i < N - 1; i++) asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(ev[i]) : "r"(od[i + 1]));
        asm volatile("addc.u32 %0, %0, 0;" : "+r"(ev[N - 1]));
        return eo_final(ev);
    }
#if FIELD_SQR
    // Dedicated squaring. (1) cross products sum_{i<j} a_i a_j 2^(32(i+j)) into two 2N-limb
    // accumulators: row i adds a_i*a_j for j = i+1, i+3, .. to O and j = i+2, i+4, .. to E (pairs
    // that never overlap within a row, one chain each), each row's carry running two limbs past
    // its top (enough: the limbs there hold at most a previous row's carry bit). (2) W = 2(E+O) +
    // sum a_i^2 2^(64i) = a^2. (3) Montgomery reduction of the low half the eo way (the m*p_odd
    // row fused with the shift), plus the high half: < 2m, one conditional subtraction.
    // N(N-1)/2 + N + N^2 wide multiply-adds instead of 2N^2. Modelled limb by limb in Python
    // (carries asserted) before writing; checked on the GPU by benchmarks/bench_field.py.
    __device__ __forceinline__ static void sq_row(u32* A, const u32* a, int i, int j0) {
        // A += sum_{j = j0, j0+2, .. < N} a_i*a_j 2^(32(i+j)), carry through two more limbs
        int pos = i + j0;
        asm volatile("mad.lo.cc.u32 %0, %2, %3, %0; madc.hi.cc.u32 %1, %2, %3, %1;" : "+r"(A[pos]), "+r"(A[pos + 1]) : "r"(a[i]), "r"(a[j0]));
        pos += 2;
UNROLL
        for (int j = j0 + 2; j < N; j += 2, pos += 2)
            asm volatile("madc.lo.cc.u32 %0, %2, %3, %0; madc.hi.cc.u32 %1, %2, %3, %1;" : "+r"(A[pos]), "+r"(A[pos + 1]) : "r"(a[i]), "r"(a[j]));
        if (pos + 1 < 2 * N) {
            asm volatile("addc.cc.u32 %0, %0, 0;" : "+r"(A[pos]));
            asm volatile("addc.u32 %0, %0, 0;" : "+r"(A[pos + 1]));
        } else if (pos < 2 * N) {
            asm volatile("addc.u32 %0, %0, 0;" : "+r"(A[pos]));
        }
    }
    __device__ __forceinline__ static void sq_redc_step(u32* X, u32* Y, bool first) {
        u32 pm[N];
UNROLL
        for (int j = 0; j < N; j++) pm[j] = P::mod_dev(j);
        const u32 inv = FIELD_INV[N == 8 ? 0 : 1];
        u32 m;
        if (first) {
            asm volatile("mul.lo.u32 %0, %1, %2;" : "=r"(m) : "r"(X[0]), "r"(inv));
UNROLL
            for (int j = 0; j < N; j += 2)
                asm volatile("mul.lo.u32 %0, %2, %3; mul.hi.u32 %1, %2, %3;" : "=r"(Y[j]), "=r"(Y[j + 1]) : "r"(pm[j + 1]), "r"(m));
        } else {
            // T/2^32: X[0] += Y[1] (its carry goes to limb 1 = Y[0]); Y = Y[2..] + m*p_odd
            asm volatile("add.cc.u32 %0, %0, %2; mul.lo.u32 %1, %0, %3;" : "+r"(X[0]), "=r"(m) : "r"(Y[1]), "r"(inv));
UNROLL
            for (int j = 0; j < N - 2; j += 2)
                asm volatile("madc.lo.cc.u32 %0, %2, %3, %4; madc.hi.cc.u32 %1, %2, %3, %5;"
                             : "=r"(Y[j]), "=r"(Y[j + 1]) : "r"(pm[j + 1]), "r"(m), "r"(Y[j + 2]), "r"(Y[j + 3]));
            asm volatile("madc.lo.cc.u32 %0, %2, %3, 0; madc.hi.u32 %1, %2, %3, 0;" : "=r"(Y[N - 2]), "=r"(Y[N - 1]) : "r"(pm[N - 1]), "r"(m));
        }
        eo_mad_row(X, pm, m);  // X[0] becomes 0
        asm volatile("addc.u32 %0, %0, 0;" : "+r"(Y[N - 1]));
    }
    __device__ __forceinline__ static Fe sqr_eo(const Fe& x) {
        const u32* a = x.v;
        u32 E[2 * N], O[2 * N];
UNROLL
        for (int k = 0; k < 2 * N; k++) { E[k] = 0; O[k] = 0; }
UNROLL
        for (int i = 0; i < N - 1; i++) {
            sq_row(O, a, i, i + 1);
            if (i + 2 < N) sq_row(E, a, i, i + 2);
        }
        // W = 2*(E + O) + diagonal, in E
        asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(E[0]) : "r"(O[0]));
UNROLL
        for (int k = 1; k < 2 * N - 1; k++) asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(E[k]) : "r"(O[k]));
        asm volatile("addc.u32 %0, %0, %1;" : "+r"(E[2 * N - 1]) : "r"(O[2 * N - 1]));
UNROLL
        for (int k = 2 * N - 1; k > 0; k--) E[k] = (E[k] << 1) | (E[k - 1] >> 31);
        E[0] <<= 1;
        asm volatile("mad.lo.cc.u32 %0, %2, %2, %0; madc.hi.cc.u32 %1, %2, %2, %1;" : "+r"(E[0]), "+r"(E[1]) : "r"(a[0]));
UNROLL
        for (int i = 1; i < N - 1; i++)
            asm volatile("madc.lo.cc.u32 %0, %2, %2, %0; madc.hi.cc.u32 %1, %2, %2, %1;" : "+r"(E[2 * i]), "+r"(E[2 * i + 1]) : "r"(a[i]));
        asm volatile("madc.lo.cc.u32 %0, %2, %2, %0; madc.hi.u32 %1, %2, %2, %1;" : "+r"(E[2 * N - 2]), "+r"(E[2 * N - 1]) : "r"(a[N - 1]));
        // REDC of the low half: X = E[0..N), Y = O[0..N) (scratch)
        u32 ev[N], od[N];
UNROLL
        for (int k = 0; k < N; k++) ev[k] = E[k];
UNROLL
        for (int i = 0; i < N; i += 2) {
            sq_redc_step(ev, od, i == 0);
            sq_redc_step(od, ev, false);
        }
        // (ev + od[1..]) + high half; < 2m
        asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(ev[0]) : "r"(od[1]));
UNROLL
        for (int k = 1; k < N - 1; k++) asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(ev[k]) : "r"(od[k + 1]));
        asm volatile("addc.u32 %0, %0, 0;" : "+r"(ev[N - 1]));
        asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(ev[0]) : "r"(E[N]));
UNROLL
        for (int k = 1; k < N - 1; k++) asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(ev[k]) : "r"(E[N + k]));
        asm volatile("addc.u32 %0, %0, %1;" : "+r"(ev[N - 1]) : "r"(E[2 * N - 1]));
        return eo_final(ev);
    }
#endif
#endif
#if FIELD_SQR
    HD static Fe sqr(const Fe& a) {
#  if defined(FP_MUL_CALL)
        if constexpr (N == 12) return sqr_call(a);
        else
#  endif
        return sqr_fast(a);
    }
    HD static Fe sqr_fast(const Fe& a) {
#  if defined(__CUDA_ARCH__)
        return sqr_eo(a);
#  else
        return mul_impl(a, a);
#  endif
    }
#else
    HD static Fe sqr(const Fe& a) { return mul(a, a); }
    HD static Fe sqr_fast(const Fe& a) { return mul_fast(a, a); }
#endif

    HD static Fe to_mont(const Fe& a) {
        Fe r2;
UNROLL
        for (int i = 0; i < N; i++) r2.v[i] = P::r2(i);
        return mul(a, r2);
    }
    HD static Fe from_mont(const Fe& a) {
        Fe one = zero();
        one.v[0] = 1;
        return mul(a, one);
    }
    // a^(m-2) (Montgomery in, Montgomery out); 0 -> 0.
    HDNI static Fe inv(const Fe& a) {
        Fe r = one_mont();
        u32 e_[N];
        u64 bw = 2;  // exponent m - 2, borrow propagated (Fr's low limb is 1)
        for (int i = 0; i < N; i++) {
            u64 t = (u64)P::mod(i) - bw;
            e_[i] = (u32)t;
            bw = (t >> 63) & 1;
        }
        for (int i = N - 1; i >= 0; i--) {
            const u32 e = e_[i];
            for (int b = 31; b >= 0; b--) {
                r = sqr(r);
                if ((e >> b) & 1) r = mul(r, a);
            }
        }
        return r;
    }
};

typedef Fe<FrP> Fr;
typedef Fe<FpP> Fp;

// Fp2 = Fp[u]/(u^2 + 1); c0 + c1*u. Same field interface as Fe (used by the curve templates).
struct alignas(16) Fp2 {
    Fp c0, c1;
    HD static Fp2 zero() { Fp2 r; r.c0 = Fp::zero(); r.c1 = Fp::zero(); return r; }
    HD static Fp2 one_mont() { Fp2 r; r.c0 = Fp::one_mont(); r.c1 = Fp::zero(); return r; }
    HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
    HD bool eq(const Fp2& o) const { return c0.eq(o.c0) && c1.eq(o.c1); }
    HD static Fp2 add(const Fp2& a, const Fp2& b) { Fp2 r; r.c0 = Fp::add(a.c0, b.c0); r.c1 = Fp::add(a.c1, b.c1); return r; }
    HD static Fp2 sub(const Fp2& a, const Fp2& b) { Fp2 r; r.c0 = Fp::sub(a.c0, b.c0); r.c1 = Fp::sub(a.c1, b.c1); return r; }
    HD static Fp2 neg(const Fp2& a) { Fp2 r; r.c0 = Fp::neg(a.c0); r.c1 = Fp::neg(a.c1); return r; }
    HD static Fp2 dbl(const Fp2& a) { return add(a, a); }
    HD static Fp2 mul_sub(const Fp2& a, const Fp2& b, const Fp2& c, const Fp2& d) { return sub(mul(a, b), mul(c, d)); }
    HDNI static Fp2 mul(const Fp2& a, const Fp2& b) {
        // Karatsuba: (a0+a1u)(b0+b1u) = a0b0 - a1b1 + ((a0+a1)(b0+b1) - a0b0 - a1b1)u
        Fp t0 = Fp::mul(a.c0, b.c0);
        Fp t1 = Fp::mul(a.c1, b.c1);
        Fp t2 = Fp::mul(Fp::add(a.c0, a.c1), Fp::add(b.c0, b.c1));
        Fp2 r;
        r.c0 = Fp::sub(t0, t1);
        r.c1 = Fp::sub(Fp::sub(t2, t0), t1);
        return r;
    }
    HDNI static Fp2 sqr(const Fp2& a) {
        // (a0+a1)(a0-a1) + 2a0a1 u
        Fp2 r;
        Fp t = Fp::mul(a.c0, a.c1);
        r.c0 = Fp::mul(Fp::add(a.c0, a.c1), Fp::sub(a.c0, a.c1));
        r.c1 = Fp::add(t, t);
        return r;
    }
    HD static Fp2 to_mont(const Fp2& a) { Fp2 r; r.c0 = Fp::to_mont(a.c0); r.c1 = Fp::to_mont(a.c1); return r; }
    HD static Fp2 from_mont(const Fp2& a) { Fp2 r; r.c0 = Fp::from_mont(a.c0); r.c1 = Fp::from_mont(a.c1); return r; }
    HDNI static Fp2 inv(const Fp2& a) {
        // 1/(a0+a1u) = (a0 - a1u)/(a0^2 + a1^2)
        Fp d = Fp::inv(Fp::add(Fp::sqr(a.c0), Fp::sqr(a.c1)));
        Fp2 r;
        r.c0 = Fp::mul(a.c0, d);
        r.c1 = Fp::neg(Fp::mul(a.c1, d));
        return r;
    }
};
