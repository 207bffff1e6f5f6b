"""The Device protocol and the bookkeeping shared by SimDevice and CudaDevice.

A device owns one GPU's (real or emulated) memory pool under a VRAM *budget*, the worker
streams, and the device-global calls whose semantics are the subject of the seed:

- `device_sync()` waits for every piece of work queued on any stream of this device at the
  time of the call (other workers' kernels included), like cudaDeviceSynchronize;
- `pool_trim()` hands cached pool memory back to the device; it needs an idle device, so it
  first waits like device_sync (cudaMemPoolTrimTo / cudaFree behaviour measured in the seed);
- `alloc()` counts every allocation against the device's *ledger* (prover/device/ledger.py:
  on an engine, the GPU's room, prover/pipeline/gpu/room.py) and refuses (OomError) whenever
  live and earmarked bytes would exceed the budget in force, so "live bytes <= budget" holds by
  construction; it asks the ledger why (the OOM's cause); whoever catches it emits the Oom,
  saying what came of it (retried or failed: prover/pipeline/partition.py,
  disciplines/two_lock.py);
- `free()` returns bytes to the pool stream-ordered and hands them back to the ledger, which
  wakes whoever waits for room.

The device keeps no budget of its own: `budget` reads the ledger's, and only the room changes it.

Time: every duration handed to a device is *modelled* seconds; the device multiplies by the
run's time_scale. Sleeps are interruptible by the engine's stop event (raising Stopped).
"""
from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from prover import events as ev
from prover.device.ledger import FixedBudget, Ledger

Emit = Callable[..., Any]  # emit(EventClass, **fields)


class Stopped(Exception):
    """Raised inside a worker when the engine is stopping (unwinds through the locks)."""


OOM_CAUSES = ("switch", "budget", "leak", "contention", "device", "injected", "unknown")


class OomError(RuntimeError):
    """No room under the budget. `held_by` is who held the budget then (owner -> live and
    earmarked bytes, taken under the pool's lock at the refusal), so whoever catches it can say
    whose memory it was; `cause` is one of OOM_CAUSES (docs/disciplines.md, "An OOM that
    still happens"); gpu, worker and part say where, for the Oom event its catcher emits."""

    def __init__(self, requested: int, free: int, what: str = "", held_by: dict[str, int] | None = None,
                 gpu: int | None = None, worker: str = "", part: str | None = None,
                 cause: str = "unknown") -> None:
        super().__init__(f"out of VRAM budget: wanted {requested >> 20} MiB, {free >> 20} MiB free {what}".strip())
        self.requested = requested
        self.free = free
        self.held_by = dict(held_by or {})
        self.gpu, self.worker, self.part = gpu, worker, part  # where, for the Oom event its catcher emits
        self.cause = cause

    def event(self, outcome: str) -> dict[str, Any]:
        """The Oom event's fields, with what came of it (retried | failed) and why."""
        return {"gpu": self.gpu if self.gpu is not None else 0, "part": self.part, "worker": self.worker,
                "requested": int(self.requested), "free": max(0, int(self.free)), "outcome": outcome,
                "cause": self.cause}

    def explain(self, cause: str) -> None:
        """Add why there was no room (who holds it), so every message made from it says so."""
        if cause:
            self.args = (f"{self.args[0]}; {cause}",)


class DeviceError(RuntimeError):
    """A device-level failure (e.g. a CUDA error), injected or real."""


@dataclass
class Buffer:
    name: str
    nbytes: int
    owner: str
    part: str | None
    handle: Any = None
    freed: bool = False


Put = tuple[Buffer, int, Any]  # an upload's piece: host array -> the buffer, at a byte offset


@dataclass
class Stream:
    name: str
    busy_until: float = 0.0  # monotonic time when the work queued so far ends
    handle: Any = None


@dataclass
class Kernel:
    """Work queued on a stream; `end` is when it completes (monotonic)."""

    label: str
    start: float
    end: float
    result: Any = None
    handle: Any = None  # CUDA event, when real


