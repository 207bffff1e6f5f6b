"""The CPU emulator of the CUDA backend (tests/helpers/cudaemu) itself, on tiny kernels:
barriers really interleave the threads, warps exchange, atomics and intrinsics, divergent
barriers and deadlocks are errors, arguments are checked against the kernel signature, device
arrays behave like CuPy's, the install is undone, no g++ is a clear skip. The real kernels on it:
tests/unit/test_cuda_emulated.py."""
from __future__ import annotations

import types

import numpy as np
import py_arkworks_bls12381 as ark
import pytest

from prover import backend as B
from prover.field.params import P_MOD, R_MOD
from prover.field.ref import fr_from_ints, fr_random, fr_to_ints, ntt_h_ref, ntt_ref
from prover.settings import KernelSettings
from tests.helpers.cudaemu import KernelError, config
from tests.helpers.cudaemu.errors import CUDADriverError
from tests.helpers.cudaemu.fixture import cuda_emulator  # noqa: F401  (the fixture)
from tests.helpers.inputs import msm_inputs, rng_for


def _module(cp, code: str, options: tuple[str, ...] = ()):
    mod = cp.RawModule(code=code, options=options, backend="nvrtc")
    mod.compile()
    return mod


# ---------------------------------------------------------------- the emulator itself ----
_BARRIER = r"""
extern "C" __global__ void rotate(const int* in, int* out, int barrier)
{
    __shared__ int sh[64];
    const unsigned t = threadIdx.x;
    sh[t] = in[blockIdx.x * blockDim.x + t];
    if (barrier) __syncthreads();
    out[blockIdx.x * blockDim.x + t] = sh[(t + 1) % blockDim.x];
}
// a tree sum over the launch's dynamic shared memory: log2(blockDim) barriers in a loop
extern "C" __global__ void block_sum(const unsigned long long* in, unsigned long long* out)
{
    extern __shared__ __align__(16) unsigned long long part[];
    const unsigned t = threadIdx.x;
    part[t] = in[blockIdx.x * blockDim.x + t];
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s) part[t] += part[t + s];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = part[0];
}
extern "C" __global__ void votes(const int* in, int* out)
{
    const int p = in[blockIdx.x * blockDim.x + threadIdx.x];
    const int c = __syncthreads_count(p), all = __syncthreads_and(p), any = __syncthreads_or(p);
    if (threadIdx.x == 7) { out[3 * blockIdx.x] = c; out[3 * blockIdx.x + 1] = all; out[3 * blockIdx.x + 2] = any; }
}
"""


def test_syncthreads_really_interleaves_the_threads(cuda_emulator) -> None:  # noqa: F811
    """Thread t reads what thread t+1 wrote: right only if every thread wrote before any read."""
    cp = cuda_emulator
    mod = _module(cp, _BARRIER)
    rotate = mod.get_function("rotate")
    x = np.arange(2 * 64, dtype=np.int32) * 7 + 3
    want = np.concatenate([np.roll(x[:64], -1), np.roll(x[64:], -1)])
    out = cp.empty(128, dtype=cp.int32)
    rotate((2,), (64,), (cp.asarray(x), out, np.int32(1)))
    assert np.array_equal(out.get(), want)
    # without the barrier thread t runs to its end before t+1 starts: it reads a stale slot
    y = x + 1000
    rotate((2,), (64,), (cp.asarray(y), out, np.int32(0)))
    assert not np.array_equal(out.get(), want + 1000)


@pytest.mark.parametrize("schedule", ["forward", "reverse", "shuffle"])
def test_a_barrier_tree_over_dynamic_shared_memory(cuda_emulator, monkeypatch, schedule) -> None:  # noqa: F811
    cp = cuda_emulator
    monkeypatch.setattr(config, "schedule", schedule)
    k = _module(cp, _BARRIER).get_function("block_sum")
    x = rng_for("blocksum").integers(0, 1 << 40, size=4 * 256, dtype=np.uint64)
    out = cp.zeros(4, dtype=cp.uint64)
    k((4,), (256,), (cp.asarray(x), out), shared_mem=256 * 8)
    assert out.get().tolist() == [int(v) for v in x.reshape(4, 256).sum(axis=1)]


def test_block_votes(cuda_emulator) -> None:  # noqa: F811
    cp = cuda_emulator
    k = _module(cp, _BARRIER).get_function("votes")
    x = np.zeros((3, 96), dtype=np.int32)
    x[0, ::3] = 5
    x[1] = 1
    out = cp.zeros(9, dtype=cp.int32)
    k((3,), (96,), (cp.asarray(x), out))
    assert out.get().tolist() == [32, 0, 1, 96, 1, 1, 0, 0, 0]


