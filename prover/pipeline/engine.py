"""The engine: sectors -> partitions -> workers that share each GPU through a LockSet.

    Engine(config, sinks).start()       background threads; returns at once
    .controller                          live knobs (see controller.py)
    .stop(timeout=..., drain=False)      clean stop: locks released, buffers freed, RunEnded
    .wait(timeout) -> bool               True once the run has ended (a bounded run finished)

This file wires the parts and owns the life cycle; the parts are, by job:
prover/events/bus.py (events to sinks), gpu/ (a seat per GPU: its room, device and locks; the
run's GPU compute), queue/ (the work and the job actions), keys/ (circuits, keys, host RAM),
control/ (live knobs; talks back through `EngineHooks`), partition.py (one partition through
the phases on a seat), workers.py (worker pool, monitor), faults.py (injection).
Sinks are called from engine threads with the emit lock held (so events reach every sink in
timestamp order); they must be cheap and must not call back into the engine.
"""
from __future__ import annotations

import importlib
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Callable

from prover import backend as compute_backend
from prover import events as ev
from prover.field import blocks
from prover import placement
from prover.config import ConfigError, RunConfig
from prover.device.base import BaseDevice, Stopped
from prover.device.budget import Sizing, gib
from prover.device.profiles import get_profile
from prover.disciplines import b_g2
from prover.events.bus import EventBus, Sink
from prover.pipeline.control.controller import Controller, Knobs
from prover.pipeline.faults import Faults
from prover.pipeline.gpu.compute import host_compute, load_gpu_compute
from prover.pipeline.gpu.locks import LockSet
from prover.pipeline.gpu.resident import ResidentR1cs, matrix_bytes
from prover.pipeline.gpu.seat import Seat, open_seats
from prover.pipeline.health_sampler import HealthSampler
from prover.pipeline.keys.host_ram import HostRam, say_fit, size_host_ram
from prover.pipeline.keys.key_load import HELD
from prover.pipeline.keys.key_ring import KeyDoesNotFit, KeyRing
from prover.pipeline.partition import PartitionFlow, Prover
from prover.pipeline.phases import Phases
from prover.host.threads import threads_line
from prover.pipeline.queue.inbox import Inbox
from prover.pipeline.queue.jobs import JobBoard, act
from prover.pipeline.queue.part import Queue
from prover.pipeline.queue.work_queue import WorkQueue
from prover.pipeline.run_handle import RunHandle
from prover.pipeline.startup import StartupSteps
from prover.pipeline.workers import Monitor, WorkerPool

# On a GPU the compute-lock holder gives the GIL up at every launch and stream sync, then waits
# for it behind the other workers' Python glue: up to the switch interval (5 ms by default) each
# time. Native 2^22 on the H200 held the compute lock 97% of the run at 50% NVML utilisation.
# A shorter interval hands the GIL back sooner (the dashboard does the same, c2tui/dashboard/app.py).
GIL_SWITCH_S = 0.0005

__all__ = ["BackendError", "Engine", "Sink", "resolve_backend"]


class BackendError(RuntimeError):
    """The requested backend cannot run here (e.g. cuda without a GPU or CuPy)."""


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


def resolve_auto_knobs(config: RunConfig, compute: object) -> RunConfig:
    """b_g2 "auto": gpu where the run's compute backend is a device one that runs the G2 MSM
    and batch addition itself (its capabilities), else cpu; abc "auto": gpu where it runs the R1CS
    kernel itself, else host (the values the run's RunStarted.config, the fold and the controller
    then carry)."""
    caps: frozenset[str] = getattr(compute, "capabilities", frozenset())
    on_device = compute is not compute_backend.REFERENCE
    update: dict[str, str] = {}
    if config.b_g2 == "auto":
        g2 = {compute_backend.MSM_G2, compute_backend.BATCH_ADD_G2} <= caps
        update["b_g2"] = (b_g2.GPU if on_device and g2 else b_g2.CPU).name
    if config.abc == "auto":
        update["abc"] = "gpu" if on_device and compute_backend.R1CS in caps else "host"
    return config.model_copy(update=update) if update else config


