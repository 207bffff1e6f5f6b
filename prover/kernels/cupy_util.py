"""CuPy plumbing shared by the kernels' host wrappers (ntt in ntt.py, msm.py): the lazy
CuPy import, stream contexts, launch grids, device rows of u32. Imports without CuPy."""
from __future__ import annotations

import contextlib

import numpy as np

_TPB = 256


def _cp():
    import cupy

    return cupy


def _stream_ctx(stream):
    return stream if stream is not None else contextlib.nullcontext()


def _grid(n: int, tpb: int = _TPB) -> tuple[int]:
    return (max(1, (n + tpb - 1) // tpb),)


def _as_u32_rows(x, words: int, stream, copy: bool):
    """numpy/cupy array with rows of `words` u32 (any dtype/shape of the same bytes) -> cupy (n, words) u32."""
    cp = _cp()
    with _stream_ctx(stream):
        if isinstance(x, cp.ndarray):
            arr = cp.ascontiguousarray(x)
            arr = arr.copy() if copy and arr is x else arr
        else:
            arr = cp.asarray(np.ascontiguousarray(x))
        return arr.view(cp.uint32).reshape(-1, words)
