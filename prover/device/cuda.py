"""CudaDevice: one real GPU through CuPy (imported lazily) and pynvml (optional).

- a CuPy stream per worker; buffers come from `cupy.cuda.MemoryAsyncPool` (stream-ordered,
  cudaMallocAsync) when the driver supports it, else CuPy's default `MemoryPool`;
- the VRAM budget is enforced by BaseDevice.alloc before any real allocation, so a 24 GiB card
  can be emulated on a 141 GiB H200 (an Oom event when a request would exceed it);
- `device_sync` is a real cudaDeviceSynchronize; `pool_trim` is the pool's free_all_blocks
  (cudaMemPoolTrimTo / cudaFree), both device-global, as in the seed;
- allocations and uploads are real (the proved-size a, b, c arrays are copied into the
  modelled-size d_a / d_bc buffers, and the whole buffers are touched with a memset); with
  the CUDA kernels loaded, NTT-H reads them there (`staged_views`) and works in place;
- compute phases run the CPU reference (impl "cpu-reference") unless prover.kernels provides
  GPU phases; so that the GPU really is busy for the modelled kernel time (and a device sync
  really waits for other workers' work), each kernel is paced by a one-thread spin kernel on
  the worker's stream lasting the rest of the modelled time x time_scale;
- pynvml gives name, memory and utilisation; without NVML those fall back to CUDA runtime
  figures and the modelled utilisation (GpuInfo.nvml=False).
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any, Callable

from prover import events as ev
from prover.device.base import BaseDevice, Buffer, DeviceError, Emit, Kernel, OomError, Put, Stream
from prover.device.ledger import Ledger
from prover.device.profiles import Profile

_SPIN_SRC = r"""
extern "C" __global__ void c2tui_spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
}
"""


def available() -> tuple[bool, str]:
    """(True, "") when CuPy imports and sees at least one CUDA device."""
    try:
        import cupy
    except Exception as exc:  # ImportError, or a broken CUDA install
        return False, f"CuPy is not importable ({type(exc).__name__}: {exc})"
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return False, f"CUDA runtime error ({exc})"
    if n < 1:
        return False, "no CUDA device visible"
    return True, ""


class _Nvml:
    def __init__(self, pci_bus_id: str | None, index: int) -> None:
        import pynvml  # nvidia-ml-py

        self.m = pynvml
        pynvml.nvmlInit()
        try:
            self.h = pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id) if pci_bus_id else None
        except Exception:
            self.h = None
        if self.h is None:
            self.h = pynvml.nvmlDeviceGetHandleByIndex(index)

    def name(self) -> str:
        n = self.m.nvmlDeviceGetName(self.h)
        return n.decode() if isinstance(n, bytes) else str(n)

    def memory(self) -> tuple[int, int]:
        info = self.m.nvmlDeviceGetMemoryInfo(self.h)
        return int(info.used), int(info.total)

    def util(self) -> float:
        return self.m.nvmlDeviceGetUtilizationRates(self.h).gpu / 100.0

    def health(self) -> dict[str, Any]:
        from prover.health import gpu

        return gpu.read(self.m, self.h, os.getpid())


class CudaDevice(BaseDevice):
    simulated = False
    impl_label = "cpu-reference"

    def __init__(self, index: int, profile: Profile, budget: int | Ledger, emit: Emit, stop: threading.Event,
                 time_scale: float = 1.0, clock: Callable[[], float] = time.monotonic, nvml: bool = True,
                 async_pool: bool = True, device_id: int | None = None, pinned_host: bool = True) -> None:
        super().__init__(index, budget, emit, stop, time_scale, clock)
        self.pinned_host = pinned_host  # the run's kernels.pinned_host, given when built
        import cupy as cp

        self.cp = cp
        self.profile = profile
        self.device_id = index if device_id is None else device_id
        self.dev = cp.cuda.Device(self.device_id)
        with self.dev:
            props = cp.cuda.runtime.getDeviceProperties(self.device_id)
            self.clock_khz = int(props.get("clockRate", 0) or 0) or 1_500_000
            name = props.get("name", b"CUDA device")
            self.name = name.decode() if isinstance(name, bytes) else str(name)
            if self.device_id != index:
                self.name += f" (cuda:{self.device_id})"
            free, total = cp.cuda.runtime.memGetInfo()
            self._memory = int(total)
            self.pool_kind = "default"
            self.mempool: Any
            if async_pool:
                try:
                    self.mempool = cp.cuda.MemoryAsyncPool()
                    self.pool_kind = "async"
                except Exception:
                    self.mempool = cp.cuda.MemoryPool()
            else:
                self.mempool = cp.cuda.MemoryPool()
            self._spin = cp.RawKernel(_SPIN_SRC, "c2tui_spin")
            self.clock_khz = self._calibrate()
        self._host_bufs: dict[str, tuple[Any, ...]] = {}  # worker -> page-locked a, b, c (host_out)
        self._zpack_bufs: dict[str, tuple[Any, ...]] = {}  # worker -> page-locked z's upload form (host_zpack)
        self._pinned_ptrs: set[tuple[int, int]] = set()  # (address, bytes) of the page-locked arrays handed out
        self._host_lock = threading.Lock()
        self._nvml: _Nvml | None = None
        self.nvml_error = ""
        if nvml:
            try:
                self._nvml = _Nvml(getattr(self.dev, "pci_bus_id", None), self.device_id)
                self.name = self._nvml.name() + (f" (cuda:{self.device_id})" if self.device_id != index else "")
                self.nvml = True
            except Exception as exc:
                self.nvml_error = f"{type(exc).__name__}: {exc}"
        else:
            self.nvml_error = "NVML disabled (faults.nvml_missing)"

    @property
    def total_bytes(self) -> int:
        """The card's memory (the CUDA runtime's word at open)."""
        return self._memory

    def card(self) -> int | None:
        return self._memory

    def _calibrate(self) -> int:
        """Measure the SM clock64 rate with a timed spin (cudaDeviceProp.clockRate is gone
        in CUDA 13 and boost clocks differ from it anyway)."""
        cp = self.cp
        try:
            self._spin((1,), (1,), (cp.int64(1_000_000),))  # compile + warm up
            cp.cuda.runtime.deviceSynchronize()
            cycles = 100_000_000
            a, b = cp.cuda.Event(), cp.cuda.Event()
            a.record()
            self._spin((1,), (1,), (cp.int64(cycles),))
            b.record()
            b.synchronize()
            ms = cp.cuda.get_elapsed_time(a, b)
            if ms > 0:
                return max(100_000, int(cycles / ms))  # cycles per ms = kHz
        except Exception:
            pass
        return self.clock_khz

    # --- streams ------------------------------------------------------------------------
    def _new_stream(self, worker: str) -> Stream:
        with self.dev:
            return Stream(name=worker, handle=self.cp.cuda.Stream(non_blocking=True))

    def _pace(self, stream: Stream, seconds: float) -> None:
        if seconds <= 0:
            return
        cycles = int(seconds * self.clock_khz * 1000)
        with self.dev, stream.handle:
            self._spin((1,), (1,), (self.cp.int64(cycles),))

    def _record(self, stream: Stream, label: str, t_start: float, wall_s: float, result: Any = None) -> Kernel:
        with self.dev:
            e = self.cp.cuda.Event(block=True, disable_timing=True)
            e.record(stream.handle)
        k = self._queue(stream, label, wall_s, result)  # bookkeeping for util/modelled end
        k.handle = e
        return k

    def launch(self, stream: Stream, label: str, modelled_s: float, fn: Callable[[], Any] | None) -> Kernel:
        t0 = self.clock()
        if fn is not None:  # CPU reference, or GPU phases launched on this worker's stream
            with self.dev, stream.handle:
                result = fn()
        else:
            result = None
        spent = self.clock() - t0
        pad = max(0.0, self.wall(modelled_s) - spent)
        try:
            self._pace(stream, pad)
        except Exception as exc:
            raise DeviceError(f"CUDA error launching {label}: {exc}") from exc
        return self._record(stream, label, t0, pad, result)

    def upload(self, stream: Stream, puts: list[Put], modelled_s: float) -> Kernel:
        """The buffers touched (a memset), then each host array copied into its buffer at its
        offset, queued on the worker's stream: from page-locked memory (host_out, host_zpack)
        a DMA the host does not wait for here (`wait` on the returned kernel does); from
        pageable memory the stream is synchronised before this returns (the array must stay
        alive until it is copied)."""
        t0 = self.clock()
        try:
            with self.dev, stream.handle:
                for buf in {id(b): b for b, _, _ in puts}.values():
                    buf.handle.memset_async(0, buf.nbytes, stream.handle)
                import ctypes

                import numpy as np

                keep = []
                for buf, off, arr in puts:
                    a = np.ascontiguousarray(arr)
                    n = min(a.nbytes, buf.nbytes - off)
                    if n > 0:
                        (buf.handle + off).copy_from_host_async(a.ctypes.data_as(ctypes.c_void_p), n, stream.handle)
                    if not self._pinned(a):
                        keep.append(a)
                if keep:
                    stream.handle.synchronize()  # pageable host memory: keep it alive until copied
        except Exception as exc:
            raise DeviceError(f"CUDA error in upload: {exc}") from exc
        spent = self.clock() - t0
        pad = max(0.0, self.wall(modelled_s) - spent)
        self._pace(stream, pad)
        return self._record(stream, "upload", t0, pad)

    def staged_views(self, bufs: list[Buffer], rows: int | None) -> tuple[Any, ...] | None:
        """CuPy (rows, 4) uint64 arrays over a (d_a + 0), b (d_bc + 0) and c (d_bc + nbytes/2),
        where the upload or the R1CS kernel put them; None when there are no such buffers or
        `rows` rows would not fit whole."""
        by = {b.name: b for b in bufs}
        d_a, d_bc = by.get("d_a"), by.get("d_bc")
        if rows is None or rows <= 0 or d_a is None or d_bc is None or d_a.handle is None or d_bc.handle is None:
            return None
        half, need = d_bc.nbytes // 2, rows * 32
        if need > d_a.nbytes or need > half:
            return None
        return tuple(self.view(buf, (rows, 4), self.cp.uint64, off) for buf, off in ((d_a, 0), (d_bc, 0), (d_bc, half)))

    def view(self, buf: Buffer, shape: tuple[int, ...], dtype: Any, offset: int = 0) -> Any:
        """A CuPy array over `buf`'s memory from byte `offset` (no copy)."""
        if buf.handle is None:
            return None
        return self.cp.ndarray(shape, dtype=dtype, memptr=buf.handle + offset)

    # --- host side -------------------------------------------------------------------------
    def host_out(self, worker: str, rows: int) -> tuple[Any, Any, Any] | None:
        """Page-locked a, b, c for `worker` (kernels.pinned_host): the pre-stage upload from
        them is a DMA at the link's speed, where a pageable copy is staged by the driver on a
        CPU core (~6 GB/s, 60 ms for 2^22's 384 MiB on the H200) and runs beside the compute
        section. A worker proves one partition at a time, so its set is free again when its
        next synthesis starts. None when off or when the host cannot pin that much."""
        if not self.pinned_host or rows <= 0:
            return None
        with self._host_lock:
            bufs = self._host_bufs.get(worker)
            if bufs is None or (bufs and bufs[0].shape[0] != rows):
                bufs = self._pin(rows)
                self._host_bufs[worker] = bufs
        return bufs or None

    def _pin(self, rows: int) -> tuple[Any, ...]:
        import numpy as np

        return self._pinned_set(((rows, 4), np.uint64, "a, b, c", 3))

    def host_zpack(self, worker: str, num_vars: int, capacity: int) -> tuple[Any, Any] | None:
        """Page-locked arrays for `worker`'s z's upload form (abc gpu, kernels.pinned_host): its table
        and its field values (prover/host/zpack.py); the pre-stage's upload of them is a DMA queued
        on the worker's stream; reused partition after partition (a smaller class writes their
        first rows). None when off or the host cannot pin that much. z and its classes stay
        pageable: only the host reads them (prep_msm)."""
        import numpy as np

        from prover.host import zpack

        if not self.pinned_host or num_vars <= 0:
            return None
        with self._host_lock:
            got = self._zpack_bufs.get(worker)
            shape = (zpack.words(num_vars), zpack.TAB_COLS)
            if got is None or (got and got[0].shape != shape):
                tab = self._pinned_set((shape, np.uint32, "z's upload form", 1))
                vals = self._pinned_set(((max(1, capacity), 4), np.uint64, "z's field values", 1)) if tab else ()
                got = self._zpack_bufs[worker] = (tab[0], vals[0]) if tab and vals else ()
        return (got[0], got[1]) if got else None

    def _pinned_set(self, spec: tuple[tuple[int, ...], Any, str, int]) -> tuple[Any, ...]:
        """`count` page-locked arrays of `shape`, remembered (an upload from them need not wait);
        () where the host cannot pin them (said once a worker: uploads from pageable memory)."""
        import numpy as np

        shape, dtype, what, count = spec
        try:
            import cupyx

            with self.dev:
                arrs = tuple(cupyx.empty_pinned(shape, dtype=dtype) for _ in range(count))
        except Exception as exc:  # out of lockable memory: pageable it is, said once
            nbytes = count * int(np.prod(shape)) * np.dtype(dtype).itemsize
            self.emit(ev.Note, level="warn", text=f"gpu{self.index}: cannot pin {nbytes >> 20} MiB of host "
                      f"memory for a worker's {what} ({type(exc).__name__}: {exc}); uploads from pageable memory")
            return ()
        self._pinned_ptrs.update((int(a.ctypes.data), int(a.nbytes)) for a in arrs)
        return arrs

    def _pinned(self, a: Any) -> bool:
        """Whether host array `a` lies in page-locked memory this device handed out."""
        p = int(a.ctypes.data)
        with self._host_lock:
            ptrs = tuple(self._pinned_ptrs)
        return any(base <= p and p + a.nbytes <= base + n for base, n in ptrs)

    def wait(self, k: Kernel) -> None:
        e = k.handle
        if e is None:
            return super().wait(k)
        while not e.done:  # poll so a stop request is seen; the work itself always completes
            if self.stop_event.wait(0.0005):
                break
        e.synchronize()  # even when stopping: buffers are freed only after their work

    def device_sync(self) -> None:
        with self.dev:
            self.cp.cuda.runtime.deviceSynchronize()

    def pool_trim(self) -> None:
        with self.dev:
            self.cp.cuda.runtime.deviceSynchronize()
            self.mempool.free_all_blocks()
        with self.ledger.lock:
            self.reserved = self.ledger.book.used
        self.sample()

    # --- memory (real) ------------------------------------------------------------------
    def _device_alloc(self, buf: Buffer, stream: Stream) -> None:
        try:
            self._malloc(buf, stream)
        except self.cp.cuda.memory.OutOfMemoryError:
            # The budget had room but the card did not (a resident key, MSM scratch, the pools'
            # cached blocks, another process): give the cached blocks back and try once more,
            # then refuse as an OOM the section's catcher retries or fails, never a bare error
            # (2^24 on the H200, 12 workers, budget `card`: 4 partitions failed this way).
            self._trim_caches()
            try:
                self._malloc(buf, stream)
            except self.cp.cuda.memory.OutOfMemoryError as exc:
                free, _ = self._mem_info()
                raise OomError(buf.nbytes, free, f"on the device, not under the budget: {exc}", self.ledger.book.held(),
                               self.index, buf.owner, buf.part, "device") from exc
        except self.cp.cuda.runtime.CUDARuntimeError as exc:  # cudaMallocAsync may report OOM this way
            raise DeviceError(f"CUDA error allocating {buf.name} ({buf.nbytes >> 20} MiB): {exc}") from exc

    def _malloc(self, buf: Buffer, stream: Stream) -> None:
        with self.dev, stream.handle:
            buf.handle = self.mempool.malloc(buf.nbytes)

    def _trim_caches(self) -> None:
        """Free the blocks our pool and CuPy's default pools hold unused (stream-ordered: in use stays)."""
        with self.dev:
            self.mempool.free_all_blocks()
            self.cp.get_default_memory_pool().free_all_blocks()

    def _mem_info(self) -> tuple[int, int]:
        with self.dev:
            return self.cp.cuda.runtime.memGetInfo()

    def _device_free(self, buf: Buffer, stream: Stream) -> None:
        with self.dev, stream.handle:  # stream-ordered free on the owner's stream (async pool)
            buf.handle = None

    # --- samples ------------------------------------------------------------------------------
    def device_memory(self) -> tuple[int | None, int | None]:
        if self._nvml is not None:
            try:
                return self._nvml.memory()
            except Exception:
                return None, None
        try:
            with self.dev:
                free, total = self.cp.cuda.runtime.memGetInfo()
            return int(total - free), int(total)
        except Exception:
            return None, None

    def util(self, window: float = 0.5) -> float:
        if self._nvml is not None:
            try:
                return self._nvml.util()
            except Exception:
                pass
        return super().util(window)

    def health(self) -> dict[str, Any] | None:
        """NVML's temperature, power, clocks, throttle reasons, PCIe and processes (None without NVML)."""
        return self._nvml.health() if self._nvml is not None else None

    def close(self) -> None:
        with self._host_lock:
            self._host_bufs.clear()  # their pages go back to CuPy's pinned pool
            self._zpack_bufs.clear()
            self._pinned_ptrs.clear()
        try:
            with self.dev:
                self.cp.cuda.runtime.deviceSynchronize()
                self.mempool.free_all_blocks()
        except Exception:
            pass
