"""cudaemu: the CuPy surface of prover/kernels emulated on the CPU, so that the real CUDA kernels
(prover/kernels/cuda/*.cu) and their real host wrappers run in CI, checked against the reference.

    cupy = tests.helpers.cudaemu.cupy           # a module object; fixture.py installs it
    cupy.RawModule(code=..., options=...)        # g++ -E, a launcher per extern "C" __global__,
                                                 # g++ -shared, cached on disk (build.py)
    kernel(grid, block, args, shared_mem=...)    # every CUDA thread a fiber; blocks in turn

Files: arrays.py (cupy.ndarray and the array functions), cuda.py (cupy.cuda), kernels.py
(RawModule/RawKernel, argument checks), build.py (the compile), native/ (cudaemu.h: the device
dialect as host C++; runtime.cpp: the fiber scheduler), module.py (the fake modules), fixture.py
(the pytest fixture), config.py (schedule, sanitizers, memory size, cache; CUDAEMU_* defaults).

Emulated: __syncthreads (+ _count/_and/_or) with real interleaving, and an error when threads of a
block wait at different ones or can never meet (deadlock); static and dynamic __shared__; atomics
(exact: fibers switch only at barriers); __syncwarp, __shfl*_sync, __ballot_sync/__any_sync/
__all_sync across the fibers of a warp; integer intrinsics; CUDA's launch limits (block size,
grid, 48 KiB of dynamic shared memory unless max_dynamic_shared_size_bytes opts in); every array
argument's alignment for its pointee and contiguity; every scalar argument's exact type.

Finding more with it:
  CUDAEMU_SCHEDULE=reverse|shuffle (CUDAEMU_SEED)  other thread and block orders: a race-free
      kernel gives the same bytes under each (tests/unit/test_cuda_emulated.py runs two itself)
  CUDAEMU_SANITIZE=undefined      UBSan in the kernel libraries (reports on stderr)
  CUDAEMU_SANITIZE=address        ASan, device arrays at their exact size; preload the runtime:
      ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD=$(g++ -print-file-name=libasan.so) python -m pytest ...
  config.memory_total             a small device, for out-of-memory paths
  config.launches                 the kernels a code path launched
  the cache entry (config.cache_dir, CUDAEMU_CACHE)  kernel.cu and generated.cpp: what g++ built

Not emulated (say so when a change depends on one):
  - __CUDA_ARCH__ code: PTX asm (field.cuh's FIELD_PTX / eo / eo_sq device products) never runs;
    every build takes the portable C++ products. A PTX change is checked on the GPU only.
  - concurrency: threads interleave only at barriers and warp collectives. A race that needs two
    threads between two barriers at once shows only as a schedule dependence (run with
    CUDAEMU_SCHEDULE=reverse or shuffle: a race-free kernel gives the same bytes).
  - implicit warp-synchronous code (lanes assumed in lockstep without __syncwarp), __activemask's
    convergence (here: the lanes not exited), independent thread scheduling.
  - memory errors: an out-of-bounds access reads or corrupts host memory or kills the process
    (no CUDA_ERROR_ILLEGAL_ADDRESS) unless run under CUDAEMU_SANITIZE=address; registers,
    occupancy and "too many resources" launch failures.
  - threads that exit before a __syncthreads the others reach are not counted there (as on
    current GPUs) and not reported.
  - timing: streams are synchronous, events time the emulator's wall clock.
  - static __shared__ variables start zeroed and keep values between blocks (the dynamic buffer
    is refilled with a garbage byte for every block); __constant__/__device__ globals cannot be
    written from the host (no RawModule.get_global).
  - NumPy functions on device arrays work as on host arrays (CuPy would dispatch or refuse);
    np.asarray(device array) and host[...] = device work here where CuPy raises.
  - C++-linkage kernels (name_expressions), cubins (RawModule(path=)), cooperative launches,
    struct arguments by value, texture/surface objects.
"""
from __future__ import annotations

from tests.helpers.cudaemu.build import gxx
from tests.helpers.cudaemu.config import config
from tests.helpers.cudaemu.errors import KernelError
from tests.helpers.cudaemu.module import make_modules

MODULES = make_modules()
cupy = MODULES["cupy"]


def available() -> bool:
    """Whether kernels can be built here (g++ on PATH, or CUDAEMU_CXX)."""
    return gxx() is not None


__all__ = ["KernelError", "MODULES", "available", "config", "cupy"]
