// carry.cuh: 32-bit carry-chain primitives, one PTX instruction each (asm volatile: the carry flag
// is invisible to the compiler, so the chain's order must be kept), and the same semantics in
// portable C++ for g++ (CI's host check and the CUDA emulator), where the flag is a thread-local
// variable. Code written with these runs, instruction for instruction, on the CPU and the GPU,
// which is how mont_wide.cuh's products are checked without a GPU.
// Naming follows PTX: *_cc writes the carry (borrow, for sub), c* reads it.
#pragma once
#include "compat.cuh"

namespace cc {
#if defined(__CUDA_ARCH__)
#  define CC_OP2(name, ins)                                                                   \
    __device__ __forceinline__ u32 name(u32 a, u32 b) {                                        \
        u32 r; asm volatile(ins " %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
#  define CC_OP3(name, ins)                                                                   \
    __device__ __forceinline__ u32 name(u32 a, u32 b, u32 c) {                                 \
        u32 r; asm volatile(ins " %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
CC_OP2(add_cc, "add.cc.u32")
CC_OP2(addc_cc, "addc.cc.u32")
CC_OP2(addc, "addc.u32")
CC_OP2(sub_cc, "sub.cc.u32")
CC_OP2(subc_cc, "subc.cc.u32")
CC_OP2(subc, "subc.u32")
CC_OP3(mad_lo_cc, "mad.lo.cc.u32")
CC_OP3(madc_lo_cc, "madc.lo.cc.u32")
CC_OP3(madc_lo, "madc.lo.u32")
CC_OP3(mad_hi_cc, "mad.hi.cc.u32")
CC_OP3(madc_hi_cc, "madc.hi.cc.u32")
CC_OP3(madc_hi, "madc.hi.u32")
#  undef CC_OP2
#  undef CC_OP3
__device__ __forceinline__ u32 mul_lo(u32 a, u32 b) { return a * b; }
__device__ __forceinline__ u32 mul_hi(u32 a, u32 b) { return __umulhi(a, b); }
#else
inline thread_local u32 CF = 0;  // the emulated carry flag (a borrow after sub*)
inline u32 add_cc(u32 a, u32 b) { u64 s = (u64)a + b; CF = (u32)(s >> 32); return (u32)s; }
inline u32 addc_cc(u32 a, u32 b) { u64 s = (u64)a + b + CF; CF = (u32)(s >> 32); return (u32)s; }
inline u32 addc(u32 a, u32 b) { return a + b + CF; }
inline u32 sub_cc(u32 a, u32 b) { u64 d = (u64)a - b; CF = (u32)(d >> 63); return (u32)d; }
inline u32 subc_cc(u32 a, u32 b) { u64 d = (u64)a - b - CF; CF = (u32)(d >> 63); return (u32)d; }
inline u32 subc(u32 a, u32 b) { return a - b - CF; }
inline u32 mad_lo_cc(u32 a, u32 b, u32 c) { return add_cc(a * b, c); }
inline u32 madc_lo_cc(u32 a, u32 b, u32 c) { return addc_cc(a * b, c); }
inline u32 madc_lo(u32 a, u32 b, u32 c) { return addc(a * b, c); }
inline u32 mad_hi_cc(u32 a, u32 b, u32 c) { return add_cc((u32)(((u64)a * b) >> 32), c); }
inline u32 madc_hi_cc(u32 a, u32 b, u32 c) { return addc_cc((u32)(((u64)a * b) >> 32), c); }
inline u32 madc_hi(u32 a, u32 b, u32 c) { return addc((u32)(((u64)a * b) >> 32), c); }
inline u32 mul_lo(u32 a, u32 b) { return a * b; }
inline u32 mul_hi(u32 a, u32 b) { return (u32)(((u64)a * b) >> 32); }
#endif
}  // namespace cc
