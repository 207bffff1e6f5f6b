// CPU driver of prover/kernels/cuda/fixed_base.cuh for CI (tests/unit/test_fixed_base_host.py): the
// very kernel template the GPU runs, executed thread by thread with g++ (a simulated launch).
//   fixed_base_host g1|g2 THREADS TABLE_FILE SCALARS_FILE OUT_FILE
// TABLE_FILE: 8192 canonical affine xy rows (96 or 192 bytes); SCALARS_FILE: n x 32 bytes LE;
// OUT_FILE: n canonical xy rows.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

struct Dim3 { unsigned x; };
static Dim3 blockIdx, blockDim, gridDim, threadIdx;
struct uint4 { unsigned x, y, z, w; };

#include "fixed_base.cuh"

FIXED_BASE_INSTANTIATE(g1, Fp)
FIXED_BASE_INSTANTIATE(g2, Fp2)

static std::vector<unsigned char> slurp(const char* path) {
    std::vector<unsigned char> v;
    FILE* f = std::fopen(path, "rb");
    if (!f) { std::perror(path); std::exit(2); }
    unsigned char buf[1 << 16];
    size_t k;
    while ((k = std::fread(buf, 1, sizeof buf, f)) > 0) v.insert(v.end(), buf, buf + k);
    std::fclose(f);
    return v;
}

template <class F>
static void run(unsigned T, const std::vector<unsigned char>& tab_b, const std::vector<unsigned char>& sc_b,
                const char* out_path, void (*kernel)(const Affine<F>*, const u32*, u32, Affine<F>*)) {
    const size_t rows = tab_b.size() / sizeof(Affine<F>);
    std::vector<Affine<F>> tab(rows);
    std::memcpy(tab.data(), tab_b.data(), rows * sizeof(Affine<F>));
    for (auto& a : tab) { a.x = F::to_mont(a.x); a.y = F::to_mont(a.y); }
    const u32 n = (u32)(sc_b.size() / 32);
    std::vector<u32> sc(n * 8 + 8);
    std::memcpy(sc.data(), sc_b.data(), sc_b.size());
    std::vector<Affine<F>> out(n + 1);
    blockDim.x = 128;
    gridDim.x = T / 128;
    for (unsigned b = 0; b < gridDim.x; b++) {
        blockIdx.x = b;
        for (unsigned t = 0; t < blockDim.x; t++) { threadIdx.x = t; kernel(tab.data(), sc.data(), n, out.data()); }
    }
    FILE* f = std::fopen(out_path, "wb");
    std::fwrite(out.data(), sizeof(Affine<F>), n, f);
    std::fclose(f);
}

int main(int argc, char** argv) {
    if (argc != 6) { std::fprintf(stderr, "usage: %s g1|g2 THREADS TABLE SCALARS OUT\n", argv[0]); return 2; }
    const unsigned T = (unsigned)std::strtoul(argv[2], nullptr, 10);
    const auto tab = slurp(argv[3]);
    const auto sc = slurp(argv[4]);
    if (std::strcmp(argv[1], "g1") == 0) run<Fp>(T, tab, sc, argv[5], g1_fixed_base);
    else run<Fp2>(T, tab, sc, argv[5], g2_fixed_base);
    return 0;
}
