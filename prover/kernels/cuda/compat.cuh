// compat.cuh: lets the same arithmetic headers compile with nvcc, NVRTC (cupy.RawModule) and g++.
// No standard headers are included: NVRTC has none by default.
#pragma once
#if !defined(__CUDACC__)
#  ifndef __host__
#    define __host__
#  endif
#  ifndef __device__
#    define __device__
#  endif
#  ifndef __global__
#    define __global__
#  endif
#  ifndef __forceinline__
#    define __forceinline__ inline
#  endif
#  ifndef __noinline__
#    define __noinline__ __attribute__((noinline))
#  endif
#endif
#define HD __host__ __device__ __forceinline__
// big routines (Fp/Fp2 products, curve formulas) are real calls: inlining them all made the
// compiler take minutes and bought little
#define HDNI __host__ __device__ __noinline__
#if defined(__CUDACC__)
#  define UNROLL _Pragma("unroll")
#else
#  define UNROLL
#endif
typedef unsigned int u32;
typedef unsigned long long u64;
typedef int i32;
