// r1cs.cu: the R1CS products a = A.z, b = B.z, c = C.z on the device, from the host kernel's recoding of
// each matrix (prover/host/matvec.py's MatrixPlan): per entry a column (int32) and a code (uint8: one of
// <= 255 small signed coefficients, or 255 = a full-size one). z comes in its upload form (prover/host/
// zpack.py): a table a row per 32 variables, [ones, others, rank] (bit j: variable 32w + j is 1 / a field
// value; rank: the field values before the word), and the field values packed in variable order. So most
// entries are skipped (z = 0) or add the coefficient itself (z = 1); the rest take one Montgomery product
// of the coefficient's Montgomery form with the packed value at rank + popc(others below the bit):
// mont(c R, z) = c z. Canonical output: the sum mod r is unique, so the bytes equal the host kernel's.
//
// Slim on the device (it stays resident, a circuit's three matrices per GPU): row pointers as u32 (a
// matrix of < 2^32 entries: 2^27's largest has 2.5e8), and the full-size coefficients found by a binary
// search of their entry positions (big_pos, sorted; a few per 1024 rows), not a per-row count:
// 35 B a row for the three where the per-row counts and u64 row pointers took 59. z's form takes 0.375 B
// a variable and 32 B a field value (~4% of the family's variables), where z and a class byte took 33.
#include "field.cuh"

#define R1CS_BIG 255

// One thread a row (rows hold ~2 entries; the longest a few hundred).
extern "C" __global__ void r1cs_matvec(const u32* __restrict__ indptr, const int* __restrict__ cols,
                                       const unsigned char* __restrict__ codes, const Fr* __restrict__ small_plain,
                                       const Fr* __restrict__ small_mont, const Fr* __restrict__ big_plain,
                                       const Fr* __restrict__ big_mont, const u32* __restrict__ big_pos, u32 nbig,
                                       const Fr* __restrict__ z_vals, const u32* __restrict__ z_tab,
                                       Fr* __restrict__ out, u32 rows)
{
    const u32 row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    Fr acc = Fr::zero();
    for (u32 e = indptr[row]; e < indptr[row + 1]; e++) {
        const u32 col = (u32)cols[e];
        const u32* t = z_tab + 3 * (col >> 5);
        const u32 bit = 1u << (col & 31), others = t[1];
        const u32 k = (others & bit) ? 2u : (t[0] & bit) ? 1u : 0u;
        if (k == 0) continue;
        const u32 code = codes[e];
        u32 b = 0;
        if (code == R1CS_BIG) {  // its index among the full-size coefficients: the first position >= e
            u32 lo = 0, hi = nbig;
            while (lo < hi) {
                const u32 mid = (lo + hi) >> 1;
                if (big_pos[mid] < e) lo = mid + 1; else hi = mid;
            }
            b = lo;
        }
        if (k == 1) acc = Fr::add(acc, code == R1CS_BIG ? big_plain[b] : small_plain[code]);
        else acc = Fr::add(acc, Fr::mul(code == R1CS_BIG ? big_mont[b] : small_mont[code],
                                        z_vals[t[2] + __popc(others & (bit - 1))]));
    }
    out[row] = acc;
}
