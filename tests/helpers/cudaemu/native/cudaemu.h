// cudaemu.h: the CUDA device dialect our kernels use, as portable host C++ (g++), so that the real
// .cu sources compile for the CPU emulator (tests/helpers/cudaemu). Force-included ahead of the
// kernel source; it defines what NVRTC provides built in. No system headers (the kernel sources
// come after it and may define names a libc header would clash with).
//
// __CUDA_ARCH__ stays undefined: sources take their host paths (field.cuh's portable products,
// never its PTX asm), exactly as g++ builds them in tests/unit/test_kernels_host.py.
#pragma once
#include "cudaemu_abi.h"

#define __CUDAEMU__ 1

// ---- qualifiers ------------------------------------------------------------------------------
#define __host__
#define __device__
// kept as a token through preprocessing: the launcher generator finds the kernels by it (macro-
// made ones too, e.g. MSM_INSTANTIATE), then deletes it
#define __global__ __cudaemu_global__
// rewritten after preprocessing: `extern __shared__ T x[];` -> the launch's dynamic buffer,
// any other __shared__ -> static (blocks run one after another, so one copy is right)
#define __shared__ __cudaemu_shared__
#define __constant__
#define __managed__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __grid_constant__

// ---- vector types (CUDA's alignments: a uint4 load must be 16-byte aligned on the GPU too) ----
#define CUDAEMU_VEC2(T, N, A) struct __attribute__((aligned(A))) N##2 { T x, y; }; \
    inline N##2 make_##N##2(T x, T y) { N##2 r; r.x = x; r.y = y; return r; }
#define CUDAEMU_VEC4(T, N, A) struct __attribute__((aligned(A))) N##4 { T x, y, z, w; }; \
    inline N##4 make_##N##4(T x, T y, T z, T w) { N##4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }
CUDAEMU_VEC2(unsigned int, uint, 8)
CUDAEMU_VEC4(unsigned int, uint, 16)
CUDAEMU_VEC2(int, int, 8)
CUDAEMU_VEC4(int, int, 16)
CUDAEMU_VEC2(unsigned long long, ulonglong, 16)
CUDAEMU_VEC2(long long, longlong, 16)
CUDAEMU_VEC2(float, float, 8)
CUDAEMU_VEC4(float, float, 16)
#undef CUDAEMU_VEC2
#undef CUDAEMU_VEC4
struct int3 { int x, y, z; };
inline uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z) {
    uint3 r; r.x = x; r.y = y; r.z = z; return r;
}
inline int3 make_int3(int x, int y, int z) { int3 r; r.x = x; r.y = y; r.z = z; return r; }

// ---- built-in variables (read-only references to what the scheduler sets) ----------------------
static const uint3& threadIdx = cudaemu_thread_idx;
static const uint3& blockIdx = cudaemu_block_idx;
static const dim3& blockDim = cudaemu_block_dim;
static const dim3& gridDim = cudaemu_grid_dim;
static constexpr int warpSize = 32;

// ---- barriers and fences ---------------------------------------------------------------------
// The compiler barriers around the scheduler call make every fiber re-read memory after it: other
// threads of the block wrote shared and global memory while this one was parked.
#define CUDAEMU_CLOBBER() __asm__ __volatile__("" ::: "memory")
inline void cudaemu_sync_block(int site, const char* file, int line) {
    CUDAEMU_CLOBBER();
    cudaemu_syncthreads(site, file, line);
    CUDAEMU_CLOBBER();
}
// the call site (__COUNTER__: one per place in the source) names the barrier: threads of a block
// waiting at different ones is an error (undefined behaviour in CUDA)
#define __syncthreads() cudaemu_sync_block(__COUNTER__, __FILE__, __LINE__)
inline int cudaemu_block_reduce(int op, int pred, int site, const char* file, int line);
#define __syncthreads_count(p) cudaemu_block_reduce(0, (p), __COUNTER__, __FILE__, __LINE__)
#define __syncthreads_and(p) cudaemu_block_reduce(1, (p), __COUNTER__, __FILE__, __LINE__)
#define __syncthreads_or(p) cudaemu_block_reduce(2, (p), __COUNTER__, __FILE__, __LINE__)
// fibers only switch at barriers and warp collectives: every write is visible to the next reader
inline void __threadfence() { CUDAEMU_CLOBBER(); }
inline void __threadfence_block() { CUDAEMU_CLOBBER(); }
inline void __threadfence_system() { CUDAEMU_CLOBBER(); }
inline void __nanosleep(unsigned int) {}
inline void __trap() { cudaemu_trap("__trap()"); }

