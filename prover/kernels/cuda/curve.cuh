// curve.cuh: short-Weierstrass (a = 0) point arithmetic in XYZZ coordinates, generic over the base
// field F (Fp for G1, Fp2 for G2). All coordinates in Montgomery form.
//   affine (x, y); infinity encoded as y == 0 (no point of order 2 exists on either group's curve).
//   XYZZ (X, Y, ZZ, ZZZ) with x = X/ZZ, y = Y/ZZZ; infinity <=> ZZ == 0.
// Formulas: EFD "xyzz" add-2008-s, madd-2008-s, dbl-2008-s-1, mdbl-2008-s-1.
#pragma once
#include "field.cuh"

template <class F>
struct alignas(16) Affine {
    F x, y;
    HD bool is_inf() const { return y.is_zero(); }
};

template <class F>
struct alignas(16) Xyzz {
    F X, Y, ZZ, ZZZ;
    HD static Xyzz inf() { Xyzz r; r.X = F::zero(); r.Y = F::zero(); r.ZZ = F::zero(); r.ZZZ = F::zero(); return r; }
    HD bool is_inf() const { return ZZ.is_zero(); }
    HD static Xyzz from_affine(const Affine<F>& a) {
        if (a.is_inf()) return inf();
        Xyzz r; r.X = a.x; r.Y = a.y; r.ZZ = F::one_mont(); r.ZZZ = F::one_mont(); return r;
    }
    HD static Xyzz neg(const Xyzz& p) { Xyzz r = p; r.Y = F::neg(p.Y); return r; }

    HDNI static Xyzz dbl(const Xyzz& p) {
        if (p.is_inf()) return p;
        F U = F::dbl(p.Y);
        F V = F::sqr(U);
        F W = F::mul(U, V);
        F S = F::mul(p.X, V);
        F X2 = F::sqr(p.X);
        F M = F::add(F::dbl(X2), X2);
        Xyzz r;
        r.X = F::sub(F::sqr(M), F::dbl(S));
        r.Y = F::mul_sub(M, F::sub(S, r.X), W, p.Y);
        r.ZZ = F::mul(V, p.ZZ);
        r.ZZZ = F::mul(W, p.ZZZ);
        return r;
    }
    HDNI static Xyzz dbl_affine(const F& x, const F& y) {
        F U = F::dbl(y);
        F V = F::sqr(U);
        F W = F::mul(U, V);
        F S = F::mul(x, V);
        F X2 = F::sqr(x);
        F M = F::add(F::dbl(X2), X2);
        Xyzz r;
        r.X = F::sub(F::sqr(M), F::dbl(S));
        r.Y = F::mul_sub(M, F::sub(S, r.X), W, y);
        r.ZZ = V;
        r.ZZZ = W;
        return r;
    }
    // p + (x, y), (x, y) affine and not infinity
    HDNI static Xyzz add_affine(const Xyzz& p, const F& x, const F& y) {
        if (p.is_inf()) { Xyzz r; r.X = x; r.Y = y; r.ZZ = F::one_mont(); r.ZZZ = F::one_mont(); return r; }
        F U2 = F::mul(x, p.ZZ);
        F S2 = F::mul(y, p.ZZZ);
        F P = F::sub(U2, p.X);
        F R = F::sub(S2, p.Y);
        if (P.is_zero()) {
            if (R.is_zero()) return dbl_affine(x, y);
            return inf();
        }
        F PP = F::sqr(P);
        F PPP = F::mul(P, PP);
        F Q = F::mul(p.X, PP);
        Xyzz r;
        r.X = F::sub(F::sub(F::sqr(R), PPP), F::dbl(Q));
        r.Y = F::mul_sub(R, F::sub(Q, r.X), p.Y, PPP);
        r.ZZ = F::mul(p.ZZ, PP);
        r.ZZZ = F::mul(p.ZZZ, PPP);
        return r;
    }
    HD static Xyzz add_affine(const Xyzz& p, const Affine<F>& a) {
        if (a.is_inf()) return p;
        return add_affine(p, a.x, a.y);
    }
    HDNI static Xyzz add(const Xyzz& p, const Xyzz& q) {
        if (p.is_inf()) return q;
        if (q.is_inf()) return p;
        F U1 = F::mul(p.X, q.ZZ);
        F U2 = F::mul(q.X, p.ZZ);
        F S1 = F::mul(p.Y, q.ZZZ);
        F S2 = F::mul(q.Y, p.ZZZ);
        F P = F::sub(U2, U1);
        F R = F::sub(S2, S1);
        if (P.is_zero()) {
            if (R.is_zero()) return dbl(p);
            return inf();
        }
        F PP = F::sqr(P);
        F PPP = F::mul(P, PP);
        F Q = F::mul(U1, PP);
        Xyzz r;
        r.X = F::sub(F::sub(F::sqr(R), PPP), F::dbl(Q));
        r.Y = F::mul_sub(R, F::sub(Q, r.X), S1, PPP);
        r.ZZ = F::mul(F::mul(p.ZZ, q.ZZ), PP);
        r.ZZZ = F::mul(F::mul(p.ZZZ, q.ZZZ), PPP);
        return r;
    }
    // k * p for a small non-negative integer k
    HDNI static Xyzz mul_small(const Xyzz& p, u32 k) {
        Xyzz r = inf();
        for (int b = 31; b >= 0; b--) {
            r = dbl(r);
            if ((k >> b) & 1) r = add(r, p);
        }
        return r;
    }
    // to affine (Montgomery form); infinity -> (0, 0)
    HDNI static Affine<F> to_affine(const Xyzz& p) {
        Affine<F> a;
        if (p.is_inf()) { a.x = F::zero(); a.y = F::zero(); return a; }
        F izzz = F::inv(p.ZZZ);           // 1/ZZZ
        F t = F::mul(izzz, p.ZZ);         // ZZ/ZZZ = 1/Z
        F izz = F::sqr(t);                // 1/ZZ
        a.x = F::mul(p.X, izz);
        a.y = F::mul(p.Y, izzz);
        return a;
    }
};