@dataclass(frozen=True)
class PoolState:
    """The pool's figures at one moment (`BaseDevice.pool`: a copy, for readers and tests)."""

    used: int = 0      # bytes handed to live buffers
    reserved: int = 0  # bytes the pool holds from the device (>= used)
    owners: dict[str, int] = field(default_factory=dict)


class Device(Protocol):
    index: int
    simulated: bool
    budget: int
    name: str
    total_bytes: int
    nvml: bool

    def mark(self, worker: str, part: str) -> dict[str, Any]: ...  # BaseDevice.mark: a VramMark, its fields
    def health(self) -> dict[str, Any] | None: ...  # BaseDevice.health: GpuHealth's fields, None on a sim
    def announce(self) -> None: ...
    def stream(self, worker: str) -> Stream: ...
    def device_sync(self) -> None: ...
    def pool_trim(self) -> None: ...
    def alloc(self, owner: str, part: str | None, name: str, nbytes: int, stream: Stream) -> Buffer: ...
    def free(self, buf: Buffer, stream: Stream) -> None: ...
    def upload(self, stream: Stream, puts: list[Put], modelled_s: float) -> Kernel: ...
    def launch(self, stream: Stream, label: str, modelled_s: float, fn: Callable[[], Any] | None) -> Kernel: ...
    def wait(self, k: Kernel) -> None: ...
    def sample(self, full: bool = True) -> None: ...
    def sleep(self, modelled_s: float) -> None: ...
    def close(self) -> None: ...


