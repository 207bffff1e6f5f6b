// mont_wide.cuh: Montgomery products built from a double-width product and one reduction, written
// with carry.cuh's primitives so that g++ runs the very same instruction sequence on the CPU (CI
// checks them against Python integers; field.cuh picks them with FIELD_MUL=eo_k / eo_k2 / eo_sq2).
//   mul_wide<H>   r = a*b, H x H limbs -> 2H, even/odd steps (H^2 wide multiply-adds, no reduction)
//   kara_wide<N>  r = a*b, N = 2H limbs, one Karatsuba level: 3 H x H products (3N^2/4 instead of
//                 N^2 wide multiply-adds; the sums' carry bits are added back with masked adds)
//   redc<P, N>    r = T / 2^(32N) mod m for T < m * 2^(32N) (even/odd rows like field.cuh's eo
//                 reduction; for Fr, whose p[0] = 1, p[1] = 2^32 - 1 and INV = -1, the two low
//                 limbs of each m*p row are adds on the ALU pipe, not multiplies: 6 of 8 per row)
//   mul2 products REDC(a*b + c*d): one reduction for a sum of two products (< 2m^2 < m * 2^(32N))
// Why: on sm_90 the integer multiply pipe is the bound of every product (benchmarks/sass_counts.py):
// a wide multiply-add takes it 4 cycles a warp, the adds 2 cycles of the separate ALU pipe.
#pragma once
#include "carry.cuh"