// ---- warp collectives: the 32 lanes of a warp meet in the scheduler ---------------------------
inline unsigned int cudaemu_lane() {
    return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31u;
}
inline void __syncwarp(unsigned int mask = 0xffffffffu) {
    CUDAEMU_CLOBBER();
    cudaemu_syncwarp(mask);
    CUDAEMU_CLOBBER();
}
inline unsigned int __activemask() { return cudaemu_active_mask(); }
inline unsigned int __ballot_sync(unsigned int mask, int pred) { return cudaemu_warp_ballot(mask, pred); }
inline int __any_sync(unsigned int mask, int pred) { return cudaemu_warp_ballot(mask, pred) != 0; }
inline int __all_sync(unsigned int mask, int pred) { return cudaemu_warp_ballot(mask, pred) == mask; }
template <class T>
inline T cudaemu_shfl(unsigned int mask, T var, int src_lane) {
    static_assert(sizeof(T) <= 8, "warp shuffles move at most 8 bytes");
    unsigned long long bits = 0;
    __builtin_memcpy(&bits, &var, sizeof(T));
    bits = cudaemu_warp_exchange(mask, bits, src_lane);
    T out;
    __builtin_memcpy(&out, &bits, sizeof(T));
    return out;
}
// width: a power of two <= 32 splitting the warp into segments (CUDA's rules for each form)
template <class T>
inline T __shfl_sync(unsigned int mask, T var, int src, int width = 32) {
    const int lane = (int)cudaemu_lane();
    return cudaemu_shfl(mask, var, (lane & ~(width - 1)) + (src & (width - 1)));
}
template <class T>
inline T __shfl_up_sync(unsigned int mask, T var, unsigned int delta, int width = 32) {
    const int lane = (int)cudaemu_lane();
    return cudaemu_shfl(mask, var, (lane & (width - 1)) >= (int)delta ? lane - (int)delta : lane);
}
template <class T>
inline T __shfl_down_sync(unsigned int mask, T var, unsigned int delta, int width = 32) {
    const int lane = (int)cudaemu_lane();
    return cudaemu_shfl(mask, var, (lane & (width - 1)) + (int)delta < width ? lane + (int)delta : lane);
}
template <class T>
inline T __shfl_xor_sync(unsigned int mask, T var, int lane_mask, int width = 32) {
    const int lane = (int)cudaemu_lane();
    const int src = lane ^ lane_mask;
    return cudaemu_shfl(mask, var, src >= (lane & ~(width - 1)) + width ? lane : src);
}

// ---- the SM clock (CudaDevice's pacing spin kernel): the host's time-stamp counter --------------
#if defined(__x86_64__) || defined(__i386__)
inline long long clock64() { return (long long)__builtin_ia32_rdtsc(); }
#else
inline long long clock64() { static long long t = 0; return t += 1000; }  // a clock that moves
#endif

