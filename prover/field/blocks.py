"""The block pool of fr's large operations: numpy releases the GIL in its loops and blocks are
independent (same bytes), so blocks of CHUNK elements run on a thread pool (2^22+ set-ups took
minutes on one core). The pool is a process resource like numba's thread count: its size is
given once by whoever owns the run (`configure`, from KernelSettings.fr_threads), never read
from a global settings object; `configure(1)` turns it off.
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

CHUNK = 1 << 13  # elements per block of a large operation: temporaries stay cache-sized
PARALLEL_MIN = 16 * CHUNK  # below this the blocks run inline

_threads = min(32, os.cpu_count() or 1)
_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()
_in_worker = threading.local()


def configure(threads: int) -> None:
    """Size of the pool (>= 1; 1: blocks run inline). A changed size takes a fresh pool."""
    global _threads, _pool
    if threads < 1:
        raise ValueError(f"fr threads must be >= 1, got {threads}")
    with _lock:
        if threads != _threads and _pool is not None:
            _pool.shutdown(wait=False)
            _pool = None
        _threads = threads


def threads() -> int:
    return _threads


def executor() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(_threads, thread_name_prefix="fr-block",
                                       initializer=lambda: setattr(_in_worker, "active", True))
        return _pool


def for_blocks(size: int, body: Callable[[int], None]) -> None:
    """body(lo) for lo in range(0, size, CHUNK), on the pool when large (never nested)."""
    starts = range(0, size, CHUNK)
    if size >= PARALLEL_MIN and _threads > 1 and not getattr(_in_worker, "active", False):
        list(executor().map(body, starts))
    else:
        for lo in starts:
            body(lo)


def for_row_blocks(n: int, body: Callable[[int, int], None]) -> None:
    """body(lo, hi) over [0, n) in blocks of CHUNK rows, on the pool when large: for compiled
    nogil kernels that take a row range (setup's one-off products and scalars)."""
    for_blocks(n, lambda lo: body(lo, min(lo + CHUNK, n)))
