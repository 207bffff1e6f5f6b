"""The engine: sectors -> partitions -> workers that share each GPU through a LockSet.

    Engine(config, sinks).start()       background threads; returns at once
    .controller                          live knobs (see controller.py)
    .stop(timeout=..., drain=False)      clean stop: locks released, buffers freed, RunEnded
    .wait(timeout) -> bool               True once the run has ended (a bounded run finished)

One partition (SupraSeal C2 shape; modelled times from the device profile, x time_scale):

  synthesis (CPU)
  single:   [mem+compute: start prep_msm | pre-stage | NTT-H | barrier(prep) | MSM | free]
  two-lock: start prep_msm on a CPU thread
            [mem: (device: device_sync + pool trim, room checked once -> else Fallback)
                  (stream: wait for room, bounded -> else Fallback); alloc + upload]
            [compute: (fallback: alloc + slow upload) NTT-H | barrier(prep) | MSM | free]
  b_g2_msm (CPU, or on the GPU inside compute when b_g2=gpu), assemble, verify (self-check)

Sinks are called from engine threads with the emit lock held (so events reach every sink in
timestamp order); they must be cheap and must not call back into the engine.
"""
from __future__ import annotations

import hashlib
import importlib
import random
import threading
import time
import traceback
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from prover import events as ev
from prover.config import RunConfig
from prover.device.base import BaseDevice, Buffer, OomError, Stopped, Stream
from prover.device.profiles import get_profile
from prover.events import Phase
from prover.pipeline.controller import Controller, Knobs
from prover.pipeline.locks import LockSet

Sink = Callable[[Any], None]


class BackendError(RuntimeError):
    """The requested backend cannot run here (e.g. cuda without a GPU or CuPy)."""


class InjectedFault(RuntimeError):
    """An exception injected by the faults config section."""


class _WorkerDeath(BaseException):
    """Injected: the worker thread dies (between partitions)."""


@dataclass
class Partition:
    id: str
    sector: int
    index: int
    instance: int
    queued_t: float
    attempts: int = 0


@dataclass
class _Worker:
    name: str
    gpu: int
    thread: threading.Thread
    retire: bool = False
    dead: bool = False


def resolve_backend(backend: str) -> str:
    if backend == "sim":
        return "sim"
    from prover.device import cuda as cuda_mod

    ok, why = cuda_mod.available()
    if backend == "cuda":
        if not ok:
            raise BackendError(f"backend 'cuda' requested but no usable GPU: {why}. Use --backend sim (or auto).")
        return "cuda"
    return "cuda" if ok else "sim"