_WARP = r"""
extern "C" __global__ void warp_ops(const unsigned* in, unsigned* out)
{
    const unsigned t = threadIdx.x, lane = t & 31;
    unsigned v = in[t];
    unsigned s = v;
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    unsigned x = v;
    for (int m = 1; m < 32; m <<= 1) x = max(x, __shfl_xor_sync(0xffffffffu, x, m));
    const unsigned b = __ballot_sync(0xffffffffu, v & 1);
    const unsigned up = __shfl_up_sync(0xffffffffu, v, 1);
    const unsigned bc = __shfl_sync(0xffffffffu, v, 5, 8);  // lane 5 of each group of 8
    out[t * 5 + 0] = lane == 0 ? s : 0;
    out[t * 5 + 1] = x;
    out[t * 5 + 2] = b;
    out[t * 5 + 3] = up;
    out[t * 5 + 4] = bc;
}
"""


def test_warp_collectives_exchange_between_the_lanes(cuda_emulator) -> None:  # noqa: F811
    cp = cuda_emulator
    k = _module(cp, _WARP).get_function("warp_ops")
    v = rng_for("warp").integers(0, 1 << 20, size=64, dtype=np.uint32)
    out = cp.zeros(64 * 5, dtype=cp.uint32)
    k((1,), (64,), (cp.asarray(v), out))
    got = out.get().reshape(64, 5)
    for w in range(2):
        lanes = v[32 * w:32 * w + 32]
        rows = got[32 * w:32 * w + 32]
        assert rows[0, 0] == lanes.sum(dtype=np.uint32)
        assert (rows[:, 1] == lanes.max()).all()
        assert (rows[:, 2] == sum(1 << i for i in range(32) if lanes[i] & 1)).all()
        assert rows[:, 3].tolist() == [int(lanes[0])] + lanes[:-1].tolist()
        assert rows[:, 4].tolist() == [int(lanes[(i & ~7) + 5]) for i in range(32)]


_INTRINSICS = r"""
extern "C" __global__ void intrinsics(unsigned* hist, unsigned long long* o, const unsigned* in, unsigned n)
{
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&hist[in[i] & 15], 1u);
    if (i == 0) {
        o[0] = __brev(1u); o[1] = (unsigned)__clz(0); o[2] = (unsigned)__clz(1); o[3] = (unsigned)__clzll(0);
        o[4] = __umul64hi(0xffffffffffffffffull, 3ull); o[5] = __umulhi(0x80000000u, 6u);
        o[6] = (unsigned)__popc(0xf0f0u); o[7] = (unsigned)__ffs(8); o[8] = atomicCAS(&hist[16], 0u, 9u);
        o[9] = atomicCAS(&hist[16], 0u, 11u); o[10] = hist[16]; o[11] = atomicMax(&hist[17], 4u);
        o[12] = __byte_perm(0x33221100u, 0x77665544u, 0x5410u);
    }
}
"""


def test_atomics_and_integer_intrinsics(cuda_emulator) -> None:  # noqa: F811
    cp = cuda_emulator
    k = _module(cp, _INTRINSICS).get_function("intrinsics")
    x = rng_for("hist").integers(0, 1 << 30, size=1000, dtype=np.uint32)
    hist = cp.zeros(18, dtype=cp.uint32)
    o = cp.zeros(13, dtype=cp.uint64)
    k((4,), (256,), (hist, o, cp.asarray(x), np.uint32(len(x))))
    assert hist.get()[:16].tolist() == np.bincount(x & 15, minlength=16).tolist()
    assert o.get().tolist() == [1 << 31, 32, 31, 64, 2, 3, 8, 4, 0, 9, 9, 0, 0x55441100]


def test_a_divergent_barrier_and_a_deadlock_are_errors(cuda_emulator) -> None:  # noqa: F811
    cp = cuda_emulator
    mod = _module(cp, r"""
extern "C" __global__ void divergent(int* x)
{
    if (threadIdx.x < 16) { x[threadIdx.x] = 1; __syncthreads(); }
    else { __syncthreads(); x[threadIdx.x] = 2; }
}
extern "C" __global__ void stuck(int* x)
{
    if (threadIdx.x == 0) __syncwarp(0x3u);
    else __syncthreads();
}
extern "C" __global__ void ok_after(int* x) { x[threadIdx.x] = (int)threadIdx.x; __syncthreads(); }
""")
    x = cp.zeros(64, dtype=cp.int32)
    with pytest.raises(KernelError, match="divergent __syncthreads"):
        mod.get_function("divergent")((1,), (32,), (x,))
    with pytest.raises(KernelError, match="deadlock"):
        mod.get_function("stuck")((1,), (32,), (x,))
    # the abandoned fibers are reset: the next launch runs normally
    mod.get_function("ok_after")((1,), (64,), (x,))
    assert x.get().tolist() == list(range(64))


