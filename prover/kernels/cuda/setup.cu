// setup.cu: the key set-up's device steps (host wrappers: prover/kernels/setup_gpu.py).
//   powers of tau, the QAP's transposed sparse products (u_i(tau) = sum_j A[j,i] L_j(tau)), the
//   per-variable scalars, a vector times a constant, and points back from Montgomery form.
// Fr data CANONICAL (8 x u32 LE, the FrArray format); constants MONTGOMERY, so that
// Fr::mul(x, c_mont) = x * c canonical (ntt.cu's convention). Every loop is grid-stride.
#include "field.cuh"
#include "curve.cuh"

#define GRID_STRIDE(i, n) for (u32 i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)

// out[i] = A[i & mask] * B[i >> lo] = base^i * scale (canonical): A[k] = base^k Montgomery,
// B[k] = base^(k << lo) * scale canonical.
extern "C" __global__ void setup_powers(Fr* __restrict__ out, const Fr* __restrict__ A, const Fr* __restrict__ B,
                                        int lo, u32 n)
{
    GRID_STRIDE(i, n) out[i] = Fr::mul(A[i & ((1u << lo) - 1)], B[i >> lo]);
}

// rows[e] = r for the entries e of CSR row r (indptr: int64, n_rows + 1 entries)
extern "C" __global__ void csr_row_ids(const long long* __restrict__ indptr, u32 n_rows, u32* __restrict__ rows)
{
    GRID_STRIDE(r, n_rows) {
        const long long b = indptr[r], e = indptr[r + 1];
        for (long long k = b; k < e; k++) rows[k] = r;
    }
}

// colptr[c] = the first e with sorted[e] >= c, for every c <= n_cols (sorted: the entries' columns,
// ascending): the columns in (sorted[e-1], sorted[e]] start at e; each colptr[c] written once.
extern "C" __global__ void csr_colptr(const u32* __restrict__ sorted, u32 nnz, u32 n_cols, u32* __restrict__ colptr)
{
    GRID_STRIDE(e, nnz + 1) {
        const u32 lo = e == 0 ? 0u : sorted[e - 1] + 1u;
        const u32 hi = e == nnz ? n_cols : sorted[e];
        for (u32 c = lo; c <= hi; c++) colptr[c] = e;
    }
}

// The entries of one column, in [b, e) of the column-sorted arrays: sum of lag[row] * coef[ci].
__device__ __forceinline__ Fr column_sum(const u32* __restrict__ row, const u32* __restrict__ ci,
                                         const Fr* __restrict__ coef, const Fr* __restrict__ lag, u32 b, u32 e, u32 step)
{
    Fr acc = Fr::zero();
    for (u32 k = b; k < e; k += step) acc = Fr::add(acc, Fr::mul(lag[row[k]], coef[ci[k]]));
    return acc;
}

// out[c] = sum over column c's entries (colptr[c] .. colptr[c+1] of the column-sorted row / ci
// arrays) of lag[row] * coef[ci] (coef Montgomery), a thread a column; columns with more than
// `heavy` entries are left to qap_heavy (the constant one's column holds a third of B).
extern "C" __global__ void qap_columns(const u32* __restrict__ colptr, const u32* __restrict__ row,
                                       const u32* __restrict__ ci, const Fr* __restrict__ coef,
                                       const Fr* __restrict__ lag, u32 n_cols, u32 heavy, Fr* __restrict__ out)
{
    GRID_STRIDE(c, n_cols) {
        const u32 b = colptr[c], e = colptr[c + 1];
        if (e - b <= heavy) out[c] = column_sum(row, ci, coef, lag, b, e, 1);
    }
}

// One block per heavy column (cols[blockIdx.x]): each thread sums a stride of its entries, then a
// tree in shared memory (blockDim.x Fr, a power of two). Field addition is exact: any order gives
// the same value.
extern "C" __global__ void qap_heavy(const u32* __restrict__ colptr, const u32* __restrict__ row,
                                     const u32* __restrict__ ci, const Fr* __restrict__ coef,
                                     const Fr* __restrict__ lag, const u32* __restrict__ cols, Fr* __restrict__ out)
{
    extern __shared__ uint4 smem_raw[];
    Fr* sh = reinterpret_cast<Fr*>(smem_raw);
    const u32 c = cols[blockIdx.x];
    sh[threadIdx.x] = column_sum(row, ci, coef, lag, colptr[c] + threadIdx.x, colptr[c + 1], blockDim.x);
    __syncthreads();
    for (u32 s = blockDim.x >> 1; s > 0; s >>= 1) {
        if (threadIdx.x < s) sh[threadIdx.x] = Fr::add(sh[threadIdx.x], sh[threadIdx.x + s]);
        __syncthreads();
    }
    if (threadIdx.x == 0) out[c] = sh[0];
}

// out[i] = (beta u_i + alpha v_i + w_i) / gamma (i < ni) or / delta: k = [beta, alpha, 1/gamma,
// 1/delta], Montgomery (setup_scalars_nb.combo's arithmetic).
extern "C" __global__ void setup_combo(const Fr* __restrict__ u, const Fr* __restrict__ v, const Fr* __restrict__ w,
                                       const Fr* __restrict__ k, u32 ni, u32 n, Fr* __restrict__ out)
{
    GRID_STRIDE(i, n) {
        const Fr s = Fr::add(Fr::add(Fr::mul(u[i], k[0]), Fr::mul(v[i], k[1])), w[i]);
        out[i] = Fr::mul(s, i < ni ? k[2] : k[3]);
    }
}

// out[i] = x[i] * k (k Montgomery); out may be x
extern "C" __global__ void fr_scale(const Fr* x, const Fr* __restrict__ k, u32 n, Fr* out)
{
    GRID_STRIDE(i, n) out[i] = Fr::mul(x[i], k[0]);
}

// out[i] = 1 where row i of x (canonical Fr) is not zero
extern "C" __global__ void fr_nonzero(const Fr* __restrict__ x, u32 n, unsigned char* __restrict__ out)
{
    GRID_STRIDE(i, n) out[i] = x[i].is_zero() ? 0 : 1;
}

// Affine points from Montgomery to canonical coordinates (infinity (0, 0) stays): the device
// copy of a resident key's query, downloaded in pieces for the key cache.
template <class F>
__device__ __forceinline__ void points_from_mont_t(const Affine<F>* in, Affine<F>* out, u32 n)
{
    GRID_STRIDE(i, n) {
        Affine<F> a = in[i];
        a.x = F::from_mont(a.x);
        a.y = F::from_mont(a.y);
        out[i] = a;
    }
}
extern "C" __global__ void g1_points_from_mont(const Affine<Fp>* in, Affine<Fp>* out, u32 n) { points_from_mont_t<Fp>(in, out, n); }
extern "C" __global__ void g2_points_from_mont(const Affine<Fp2>* in, Affine<Fp2>* out, u32 n) { points_from_mont_t<Fp2>(in, out, n); }