// ---- integer intrinsics ------------------------------------------------------------------------
inline unsigned int __brev(unsigned int x) {
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
    return __builtin_bswap32(x);
}
inline unsigned long long __brevll(unsigned long long x) {
    return ((unsigned long long)__brev((unsigned int)x) << 32) | __brev((unsigned int)(x >> 32));
}
// the GPU defines the zero cases (__builtin_clz(0) is undefined on the host)
inline int __clz(int x) { return x ? __builtin_clz((unsigned int)x) : 32; }
inline int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
inline int __popc(unsigned int x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __ffsll(long long x) { return __builtin_ffsll(x); }
inline unsigned int __umulhi(unsigned int a, unsigned int b) {
    return (unsigned int)(((unsigned long long)a * b) >> 32);
}
inline int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
inline long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int s) {
    s &= 31; return s ? (hi << s) | (lo >> (32 - s)) : hi;
}
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int s) {
    s &= 31; return s ? (lo >> s) | (hi << (32 - s)) : lo;
}
inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int s) {
    return s >= 32 ? lo : __funnelshift_l(lo, hi, s);
}
inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int s) {
    return s >= 32 ? hi : __funnelshift_r(lo, hi, s);
}
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
    const unsigned long long v = ((unsigned long long)y << 32) | x;
    unsigned int r = 0;
    for (int i = 0; i < 4; i++) r |= (unsigned int)((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return r;
}
template <class T>
inline T __ldg(const T* p) { return *p; }

// min/max for mixed arithmetic types: the usual arithmetic conversions (a + b's type), as CUDA's
// overloads (a mixed signed/unsigned pair compares as unsigned there too)
template <class A, class B>
inline auto min(A a, B b) -> decltype(a + b) { return b < a ? b : a; }
template <class A, class B>
inline auto max(A a, B b) -> decltype(a + b) { return a < b ? b : a; }
inline unsigned int umin(unsigned int a, unsigned int b) { return b < a ? b : a; }
inline unsigned int umax(unsigned int a, unsigned int b) { return a < b ? b : a; }

// ---- atomics: plain read-modify-writes (fibers never switch inside one, so this is exact) ------
#define CUDAEMU_RMW(NAME, T, NEW) \
    inline T NAME(T* p, T v) { const T old = *p; *p = (NEW); return old; }
#define CUDAEMU_RMW_INT(NAME, NEW) CUDAEMU_RMW(NAME, int, NEW) CUDAEMU_RMW(NAME, unsigned int, NEW) \
    CUDAEMU_RMW(NAME, unsigned long long, NEW)
CUDAEMU_RMW_INT(atomicAdd, old + v)
CUDAEMU_RMW(atomicAdd, float, old + v)
CUDAEMU_RMW(atomicAdd, double, old + v)
CUDAEMU_RMW(atomicSub, int, old - v)
CUDAEMU_RMW(atomicSub, unsigned int, old - v)
CUDAEMU_RMW_INT(atomicExch, v)
CUDAEMU_RMW(atomicExch, float, v)
CUDAEMU_RMW_INT(atomicMin, v < old ? v : old)
CUDAEMU_RMW(atomicMin, long long, v < old ? v : old)
CUDAEMU_RMW_INT(atomicMax, v > old ? v : old)
CUDAEMU_RMW(atomicMax, long long, v > old ? v : old)
CUDAEMU_RMW_INT(atomicAnd, old & v)
CUDAEMU_RMW_INT(atomicOr, old | v)
CUDAEMU_RMW_INT(atomicXor, old ^ v)
CUDAEMU_RMW(atomicInc, unsigned int, old >= v ? 0u : old + 1u)
CUDAEMU_RMW(atomicDec, unsigned int, (old == 0u || old > v) ? v : old - 1u)
#undef CUDAEMU_RMW_INT
#undef CUDAEMU_RMW
#define CUDAEMU_CAS(T) inline T atomicCAS(T* p, T cmp, T v) { const T old = *p; if (old == cmp) *p = v; return old; }
CUDAEMU_CAS(int)
CUDAEMU_CAS(unsigned int)
CUDAEMU_CAS(unsigned long long)
CUDAEMU_CAS(unsigned short)
#undef CUDAEMU_CAS
// scoped variants: one device, one process, fibers: the same operation
#define atomicAdd_block atomicAdd
#define atomicAdd_system atomicAdd
#define atomicCAS_block atomicCAS
#define atomicCAS_system atomicCAS
#define atomicExch_block atomicExch
#define atomicExch_system atomicExch

extern "C" int printf(const char*, ...);

// ---- launcher support (used by the code the generator appends after the kernels) -------------
namespace cudaemu {
template <unsigned long... I> struct Seq {};
template <unsigned long N, unsigned long... I> struct MakeSeq : MakeSeq<N - 1, N - 1, I...> {};
template <unsigned long... I> struct MakeSeq<0, I...> { typedef Seq<I...> type; };

template <class T> struct AlignOf { static constexpr int value = alignof(T); };
template <class T> struct AlignOf<const T> : AlignOf<T> {};
template <class T> struct AlignOf<volatile T> : AlignOf<T> {};
template <class T> struct AlignOf<const volatile T> : AlignOf<T> {};
template <> struct AlignOf<void> { static constexpr int value = 1; };

// a kernel parameter's kind (0 struct by value, 1 pointer, 2 signed, 3 unsigned, 4 float, 5 bool)
// and size (a pointer's: the alignment its pointee needs); the Python side checks arguments by it
template <class T> struct Kind { static constexpr int kind = 0, size = sizeof(T); };
template <class T> struct Kind<T*> { static constexpr int kind = 1, size = AlignOf<T>::value; };
#define CUDAEMU_KIND(T, K) template <> struct Kind<T> { static constexpr int kind = K, size = sizeof(T); };
CUDAEMU_KIND(signed char, 2) CUDAEMU_KIND(char, 2) CUDAEMU_KIND(short, 2) CUDAEMU_KIND(int, 2)
CUDAEMU_KIND(long, 2) CUDAEMU_KIND(long long, 2)
CUDAEMU_KIND(unsigned char, 3) CUDAEMU_KIND(unsigned short, 3) CUDAEMU_KIND(unsigned int, 3)
CUDAEMU_KIND(unsigned long, 3) CUDAEMU_KIND(unsigned long long, 3)
CUDAEMU_KIND(float, 4) CUDAEMU_KIND(double, 4) CUDAEMU_KIND(bool, 5)
#undef CUDAEMU_KIND

template <class... A>
int signature(void (*)(A...), int* kinds, int* sizes, int max) {
    const int k[] = {Kind<A>::kind..., 0};
    const int s[] = {Kind<A>::size..., 0};
    for (int i = 0; i < (int)sizeof...(A) && i < max; i++) { kinds[i] = k[i]; sizes[i] = s[i]; }
    return (int)sizeof...(A);
}

// every CUDA thread calls the kernel with its own copies of the arguments (args[i] points at
// the Python side's storage of argument i, alive for the synchronous launch)
template <class... A>
struct Call {
    void (*kernel)(A...);
    void** args;
    template <unsigned long... I> void go(Seq<I...>) { kernel(*static_cast<A*>(args[I])...); }
    static void body(void* self) { static_cast<Call*>(self)->go(typename MakeSeq<sizeof...(A)>::type()); }
};

template <class... A>
int launch(void (*kernel)(A...), const unsigned int* grid, const unsigned int* block, unsigned long long shared_bytes,
           void** args, int order, unsigned long long seed, const char** error) {
    Call<A...> call = {kernel, args};
    return cudaemu_run(grid, block, shared_bytes, &Call<A...>::body, &call, order, seed, error);
}
}  // namespace cudaemu

inline int cudaemu_block_reduce(int op, int pred, int site, const char* file, int line) {
    CUDAEMU_CLOBBER();
    const int r = cudaemu_block_reduce_impl(op, pred, site, file, line);
    CUDAEMU_CLOBBER();
    return r;
}
