// host_check.cpp: CPU build of the kernel arithmetic headers (g++), driven by the CI tests.
// Reads lines "op hex1 hex2 ..." (big-endian hex, canonical values) from stdin, prints one line of
// results per input line in the same hex form. Points are given as affine coordinates.
#include <cstdio>
#include <cstring>
#include <string>
#include <iostream>
#include <sstream>
#include <vector>
#include "field.cuh"
#include "curve.cuh"

template <class F>
static F parse(const std::string& h) {
    F r = F::zero();
    int bit = 0;
    for (int i = (int)h.size() - 1; i >= 0; i--, bit += 4) {
        char c = h[i];
        u32 d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : c - 'A' + 10;
        r.v[bit / 32] |= d << (bit % 32);
    }
    return r;
}
template <class F>
static std::string hex(const F& a) {
    std::string s;
    char buf[16];
    for (int i = F::N - 1; i >= 0; i--) { snprintf(buf, sizeof buf, "%08x", a.v[i]); s += buf; }
    return s;
}
static Fp2 parse2(const std::string& a, const std::string& b) { Fp2 r; r.c0 = parse<Fp>(a); r.c1 = parse<Fp>(b); return r; }
static std::string hex2(const Fp2& a) { return hex(a.c0) + " " + hex(a.c1); }

template <class F> struct IO;
template <> struct IO<Fp> {
    static constexpr int W = 1;
    static Fp rd(std::vector<std::string>& t, size_t& k) { return Fp::to_mont(parse<Fp>(t[k++])); }
    static std::string wr(const Fp& a) { return hex(Fp::from_mont(a)); }
};
template <> struct IO<Fp2> {
    static constexpr int W = 2;
    static Fp2 rd(std::vector<std::string>& t, size_t& k) { Fp2 r = Fp2::to_mont(parse2(t[k], t[k + 1])); k += 2; return r; }
    static std::string wr(const Fp2& a) { return hex2(Fp2::from_mont(a)); }
};

template <class F>
static std::string curve_op(const std::string& op, std::vector<std::string>& t) {
    size_t k = 1;
    Affine<F> a, b;
    a.x = IO<F>::rd(t, k); a.y = IO<F>::rd(t, k);
    Xyzz<F> r;
    if (op == "dbl") {
        r = Xyzz<F>::dbl(Xyzz<F>::from_affine(a));
    } else if (op == "madd") {  // (2a) + b via mixed add: exercises a non-trivial ZZ
        b.x = IO<F>::rd(t, k); b.y = IO<F>::rd(t, k);
        r = Xyzz<F>::add_affine(Xyzz<F>::dbl(Xyzz<F>::from_affine(a)), b);
    } else if (op == "add") {  // (2a) + (2b) via general add
        b.x = IO<F>::rd(t, k); b.y = IO<F>::rd(t, k);
        r = Xyzz<F>::add(Xyzz<F>::dbl(Xyzz<F>::from_affine(a)), Xyzz<F>::dbl(Xyzz<F>::from_affine(b)));
    } else if (op == "addsame") {  // a + a through add_affine (doubling branch) then add(r, -r) = inf
        r = Xyzz<F>::add_affine(Xyzz<F>::from_affine(a), a);
        Xyzz<F> z = Xyzz<F>::add(r, Xyzz<F>::neg(r));
        if (!z.is_inf()) return "ERR";
    } else if (op == "mulsmall") {
        u32 s = (u32)std::stoul(t[k++]);
        r = Xyzz<F>::mul_small(Xyzz<F>::from_affine(a), s);
    } else {
        return "ERR";
    }
    Affine<F> o = Xyzz<F>::to_affine(r);
    return IO<F>::wr(o.x) + " " + IO<F>::wr(o.y);
}

template <class F>
static std::string field_op(const std::string& op, std::vector<std::string>& t) {
    F a = F::to_mont(parse<F>(t[1]));
    F b = t.size() > 2 ? F::to_mont(parse<F>(t[2])) : F::zero();
    F r;
    if (op == "mul") r = F::mul(a, b);
    else if (op == "sqr") r = F::sqr(a);
    else if (op == "add") r = F::add(a, b);
    else if (op == "sub") r = F::sub(a, b);
    else if (op == "neg") r = F::neg(a);
    else if (op == "inv") r = F::inv(a);
    else return "ERR";
    return hex(F::from_mont(r));
}

int main() {
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream ss(line);
        std::vector<std::string> t;
        std::string w;
        while (ss >> w) t.push_back(w);
        if (t.empty()) continue;
        std::string op = t[0], out;
        if (op.rfind("fr_", 0) == 0) out = field_op<Fr>(op.substr(3), t);
        else if (op.rfind("fp_", 0) == 0) out = field_op<Fp>(op.substr(3), t);
        else if (op.rfind("fp2_", 0) == 0) {
            Fp2 a = Fp2::to_mont(parse2(t[1], t[2]));
            Fp2 b = t.size() > 4 ? Fp2::to_mont(parse2(t[3], t[4])) : Fp2::zero();
            std::string o = op.substr(4);
            Fp2 r;
            if (o == "mul") r = Fp2::mul(a, b);
            else if (o == "sqr") r = Fp2::sqr(a);
            else if (o == "add") r = Fp2::add(a, b);
            else if (o == "sub") r = Fp2::sub(a, b);
            else if (o == "inv") r = Fp2::inv(a);
            out = hex2(Fp2::from_mont(r));
        } else if (op.rfind("g1_", 0) == 0) out = curve_op<Fp>(op.substr(3), t);
        else if (op.rfind("g2_", 0) == 0) out = curve_op<Fp2>(op.substr(3), t);
        else out = "ERR";
        std::cout << out << "\n";
    }
    return 0;
}
