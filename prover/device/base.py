"""The Device protocol and the bookkeeping shared by SimDevice and CudaDevice.

A device owns one GPU's (real or emulated) memory pool under a VRAM *budget*, the worker
streams, and the device-global calls whose semantics are the subject of the seed:

- `device_sync()` waits for every piece of work queued on any stream of this device at the
  time of the call (other workers' kernels included), like cudaDeviceSynchronize;
- `pool_trim()` hands cached pool memory back to the device; it needs an idle device, so it
  first waits like device_sync (cudaMemPoolTrimTo / cudaFree behaviour measured in the seed);
- `alloc()` refuses (OomError) whenever live and earmarked bytes would exceed the budget, so
  "live bytes <= budget" holds by construction; whoever catches it emits the Oom, saying what
  came of it (retried or failed: prover/pipeline/partition.py, disciplines/two_lock.py) and why;
- `earmark()` sets room aside for an owner ahead of its allocations (a partition's buffers
  taken whole, in one step: prover/pipeline/gpu/room.py decides who may); the owner's
  allocations use it up, `release_earmark()` drops what is left; room for anyone else is
  the budget less live and earmarked bytes;
- `free()` returns bytes to the pool stream-ordered and wakes `wait_room()` callers.

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


@dataclass
class PoolState:
    used: int = 0      # bytes handed to live buffers
    reserved: int = 0  # bytes the pool holds from the device (>= used)
    owners: dict[str, int] = field(default_factory=dict)
    earmarked: dict[str, int] = field(default_factory=dict)  # owner -> room set aside, not yet allocated

    def held(self) -> dict[str, int]:
        """owner -> live + earmarked bytes: who holds the budget."""
        out = dict(self.owners)
        for o, n in self.earmarked.items():
            out[o] = out.get(o, 0) + n
        return out


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
    def free_room(self) -> int: ...
    def wait_room(self, nbytes: int, timeout_modelled: float) -> bool: ...
    def alloc(self, owner: str, part: str | None, name: str, nbytes: int, stream: Stream) -> Buffer: ...
    def free(self, buf: Buffer, stream: Stream) -> None: ...
    def upload(self, stream: Stream, bufs: list[Buffer], host: list[Any], modelled_s: float) -> Kernel: ...
    def launch(self, stream: Stream, label: str, modelled_s: float, fn: Callable[[], Any] | None) -> Kernel: ...
    def wait(self, k: Kernel) -> None: ...
    def sample(self, full: bool = True) -> None: ...
    def sleep(self, modelled_s: float) -> None: ...
    def close(self) -> None: ...


class BaseDevice:
    """Pool accounting, budget enforcement, events and the time model shared by devices."""

    simulated = True
    impl_label = "sim"

    def __init__(self, index: int, budget: int, emit: Emit, stop: threading.Event,
                 time_scale: float = 1.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.index = index
        self.budget = int(budget)
        self.emit = emit
        self.stop_event = stop
        self.scale = float(time_scale)
        self.clock = clock
        self.pool = PoolState()
        self._cv = threading.Condition()
        self._streams: dict[str, Stream] = {}
        self._busy: deque[tuple[float, float]] = deque(maxlen=512)  # (start, end) of queued work
        self.name = "device"
        self.total_bytes = self.budget
        self.nvml = False
        self.oom_hook: Callable[[str, int], bool] | None = None  # fault injection: True -> fail
        # why an allocation found no room: (owner, bytes) -> one of OOM_CAUSES; called under the
        # pool's lock (the admission authority installs it: it knows whose sections hold what)
        self.oom_cause: Callable[[str, int], str] | None = None
        self.max_used = 0

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

    def upload(self, stream: Stream, bufs: list[Buffer], host: list[Any], modelled_s: float) -> Kernel:
        return self._queue(stream, "upload", self.wall(modelled_s))

    def staged_views(self, bufs: list[Buffer], host: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """Device arrays over where `upload` put the host arrays (real devices only); None:
        the compute phases take the host arrays."""
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
        with self._cv:
            changed = self.pool.reserved != self.pool.used
            self.pool.reserved = self.pool.used
        if changed:
            self.sample()

    # --- memory ------------------------------------------------------------------------------
    @property
    def lock(self) -> threading.Condition:
        """The pool's lock and condition (woken on every free, earmark and budget change): the
        admission authority keeps its own state under it, so a room decision and the pool's
        accounting are one step."""
        return self._cv

    def free_room(self) -> int:
        """Room for an owner with no earmark: the budget less live and earmarked bytes."""
        with self._cv:
            return self.budget - self.pool.used - sum(self.pool.earmarked.values())

    def earmark(self, owner: str, nbytes: int) -> bool:
        """Set nbytes aside for `owner` if they fit now (True); its next allocations use them up."""
        with self._cv:
            if self.free_room() < nbytes:
                return False
            self.pool.earmarked[owner] = self.pool.earmarked.get(owner, 0) + int(nbytes)
            return True

    def release_earmark(self, owner: str) -> None:
        """Give back what is left of owner's earmark (a section that ends without allocating it all)."""
        with self._cv:
            if self.pool.earmarked.pop(owner, 0):
                self._cv.notify_all()

    def wait_room(self, nbytes: int, timeout_modelled: float) -> bool:
        """Wait (bounded) until nbytes fit under the budget; True if they do."""
        deadline = self.clock() + self.wall(timeout_modelled)
        with self._cv:
            while self.free_room() < nbytes:
                left = deadline - self.clock()
                if left <= 0:
                    return False
                if self.stop_event.is_set():
                    raise Stopped()
                self._cv.wait(min(left, 0.05))
            return True

    def set_budget(self, nbytes: int) -> None:
        """A new VRAM budget, seen by the next reservation (live buffers stay). Said (VramSample)
        before anyone can allocate under it, so the event stream never shows live bytes above
        the budget in force."""
        with self._cv:
            self.budget = int(nbytes)
            self._cv.notify_all()
            self.sample()

    def _device_alloc(self, buf: Buffer, stream: Stream) -> None:
        """Backend hook: make the real allocation (Cuda); nothing for Sim."""

    def _device_free(self, buf: Buffer, stream: Stream) -> None:
        """Backend hook."""

    def alloc(self, owner: str, part: str | None, name: str, nbytes: int, stream: Stream) -> Buffer:
        """Allocate from owner's earmark first, then from the free room; OomError if they do not hold it."""
        buf = Buffer(name=name, nbytes=int(nbytes), owner=owner, part=part)
        with self._cv:
            mine = self.pool.earmarked.get(owner, 0)
            free = self.free_room() + mine
            injected = self.oom_hook is not None and self.oom_hook(name, nbytes)
            if nbytes > free or injected:
                cause = "injected" if injected else self._cause(owner, int(nbytes))
                raise OomError(nbytes, free, "(injected)" if injected and nbytes <= free else "", self.pool.held(),
                               self.index, owner, part, cause)
            self._device_alloc(buf, stream)  # may raise (real CUDA)
            if mine:
                left = mine - min(mine, buf.nbytes)
                if left:
                    self.pool.earmarked[owner] = left
                else:
                    self.pool.earmarked.pop(owner, None)
            self.pool.used += buf.nbytes
            self.pool.reserved = max(self.pool.reserved, self.pool.used)
            self.pool.owners[owner] = self.pool.owners.get(owner, 0) + buf.nbytes
            self.max_used = max(self.max_used, self.pool.used)
            self.emit(ev.Alloc, gpu=self.index, owner=owner, part=part, name=name, bytes=buf.nbytes)
        self.sample(full=False)
        return buf

    def _cause(self, owner: str, nbytes: int) -> str:
        """Why `owner` found no room: the authority's word when one is installed."""
        if self.oom_cause is not None:
            return self.oom_cause(owner, nbytes)
        return "budget" if self.pool.used > self.budget or nbytes > self.budget else "unknown"

    def free(self, buf: Buffer, stream: Stream) -> None:
        with self._cv:
            if buf.freed:
                return
            buf.freed = True
            self.emit(ev.Free, gpu=self.index, owner=buf.owner, part=buf.part, name=buf.name, bytes=buf.nbytes)
            try:
                self._device_free(buf, stream)
            finally:
                self.pool.used -= buf.nbytes
                left = self.pool.owners.get(buf.owner, 0) - buf.nbytes
                if left > 0:
                    self.pool.owners[buf.owner] = left
                else:
                    self.pool.owners.pop(buf.owner, None)
                self._cv.notify_all()
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
        NVML is asked first; the pool's figures and the budget are read and said under the pool's
        lock, so in the event stream each sample's budget is the one in force there."""
        dev_used, dev_total = self.device_memory()
        util = self.util() if full else None
        with self._cv:
            self.emit(ev.VramSample, gpu=self.index, budget=self.budget, pool_reserved=self.pool.reserved,
                      pool_used=self.pool.used, device_used=dev_used, device_total=dev_total, util=util)

    def mark(self, worker: str, part: str) -> dict[str, Any]:
        """A VramMark at a partition's GPU section end (after its frees): the same point every
        partition, for the growth test (prover/health/vram_growth.py). Returns its fields."""
        with self._cv:
            used, reserved, owners = self.pool.used, self.pool.reserved, dict(self.pool.owners)
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

    def close(self) -> None:
        pass