def test_arguments_are_checked_against_the_kernel_signature(cuda_emulator) -> None:  # noqa: F811
    cp = cuda_emulator
    k = _module(cp, _BARRIER).get_function("rotate")
    d_in, out = cp.zeros(64, dtype=cp.int32), cp.empty(64, dtype=cp.int32)
    with pytest.raises(TypeError, match=r"rotate argument 2 \(int barrier\).*int32.*uint32"):
        k((1,), (64,), (d_in, out, np.uint32(1)))
    with pytest.raises(TypeError, match="Python number"):
        k((1,), (64,), (d_in, out, 1))
    with pytest.raises(TypeError, match="host numpy array"):
        k((1,), (64,), (np.zeros(64, np.int32), out, np.int32(1)))
    with pytest.raises(TypeError, match="takes 3 arguments"):
        k((1,), (64,), (d_in, out))
    with pytest.raises(CUDADriverError, match="not 4-byte aligned"):
        k((1,), (63,), (d_in.view(cp.uint8)[1:253].view(cp.int32), out, np.int32(1)))
    with pytest.raises(CUDADriverError, match="at most 1024 threads"):
        k((1,), (2048,), (d_in, out, np.int32(1)))
    s = _module(cp, _BARRIER).get_function("block_sum")
    with pytest.raises(CUDADriverError, match="dynamic shared memory"):
        s((1,), (64,), (cp.zeros(64, dtype=cp.uint64), cp.zeros(1, dtype=cp.uint64)), shared_mem=64 << 10)
    with pytest.raises(TypeError, match="non-contiguous view"):
        k((1,), (32,), (d_in[::2], out, np.int32(1)))
    with pytest.raises(TypeError, match="tuples"):
        k(1, 64, (d_in, out, np.int32(1)))


def test_device_arrays_behave_like_cupy_ones(cuda_emulator) -> None:  # noqa: F811
    cp = cuda_emulator
    h = np.arange(12, dtype=np.uint32)
    d = cp.asarray(h)
    assert isinstance(d, cp.ndarray) and not isinstance(h, cp.ndarray) and cp.asarray(d) is d
    assert isinstance(d.view(cp.uint64).reshape(-1, 2)[1:], cp.ndarray) and isinstance(d[np.array([1, 2])], cp.ndarray)
    assert isinstance(cp.cumsum(d, dtype=cp.uint32) - d, cp.ndarray)
    assert type(d.get()) is np.ndarray and type(cp.asnumpy(d)) is np.ndarray
    assert B.on_host(d) is not d and np.array_equal(B.on_host(d), h)
    assert d.__array_interface__["data"][0] % (16 if "address" in config.sanitize else 256) == 0
    with pytest.raises(TypeError, match="host numpy array"):
        d + h
    with pytest.raises(TypeError, match="cupy.ndarray"):
        cp.ascontiguousarray(h)
    assert (cp.empty(4, dtype=cp.uint8).get() == 0xA5).all()  # fresh device memory is garbage


def test_install_is_undone_with_the_monkeypatch() -> None:
    """The real `cupy` (or its absence) and the prover's device caches come back after a test."""
    import sys

    from prover.kernels import loader
    from tests.helpers.cudaemu.fixture import install

    before, cache = sys.modules.get("cupy"), loader._cache
    mp = pytest.MonkeyPatch()
    try:
        cp = install(mp)
        assert sys.modules["cupy"] is cp and loader._cache is not cache and loader._cache == {}
    finally:
        mp.undo()
    assert sys.modules.get("cupy") is before and loader._cache is cache


def test_no_gxx_means_a_clear_skip(monkeypatch) -> None:
    from tests.helpers.cudaemu.fixture import install

    monkeypatch.setenv("CUDAEMU_CXX", "/nonexistent/g++")
    with pytest.raises(pytest.skip.Exception, match="g\\+\\+ not installed"):
        install(monkeypatch)


def test_nvrtc_options_map_to_the_host_build(cuda_emulator) -> None:  # noqa: F811
    """The device's options are dropped, -D/-I/-std kept; an unknown one is an error, not ignored."""
    from tests.helpers.cudaemu.errors import CompileException

    cp = cuda_emulator
    code = 'extern "C" __global__ void k(int* o) { o[0] = VALUE; }'
    mod = _module(cp, code, ("--gpu-architecture=sm_90", "-std=c++17", "-DVALUE=42", "--use_fast_math"))
    o = cp.zeros(1, dtype=cp.int32)
    mod.get_function("k")((1,), (1,), (o,))
    assert int(o.get()[0]) == 42
    with pytest.raises(CompileException, match="--bogus"):
        _module(cp, code, ("--bogus",))
    with pytest.raises(CompileException, match="error"):
        _module(cp, code)  # VALUE undefined: g++'s message comes back