class Engine(RunHandle):
    def __init__(self, config: RunConfig, sinks: list[Sink] | None = None, *, phases: Phases | None = None,
                 clock: Callable[[], float] = time.monotonic, external: bool = False) -> None:
        self.config = config
        self.clock = clock
        self._bus = EventBus(sinks, clock)
        self.emit, self.add_sink, self.remove_sink = self._bus.emit, self._bus.add_sink, self._bus.remove_sink
        self.profile = get_profile(config.profile)
        self.modelled_log2 = config.modelled
        self.sizing = Sizing(self.profile, self.modelled_log2)  # a partition's buffers, a budget spec in bytes
        self.backend = resolve_backend(config.backend)
        # the one decision of what computes: the CUDA backend (behind the fallback) or the reference
        self.compute, self._compute_why = compute_backend.select(self.backend, config.kernels, self.emit)
        self.config = config = resolve_auto_knobs(config, self.compute)
        self.P: Phases | None = phases
        self._stop = threading.Event()
        self._draining = threading.Event()
        self._finished = threading.Event()
        self._started = False
        self._stop_reason = "stopped"
        try:  # its GPUs are this host's (a fleet's driver checks fleet-wide numbers itself)
            self.check_class_gpus(config.class_gpus)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        self.controller = Controller(Knobs.from_config(config), self.emit, self)
        self.seats: dict[int, Seat] = {}  # a seat per GPU: its room (and device), its locks
        self._budget_spec: int | str = config.vram_budget  # a live change before the seats exist lands here
        self._faults = Faults(config.faults, config.seed, clock, self._stop)
        # external: partitions come from outside (a fleet's driver) through self.inbox
        self.inbox: Inbox | None = None
        self._own: WorkQueue | None = None  # a one-host run's own sectors (none on a fleet host)
        queue: Queue
        if external:
            queue = self.inbox = Inbox(config.n_gpus, self.emit, self._stop, self._draining)
        else:
            queue = self._own = WorkQueue(config, self.emit, clock, self._stop, self._draining, self.request_stop,
                                          self.controller.snapshot)
        self._queue = queue  # what the workers take from
        self._startup = StartupSteps(self.emit, clock)
        self.jobs = JobBoard()  # cancel / requeue flags the partitions' flow reads
        self.host_ram = HostRam(self.emit, clock, self._stop, lambda: self.controller.snapshot().host_ram_budget)
        self.keys: KeyRing | None = None  # the circuits and keys by size, made at start-up (key_ring.py)
        self.resident: ResidentR1cs | None = None  # the circuits' matrices on the GPUs (abc gpu), after the devices
        self._pool = WorkerPool(config, self.emit, self._stop, self._draining, self.controller, self._faults,
                                self._queue, self.host_ram)
        self._prep_pool: ThreadPoolExecutor | None = None
        self._main: threading.Thread | None = None
        self._monitor: Monitor | None = None
        self._health: HealthSampler | None = None  # GPU (NVML) and host health, its own thread
        self._switch_interval: float | None = None  # the process's GIL switch interval, restored at the end

    # --- EngineHooks: what the controller may ask ---------------------------------------------
    def resize_workers(self, n: int) -> None:
        if self._started:
            self._pool.resize(n)

    def submit_sector(self, partitions: int | None = None, source: str = "controller", cls: str | None = None,
                      **job: Any) -> int:
        """`job`: a cuzk job's instances, priority and on_proof (WorkQueue.submit_sector)."""
        if self._own is None:
            assert self.inbox is not None
            return self.inbox.submit_sector(partitions, source)  # refused, in words: the fleet places
        if cls is None and not job:
            return self._own.submit_sector(partitions, source)
        return self._own.submit_sector(partitions, source, cls=cls, **job)

    def serve_only(self) -> None:
        """No sectors of the run's own: it proves what clients submit, until stopped."""
        if self._started:
            raise RuntimeError("serve_only() before start()")
        if self._own is None:
            raise RuntimeError("a fleet host's engine has no sectors of its own to leave out")
        self._own.serve_only()

    def queue_position(self, part: str) -> int | None:
        """Partitions served before `part` while it waits (None: not waiting, or no queue here)."""
        return None if self._own is None else self._own.position(part)

    def set_vram_budget(self, spec: int | str) -> tuple[int, int]:
        """The vram_budget knob's hook: every GPU's room takes the spec through its one door
        (resolved and checked there: BudgetError, with the numbers, if too small; a raise at
        once, a cut once the sections begun before it have left). Returns (old, new) bytes of
        gpu 0. Before the seats exist (set-up still running) the spec is checked and kept:
        they open with it."""
        if not self.seats:
            old, new = (self.sizing.bytes(x) or 0 for x in (self._budget_spec, spec))
            self._budget_spec = spec
            return old, new or old
        self._budget_spec = spec
        changed = [seat.room.set_budget(spec) for seat in self.seats.values()]
        return changed[0]

    @property
    def devices(self) -> dict[int, BaseDevice]:
        """Each GPU's device (its seat's), for readers and tests."""
        return {g: seat.device for g, seat in self.seats.items()}

    @property
    def locksets(self) -> dict[int, LockSet]:
        """Each GPU's locks (its seat's), for readers and tests."""
        return {g: seat.locks for g, seat in self.seats.items()}

    def check_host_ram_budget(self, value: int) -> None:
        """Refuse (ValueError) a live budget below the key in use beside one worker: under it
        the key would be evicted for the workers' buffers and every queued partition fail."""
        floor = self.keys.least_budget() if isinstance(self.keys, KeyRing) else None
        if value > 0 and floor is not None and value < floor[0]:
            raise ValueError(f"{value >> 20} MiB is below what the run needs to go on: {floor[1]} = "
                             f"{(floor[0] + (1 << 20) - 1) >> 20} MiB; give at least that, or off")

    def check_class_gpus(self, value: str) -> None:
        """Refuse (ValueError) a placement naming a GPU this run lacks or leaving a class nowhere."""
        placement.parse(value).check(range(self.config.n_gpus))

    def job_action(self, action: str, target: str, source: str) -> str:
        """cancel / requeue / cordon / uncordon (prover/pipeline/queue/jobs.py): what it did, in words."""
        return act(self._queue, self.jobs, self.emit, action, target, source)

    def request_stop(self, reason: str) -> None:
        if not self._stop.is_set():
            self._stop_reason = reason
            self._stop.set()
        self._queue.wake()

    # --- life cycle ------------------------------------------------------------------------
    def start(self) -> "Engine":
        if self._started:
            raise RuntimeError("engine already started")
        self._started = True
        self._bus.restart_clock()
        blocks.configure(self.config.kernels.fr_thread_count())  # fr's block pool, a process resource
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
            self._queue.wake()
            while not self._finished.is_set() and not self._stop.is_set():
                if self._queue.inflight == 0:
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    break
                time.sleep(0.01)
        self.request_stop(reason or ("drained" if drain else "stopped"))
        left = None if deadline is None else max(0.1, deadline - time.monotonic())
        return self._finished.wait(left)

    # --- main thread -----------------------------------------------------------------------
    def _run(self) -> None:
        reason = None
        try:
            prover = self._init_prover()
            with self._startup.step("host_kernels", "numba compile or cache load"):
                self._warm_host_kernels()
            with self._startup.step("devices", f"{self.config.n_gpus} x {self.backend}"):
                self.seats = open_seats(self.config, self.backend, self.sizing, self._budget_spec, self.controller,
                                        self.emit, self._stop, self.clock, install=self._faults.install,
                                        resident=self._resident_bytes())
            if self.backend == "cuda":
                with self._startup.step("gpu_kernels", "CUDA kernels: compile or cache load"):
                    prover.gpu = load_gpu_compute(self.compute, self._compute_why, prover.phases, self.emit)
                self._switch_interval = sys.getswitchinterval()
                sys.setswitchinterval(min(self._switch_interval, GIL_SWITCH_S))
            if self.config.abc == "gpu":
                with self._startup.step("matrices", "the circuits' matrices onto each GPU (abc gpu)") as step:
                    step.detail = self._place_matrices(prover)
            if self._stop.is_set():
                return
            self._prep_pool = ThreadPoolExecutor(max_workers=max(4, 16 * self.config.n_gpus),
                                                 thread_name_prefix="prep")
            flow = PartitionFlow(self.config, self.seats, prover, self.controller, self._faults, self._prep_pool,
                                 self.emit, self.clock, self._stop, self._times(), self.jobs)
            flow.resident = self.resident
            if self._own is not None:  # a fleet's driver feeds the inbox; a one-host run queues its own
                self._own.top_up()  # a bounded look-ahead; take() tops it up as partitions go
            self._health = HealthSampler(self.config.health_sample_s, self.emit, self._stop, self.devices)
            self._health.start()
            self._monitor = Monitor(self.config, self.emit, self.clock, self._stop, self.seats, self._pool,
                                    flow.current)
            self._pool.start(flow)
            self._monitor.thread.start()
            while not self._stop.wait(0.05):
                if self._own is not None:  # a fleet host's inbox has no deadlines
                    self._own.check_deadlines()
                if self._draining.is_set() and self._queue.inflight == 0:
                    self.request_stop("done (drained)")
        except Stopped:  # a stop asked during start-up (the key set-up checks for it): the stop's reason
            pass
        except Exception as exc:
            reason = f"error: {type(exc).__name__}: {exc}"
            trace = "" if isinstance(exc, KeyDoesNotFit) else f"\n{traceback.format_exc(limit=4)}"  # a refusal, in words
            self.emit(ev.Note, level="error", text=f"engine failed: {exc}{trace}")
            self._stop.set()
        finally:
            self._shutdown(reason or self._stop_reason)

    def _shutdown(self, reason: str) -> None:
        self._stop.set()
        self._queue.wake()
        self._pool.join(timeout=10)
        if self._monitor is not None and self._monitor.thread.is_alive():
            self._monitor.thread.join(timeout=5)
        if self._health is not None:
            self._health.join(timeout=5)
        if self._prep_pool is not None:
            self._prep_pool.shutdown(wait=True, cancel_futures=True)
        if self.resident is not None:
            try:
                self.resident.close()  # the circuits' matrices freed, their room let go
            except Exception as exc:  # pragma: no cover - device teardown
                self.emit(ev.Note, level="warn", text=f"resident matrices: {exc}")
        abandoned = self._queue.inflight
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
        if self._switch_interval is not None:
            sys.setswitchinterval(self._switch_interval)
        self._finished.set()

    def _times(self) -> dict[int | None, dict[str, float]]:
        """Modelled phase times by proved size (a smaller class's phases are shorter); None: the run's.
        With abc gpu the pre-stage uploads z's form, not a, b, c: its times scale by the bytes."""
        share = self._upload_share()
        return {None: self.profile.times(self.modelled_log2, share),
                **{z.log2: self.profile.times(z.modelled_log2, share) for z in self.config.class_sizes.values()}}

    def _upload_share(self) -> float:
        """The pre-stage's upload against a, b, c's (96 B a row): z's form (abc gpu; its buffers whole)."""
        if self.config.abc != "gpu":
            return 1.0
        sizing = self.sizing if self.sizing.abc == "gpu" else replace(self.sizing, abc="gpu")  # before the circuit
        return sizing.upload / (96 << self.modelled_log2)

    def _sizing(self, circuit: Any) -> Sizing:
        """A partition's plan: the run's circuit's variables (and field variables) at the modelled
        size, where a/b/c are made: a family member's counted at that size from its shape (a small
        proved member's shares are not a large one's), another circuit's scaled."""
        nv, nf = getattr(circuit, "num_vars", None), getattr(circuit, "field_vars", None)
        if hasattr(circuit, "layout") and self.modelled_log2 != self.config.constraints_log2:
            from prover.groth16.circuit import family_counts

            nv, nf = family_counts(self.modelled_log2)
        scale = 1.0 if hasattr(circuit, "layout") else 2.0 ** (self.modelled_log2 - self.config.constraints_log2)
        return Sizing(self.profile, self.modelled_log2, abc=self.config.abc,
                      variables=int(nv * scale) if isinstance(nv, int) else None,
                      field_vars=int(nf * scale) if isinstance(nf, int) else None)

    def _matrix_scale(self, log2: int) -> float:
        """A class's modelled size over its proved one (its resident matrices' bytes are counted modelled)."""
        for z in self.config.class_sizes.values():
            if z.log2 == log2:
                return 2.0 ** (z.modelled_log2 - z.log2)
        return 2.0 ** (self.modelled_log2 - self.config.constraints_log2)

    def _resident_bytes(self) -> int:
        """Bytes the circuits' matrices will hold on a GPU (abc gpu; every class's circuit, as if all
        were hot): each room checks the budget holds a partition beside them when it opens."""
        if self.config.abc != "gpu" or self.keys is None:
            return 0
        return sum(sum(matrix_bytes(self.keys.entry(lg).circuit, self._matrix_scale(lg)).values())
                   for lg in self.keys.sizes())

    def _place_matrices(self, prover: Prover) -> str:
        """The matrices of every circuit whose key is hot onto every GPU (the key ring places a
        circuit's when its key is loaded later, and drops them when it is evicted)."""
        assert self.keys is not None
        self.resident = ResidentR1cs(self.seats, prover.gpu, lambda lg: self._matrix_scale(lg))
        placed = [(lg, self.resident.place(lg, self.keys.entry(lg).circuit))
                  for lg, state, *_ in self.keys.entries() if state == "hot"]
        where = "on the GPU (R1CS kernel)" if prover.gpu.r1cs_on_device else "modelled; a/b/c made on the host"
        return "; ".join(f"2^{lg}: {gib(n)} a GPU" for lg, n in placed) + f" ({where})"

    def _circuit_hot(self, log2: int, circuit: Any) -> None:
        """The key ring made log2's key hot: its circuit's matrices onto the GPUs (once they exist)."""
        if self.resident is not None:
            self.resident.place(log2, circuit)

    def _circuit_cold(self, log2: int) -> None:
        """The key ring made log2's key cold: its circuit's matrices off the GPUs."""
        if self.resident is not None:
            self.resident.drop(log2)

    def _init_prover(self) -> Prover:
        """The circuits of every class size, the workers' host bytes, then the run's key made
        hot (the key ring loads the others when a partition of their size needs them)."""
        if self.P is None:
            self.P = importlib.import_module("prover.groth16.phases")
        P, cfg = self.P, self.config
        t0 = time.monotonic()
        prover = Prover(P, None, None, None, host_compute(P, "sim" if self.backend == "sim" else "cpu-reference"))
        self.keys = prover.keys = KeyRing(P, cfg, self.emit, self.clock, self._stop, self.host_ram,
                                          lambda pk: prover.gpu.drop_key(pk),
                                          resident=lambda log2: self.backend == "cuda" and cfg.kernels.key_on_device(log2),
                                          on_hot=self._circuit_hot, on_cold=self._circuit_cold)
        sizes = sorted({z.log2 for z in cfg.class_sizes.values()}, reverse=True)
        with self._startup.step("circuit", ", ".join(f"2^{k}" for k in sizes) + " R1CS") as step:
            if self.keys.make_circuits(list(cfg.class_sizes.values())):
                step.detail += f" ({HELD})"
        run_circuit = self.keys.entry(cfg.constraints_log2).circuit
        self.sizing = self._sizing(run_circuit)  # z's bytes are the circuit's (abc gpu)
        size_host_ram(self.host_ram, self.emit, run_circuit, cfg, self.modelled_log2, self.backend)
        with self._startup.step("keys", "cache lookup") as step:
            step.detail = self.keys.preload(cfg.constraints_log2, step.progress) or step.detail
        say_fit(self.host_ram, self.emit, cfg.workers_per_gpu * cfg.n_gpus, self.keys.device_bytes(), abc=cfg.abc)
        self.emit(ev.Note, level="info", text=threads_line(cfg.host_threads, cfg.workers_per_gpu * cfg.n_gpus))
        if cfg.insecure_seeded_setup:  # said on screen and in the recording, not only in the config
            self.emit(ev.Note, level="warn", text=(
                "INSECURE seeded setup: the keys' toxic waste comes from the seed; anyone who knows it can forge proofs"))
        if cfg.insecure_seeded_proofs:
            self.emit(ev.Note, level="warn", text=(
                "INSECURE seeded proofs: r, s come from the seed; with the key, anyone can tell each proof's witness"))
        self.emit(ev.Note, level="info", text=(
            f"circuit 2^{cfg.constraints_log2} proved for real; modelled 2^{self.modelled_log2} "
            f"({self.profile.name}); circuit and key in {time.monotonic() - t0:.2f}s"
            + (f" (the key {HELD})" if step.detail == HELD else "")))
        return prover

    def _warm_host_kernels(self) -> None:
        """Compile (or load from numba's cache) the host kernels before any worker needs them,
        so the first partitions' synthesis times are not JIT time."""
        from prover.groth16 import warm

        if not getattr(self.P, "uses_host_kernels", True):
            return
        try:
            took = warm.warm_up()
        except Exception as exc:  # the workers would hit the same error: say it once here
            self.emit(ev.Note, level="warn", text=f"host kernels warm-up failed: {type(exc).__name__}: {exc}")
            return
        self.emit(ev.Note, level="info", text=f"host kernels warmed up in {took:.2f}s (numba compile or cache load)")