class BaseDevice:
    """Pool accounting, budget enforcement, events and the time model shared by devices."""

    simulated = True
    impl_label = "sim"

    def __init__(self, index: int, budget: int | Ledger, emit: Emit, stop: threading.Event,
                 time_scale: float = 1.0, clock: Callable[[], float] = time.monotonic) -> None:
        """`budget`: the ledger its memory is counted against (the GPU's room), or a number of
        bytes for a device on its own (a FixedBudget)."""
        self.index = index
        self.ledger: Ledger = FixedBudget(budget) if isinstance(budget, int) else budget
        self.emit = emit
        self.stop_event = stop
        self.scale = float(time_scale)
        self.clock = clock
        self.reserved = 0  # bytes the pool holds from the device (>= live), under the ledger's lock
        self._cv = threading.Condition()  # the streams and the queued work
        self._streams: dict[str, Stream] = {}
        self._busy: deque[tuple[float, float]] = deque(maxlen=512)  # (start, end) of queued work
        self.name = "device"
        self.nvml = False
        self.oom_hook: Callable[[str, int], bool] | None = None  # fault injection: True -> fail
        self.max_used = 0

    @property
    def budget(self) -> int:
        """The VRAM budget in force (the ledger's: only the GPU's room changes it)."""
        return self.ledger.book.budget

    @property
    def total_bytes(self) -> int:
        """The device's memory (a simulated one: as much as its budget)."""
        return self.budget

    def card(self) -> int | None:
        """What a budget of `card` is here when the profile names no card: a real device's
        memory; None on a simulated one (it has none of its own)."""
        return None

    @property
    def pool(self) -> PoolState:
        """The pool's figures now (a copy)."""
        with self.ledger.lock:
            b = self.ledger.book
            return PoolState(b.used, self.reserved, dict(b.owners))

    # --- time --------------------------------------------------------------------------
    def wall(self, modelled_s: float) -> float:
        return max(0.0, modelled_s) * self.scale

    def sleep_until(self, t_end: float) -> None:
        while True:
            left = t_end - self.clock()
            if left <= 0:
                return
            if self.stop_event.wait(min(left, 0.25)):
                raise Stopped()

    def sleep(self, modelled_s: float) -> None:
        self.sleep_until(self.clock() + self.wall(modelled_s))

    # --- streams and queued work -----------------------------------------------------------
    def stream(self, worker: str) -> Stream:
        with self._cv:
            s = self._streams.get(worker)
            if s is None:
                s = self._streams[worker] = self._new_stream(worker)
            return s

    def _new_stream(self, worker: str) -> Stream:
        return Stream(name=worker)

    def _queue(self, stream: Stream, label: str, wall_s: float, result: Any = None,
               t_host: float | None = None) -> Kernel:
        """Queue `wall_s` of work on `stream`. With `t_host` (when the host started the real
        math for it): on an idle stream the kernel started then and cannot end before now;
        behind queued work it starts when that work ends and runs its full modelled time."""
        with self._cv:
            now = self.clock()
            if t_host is None:
                start = max(now, stream.busy_until)
                end = start + wall_s
            else:
                start = max(t_host, stream.busy_until)
                end = max(start + wall_s, now)
            stream.busy_until = end
            self._busy.append((start, end))
            return Kernel(label=label, start=start, end=end, result=result)

    def launch(self, stream: Stream, label: str, modelled_s: float, fn: Callable[[], Any] | None) -> Kernel:
        """Queue a kernel of the modelled duration; the real math `fn` runs on the host now and
        the kernel cannot end before it has (phase time = max(real, modelled x scale))."""
        t0 = self.clock()
        result = fn() if fn is not None else None
        return self._queue(stream, label, self.wall(modelled_s), result, t_host=t0)

    def upload(self, stream: Stream, puts: list[Put], modelled_s: float) -> Kernel:
        """Each host array into its buffer at its offset, on `stream` (a real device; the whole
        buffers touched first), as work of the modelled duration."""
        return self._queue(stream, "upload", self.wall(modelled_s))

    def staged_views(self, bufs: list[Buffer], rows: int | None) -> tuple[Any, ...] | None:
        """Device arrays over a partition's a, b, c where they lie in its buffers (a at d_a + 0, b at
        d_bc + 0, c at d_bc + nbytes/2), `rows` rows each (real devices only); None: the compute
        phases take the host arrays."""
        return None

    def view(self, buf: Buffer, shape: tuple[int, ...], dtype: Any, offset: int = 0) -> Any:
        """A device array over a buffer's memory (real devices only; None here)."""
        return None

    def wait(self, k: Kernel) -> None:
        self.sleep_until(k.end)

    def device_sync(self) -> None:
        """Wait for all work queued on every stream of this device at call time."""
        with self._cv:
            target = max((s.busy_until for s in self._streams.values()), default=0.0)
        self.sleep_until(target)

    def pool_trim(self) -> None:
        """Release cached (reserved but unused) pool memory; needs an idle device."""
        self.device_sync()
        with self.ledger.lock:
            changed = self.reserved != self.ledger.book.used
            self.reserved = self.ledger.book.used
        if changed:
            self.sample()

    # --- memory ------------------------------------------------------------------------------
    def _device_alloc(self, buf: Buffer, stream: Stream) -> None:
        """Backend hook: make the real allocation (Cuda); nothing for Sim."""

    def _device_free(self, buf: Buffer, stream: Stream) -> None:
        """Backend hook."""

    def alloc(self, owner: str, part: str | None, name: str, nbytes: int, stream: Stream) -> Buffer:
        """Allocate from owner's earmark first, then from the free room; OomError (with the
        ledger's word on why) if they do not hold it."""
        buf = Buffer(name=name, nbytes=int(nbytes), owner=owner, part=part)
        ledger = self.ledger
        with ledger.lock:
            book = ledger.book
            free = book.allowance(owner)
            injected = self.oom_hook is not None and self.oom_hook(name, nbytes)
            if nbytes > free or injected:
                cause = "injected" if injected else ledger.why(owner, int(nbytes))
                raise OomError(nbytes, free, "(injected)" if injected and nbytes <= free else "", book.held(),
                               self.index, owner, part, cause)
            self._device_alloc(buf, stream)  # may raise (real CUDA)
            ledger.count(owner, buf.nbytes)
            self.reserved = max(self.reserved, book.used)
            self.max_used = max(self.max_used, book.used)
            self.emit(ev.Alloc, gpu=self.index, owner=owner, part=part, name=name, bytes=buf.nbytes)
        self.sample(full=False)
        return buf

    def free(self, buf: Buffer, stream: Stream) -> None:
        with self.ledger.lock:
            if buf.freed:
                return
            buf.freed = True
            self.emit(ev.Free, gpu=self.index, owner=buf.owner, part=buf.part, name=buf.name, bytes=buf.nbytes)
            try:
                self._device_free(buf, stream)
            finally:
                self.ledger.uncount(buf.owner, buf.nbytes)
        self.sample(full=False)

    # --- samples ---------------------------------------------------------------------------
    def util(self, window: float = 0.5) -> float:
        """Share of the last `window` wall seconds during which queued work was running."""
        now = self.clock()
        lo = now - window
        spans = []
        with self._cv:
            for s, e in reversed(self._busy):  # appended in (almost) start order: stop early
                if e > lo and s < now:
                    spans.append((max(s, lo), min(e, now)))
                elif s < lo - 60.0:
                    break
        spans.sort()
        busy, cur_s, cur_e = 0.0, 0.0, None
        for s, e in spans:
            if cur_e is None or s > cur_e:
                if cur_e is not None:
                    busy += cur_e - cur_s
                cur_s, cur_e = s, e
            else:
                cur_e = max(cur_e, e)
        if cur_e is not None:
            busy += cur_e - cur_s
        return min(1.0, busy / window) if window > 0 else 0.0

    def device_memory(self) -> tuple[int | None, int | None]:
        return None, None

    def sample(self, full: bool = True) -> None:
        """Emit a VramSample; `full=False` (on alloc/free) leaves utilisation out (None: unchanged).
        NVML is asked first; the pool's figures and the budget are read and said under the
        ledger's lock, so in the event stream each sample's budget is the one in force there."""
        dev_used, dev_total = self.device_memory()
        util = self.util() if full else None
        with self.ledger.lock:
            b = self.ledger.book
            self.emit(ev.VramSample, gpu=self.index, budget=b.budget, pool_reserved=self.reserved,
                      pool_used=b.used, device_used=dev_used, device_total=dev_total, util=util)

    def mark(self, worker: str, part: str) -> dict[str, Any]:
        """A VramMark at a partition's GPU section end (after its frees): the same point every
        partition, for the growth test (prover/health/vram_growth.py). Returns its fields."""
        with self.ledger.lock:
            used, reserved, owners = self.ledger.book.used, self.reserved, dict(self.ledger.book.owners)
        fields = dict(gpu=self.index, part=part, worker=worker, live=used, cached=max(0, reserved - used),
                      own=owners.get(worker, 0), owners=owners, device_used=self.device_memory()[0])
        self.emit(ev.VramMark, **fields)
        return fields

    def health(self) -> dict[str, Any] | None:
        """GpuHealth's fields (a real card's NVML figures); None: nothing to report (a simulated
        device has no temperature or clocks, and shows none rather than invented ones)."""
        return None

    def announce(self) -> None:
        self.emit(ev.GpuInfo, gpu=self.index, name=self.name, total_bytes=int(self.total_bytes),
                  budget_bytes=self.budget, simulated=self.simulated, nvml=self.nvml)
        self.sample()

    def host_out(self, worker: str, rows: int) -> tuple[Any, Any, Any] | None:
        """Host arrays for a worker's a, b, c ((rows, 4) uint64, reused partition after
        partition) that this device uploads fastest from; None: let synthesis allocate."""
        return None

    def host_zpack(self, worker: str, num_vars: int, capacity: int) -> tuple[Any, Any] | None:
        """Host arrays for a worker's z's upload form (prover/host/zpack.py: its (words, 3) uint32
        table for `num_vars` variables and (capacity, 4) uint64 field values), reused, that this
        device uploads fastest from (abc gpu); None: fresh ones each partition."""
        return None

    def close(self) -> None:
        pass
