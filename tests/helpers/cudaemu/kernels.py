"""cupy.RawModule / cupy.RawKernel over the host-compiled kernels (build.py): CuPy's call
convention `kernel(grid, block, args, shared_mem=0, stream=None)`, its launch checks (block and
grid limits, the 48 KiB dynamic shared memory default), and stricter argument checks than CuPy's:
every argument must have the kernel parameter's own type (CuPy copies a scalar's bytes whatever
the parameter is, so a wrong width silently shifts every later argument on the GPU)."""
from __future__ import annotations

import ctypes
import threading
from typing import Any, Sequence

import numpy as np

from tests.helpers.cudaemu import build as _build
from tests.helpers.cudaemu.arrays import ndarray
from tests.helpers.cudaemu.config import config
from tests.helpers.cudaemu.errors import CUDADriverError, KernelError

# One launch at a time in the process: a library's scheduler and index variables are globals,
# and ctypes releases the GIL during the call.
_launch_lock = threading.Lock()
_libraries: dict[str, ctypes.CDLL] = {}

DEFAULT_DYNAMIC_SHARED = 48 << 10  # without the opt-in attribute, as on the GPU
MAX_DYNAMIC_SHARED = 227 << 10     # the opt-in ceiling of an sm_90 block
_KINDS = {0: "struct", 1: "pointer", 2: "signed", 3: "unsigned", 4: "float", 5: "bool"}


def _library(built: _build.Built) -> ctypes.CDLL:
    key = str(built.library)
    lib = _libraries.get(key)
    if lib is None:
        lib = _libraries[key] = ctypes.CDLL(key)
    return lib


class RawModule:
    """cupy.RawModule(code=..., options=..., backend="nvrtc"): compiled by g++ for the host."""

    def __init__(self, code: str | None = None, *, path: str | None = None, options: Sequence[str] = (),
                 backend: str = "nvrtc", translate_cucomplex: bool = False, enable_cooperative_groups: bool = False,
                 name_expressions: Sequence[str] | None = None, log_stream: Any = None, jitify: bool = False) -> None:
        if path is not None:
            raise NotImplementedError("RawModule(path=...) (a cubin) cannot run on the CPU emulator")
        if name_expressions:
            raise NotImplementedError("name_expressions (C++-linkage kernels) are not emulated; use extern \"C\"")
        if enable_cooperative_groups:
            raise NotImplementedError("cooperative launches are not emulated")
        if backend not in ("nvrtc", "nvcc"):
            raise ValueError(f"backend {backend!r}")
        self.code, self.options, self.backend = code or "", tuple(options), backend
        self._built: _build.Built | None = None

    def compile(self, log_stream: Any = None) -> None:
        if self._built is None:
            self._built = _build.build(self.code, self.options)
            _library(self._built)

    def get_function(self, name: str) -> "RawKernel":
        self.compile()
        assert self._built is not None
        if name not in self._built.kernels:
            raise CUDADriverError(f"CUDA_ERROR_NOT_FOUND: named symbol not found: {name!r} (the emulator finds "
                                  f'kernels defined as extern "C" __global__ void {name}(...); it has '
                                  f"{sorted(self._built.kernels)})")
        return RawKernel._bound(self._built, name)

    def get_global(self, name: str) -> Any:
        raise NotImplementedError("module globals (__constant__/__device__ variables) are not emulated")


