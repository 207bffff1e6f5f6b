"""The fake `cupy` module object and its submodules (cupy.cuda, .runtime, .memory, .driver,
.compiler), assembled from arrays.py, cuda.py and kernels.py; fixture.py puts them in sys.modules."""
from __future__ import annotations

import types

import numpy as np

from tests.helpers.cudaemu import arrays, cuda, errors, kernels


def _module(name: str, doc: str, **attrs: object) -> types.ModuleType:
    m = types.ModuleType(name, doc)
    m.__dict__.update(attrs)
    return m


def make_modules() -> dict[str, types.ModuleType]:
    """{"cupy": ..., "cupy.cuda": ..., ...}: what sys.modules needs for `import cupy` and
    `from cupy.cuda import runtime` to find the emulator."""
    runtime = _module("cupy.cuda.runtime", "cudaemu: cupy.cuda.runtime",
                      **{k: getattr(cuda.runtime, k) for k in dir(cuda.runtime) if not k.startswith("_")})
    memory = _module("cupy.cuda.memory", "cudaemu: cupy.cuda.memory", OutOfMemoryError=errors.OutOfMemoryError)
    driver = _module("cupy.cuda.driver", "cudaemu: cupy.cuda.driver", CUDADriverError=errors.CUDADriverError)
    compiler = _module("cupy.cuda.compiler", "cudaemu: cupy.cuda.compiler", CompileException=errors.CompileException)
    cuda_mod = _module(
        "cupy.cuda", "cudaemu: cupy.cuda (one emulated device, synchronous streams)",
        Stream=cuda.Stream, Event=cuda.Event, Device=cuda.Device, get_current_stream=cuda.get_current_stream,
        get_elapsed_time=cuda.get_elapsed_time, alloc_pinned_memory=cuda.alloc_pinned_memory,
        MemoryPool=cuda.MemoryPool, MemoryAsyncPool=cuda.MemoryAsyncPool, MemoryPointer=cuda.MemoryPointer,
        PinnedMemoryPointer=cuda.PinnedMemoryPointer, is_available=cuda.is_available,
        runtime=runtime, memory=memory, driver=driver, compiler=compiler)
    dtypes = {name: getattr(np, name) for name in (
        "uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64", "float32", "float64", "bool_",
        "dtype")}
    cp = _module(
        "cupy", "cudaemu: a CPU emulation of the CuPy surface prover/kernels uses (tests/helpers/cudaemu)",
        __version__="13.0.0+cudaemu", ndarray=arrays.ndarray, cuda=cuda_mod,
        RawModule=kernels.RawModule, RawKernel=kernels.RawKernel, is_available=cuda.is_available,
        **{name: getattr(arrays, name) for name in (
            "empty", "zeros", "empty_like", "zeros_like", "array", "asarray", "ascontiguousarray", "asnumpy",
            "cumsum", "nonzero", "get_array_module")},
        **dtypes)
    # page-locked host memory is ordinary host memory here
    cupyx = _module("cupyx", "cudaemu: cupyx (empty_pinned)",
                    empty_pinned=lambda shape, dtype=float, order="C": np.empty(shape, dtype=dtype, order=order))
    cp.get_default_memory_pool = lambda: _POOL
    return {"cupy": cp, "cupy.cuda": cuda_mod, "cupy.cuda.runtime": runtime, "cupy.cuda.memory": memory,
            "cupy.cuda.driver": driver, "cupy.cuda.compiler": compiler, "cupyx": cupyx}


_POOL = cuda.MemoryPool()  # CuPy's default pool (freeing its cached blocks does nothing here)
