"""cupy.cuda: one device (id 0, compute capability 9.0), streams, events, pinned memory. Every
launch runs to completion when it is called, so streams and events only keep CuPy's shapes
(context managers, the current stream per thread, record/synchronize, elapsed times)."""
from __future__ import annotations

import ctypes
import itertools
import threading
import time
from typing import Any, Callable

import numpy as np

from tests.helpers.cudaemu.arrays import used_bytes
from tests.helpers.cudaemu.config import config
from tests.helpers.cudaemu.errors import CUDARuntimeError

DEVICE_COUNT = 1
COMPUTE_CAPABILITY = "90"
_tls = threading.local()
_ptrs = itertools.count(0x1000, 0x10)


# ---------------------------------------------------------------------------- streams ----
class Stream:
    null: "Stream"

    def __init__(self, null: bool = False, non_blocking: bool = False, ptds: bool = False,
                 priority: int | None = None) -> None:
        self.ptr = 0 if null else next(_ptrs)
        self.non_blocking, self.priority = non_blocking, priority
        self.device_id = 0

    def __enter__(self) -> "Stream":
        _prev().append(get_current_stream())
        _tls.current = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _tls.current = _prev().pop()

    def use(self) -> "Stream":
        _tls.current = self
        return self

    def synchronize(self) -> None:
        pass  # every launch and copy has finished when its call returned

    @property
    def done(self) -> bool:
        return True

    def record(self, event: "Event | None" = None) -> "Event":
        event = event or Event()
        event.record(self)
        return event

    def wait_event(self, event: "Event") -> None:
        pass

    def add_callback(self, callback: Callable[..., Any], arg: Any) -> None:
        callback(self, None, arg)

    def launch_host_func(self, callback: Callable[[Any], Any], arg: Any) -> None:
        callback(arg)

    def __repr__(self) -> str:
        return f"<cudaemu Stream {self.ptr:#x}>"


Stream.null = Stream(null=True)


def _prev() -> list[Stream]:
    if not hasattr(_tls, "prev"):
        _tls.prev = []
    return _tls.prev


def get_current_stream(device_id: int | None = None) -> Stream:
    return getattr(_tls, "current", Stream.null)


class Event:
    def __init__(self, block: bool = False, disable_timing: bool = False, interprocess: bool = False) -> None:
        self.disable_timing = disable_timing
        self._t: float | None = None

    def record(self, stream: Stream | None = None) -> None:
        self._t = time.perf_counter()

    def synchronize(self) -> None:
        pass

    @property
    def done(self) -> bool:
        return True


def get_elapsed_time(start: Event, end: Event) -> float:
    """Milliseconds between two recorded events (the emulator's wall clock)."""
    if start._t is None or end._t is None:
        raise CUDARuntimeError("cudaErrorInvalidResourceHandle: an event was not recorded")
    return (end._t - start._t) * 1e3


# ----------------------------------------------------------------------------- device ----
class Device:
    def __init__(self, device: int | None = None) -> None:
        self.id = int(device) if device is not None else getattr(_tls, "device", 0)

    @property
    def compute_capability(self) -> str:
        return COMPUTE_CAPABILITY

    @property
    def mem_info(self) -> tuple[int, int]:
        return runtime.memGetInfo()

    def use(self) -> None:
        runtime.setDevice(self.id)

    def __enter__(self) -> "Device":
        self._prev = getattr(_tls, "device", 0)
        self.use()
        return self

    def __exit__(self, *exc: Any) -> None:
        _tls.device = self._prev

    def synchronize(self) -> None:
        pass

    def __int__(self) -> int:
        return self.id

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return self.id

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id} (cudaemu)>"


class _Runtime:
    """cupy.cuda.runtime's calls the prover makes."""

    CUDARuntimeError = CUDARuntimeError

    @staticmethod
    def getDeviceCount() -> int:
        return DEVICE_COUNT

    @staticmethod
    def getDevice() -> int:
        return getattr(_tls, "device", 0)

    @staticmethod
    def setDevice(device: int) -> None:
        if not 0 <= device < DEVICE_COUNT:
            raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        _tls.device = device

    @staticmethod
    def memGetInfo() -> tuple[int, int]:
        return max(0, config.memory_total - used_bytes()), config.memory_total

    @staticmethod
    def deviceSynchronize() -> None:
        pass

    @staticmethod
    def runtimeGetVersion() -> int:
        return 12040

    @staticmethod
    def driverGetVersion() -> int:
        return 12040

    @staticmethod
    def getDeviceProperties(device: int) -> dict[str, Any]:
        return {"name": b"cudaemu (CPU emulation)", "totalGlobalMem": config.memory_total, "major": 9, "minor": 0,
                "multiProcessorCount": 1, "maxThreadsPerBlock": 1024, "sharedMemPerBlock": 48 << 10,
                "sharedMemPerBlockOptin": 227 << 10, "warpSize": 32, "pciBusID": 0, "pciDeviceID": 0}


runtime = _Runtime()


# ------------------------------------------------------------------------ memory pools ----
class MemoryPointer:
    """A pool block (cupy.cuda.MemoryPointer): device memory (an emulator array of bytes) from
    `off`; `+ n` moves it, the async copies and memset run at once (streams are synchronous)."""

    def __init__(self, mem: Any, off: int = 0) -> None:
        self.mem, self.off = mem, int(off)

    @property
    def ptr(self) -> int:
        return int(self.mem.__array_interface__["data"][0]) + self.off

    def __add__(self, off: int) -> "MemoryPointer":
        return MemoryPointer(self.mem, self.off + int(off))

    def memset_async(self, value: int, size: int, stream: Any = None) -> None:
        self.mem.view(np.ndarray)[self.off:self.off + int(size)] = value

    def copy_from_host_async(self, mem: Any, size: int, stream: Any = None) -> None:
        if not 0 <= self.off + int(size) <= self.mem.nbytes:
            raise CUDARuntimeError("cudaErrorInvalidValue: a copy past the end of its allocation")
        ctypes.memmove(self.ptr, mem.value if isinstance(mem, ctypes.c_void_p) else int(mem), int(size))

    def copy_to_host_async(self, mem: Any, size: int, stream: Any = None) -> None:
        ctypes.memmove(mem.value if isinstance(mem, ctypes.c_void_p) else int(mem), self.ptr, int(size))


class MemoryPool:
    """cupy.cuda.MemoryPool / MemoryAsyncPool: blocks are device arrays of bytes (counted against
    config.memory_total: OutOfMemoryError past it), freed when nothing holds them."""

    def malloc(self, size: int) -> MemoryPointer:
        from tests.helpers.cudaemu.arrays import empty

        return MemoryPointer(empty(max(1, int(size)), np.uint8))

    def free_all_blocks(self, stream: Any = None) -> None:
        pass

    def used_bytes(self) -> int:
        return used_bytes()


MemoryAsyncPool = MemoryPool


# ------------------------------------------------------------------------ pinned memory ----
class PinnedMemoryPointer(bytearray):
    """alloc_pinned_memory's block: ordinary host memory that numpy can wrap (buffer=...)."""

    @property
    def ptr(self) -> int:
        return ctypes.addressof((ctypes.c_char * len(self)).from_buffer(self)) if len(self) else 0

    def size(self) -> int:
        return len(self)


def alloc_pinned_memory(size: int) -> PinnedMemoryPointer:
    return PinnedMemoryPointer(int(size))


def is_available() -> bool:
    return True
