// runtime.cpp: the CUDA emulator's scheduler, linked into every kernel library it builds.
//
// A launch runs its blocks one after another; a block's threads are cooperative fibers (ucontext,
// one small stack each, kept for the next block and launch). The scheduler resumes every runnable
// fiber in turn (in the launch's order); a fiber runs until it finishes or waits at a barrier
// (__syncthreads, or a warp collective). When no fiber can run, the scheduler releases a warp
// whose named lanes all wait at the same collective, else the block once every live thread waits
// at the same __syncthreads, else it reports a deadlock. Only one fiber runs at a time and it
// switches only at those points, so atomics are plain read-modify-writes and a thread's writes
// are seen by every later reader.
#include <sys/mman.h>
#include <ucontext.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cudaemu_abi.h"

extern "C" {
uint3 cudaemu_thread_idx;
uint3 cudaemu_block_idx;
dim3 cudaemu_block_dim;
dim3 cudaemu_grid_dim;
}

namespace {

constexpr size_t kStackBytes = 64 << 10;  // -O2 kernels run in 16 KB (measured), sanitizer builds need more
constexpr size_t kGuardBytes = 16 << 10;   // PROT_NONE below each stack: an overflow faults, never corrupts
constexpr unsigned kMaxThreads = 1024;

enum class State : unsigned char { Run, Block, Warp, Done, Dead };

struct Fiber {
    ucontext_t ctx;  // never moved (glibc's ucontext points into itself): fibers live on the heap
    char* stack = nullptr;
    State state = State::Done;
    unsigned tid = 0;  // linear thread index in the block
    uint3 idx = {0, 0, 0};
    int site = 0;  // the __syncthreads it waits at
    const char* file = nullptr;
    int line = 0;
    unsigned mask = 0;  // the warp collective's lanes
};

struct Scheduler {
    ucontext_t main;
    std::vector<Fiber*> fibers;
    Fiber* cur = nullptr;
    void (*body)(void*) = nullptr;
    void* ctx = nullptr;
    unsigned n = 0;  // threads a block
    char* shared = nullptr;  // the launch's dynamic shared memory
    size_t shared_cap = 0, shared_bytes = 0;
    unsigned long long slots[kMaxThreads];  // warp collectives' per-lane values
    unsigned red_count = 0, red_result = 0, red_live = 0;  // __syncthreads_count/and/or
    std::vector<unsigned> perm;
    int order = 0;
    unsigned long long rng = 1;
    bool failed = false;
    std::string error;
};
Scheduler g;

void fiber_main() {
    for (;;) {  // one CUDA thread per pass; parked at the swap between blocks and launches
        g.body(g.ctx);
        g.cur->state = State::Done;
        swapcontext(&g.cur->ctx, &g.main);
    }
}

void make_context(Fiber* f) {
    getcontext(&f->ctx);
    f->ctx.uc_stack.ss_sp = f->stack + kGuardBytes;
    f->ctx.uc_stack.ss_size = kStackBytes;
    f->ctx.uc_link = nullptr;
    makecontext(&f->ctx, fiber_main, 0);
}

bool ensure_fibers(unsigned n) {
    while (g.fibers.size() < n) {
        Fiber* f = new Fiber();
        void* mem = mmap(nullptr, kStackBytes + kGuardBytes, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (mem == MAP_FAILED) { delete f; return false; }
        mprotect(mem, kGuardBytes, PROT_NONE);
        f->stack = static_cast<char*>(mem);
        make_context(f);
        g.fibers.push_back(f);
    }
    return true;
}

std::string hex(unsigned v) {
    char buf[16];
    snprintf(buf, sizeof buf, "%x", v);
    return buf;
}

std::string where(const Fiber* f) {
    char buf[128];
    snprintf(buf, sizeof buf, "block (%u,%u,%u) thread (%u,%u,%u)", cudaemu_block_idx.x, cudaemu_block_idx.y,
             cudaemu_block_idx.z, f->idx.x, f->idx.y, f->idx.z);
    return buf;
}

void fail(const std::string& msg) {
    if (!g.failed) { g.failed = true; g.error = msg; }
}

// from a fiber: give control back to the scheduler until it resumes this one
void park(State s) {
    g.cur->state = s;
    swapcontext(&g.cur->ctx, &g.main);
}

// from a fiber: an error ends the launch; the fiber is never resumed (its context is remade)
[[noreturn]] void fail_here(const std::string& msg) {
    fail(where(g.cur) + ": " + msg);
    park(State::Dead);
    abort();  // unreachable: a dead fiber is not resumed
}

void resume(Fiber* f) {
    cudaemu_thread_idx = f->idx;
    g.cur = f;
    swapcontext(&g.main, &f->ctx);
}

unsigned long long next_random() {  // xorshift64: shuffled schedules, reproducible from the seed
    g.rng ^= g.rng << 13;
    g.rng ^= g.rng >> 7;
    g.rng ^= g.rng << 17;
    return g.rng;
}

void arrange(std::vector<unsigned>& p, unsigned count) {
    p.resize(count);
    for (unsigned i = 0; i < count; i++) p[i] = g.order == 1 ? count - 1 - i : i;
    if (g.order == 2)
        for (unsigned i = count; i > 1; i--) {
            const unsigned j = (unsigned)(next_random() % i);
            const unsigned t = p[i - 1]; p[i - 1] = p[j]; p[j] = t;
        }
}

void warp_wait(unsigned mask) {
    if (!((mask >> (g.cur->tid & 31u)) & 1u))
        fail_here("a warp collective's mask must include the calling lane (mask 0x" + hex(mask) + ")");
    g.cur->mask = mask;
    park(State::Warp);
}

// a warp whose lanes named by a waiting lane's mask all wait with that mask
bool release_warps() {
    bool released = false;
    for (unsigned base = 0; base < g.n; base += 32) {
        for (unsigned l = 0; l < 32 && base + l < g.n; l++) {
            Fiber* f = g.fibers[base + l];
            if (f->state != State::Warp) continue;
            const unsigned m = f->mask;
            bool ready = true;
            for (unsigned j = 0; j < 32; j++) {
                if (!((m >> j) & 1u)) continue;
                if (base + j >= g.n || g.fibers[base + j]->state == State::Done) {
                    fail(where(f) + ": a warp collective (mask 0x" + hex(m) + ") names lane " +
                         std::to_string(j) + ", which has exited or does not exist");
                    return false;
                }
                const Fiber* o = g.fibers[base + j];
                if (o->state != State::Warp || o->mask != m) ready = false;
            }
            if (!ready) continue;
            for (unsigned j = 0; j < 32; j++)
                if ((m >> j) & 1u) g.fibers[base + j]->state = State::Run;
            released = true;
        }
    }
    return released;
}

// the block, once every live thread waits at the same __syncthreads
bool release_block() {
    const Fiber* first = nullptr;
    unsigned live = 0;
    for (unsigned t = 0; t < g.n; t++) {
        const Fiber* f = g.fibers[t];
        if (f->state == State::Done) continue;
        if (f->state != State::Block) return false;
        live++;
        if (!first) { first = f; continue; }
        if (f->site != first->site) {
            fail("divergent __syncthreads: " + where(first) + " waits at " + first->file + ":" +
                 std::to_string(first->line) + ", " + where(f) + " at " + f->file + ":" + std::to_string(f->line) +
                 (f->line == first->line ? " (another __syncthreads on that line)" : ""));
            return false;
        }
    }
    if (!first) return false;
    g.red_result = g.red_count;
    g.red_live = live;
    g.red_count = 0;
    for (unsigned t = 0; t < g.n; t++)
        if (g.fibers[t]->state == State::Block) g.fibers[t]->state = State::Run;
    return true;
}

std::string describe_deadlock() {
    std::string s = "deadlock: no thread can run;";
    int shown = 0;
    for (unsigned t = 0; t < g.n && shown < 6; t++) {
        const Fiber* f = g.fibers[t];
        if (f->state == State::Block)
            s += " " + where(f) + " at __syncthreads " + f->file + ":" + std::to_string(f->line) + ";";
        else if (f->state == State::Warp)
            s += " " + where(f) + " at a warp collective (mask 0x" + hex(f->mask) + ");";
        else
            continue;
        shown++;
    }
    return s;
}

bool run_block() {
    const dim3 b = cudaemu_block_dim;
    for (unsigned t = 0; t < g.n; t++) {
        Fiber* f = g.fibers[t];
        f->state = State::Run;
        f->tid = t;
        f->idx.x = t % b.x;
        f->idx.y = (t / b.x) % b.y;
        f->idx.z = t / (b.x * b.y);
    }
    g.red_count = 0;
    for (;;) {
        arrange(g.perm, g.n);
        for (unsigned k = 0; k < g.n; k++) {
            Fiber* f = g.fibers[g.perm[k]];
            if (f->state != State::Run) continue;
            resume(f);
            if (g.failed) return false;
        }
        unsigned done = 0;
        for (unsigned t = 0; t < g.n; t++) done += g.fibers[t]->state == State::Done;
        if (done == g.n) return true;
        if (release_warps()) continue;
        if (g.failed) return false;
        if (release_block()) continue;
        if (g.failed) return false;
        fail(describe_deadlock());
        return false;
    }
}

}  // namespace

extern "C" {

int cudaemu_run(const unsigned int* grid, const unsigned int* block, unsigned long long shared_bytes,
                void (*body)(void*), void* ctx, int order, unsigned long long seed, const char** error) {
    g.failed = false;
    g.error.clear();
    g.body = body;
    g.ctx = ctx;
    g.order = order;
    g.rng = seed ? seed : 0x9e3779b97f4a7c15ull;
    g.n = block[0] * block[1] * block[2];
    *error = nullptr;
    if (g.n == 0 || g.n > kMaxThreads) {
        fail("a block of " + std::to_string(g.n) + " threads (1..1024)");
    } else if (!ensure_fibers(g.n)) {
        fail("no memory for the fibers' stacks");
    } else if (shared_bytes > g.shared_cap) {
        free(g.shared);
        g.shared_cap = (shared_bytes + 4095) & ~4095ull;
        g.shared = static_cast<char*>(aligned_alloc(256, g.shared_cap));
        if (!g.shared) { g.shared_cap = 0; fail("no memory for the dynamic shared buffer"); }
    }
    g.shared_bytes = shared_bytes;
    if (!g.failed) {
        cudaemu_grid_dim = dim3(grid[0], grid[1], grid[2]);
        cudaemu_block_dim = dim3(block[0], block[1], block[2]);
        const unsigned long long blocks = (unsigned long long)grid[0] * grid[1] * grid[2];
        std::vector<unsigned> border;  // a shuffled block order; forward and reverse need none
        if (order == 2) {
            if (blocks > (1ull << 26)) fail("a shuffled schedule of more than 2^26 blocks");
            else arrange(border, (unsigned)blocks);
        }
        for (unsigned long long k = 0; k < blocks && !g.failed; k++) {
            const unsigned long long i = order == 2 ? border[k] : order == 1 ? blocks - 1 - k : k;
            cudaemu_block_idx.x = (unsigned)(i % grid[0]);
            cudaemu_block_idx.y = (unsigned)((i / grid[0]) % grid[1]);
            cudaemu_block_idx.z = (unsigned)(i / ((unsigned long long)grid[0] * grid[1]));
            // shared memory starts as garbage on the GPU: a kernel that reads before it writes
            // reads this pattern here, not a previous block's values
            if (shared_bytes) memset(g.shared, 0xA5, shared_bytes);
            run_block();
        }
    }
    if (g.failed) {
        // abandoned mid-kernel: their stacks hold dead frames; start them afresh next time
        for (Fiber* f : g.fibers)
            if (f->state != State::Done) { make_context(f); f->state = State::Done; }
        *error = g.error.c_str();
        return -1;
    }
    return 0;
}

void cudaemu_syncthreads(int site, const char* file, int line) {
    g.cur->site = site;
    g.cur->file = file;
    g.cur->line = line;
    park(State::Block);
}

int cudaemu_block_reduce_impl(int op, int pred, int site, const char* file, int line) {
    g.red_count += pred != 0;
    cudaemu_syncthreads(site, file, line);
    const unsigned c = g.red_result;  // set by the release, read before any next barrier
    return op == 0 ? (int)c : op == 1 ? c == g.red_live : c != 0;
}

void cudaemu_syncwarp(unsigned int mask) { warp_wait(mask); }

unsigned long long cudaemu_warp_exchange(unsigned int mask, unsigned long long value, int src_lane) {
    const unsigned tid = g.cur->tid, base = tid & ~31u;
    g.slots[tid] = value;
    warp_wait(mask);  // every lane of the mask has stored its value
    unsigned long long r = value;  // a lane outside the mask: undefined on the GPU; our own value here
    if (src_lane >= 0 && src_lane < 32 && ((mask >> src_lane) & 1u) && base + src_lane < g.n)
        r = g.slots[base + src_lane];
    warp_wait(mask);  // every lane has read before any stores again
    return r;
}

unsigned int cudaemu_warp_ballot(unsigned int mask, int predicate) {
    const unsigned tid = g.cur->tid, base = tid & ~31u;
    g.slots[tid] = predicate != 0;
    warp_wait(mask);
    unsigned r = 0;
    for (unsigned j = 0; j < 32; j++)
        if (((mask >> j) & 1u) && base + j < g.n && g.slots[base + j]) r |= 1u << j;
    warp_wait(mask);
    return r;
}

// the lanes of the caller's warp that have not exited (the GPU's converged set can be smaller)
unsigned int cudaemu_active_mask(void) {
    const unsigned base = g.cur->tid & ~31u;
    unsigned r = 0;
    for (unsigned j = 0; j < 32 && base + j < g.n; j++)
        if (g.fibers[base + j]->state != State::Done) r |= 1u << j;
    return r;
}

void* cudaemu_dynamic_shared(void) { return g.shared; }

void cudaemu_trap(const char* what) { fail_here(std::string("kernel called ") + what); }

}  // extern "C"
