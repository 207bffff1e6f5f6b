"""The exception types CuPy raises where the wrappers may catch them, and the emulator's own."""
from __future__ import annotations


class CUDARuntimeError(RuntimeError):
    """cupy.cuda.runtime.CUDARuntimeError."""


class CUDADriverError(RuntimeError):
    """cupy.cuda.driver.CUDADriverError: what a bad launch (grid, block, shared memory) raises."""


class OutOfMemoryError(MemoryError):
    """cupy.cuda.memory.OutOfMemoryError(size, total, limit)."""

    def __init__(self, size: int, total: int, limit: int = 0) -> None:
        super().__init__(f"Out of memory allocating {size:,} bytes (allocated so far: {total:,} bytes"
                         + (f", limit set to: {limit:,} bytes" if limit else "") + ").")
        self.size, self.total, self.limit = size, total, limit


class CompileException(Exception):
    """cupy.cuda.compiler.CompileException: the source did not compile (here: with g++)."""


class KernelError(RuntimeError):
    """The emulator stopped a launch: a deadlock, a divergent __syncthreads, a bad warp mask, a
    trap. Names the kernel; on a GPU these hang, corrupt or fail the launch."""