class RawKernel:
    """One kernel; cupy.RawKernel(code, name, options) builds its own module."""

    def __init__(self, code: str, name: str, options: Sequence[str] = (), backend: str = "nvrtc", **kw: Any) -> None:
        mod = RawModule(code=code, options=options, backend=backend, **kw)
        other = mod.get_function(name)
        self.__dict__.update(other.__dict__)

    @classmethod
    def _bound(cls, built: _build.Built, name: str) -> "RawKernel":
        self = cls.__new__(cls)
        self.name = name
        self.params = built.kernels[name]
        lib = _library(built)
        self._launch = getattr(lib, f"cudaemu_launch__{name}")
        self._launch.restype = ctypes.c_int
        self._launch.argtypes = [ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint), ctypes.c_ulonglong,
                                 ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_ulonglong,
                                 ctypes.POINTER(ctypes.c_char_p)]
        sig = getattr(lib, f"cudaemu_signature__{name}")
        kinds, sizes = (ctypes.c_int * 64)(), (ctypes.c_int * 64)()
        n = sig(kinds, sizes, 64)
        self.signature = tuple((kinds[i], sizes[i]) for i in range(n))
        self.max_dynamic_shared_size_bytes = DEFAULT_DYNAMIC_SHARED
        self.max_threads_per_block = 1024
        return self

    # ------------------------------------------------------------------------------------
    def __call__(self, grid: tuple, block: tuple, args: Sequence[Any], shared_mem: int = 0, stream: Any = None,
                 enable_cooperative_groups: bool = False) -> None:
        if not isinstance(grid, tuple) or not isinstance(block, tuple):
            # CuPy's signature types both as tuple: an int raises there too
            raise TypeError(f"{self.name}: grid and block must be tuples, got {type(grid).__name__}, "
                            f"{type(block).__name__}")
        g = tuple(max(1, int(x)) for x in (grid + (1, 1))[:3])  # CuPy launches at least one of each
        b = tuple(max(1, int(x)) for x in (block + (1, 1))[:3])
        self._check_launch(g, b, int(shared_mem))
        bufs = [self._arg(i, a) for i, a in enumerate(self._args(args))]
        ptrs = (ctypes.c_void_p * max(1, len(bufs)))(*[ctypes.addressof(x) for x in bufs])
        err = ctypes.c_char_p()
        with _launch_lock:
            rc = self._launch((ctypes.c_uint * 3)(*g), (ctypes.c_uint * 3)(*b), int(shared_mem), ptrs,
                              config.order(), config.seed, ctypes.byref(err))
        config.launches[self.name] += 1
        if rc != 0:
            raise KernelError(f"{self.name}<<<{g}, {b}, {shared_mem}>>>: {(err.value or b'?').decode()}")

    def _check_launch(self, g: tuple[int, ...], b: tuple[int, ...], shared_mem: int) -> None:
        why = None
        if b[0] > 1024 or b[1] > 1024 or b[2] > 64 or b[0] * b[1] * b[2] > self.max_threads_per_block:
            why = f"block {b}: at most 1024 threads (z <= 64)"
        elif g[0] >= 1 << 31 or g[1] > 65535 or g[2] > 65535:
            why = f"grid {g}: x < 2^31, y and z <= 65535"
        elif shared_mem > min(self.max_dynamic_shared_size_bytes, MAX_DYNAMIC_SHARED):
            why = (f"{shared_mem} bytes of dynamic shared memory; the kernel allows "
                   f"{self.max_dynamic_shared_size_bytes} (max_dynamic_shared_size_bytes opts in up to "
                   f"{MAX_DYNAMIC_SHARED})")
        if why:
            raise CUDADriverError(f"CUDA_ERROR_INVALID_VALUE: invalid argument ({self.name}: {why})")

    def _args(self, args: Sequence[Any]) -> Sequence[Any]:
        if len(args) != len(self.signature):
            raise TypeError(f"{self.name} takes {len(self.signature)} arguments ({', '.join(self.params)}), "
                            f"got {len(args)}")
        return args

    def _describe(self, i: int) -> str:
        return f"{self.name} argument {i} ({self.params[i] if i < len(self.params) else '?'})"

    def _arg(self, i: int, value: Any) -> ctypes.Array:
        kind, size = self.signature[i]
        if kind == 1:  # pointer: a device array's data, aligned as the pointee needs (a GPU faults otherwise)
            if value is None:
                return (ctypes.c_char * 8)()
            if isinstance(value, ndarray):
                if not value.flags.c_contiguous:
                    # CuPy passes the bare data pointer: the kernel would index a strided view as dense
                    raise TypeError(f"{self._describe(i)}: a non-contiguous view {value.shape} strides "
                                    f"{value.strides}; the kernel gets only its data pointer (cupy.ascontiguousarray it)")
                ptr = value.__array_interface__["data"][0]
                if ptr % size:
                    raise CUDADriverError(f"CUDA_ERROR_MISALIGNED_ADDRESS: {self._describe(i)}: the data at 0x{ptr:x} "
                                          f"is not {size}-byte aligned")
                return (ctypes.c_char * 8).from_buffer_copy(ctypes.c_void_p(ptr))
            if isinstance(value, np.ndarray):
                raise TypeError(f"{self._describe(i)}: a host numpy array; CuPy refuses it "
                                "(upload it with cupy.asarray)")
            raise TypeError(f"{self._describe(i)}: a pointer parameter takes a cupy array, got {type(value).__name__}")
        if kind == 0:
            raise TypeError(f"{self._describe(i)}: struct parameters by value are not emulated")
        want = np.dtype({2: "i", 3: "u", 4: "f", 5: "?"}[kind] + (str(size) if kind != 5 else ""))
        got = value
        if not isinstance(got, np.generic):
            if isinstance(got, (bool, int)):  # CuPy's rule: a Python int (or bool) travels as int64
                got = np.int64(got)
            elif isinstance(got, float):
                got = np.float64(got)
            else:
                raise TypeError(f"{self._describe(i)}: a {want} scalar parameter, got {type(value).__name__}")
        if got.dtype != want:
            how = " (a Python number, which CuPy passes as a 64-bit value)" if not isinstance(value, np.generic) else ""
            raise TypeError(f"{self._describe(i)}: the parameter is {want} ({_KINDS[kind]}, {size} bytes), "
                            f"the argument is {got.dtype}{how}; pass np.{want.name}(...)")
        return (ctypes.c_char * got.nbytes).from_buffer_copy(got.tobytes())
