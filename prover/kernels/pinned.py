"""Page-locked host copies in size classes, so that CuPy's pinned pool reuses them.

CuPy's PinnedMemoryPool keeps every freed block and hands it out again only for a request
of the same size (rounded to 512 B). prep_msm's arrays change length from partition to
partition (each witness has its own density), so pinning them at their exact size made
every partition's blocks new and left every freed one in the pool: page-locked memory grew
with each partition proved (by the pool's rules; prep's copies are ~75 MB a partition at 2^22). Rounded up to a size class (at most
1/8 over), the next partition of about the same shape takes a freed block back, and the pool
holds a bounded set.
"""
from __future__ import annotations

from typing import Any

import numpy as np

MIN_CLASS = 4096


def size_class(nbytes: int) -> int:
    """The smallest m * 2^k >= nbytes with 8 <= m < 16: eight classes an octave."""
    if nbytes <= MIN_CLASS:
        return MIN_CLASS
    step = 1 << (nbytes.bit_length() - 4)
    return -(-nbytes // step) * step


def pinned_copy(x: Any) -> np.ndarray:
    """`x` copied into page-locked memory from CuPy's pinned pool, in its size class. The
    block goes back to the pool when the returned array (which holds it) is freed."""
    import cupy as cp

    a = np.ascontiguousarray(x)
    mem = cp.cuda.alloc_pinned_memory(size_class(a.nbytes))
    out = np.ndarray(a.shape, dtype=a.dtype, buffer=mem)
    out[...] = a
    return out
