// cudaemu_abi.h: what the kernel side (cudaemu.h) and the scheduler (runtime.cpp) share.
// No system headers: it is included ahead of NVRTC sources, which have none.
#pragma once

struct uint3 { unsigned int x, y, z; };
struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
};

extern "C" {
// The built-in index variables: the scheduler sets them before it resumes a CUDA thread's fiber
// (blockIdx/gridDim/blockDim once per block or launch, threadIdx at every resume).
extern uint3 cudaemu_thread_idx;
extern uint3 cudaemu_block_idx;
extern dim3 cudaemu_block_dim;
extern dim3 cudaemu_grid_dim;

// One launch: `body(ctx)` runs as every thread of every block. Returns 0, or -1 with a message
// in *error (a deadlock, a divergent barrier, a bad warp mask): the launch is abandoned.
// order: 0 forward, 1 reverse, 2 shuffled with `seed` (the order fibers run in between
// barriers and the order of blocks; a race-free kernel gives the same result for every order).
int cudaemu_run(const unsigned int* grid, const unsigned int* block, unsigned long long shared_bytes,
                void (*body)(void*), void* ctx, int order, unsigned long long seed, const char** error);

// Called by kernel code (through the macros and inline functions of cudaemu.h).
// site: the barrier's place in the source (threads must meet at one); file:line for messages
void cudaemu_syncthreads(int site, const char* file, int line);
// __syncthreads_count (op 0), _and (1), _or (2)
int cudaemu_block_reduce_impl(int op, int pred, int site, const char* file, int line);
void cudaemu_syncwarp(unsigned int mask);
unsigned long long cudaemu_warp_exchange(unsigned int mask, unsigned long long value, int src_lane);
unsigned int cudaemu_warp_ballot(unsigned int mask, int predicate);
unsigned int cudaemu_active_mask(void);
void* cudaemu_dynamic_shared(void);
void cudaemu_trap(const char* what);
}
