"""Device arrays: host memory behind a numpy.ndarray subclass, so that `isinstance(x, cupy.ndarray)`
tells device from host arrays as the wrappers expect (a plain numpy array is not one), and numpy's
own views, reshapes, fancy indexing and ufuncs keep giving device arrays.

What CuPy refuses, this refuses too, where a wrapper could get it wrong: ufuncs mixing device and
host arrays, ascontiguousarray/cumsum/nonzero of host arrays. Fresh allocations are 256-byte
aligned (as CuPy's pool) and `empty` is filled with a garbage byte (config.poison), as a GPU's
recycled memory is: a kernel that reads what nobody wrote gets wrong results here too.
"""
from __future__ import annotations

import math
import weakref
from typing import Any

import numpy as np

from tests.helpers.cudaemu.config import config
from tests.helpers.cudaemu.errors import OutOfMemoryError

_ALIGN = 256
_live = [0]  # bytes of live allocations made here (not of numpy's ufunc results)


class ndarray(np.ndarray):
    """cupy.ndarray. Its __module__ is CuPy's: prover.backend.on_host and CudaBackend.to_host
    recognise device arrays by type(x).__module__.startswith("cupy")."""

    __module__ = "cupy"

    def __new__(cls, shape: Any, dtype: Any = float, memptr: Any = None, strides: Any = None,
                order: str = "C") -> "ndarray":
        """cupy.ndarray(shape, dtype, memptr=...): an array over a pool block's memory (no copy);
        without memptr, a fresh allocation (as CuPy)."""
        if memptr is None:
            return _alloc(shape, dtype, config.poison)
        buf = memptr.mem.view(np.ndarray)
        return np.ndarray.__new__(cls, _shape(shape), dtype=dtype, buffer=buf, offset=memptr.off, strides=strides,
                                  order=order)

    def get(self, stream: Any = None, order: str = "C", out: np.ndarray | None = None,
            blocking: bool = True) -> np.ndarray:
        host = np.array(self.view(np.ndarray), order=order, copy=True)
        if out is not None:
            out[...] = host
            return out
        return host

    def set(self, arr: np.ndarray, stream: Any = None) -> None:
        if arr.shape != self.shape or arr.dtype != self.dtype:
            raise ValueError(f"set: shape/dtype mismatch ({arr.shape} {arr.dtype} into {self.shape} {self.dtype})")
        self.view(np.ndarray)[...] = arr

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, out: tuple | None = None, **kw: Any) -> Any:
        for x in inputs + (out or ()):
            if isinstance(x, np.ndarray) and not isinstance(x, ndarray):
                raise TypeError(f"{ufunc.__name__}: a host numpy array mixed with cupy arrays "
                                f"(CuPy: Unsupported type {type(x)}); upload it with cupy.asarray")
        args = [_host(x) for x in inputs]
        if out is not None:
            kw["out"] = tuple(_host(o) for o in out)
        result = getattr(ufunc, method)(*args, **kw)
        if out is not None:
            return out[0] if len(out) == 1 else out
        if isinstance(result, tuple):
            return tuple(_device(r) for r in result)
        return _device(result)


def _host(x: Any) -> Any:
    return x.view(np.ndarray) if isinstance(x, ndarray) else x


def _device(x: Any) -> Any:
    """numpy results as device arrays; CuPy's reductions give 0-d arrays, not scalars."""
    if isinstance(x, np.ndarray):
        return x.view(ndarray)
    if isinstance(x, np.generic):
        return np.asarray(x).view(ndarray)
    return x


def _require_device(fn: str, a: Any) -> ndarray:
    if not isinstance(a, ndarray):
        raise TypeError(f"cupy.{fn}: argument must be a cupy.ndarray, got {type(a).__module__}.{type(a).__name__}")
    return a


def _shape(shape: Any) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)