namespace mw {

// r[0..2H) = a[0..H) * b[0..H), H even: field.cuh's even/odd steps without the reduction. The running
// value is X + 2^32 Y (X: a_even*b_i pairs at limbs 0.., Y: a_odd*b_i pairs at limbs 1..); after
// step i its limb 0 is final (r[i]) and the next step divides by 2^32 by swapping the roles of X
// and Y. Every lo/hi pair sits at an even register index, so ptxas fuses each into one wide
// multiply-add on an aligned register pair (a row shifted by one limb instead costs a move a
// limb). The value stays < a * 2^32 < 2^(32(H+1)): Y never carries out.
template <int H>
HD void wide_step(u32* X, u32* Y, const u32* a, u32 bi, bool first)
{
    if (first) {
UNROLL
        for (int j = 0; j < H; j += 2) {
            X[j] = cc::mul_lo(a[j], bi); X[j + 1] = cc::mul_hi(a[j], bi);
            Y[j] = cc::mul_lo(a[j + 1], bi); Y[j + 1] = cc::mul_hi(a[j + 1], bi);
        }
        return;
    }
    // entering: X = the previous Y, Y = the previous X (its limb 0 already taken)
    X[0] = cc::add_cc(X[0], Y[1]);
UNROLL
    for (int j = 0; j < H - 2; j += 2) {
        Y[j] = cc::madc_lo_cc(a[j + 1], bi, Y[j + 2]);
        Y[j + 1] = cc::madc_hi_cc(a[j + 1], bi, Y[j + 3]);
    }
    Y[H - 2] = cc::madc_lo_cc(a[H - 1], bi, 0);
    Y[H - 1] = cc::madc_hi(a[H - 1], bi, 0);
    X[0] = cc::mad_lo_cc(a[0], bi, X[0]);
    X[1] = cc::madc_hi_cc(a[0], bi, X[1]);
UNROLL
    for (int j = 2; j < H; j += 2) {
        X[j] = cc::madc_lo_cc(a[j], bi, X[j]);
        X[j + 1] = cc::madc_hi_cc(a[j], bi, X[j + 1]);
    }
    Y[H - 1] = cc::addc(Y[H - 1], 0);
}
template <int H>
HD void mul_wide(u32* r, const u32* a, const u32* b)
{
    u32 ev[H], od[H];
UNROLL
    for (int i = 0; i < H; i += 2) {
        wide_step<H>(ev, od, a, b[i], i == 0);
        r[i] = ev[0];
        wide_step<H>(od, ev, a, b[i + 1], false);
        r[i + 1] = od[0];
    }
    // the last step had X = od, Y = ev: the high half is ev + od[1..]
    r[H] = cc::add_cc(ev[0], od[1]);
UNROLL
    for (int k = 1; k < H - 1; k++) r[H + k] = cc::addc_cc(ev[k], od[k + 1]);
    r[2 * H - 1] = cc::addc(ev[H - 1], 0);
}

// T[0..2N) = a[0..N) * b[0..N), one Karatsuba level (N = 2H, H even): with X = 2^(32H),
// a*b = P0 + (P1 - P0 - P2) X + P2 X^2, P0 = a0 b0, P2 = a1 b1, P1 = (a0 + a1)(b0 + b1) where the
// sums are H limbs plus a carry bit each: P1 = sa*sb + (ca*sb + cb*sa) X + ca*cb X^2 (< 4 X^2).
template <int N>
HD void kara_wide(u32* T, const u32* a, const u32* b)
{
    constexpr int H = N / 2;
    u32 P0[2 * H], P2[2 * H], P1[2 * H + 1], sa[H], sb[H];
    mul_wide<H>(P0, a, b);
    mul_wide<H>(P2, a + H, b + H);
    sa[0] = cc::add_cc(a[0], a[H]);
UNROLL
    for (int k = 1; k < H; k++) sa[k] = cc::addc_cc(a[k], a[H + k]);
    const u32 ca = cc::addc(0, 0);
    sb[0] = cc::add_cc(b[0], b[H]);
UNROLL
    for (int k = 1; k < H; k++) sb[k] = cc::addc_cc(b[k], b[H + k]);
    const u32 cb = cc::addc(0, 0);
    mul_wide<H>(P1, sa, sb);
    u32 xa[H], xb[H];  // the carry bits' cross terms, masked before the chains
    const u32 ma = 0u - ca, mb = 0u - cb;
UNROLL
    for (int k = 0; k < H; k++) { xa[k] = sb[k] & ma; xb[k] = sa[k] & mb; }
    P1[H] = cc::add_cc(P1[H], xa[0]);
UNROLL
    for (int k = 1; k < H; k++) P1[H + k] = cc::addc_cc(P1[H + k], xa[k]);
    P1[2 * H] = cc::addc(ca & cb, 0);
    P1[H] = cc::add_cc(P1[H], xb[0]);
UNROLL
    for (int k = 1; k < H; k++) P1[H + k] = cc::addc_cc(P1[H + k], xb[k]);
    P1[2 * H] = cc::addc(P1[2 * H], 0);
    // P1 -= P0 + P2: a0 b1 + a1 b0 >= 0, fits 2H limbs + 1
    P1[0] = cc::sub_cc(P1[0], P0[0]);
UNROLL
    for (int k = 1; k < 2 * H; k++) P1[k] = cc::subc_cc(P1[k], P0[k]);
    P1[2 * H] = cc::subc(P1[2 * H], 0);
    P1[0] = cc::sub_cc(P1[0], P2[0]);
UNROLL
    for (int k = 1; k < 2 * H; k++) P1[k] = cc::subc_cc(P1[k], P2[k]);
    P1[2 * H] = cc::subc(P1[2 * H], 0);
UNROLL
    for (int k = 0; k < 2 * H; k++) { T[k] = P0[k]; T[2 * H + k] = P2[k]; }
    T[H] = cc::add_cc(T[H], P1[0]);
UNROLL
    for (int k = 1; k <= 2 * H; k++) T[H + k] = cc::addc_cc(T[H + k], P1[k]);
UNROLL
    for (int k = 3 * H + 1; k < 4 * H - 1; k++) T[k] = cc::addc_cc(T[k], 0);
    T[4 * H - 1] = cc::addc(T[4 * H - 1], 0);
}

template <class P>
HD u32 modl(int j)
{
#if defined(__CUDA_ARCH__)
    return P::mod_dev(j);  // constant memory (field.cuh's eo_c: keeps ptxas from specialising the rows)
#else
    return P::mod(j);
#endif
}
template <class P>
HD u32 inv()
{
#if defined(__CUDA_ARCH__)
    return FIELD_INV[P::N == 8 ? 0 : 1];
#else
    return P::INV;
#endif
}

// One reduction step on T = X + 2^32 Y (X: N limbs at 0.., Y: N limbs at 1..): m = X[0]*INV,
// X += m*p_even, Y += m*p_odd; the caller swaps X and Y for the next step (T/2^32: the new X is Y
// plus X[1] at limb 0, the new Y is X[2..] one limb up). As field.cuh's sq_redc_step.
template <class P, int N>
HD void redc_step(u32* X, u32* Y, bool first)
{
    u32 m;
    if (first) {
        m = cc::mul_lo(X[0], inv<P>());
UNROLL
        for (int j = 0; j < N; j += 2) { Y[j] = cc::mul_lo(modl<P>(j + 1), m); Y[j + 1] = cc::mul_hi(modl<P>(j + 1), m); }
    } else {
        X[0] = cc::add_cc(X[0], Y[1]);
        m = cc::mul_lo(X[0], inv<P>());
UNROLL
        for (int j = 0; j < N - 2; j += 2) {
            Y[j] = cc::madc_lo_cc(modl<P>(j + 1), m, Y[j + 2]);
            Y[j + 1] = cc::madc_hi_cc(modl<P>(j + 1), m, Y[j + 3]);
        }
        Y[N - 2] = cc::madc_lo_cc(modl<P>(N - 1), m, 0);
        Y[N - 1] = cc::madc_hi(modl<P>(N - 1), m, 0);
    }
    X[0] = cc::mad_lo_cc(modl<P>(0), m, X[0]);
    X[1] = cc::madc_hi_cc(modl<P>(0), m, X[1]);
UNROLL
    for (int j = 2; j < N; j += 2) {
        X[j] = cc::madc_lo_cc(modl<P>(j), m, X[j]);
        X[j + 1] = cc::madc_hi_cc(modl<P>(j), m, X[j + 1]);
    }
    Y[N - 1] = cc::addc(Y[N - 1], 0);
}

// The same step for a modulus with p[0] = 1, p[1] = 2^32 - 1, INV = -1 (Fr): m = -x0, so
// m*p[0] = m (lo) + 0 (hi) and m*p[1] = x0 (lo) + (m - [x0 != 0]) (hi): adds, not multiplies.
template <class P, int N>
HD void redc_step_low_ones(u32* X, u32* Y, bool first)
{
    u32 x0, m, hm;
    if (first) {
        x0 = X[0];
        m = cc::mul_lo(x0, inv<P>());  // = -x0; INV from constant memory keeps ptxas from knowing
        hm = m - (x0 != 0 ? 1u : 0u);  // it (it would split every m*p[j] in two, as in eo_c)
        Y[0] = x0;
        Y[1] = hm;
UNROLL
        for (int j = 2; j < N; j += 2) { Y[j] = cc::mul_lo(modl<P>(j + 1), m); Y[j + 1] = cc::mul_hi(modl<P>(j + 1), m); }
    } else {
        X[0] = cc::add_cc(X[0], Y[1]);
        x0 = X[0];
        m = cc::mul_lo(x0, inv<P>());
        hm = m - (x0 != 0 ? 1u : 0u);
        Y[0] = cc::addc_cc(x0, Y[2]);
        Y[1] = cc::addc_cc(hm, Y[3]);
UNROLL
        for (int j = 2; j < N - 2; j += 2) {
            Y[j] = cc::madc_lo_cc(modl<P>(j + 1), m, Y[j + 2]);
            Y[j + 1] = cc::madc_hi_cc(modl<P>(j + 1), m, Y[j + 3]);
        }
        Y[N - 2] = cc::madc_lo_cc(modl<P>(N - 1), m, 0);
        Y[N - 1] = cc::madc_hi(modl<P>(N - 1), m, 0);
    }
    X[0] = cc::add_cc(X[0], m);  // x0 + m = 0 mod 2^32, carry = [x0 != 0]
    X[1] = cc::addc_cc(X[1], 0);
UNROLL
    for (int j = 2; j < N; j += 2) {
        X[j] = cc::madc_lo_cc(modl<P>(j), m, X[j]);
        X[j + 1] = cc::madc_hi_cc(modl<P>(j), m, X[j + 1]);
    }
    Y[N - 1] = cc::addc(Y[N - 1], 0);
}

// out = T * 2^(-32N) mod m, T[0..2N) < m * 2^(32N); fully reduced (< m). LOW: the Fr rows
// (redc_step_low_ones) where the modulus allows it
template <class P, int N, bool LOW>
HD void redc(u32* out, const u32* T)
{
    u32 ev[N], od[N];
UNROLL
    for (int k = 0; k < N; k++) ev[k] = T[k];
UNROLL
    for (int i = 0; i < N; i += 2) {
        if (LOW && P::LOW_ONES) {
            redc_step_low_ones<P, N>(ev, od, i == 0);
            redc_step_low_ones<P, N>(od, ev, false);
        } else {
            redc_step<P, N>(ev, od, i == 0);
            redc_step<P, N>(od, ev, false);
        }
    }
    // T/2^(32N) = ev + od[1..] + T[N..2N) < 2m
    ev[0] = cc::add_cc(ev[0], od[1]);
UNROLL
    for (int k = 1; k < N - 1; k++) ev[k] = cc::addc_cc(ev[k], od[k + 1]);
    ev[N - 1] = cc::addc(ev[N - 1], 0);
    ev[0] = cc::add_cc(ev[0], T[N]);
UNROLL
    for (int k = 1; k < N - 1; k++) ev[k] = cc::addc_cc(ev[k], T[N + k]);
    ev[N - 1] = cc::addc(ev[N - 1], T[2 * N - 1]);
    u32 s[N];
    s[0] = cc::sub_cc(ev[0], modl<P>(0));
UNROLL
    for (int k = 1; k < N; k++) s[k] = cc::subc_cc(ev[k], modl<P>(k));
    const u32 bw = cc::subc(0, 0);  // all ones when ev < m: keep ev
UNROLL
    for (int k = 0; k < N; k++) out[k] = bw ? ev[k] : s[k];
}

// T = a*b (2N limbs): Karatsuba (KARA) or even/odd schoolbook steps; LOW: the Fr reduction rows
template <int N, bool KARA>
HD void wide(u32* T, const u32* a, const u32* b)
{
    if (KARA) kara_wide<N>(T, a, b);
    else mul_wide<N>(T, a, b);
}

template <class P, int N, bool KARA, bool LOW>
HD void mul(u32* out, const u32* a, const u32* b)
{
    u32 T[2 * N];
    wide<N, KARA>(T, a, b);
    redc<P, N, LOW>(out, T);
}

// out = (a*b + c*d) * 2^(-32N) mod m: a, b, c, d < m, so the sum < 2m^2 < m * 2^(32N) (our moduli
// leave the top bit spare) and one reduction serves both products
template <class P, int N, bool KARA, bool LOW>
HD void mul2(u32* out, const u32* a, const u32* b, const u32* c, const u32* d)
{
    u32 T[2 * N], U[2 * N];
    wide<N, KARA>(T, a, b);
    wide<N, KARA>(U, c, d);
    T[0] = cc::add_cc(T[0], U[0]);
UNROLL
    for (int k = 1; k < 2 * N - 1; k++) T[k] = cc::addc_cc(T[k], U[k]);
    T[2 * N - 1] = cc::addc(T[2 * N - 1], U[2 * N - 1]);
    redc<P, N, LOW>(out, T);
}

}  // namespace mw