class Engine:
    def __init__(self, config: RunConfig, sinks: list[Sink] | None = None, *, phases: Any = None,
                 clock: Callable[[], float] = time.monotonic, inbox: Any = None) -> None:
        self.config = config
        self._sinks: list[Sink] = list(sinks or [])
        self.sink_errors = 0
        self.clock = clock
        self.profile = get_profile(config.profile)
        self.modelled_log2 = config.modelled_log2 or self.profile.modelled_log2
        self.T = self.profile.times(self.modelled_log2)
        self.buffer_sizes = self.profile.buffer_bytes(self.modelled_log2)
        self.partition_bytes = sum(self.buffer_sizes.values())
        self.backend = resolve_backend(config.backend)
        self._phases_given = phases
        self.P: Any = phases
        self._stop = threading.Event()
        self._draining = threading.Event()
        self._finished = threading.Event()
        self._started = False
        self._stop_reason = "stopped"
        self._elock = threading.Lock()
        self._t0 = clock()
        self._ended_emitted = False
        self.controller = Controller(Knobs(
            lock_mode=config.lock_mode, mem_sync=config.mem_sync, workers_per_gpu=config.workers_per_gpu,
            prestage=config.prestage, b_g2=config.b_g2, paused=config.paused), self.emit, self)
        self.devices: dict[int, BaseDevice] = {}
        self.locksets: dict[int, LockSet] = {}
        self._workers: dict[int, list[_Worker]] = {}
        self._wlock = threading.RLock()
        self._wseq: dict[int, int] = {}
        self._queue: deque[Partition] = deque()
        self._qcv = threading.Condition()
        self._next_sector = 0
        self._next_instance = 0
        self._queued_total = 0
        self._done_total = 0
        self._inflight = 0
        self.inbox = inbox  # prover.pipeline.inbox.Inbox: partitions placed from outside (fleet)
        self._bounded = config.sectors is not None and inbox is None
        self._current: dict[str, tuple[str, str, int | None, float]] = {}  # worker -> (phase, part, gpu, t0)
        self._stalled: set[tuple] = set()
        self._rng = random.Random(config.seed ^ 0x5EED)
        self._rng_lock = threading.Lock()
        self._prep_pool: ThreadPoolExecutor | None = None
        self._main: threading.Thread | None = None
        self._monitor: threading.Thread | None = None
        self.circuit: Any = None
        self.pk: Any = None
        self.vk: Any = None
        self._ntt: Callable[..., Any] | None = None
        self._msm: Callable[..., Any] | None = None
        self._bg2_gpu: Callable[..., Any] | None = None
        self.gpu_impl = "sim" if self.backend == "sim" else "cpu-reference"
        self.partition_seconds: deque[float] = deque(maxlen=10000)

    # --- events --------------------------------------------------------------------------
    def now(self) -> float:
        return max(0.0, self.clock() - self._t0)

    def emit(self, cls: type, **fields: Any) -> Any:
        """Build one event (t = seconds since start) and hand it to every sink, in order.
        Nothing is emitted after RunEnded (late controller calls are dropped)."""
        with self._elock:
            if self._ended_emitted:
                return None
            e = cls(t=max(0.0, self.clock() - self._t0), **fields)
            if cls is ev.RunEnded:
                self._ended_emitted = True
            for sink in self._sinks:
                try:
                    sink(e)
                except Exception:  # a sink must never take the engine down
                    self.sink_errors += 1
            return e

    def add_sink(self, fn: Sink) -> None:
        with self._elock:
            self._sinks.append(fn)

    def remove_sink(self, fn: Sink) -> None:
        with self._elock:
            if fn in self._sinks:
                self._sinks.remove(fn)

    # --- life cycle ------------------------------------------------------------------------
    def start(self) -> "Engine":
        if self._started:
            raise RuntimeError("engine already started")
        self._started = True
        self._t0 = self.clock()
        cfg = self.config
        self.emit(ev.RunStarted, backend=self.backend, simulated=self.backend == "sim", profile=self.profile.name,
                  proved_log2=cfg.constraints_log2, modelled_log2=self.modelled_log2, gpus=cfg.n_gpus,
                  config=cfg.public_dict())
        self._main = threading.Thread(target=self._run, name="engine-main", daemon=True)
        self._main.start()
        return self

    def stop(self, timeout: float | None = 30.0, drain: bool = False, reason: str | None = None) -> bool:
        """Stop; with drain=True let in-flight partitions finish first (up to timeout).
        Returns True when the run has ended (RunEnded emitted)."""
        if not self._started:
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        if drain and not self._stop.is_set():
            self._draining.set()
            with self._qcv:
                self._qcv.notify_all()
            while not self._finished.is_set() and not self._stop.is_set():
                with self._wlock:
                    busy = self._inflight
                if busy == 0:
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    break
                time.sleep(0.01)
        self._request_stop(reason or ("drained" if drain else "stopped"))
        left = None if deadline is None else max(0.1, deadline - time.monotonic())
        return self._finished.wait(left)

    def drain(self, timeout: float | None = 60.0) -> bool:
        return self.stop(timeout=timeout, drain=True, reason="done (drained)")

    def wait(self, timeout: float | None = None) -> bool:
        return self._finished.wait(timeout)

    @property
    def finished(self) -> bool:
        return self._finished.is_set()

    def _request_stop(self, reason: str) -> None:
        if not self._stop.is_set():
            self._stop_reason = reason
            self._stop.set()
        with self._qcv:
            self._qcv.notify_all()

    # --- main thread -----------------------------------------------------------------------
    def _run(self) -> None:
        reason = None
        try:
            self._init_prover()
            self._make_devices()
            if self._stop.is_set():
                return
            self._prep_pool = ThreadPoolExecutor(max_workers=max(4, 16 * self.config.n_gpus),
                                                 thread_name_prefix="prep")
            sectors = 0 if self.inbox is not None else self.config.sectors if self._bounded else 2
            for _ in range(sectors or 0):
                self._submit_sector(None, source="config")
            with self._wlock:  # a concurrent set_workers_per_gpu waits for this, then resizes
                for g in range(self.config.n_gpus):
                    for _ in range(self.controller.snapshot().workers_per_gpu):
                        self._spawn(g)
                self._monitor = threading.Thread(target=self._monitor_loop, name="engine-monitor", daemon=True)
            self._monitor.start()
            while not self._stop.wait(0.05):
                if self._draining.is_set():
                    with self._wlock:
                        if self._inflight == 0:
                            self._request_stop("done (drained)")
        except Exception as exc:
            reason = f"error: {type(exc).__name__}: {exc}"
            self.emit(ev.Note, level="error", text=f"engine failed: {exc}\n{traceback.format_exc(limit=4)}")
            self._stop.set()
        finally:
            self._shutdown(reason or self._stop_reason)

    def _shutdown(self, reason: str) -> None:
        self._stop.set()
        with self._qcv:
            self._qcv.notify_all()
        with self._wlock:
            workers = [w for ws in self._workers.values() for w in ws]
        for w in workers:
            w.thread.join(timeout=10)
        if self._monitor is not None:
            self._monitor.join(timeout=5)
        if self._prep_pool is not None:
            self._prep_pool.shutdown(wait=True, cancel_futures=True)
        abandoned = self._inflight
        if abandoned:
            self.emit(ev.Note, level="warn", text=f"{abandoned} partition(s) in flight abandoned at stop")
        for d in self.devices.values():
            try:
                d.sample()
                d.close()
            except Exception as exc:  # pragma: no cover - device teardown
                self.emit(ev.Note, level="warn", text=f"gpu{d.index} close: {exc}")
        stuck = [g for g, ls in self.locksets.items() if not ls.all_free()]
        if stuck:  # pragma: no cover - would be a bug; say it loudly
            self.emit(ev.Note, level="error", text=f"locks still held at stop on gpu {stuck}")
        self.emit(ev.RunEnded, reason=reason)
        self._finished.set()

    def _init_prover(self) -> None:
        if self.P is None:
            self.P = importlib.import_module("prover.groth16.phases")
        P, cfg = self.P, self.config
        t0 = time.monotonic()
        self.circuit = P.make_circuit(cfg.constraints_log2, cfg.seed)
        cache = None if cfg.cache_dir is None else __import__("pathlib").Path(cfg.cache_dir)
        self.pk, self.vk = P.load_or_setup(self.circuit, cfg.seed, cache)
        self._ntt, self._msm = P.ntt_h, P.msm_g1
        self.emit(ev.Note, level="info", text=(
            f"circuit 2^{cfg.constraints_log2} proved for real; modelled 2^{self.modelled_log2} "
            f"({self.profile.name}); setup {time.monotonic() - t0:.2f}s"))

    def _make_devices(self) -> None:
        """Devices are numbered 0..n-1 in events (what the fold expects); with `gpus = [2, 3]`
        the CUDA device ids are 2 and 3 (named in GpuInfo)."""
        cfg = self.config
        for g, dev_id in enumerate(cfg.gpu_ids):
            if self.backend == "sim":
                from prover.device.sim import SimDevice

                dev: BaseDevice = SimDevice(g, self.profile, cfg.vram_budget, self.emit, self._stop, cfg.time_scale, self.clock)
            else:
                from prover.device.cuda import CudaDevice

                dev = CudaDevice(g, self.profile, cfg.vram_budget, self.emit, self._stop, cfg.time_scale, self.clock,
                                 nvml=not cfg.faults.nvml_missing, device_id=dev_id)
            self._install_faults(dev)
            self.devices[g] = dev
            self.locksets[g] = LockSet(g, self.emit, self._stop, self.clock)
            dev.announce()
            if self.backend == "cuda" and not dev.nvml:
                self.emit(ev.Note, level="warn", text=f"gpu{g}: NVML unavailable ({getattr(dev, 'nvml_error', '')}); "
                          "memory from the CUDA runtime, utilisation modelled")
        if self.backend == "cuda":
            self._load_gpu_kernels()

    def _load_gpu_kernels(self) -> None:
        """Use prover.kernels' CUDA phases when importable (impl "cuda"); any failure of a GPU
        call falls back to the CPU reference for that call, with a note (the first few)."""
        try:
            gp = importlib.import_module("prover.kernels.gpu_phases")
            from prover.device.gpu_adapter import make_gpu_phases

            fns = make_gpu_phases(gp)
        except Exception as exc:
            self.emit(ev.Note, level="info", text=f"CUDA kernels not available ({exc}); GPU phases run the CPU "
                      "reference under the GPU section (impl cpu-reference)")
            return
        cpu = {"ntt_h": self._ntt, "msm_g1": self._msm, "b_g2_msm": self.P.b_g2_msm}
        failures = [0]

        def guarded(name: str, gpu_fn: Callable[..., Any]) -> Callable[..., Any]:
            def call(*args: Any) -> Any:
                try:
                    return gpu_fn(*args)
                except Stopped:
                    raise
                except Exception as exc:
                    failures[0] += 1
                    if failures[0] <= 3:
                        self.emit(ev.Note, level="warn", text=f"{name} on the GPU failed, CPU reference used: {exc}")
                    return cpu[name](*(_on_host(a) for a in args))
            return call

        if "ntt_h" in fns:
            self._ntt = guarded("ntt_h", fns["ntt_h"])
        if "msm_g1" in fns:
            self._msm = guarded("msm_g1", fns["msm_g1"])
        if "b_g2_msm" in fns:
            self._bg2_gpu = guarded("b_g2_msm", fns["b_g2_msm"])
        if fns:
            self.gpu_impl = "cuda"
            self.emit(ev.Note, level="info", text=f"CUDA kernels in use for {', '.join(sorted(fns))}")

    def _install_faults(self, dev: BaseDevice) -> None:
        f = self.config.faults
        if f.oom_rate > 0:
            dev.oom_hook = lambda name, n: self._chance(f.oom_rate)

    def _chance(self, p: float) -> bool:
        if p <= 0:
            return False
        with self._rng_lock:
            return self._rng.random() < p

    # --- queue -------------------------------------------------------------------------------
    def _submit_sector(self, partitions: int | None, source: str = "controller") -> int:
        n = partitions or self.config.partitions
        with self._qcv:
            sector = self._next_sector
            self._next_sector += 1
            self._queued_total += n
            self.emit(ev.SectorSubmitted, sector=sector, partitions=n)
            for i in range(n):
                p = Partition(id=f"s{sector}p{i}", sector=sector, index=i, instance=self._next_instance,
                              queued_t=self.clock())
                self._next_instance += 1
                self._queue.append(p)
                self.emit(ev.PartitionQueued, part=p.id, sector=sector, index=i)
            self._qcv.notify_all()
        return sector

    def _take(self, gpu: int) -> Partition | None:
        if self.inbox is not None:
            return self._take_inbox(gpu)
        with self._qcv:
            while not self._queue:
                if self._stop.is_set() or self._draining.is_set():
                    return None
                if not self._bounded:
                    self._qcv.release()
                    try:
                        self._submit_sector(None, source="auto")
                    finally:
                        self._qcv.acquire()
                    continue
                self._qcv.wait(0.1)
                return None
            if self._stop.is_set() or self._draining.is_set():
                return None
            p = self._queue.popleft()
            with self._wlock:
                self._inflight += 1
            # keep a sector queued ahead in unbounded runs
            return p

    def _take_inbox(self, gpu: int) -> Partition | None:
        if self._stop.is_set() or self._draining.is_set():
            return None
        p = self.inbox.take(gpu, 0.1)
        if p is not None:
            with self._wlock:
                self._inflight += 1
        return p

    def _partition_finished(self, p: Partition) -> None:
        with self._wlock:
            self._inflight -= 1
            self._done_total += 1
            done = self._bounded and self._done_total >= self._queued_total
        if done:
            with self._qcv:
                empty = not self._queue
            if empty:
                self._request_stop("done")

    # --- workers -----------------------------------------------------------------------------
    def _spawn(self, gpu: int) -> _Worker:
        with self._wlock:
            n = self._wseq.get(gpu, 0)
            self._wseq[gpu] = n + 1
            name = f"g{gpu}w{n}"
            w = _Worker(name=name, gpu=gpu, thread=threading.Thread(target=self._worker_loop, args=(name, gpu),
                                                                    name=f"worker-{name}", daemon=True))
            self._workers.setdefault(gpu, []).append(w)
        w.thread.start()
        return w

    def _resize_workers(self, n: int) -> None:
        if not self._started or self._stop.is_set():
            return
        with self._wlock:
            if self._monitor is None:
                return  # the workers do not exist yet: the main thread spawns the new target
            for g in range(self.config.n_gpus):
                alive = [w for w in self._workers.get(g, []) if not w.dead and not w.retire]
                if len(alive) < n:
                    for _ in range(n - len(alive)):
                        self._spawn(g)
                else:
                    for w in alive[n:]:
                        w.retire = True
        with self._qcv:
            self._qcv.notify_all()

    def _me(self, name: str, gpu: int) -> _Worker | None:
        with self._wlock:
            for w in self._workers.get(gpu, []):
                if w.name == name:
                    return w
        return None

    def _worker_loop(self, name: str, gpu: int) -> None:
        self.emit(ev.WorkerStarted, gpu=gpu, worker=name)
        reason = "stopped"
        f = self.config.faults
        try:
            while not self._stop.is_set():
                me = self._me(name, gpu)
                if me is not None and me.retire:
                    reason = "scaled down"
                    break
                if not self.controller.wait_unpaused(self._stop):
                    break
                if self._draining.is_set():
                    reason = "drained"
                    break
                if f.worker_death_rate and self._chance(f.worker_death_rate):
                    raise _WorkerDeath()
                p = self._take(gpu)
                if p is None:
                    continue
                try:
                    self._run_partition(name, gpu, p)
                except Stopped:
                    reason = "stopped"
                    break
        except _WorkerDeath:
            reason = "died: injected fault"
        except Exception as exc:  # a bug: say so, the supervisor respawns
            reason = f"crashed: {type(exc).__name__}: {exc}"
            self.emit(ev.Note, level="error", text=f"worker {name} crashed: {traceback.format_exc(limit=6)}")
        finally:
            me = self._me(name, gpu)
            if me is not None:
                me.dead = True
            self._current.pop(name, None)
            self.emit(ev.WorkerStopped, gpu=gpu, worker=name, reason=reason)

    # --- monitor: VRAM samples, watchdog, supervisor ------------------------------------------
    def _monitor_loop(self) -> None:
        period = self.config.vram_sample_s
        next_sample = 0.0
        while not self._stop.wait(min(period, 0.05)):
            now = self.clock()
            if now >= next_sample:
                next_sample = now + period
                for d in self.devices.values():
                    try:
                        d.sample()
                    except Exception as exc:  # pragma: no cover
                        self.emit(ev.Note, level="warn", text=f"gpu{d.index} sample failed: {exc}")
            self._watchdog(now)
            self._supervise()

    def _watchdog(self, now: float) -> None:
        f = self.config.faults
        for g, ls in self.locksets.items():
            for lname, (holder, part, since) in ls.holders().items():
                if holder and now - since > f.watchdog_lock_s:
                    key = ("lock", g, lname, holder, since)
                    if key not in self._stalled:
                        self._stalled.add(key)
                        self.emit(ev.Stall, what="lock", gpu=g, worker=holder, part=part, name=lname,
                                  seconds=round(now - since, 3))
        for w, (phase, part, gpu, t0) in list(self._current.items()):
            if now - t0 > f.watchdog_phase_s:
                key = ("phase", w, part, phase, t0)
                if key not in self._stalled:
                    self._stalled.add(key)
                    self.emit(ev.Stall, what="phase", gpu=gpu, worker=w, part=part, name=phase,
                              seconds=round(now - t0, 3))
        if len(self._stalled) > 10000:
            self._stalled.clear()

    def _supervise(self) -> None:
        if self._stop.is_set() or self._draining.is_set():
            return
        target = self.controller.snapshot().workers_per_gpu
        with self._wlock:
            for g in range(self.config.n_gpus):
                ws = self._workers.get(g, [])
                ws[:] = [w for w in ws if not (w.dead and not w.thread.is_alive())]
                alive = [w for w in ws if not w.dead and not w.retire]
                for _ in range(target - len(alive)):
                    self._spawn(g)

    # --- phases --------------------------------------------------------------------------------
    @contextmanager
    def _phase(self, w: str, p: Partition, phase: Phase, gpu: int | None, impl: str = "cpu") -> Iterator[None]:
        self.emit(ev.PhaseStart, part=p.id, phase=phase, worker=w, gpu=gpu, impl=impl)
        t0 = self.clock()
        track = gpu is not None or phase is not Phase.prep_msm
        if track:
            self._current[w] = (phase.value, p.id, gpu, t0)
        try:
            self._inject(phase)
            yield
        except Stopped:
            self.emit(ev.PhaseEnd, part=p.id, phase=phase, worker=w, gpu=gpu, duration=self.clock() - t0,
                      ok=False, error="stopped")
            raise
        except BaseException as exc:
            self.emit(ev.PhaseEnd, part=p.id, phase=phase, worker=w, gpu=gpu, duration=self.clock() - t0,
                      ok=False, error=f"{type(exc).__name__}: {exc}"[:500])
            raise
        else:
            self.emit(ev.PhaseEnd, part=p.id, phase=phase, worker=w, gpu=gpu, duration=self.clock() - t0)
        finally:
            if track:
                self._current.pop(w, None)

    def _inject(self, phase: Phase) -> None:
        f = self.config.faults
        if not f.any:
            return
        if phase in f.hang and self._chance(f.hang[phase]):
            end = self.clock() + f.hang_seconds
            while self.clock() < end:
                if self._stop.wait(min(0.1, end - self.clock())):
                    raise Stopped()
        if phase in f.phase_error and self._chance(f.phase_error[phase]):
            raise InjectedFault(f"injected fault in {phase.value}")
        if phase in (Phase.prestage, Phase.ntt_h, Phase.msm) and self._chance(f.cuda_error_rate):
            from prover.device.base import DeviceError

            raise DeviceError(f"injected CUDA error in {phase.value} (cudaErrorLaunchFailure)")

    def _paced(self, modelled: float, fn: Callable[[], Any]) -> Any:
        """Run the real math, then sleep what is left of the modelled time (x time_scale)."""
        t0 = self.clock()
        r = fn()
        end = t0 + max(0.0, modelled) * self.config.time_scale
        while True:
            left = end - self.clock()
            if left <= 0:
                return r
            if self._stop.wait(min(left, 0.25)):
                raise Stopped()

    def _cpu_phase(self, w: str, p: Partition, phase: Phase, gpu: int | None, modelled: float,
                   fn: Callable[[], Any]) -> Any:
        with self._phase(w, p, phase, gpu, "cpu"):
            return self._paced(modelled, fn)

    def _start_prep(self, w: str, p: Partition, syn: Any) -> Future:
        """prep_msm on a CPU thread. Its PhaseStart is emitted here, on the worker's thread,
        so it always precedes the worker's next phase in the stream (the fold's notion of a
        partition's current phase, e.g. pre-staged or not, depends on that order)."""
        self.emit(ev.PhaseStart, part=p.id, phase=Phase.prep_msm, worker=w, gpu=None, impl="cpu")
        t0 = self.clock()

        def run() -> Any:
            try:
                self._inject(Phase.prep_msm)
                r = self._paced(self.T["prep_msm"] - (self.clock() - t0) / self.config.time_scale,
                                lambda: self.P.prep_msm(syn, self.pk))
            except Stopped:
                self.emit(ev.PhaseEnd, part=p.id, phase=Phase.prep_msm, worker=w, gpu=None,
                          duration=self.clock() - t0, ok=False, error="stopped")
                raise
            except BaseException as exc:
                self.emit(ev.PhaseEnd, part=p.id, phase=Phase.prep_msm, worker=w, gpu=None,
                          duration=self.clock() - t0, ok=False, error=f"{type(exc).__name__}: {exc}"[:500])
                raise
            self.emit(ev.PhaseEnd, part=p.id, phase=Phase.prep_msm, worker=w, gpu=None, duration=self.clock() - t0)
            return r

        assert self._prep_pool is not None
        return self._prep_pool.submit(run)

    def _barrier(self, fut: Future) -> Any:
        while True:
            try:
                return fut.result(timeout=0.1)
            except FutureTimeout:
                if self._stop.is_set():
                    raise Stopped() from None

    # --- one partition ---------------------------------------------------------------------
    def _run_partition(self, w: str, g: int, p: Partition) -> None:
        P, T = self.P, self.T
        finished = False
        try:
            syn = self._cpu_phase(w, p, Phase.synthesis, g, T["synthesis"], lambda: P.synthesize(self.circuit, p.instance))
            prep_f: Future | None = None
            result: dict[str, Any] = {}
            for attempt in range(4):
                try:
                    prep_f = self._gpu_section(w, g, p, syn, prep_f, result)
                    break
                except OomError as exc:
                    if attempt == 3:
                        raise
                    self.emit(ev.Note, level="warn", text=f"{p.id} on gpu{g}: {exc}; GPU section retried")
                    self.devices[g].wait_room(self.partition_bytes, self.config.prestage_wait_s)
            prep = self._barrier(prep_f) if prep_f is not None else None
            g1 = result["g1"]
            b2 = result.get("b_g2")
            if b2 is None:
                b2 = self._cpu_phase(w, p, Phase.b_g2_msm, g, T["b_g2_msm_cpu"], lambda: P.b_g2_msm(prep, self.pk))
            r, s = P.randomisers(self.config.seed, p.instance)
            proof = self._cpu_phase(w, p, Phase.assemble, g, T["assemble"], lambda: P.assemble(syn, g1, b2, self.pk, r, s))
            if self._chance(self.config.faults.corrupt_proof_rate):
                proof = _corrupt(proof)
            ok, reason = self._self_check(w, g, p, syn, proof)
            finished = True
            self.partition_seconds.append(self.clock() - p.queued_t)
            self.emit(ev.PartitionDone, part=p.id, ok=ok, seconds=max(0.0, self.clock() - p.queued_t), reason=reason)
        except Stopped:
            raise
        except Exception as exc:
            where = self._current.get(w, (None,))[0]
            reason = f"{type(exc).__name__}: {exc}"[:300]
            if p.attempts < self.config.faults.retries:
                p.attempts += 1
                self.emit(ev.Note, level="warn", text=f"{p.id} failed ({reason}); retry {p.attempts}")
                with self._qcv:
                    if self.inbox is not None:
                        self.inbox.put(g, p, front=True)
                    else:
                        self._queue.appendleft(p)
                    self.emit(ev.PartitionQueued, part=p.id, sector=p.sector, index=p.index)
                    self._qcv.notify_all()
                with self._wlock:
                    self._inflight -= 1
                return
            finished = True
            self.emit(ev.PartitionDone, part=p.id, ok=False, seconds=max(0.0, self.clock() - p.queued_t),
                      reason=reason if where is None else reason)
        finally:
            if finished:
                self._partition_finished(p)

    def _self_check(self, w: str, g: int, p: Partition, syn: Any, proof: Any) -> tuple[bool, str | None]:
        share = self.config.verify_share
        digest = hashlib.blake2b(f"{self.config.seed}:{p.instance}".encode(), digest_size=8).digest()
        checked = share >= 1.0 or int.from_bytes(digest, "little") / 2**64 < share
        if not checked:
            self.emit(ev.ProofResult, part=p.id, ok=True, checked=False, reason="not sampled for verification")
            return True, None
        ok = bool(self._cpu_phase(w, p, Phase.verify, g, self.T["verify"],
                                  lambda: self.P.verify(self.vk, syn.public_ints(), proof)))
        reason = None if ok else "proof failed verification (pairing check)"
        self.emit(ev.ProofResult, part=p.id, ok=ok, checked=True, reason=reason)
        return ok, reason

    # --- the GPU section ------------------------------------------------------------------------
    def _gpu_section(self, w: str, g: int, p: Partition, syn: Any, prep_f: Future | None,
                     result: dict[str, Any]) -> Future:
        """Run the GPU section under the knobs read now; returns the prep_msm future."""
        dev, L = self.devices[g], self.locksets[g]
        if not self.controller.wait_unpaused(self._stop):  # pause holds at the next GPU section too
            raise Stopped()
        knobs = self.controller.snapshot()
        stream = dev.stream(w)
        bufs: list[Buffer] = []
        try:
            if knobs.lock_mode == "single":
                with L.both(w, p.id):
                    if prep_f is None:
                        prep_f = self._start_prep(w, p, syn)
                    if knobs.prestage:
                        with self._phase(w, p, Phase.prestage, g, dev.impl_label):
                            if knobs.mem_sync == "device":
                                dev.device_sync()
                                dev.pool_trim()
                            bufs = self._alloc_upload(w, g, p, dev, stream, syn, self.T["prestage"])
                    self._compute(w, g, p, dev, stream, syn, prep_f, knobs, bufs, result)
                    bufs = []
            else:
                if prep_f is None:
                    prep_f = self._start_prep(w, p, syn)
                prestaged = False
                if knobs.prestage:
                    reason = ""
                    with L.hold("mem", w, p.id):
                        with self._phase(w, p, Phase.prestage, g, dev.impl_label):
                            need = self.partition_bytes
                            if knobs.mem_sync == "device":
                                dev.device_sync()
                                dev.pool_trim()
                                room = dev.free_room() >= need
                                if not room:
                                    reason = (f"no room after device sync + pool trim: {dev.free_room() >> 20} MiB free "
                                              f"of {dev.budget >> 20} MiB budget, {need >> 20} MiB needed")
                            else:
                                room = dev.wait_room(need, self.config.prestage_wait_s)
                                if not room:
                                    reason = f"no room within {self.config.prestage_wait_s:g}s (stream-ordered wait)"
                            if room:
                                try:
                                    bufs = self._alloc_upload(w, g, p, dev, stream, syn, self.T["prestage"])
                                    prestaged = True
                                except OomError as exc:
                                    reason = f"pre-stage allocation failed: {exc}"
                    if not prestaged:
                        self.emit(ev.Fallback, gpu=g, part=p.id, worker=w, reason=reason)
                with L.hold("compute", w, p.id):
                    self._compute(w, g, p, dev, stream, syn, prep_f, knobs, bufs, result)
                    bufs = []
        finally:
            for b in bufs:  # exception or stop between the sections: give the pre-staged buffers back
                dev.free(b, stream)
        return prep_f

    def _alloc_upload(self, w: str, g: int, p: Partition, dev: BaseDevice, stream: Stream, syn: Any,
                      modelled_upload: float) -> list[Buffer]:
        bufs: list[Buffer] = []
        try:
            for name, n in self.buffer_sizes.items():
                bufs.append(dev.alloc(w, p.id, name, n, stream))
            k = dev.upload(stream, bufs, [syn.a, syn.b, syn.c], modelled_upload)
            dev.wait(k)
            return bufs
        except BaseException:
            for b in bufs:
                dev.free(b, stream)
            raise

    def _compute(self, w: str, g: int, p: Partition, dev: BaseDevice, stream: Stream, syn: Any,
                 prep_f: Future, knobs: Knobs, bufs: list[Buffer], result: dict[str, Any]) -> None:
        """Inside compute: (non-prestaged alloc + upload), NTT-H, barrier, MSM, (b_g2 on GPU), free."""
        T, impl = self.T, self.gpu_impl
        try:
            with self._phase(w, p, Phase.ntt_h, g, impl):
                if not bufs:  # fallback / prestage off: allocate and upload under compute (slow path)
                    bufs[:] = self._alloc_upload(w, g, p, dev, stream, syn, T["fallback_upload"])
                k_ntt = dev.launch(stream, "ntt_h", T["ntt_h"], lambda: self._ntt(syn.a, syn.b, syn.c))
                h = k_ntt.result
                k_msm = None
                # prep already there: the modelled MSM is queued right behind the NTT. Real work
                # (profile "native") runs when launched, so it is timed in its own phase.
                if prep_f.done() and T["msm"] > 0:
                    prep = self._barrier(prep_f)
                    k_msm = dev.launch(stream, "msm", T["msm"], lambda: self._msm(prep, h, self.pk))
                dev.wait(k_ntt)
            if k_msm is None:
                prep = self._barrier(prep_f)  # batch addition waits for prep_msm (GPU idles)
            with self._phase(w, p, Phase.msm, g, impl):
                if k_msm is None:
                    k_msm = dev.launch(stream, "msm", T["msm"], lambda: self._msm(prep, h, self.pk))
                dev.wait(k_msm)
                result["g1"] = k_msm.result
            if knobs.b_g2 == "gpu":
                with self._phase(w, p, Phase.b_g2_msm, g, impl):
                    bg2 = self._bg2_gpu or self.P.b_g2_msm
                    k = dev.launch(stream, "b_g2_msm", T["b_g2_msm_gpu"], lambda: bg2(prep, self.pk))
                    dev.wait(k)
                    result["b_g2"] = k.result
            dev.sleep(T["epilogue"])  # read-back, join, cleanup: kernels done, buffers still live
        finally:
            for b in bufs:
                dev.free(b, stream)
            bufs.clear()


def _on_host(x: Any) -> Any:
    """A device array (CuPy) as numpy, for the CPU reference after a GPU failure; else x."""
    return x.get() if type(x).__module__.startswith("cupy") else x


def _corrupt(proof: Any) -> Any:
    """Fault injection: swap A and C so the pairing check must fail."""
    try:
        return type(proof)(a=proof.c, b=proof.b, c=proof.a)
    except Exception:  # a fake proof object in tests
        return ("corrupt", proof)