def _alloc(shape: Any, dtype: Any, fill: int | None) -> ndarray:
    shape, dtype = _shape(shape), np.dtype(dtype)
    nbytes = math.prod(shape) * dtype.itemsize
    if _live[0] + nbytes > config.memory_total:
        raise OutOfMemoryError(nbytes, _live[0], config.memory_total)
    if "address" in config.sanitize:
        # exactly the array's bytes (malloc's 16-byte alignment): AddressSanitizer's redzone
        # starts at its end, so a kernel's first byte out of bounds is reported
        raw = buf = np.empty(nbytes, dtype=np.uint8)
    else:
        raw = np.empty(nbytes + _ALIGN, dtype=np.uint8)
        off = -raw.__array_interface__["data"][0] % _ALIGN
        buf = raw[off:off + nbytes]
    if fill is not None:
        buf.fill(fill)
    _live[0] += nbytes
    weakref.finalize(raw, _freed, nbytes)
    return buf.view(dtype).reshape(shape).view(ndarray)


def _freed(nbytes: int) -> None:
    _live[0] -= nbytes


def used_bytes() -> int:
    return _live[0]


# ------------------------------------------------------------------------- cupy.* ----
def empty(shape: Any, dtype: Any = float, order: str = "C") -> ndarray:
    return _alloc(shape, dtype, config.poison)


def zeros(shape: Any, dtype: Any = float, order: str = "C") -> ndarray:
    return _alloc(shape, dtype, 0)


def empty_like(a: Any, dtype: Any = None, order: str = "K", subok: Any = None, shape: Any = None) -> ndarray:
    return empty(a.shape if shape is None else shape, a.dtype if dtype is None else dtype)


def zeros_like(a: Any, dtype: Any = None, order: str = "K", subok: Any = None, shape: Any = None) -> ndarray:
    return zeros(a.shape if shape is None else shape, a.dtype if dtype is None else dtype)


def array(obj: Any, dtype: Any = None, copy: bool = True, order: str = "K", subok: bool = False,
          ndmin: int = 0) -> ndarray:
    if isinstance(obj, ndarray) and not copy and (dtype is None or np.dtype(dtype) == obj.dtype):
        return obj
    host = np.array(_host(obj), dtype=dtype, ndmin=ndmin, order="C", copy=True)
    out = _alloc(host.shape, host.dtype, None)
    out.view(np.ndarray)[...] = host
    return out


def asarray(a: Any, dtype: Any = None, order: Any = None, *, blocking: bool = False) -> ndarray:
    """A device array: `a` itself if it is one already (of that dtype), else an upload."""
    if isinstance(a, ndarray):
        return a if dtype is None or np.dtype(dtype) == a.dtype else a.astype(dtype)
    return array(a, dtype=dtype, copy=True)


def ascontiguousarray(a: Any, dtype: Any = None) -> ndarray:
    a = _require_device("ascontiguousarray", a)
    if a.flags.c_contiguous and (dtype is None or np.dtype(dtype) == a.dtype):
        return a
    out = _alloc(a.shape, a.dtype if dtype is None else dtype, None)
    out.view(np.ndarray)[...] = a.view(np.ndarray)
    return out


def asnumpy(a: Any, stream: Any = None, order: str = "C", out: np.ndarray | None = None, *,
            blocking: bool = True) -> np.ndarray:
    if isinstance(a, ndarray):
        return a.get(stream, order=order, out=out)
    host = np.asarray(a, order=order)
    if out is not None:
        out[...] = host
        return out
    return host


def cumsum(a: Any, axis: int | None = None, dtype: Any = None, out: Any = None) -> ndarray:
    a = _require_device("cumsum", a)
    return _device(np.cumsum(a.view(np.ndarray), axis=axis, dtype=dtype, out=_host(out)))


def nonzero(a: Any) -> tuple[ndarray, ...]:
    a = _require_device("nonzero", a)
    return tuple(_device(x) for x in np.nonzero(a.view(np.ndarray)))


def get_array_module(*args: Any) -> Any:
    from tests.helpers.cudaemu import cupy  # the fake module, for code that picks numpy or cupy by its inputs

    return cupy if any(isinstance(a, ndarray) for a in args) else np
