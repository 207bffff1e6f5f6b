"""The worker threads that take partitions from the queue (a pool per GPU), and the monitor
thread (VRAM samples, the watchdog, the supervisor that respawns dead workers)."""
from __future__ import annotations

import threading
import traceback
from dataclasses import dataclass
from typing import Any, Callable

from prover import events as ev
from prover.config import RunConfig
from prover.device.base import Stopped
from prover.pipeline.control.controller import Controller
from prover.pipeline.faults import Faults, WorkerDeath
from prover.pipeline.gpu.seat import Seat
from prover.pipeline.keys.host_ram import HostRam
from prover.pipeline.partition import Outcome, PartitionFlow
from prover.pipeline.queue.part import Partition, Queue

Emit = Callable[..., Any]
_STALL_KEYS_KEPT = 10000


@dataclass
class _Worker:
    name: str
    gpu: int
    thread: threading.Thread
    retire: bool = False
    dead: bool = False


class WorkerPool:
    """Workers per GPU: each takes a partition, runs its flow, retries or counts the outcome."""

    def __init__(self, config: RunConfig, emit: Emit, stop: threading.Event, draining: threading.Event,
                 controller: Controller, faults: Faults, queue: Queue, host_ram: HostRam | None = None) -> None:
        """`queue`: a WorkQueue, or an Inbox (prover.pipeline.queue.inbox) placed from outside;
        `host_ram`: admits each worker under the host-RAM budget before it takes work."""
        self._host_ram = host_ram
        self._n_gpus, self._retries = config.n_gpus, config.faults.retries
        self._emit, self._stop, self._draining = emit, stop, draining
        self._controller, self._faults, self._queue = controller, faults, queue
        self._workers: dict[int, list[_Worker]] = {}
        self._lock = threading.RLock()
        self._seq: dict[int, int] = {}
        self._flow: PartitionFlow | None = None  # None until start(): a resize before that is a no-op

    def start(self, flow: PartitionFlow) -> None:
        with self._lock:  # a concurrent resize waits for this, then resizes
            self._flow = flow
            for g in range(self._n_gpus):
                for _ in range(self._controller.snapshot().workers_per_gpu):
                    self._spawn(g)

    def _spawn(self, gpu: int) -> None:
        with self._lock:
            n = self._seq.get(gpu, 0)
            self._seq[gpu] = n + 1
            name = f"g{gpu}w{n}"
            w = _Worker(name=name, gpu=gpu, thread=threading.Thread(target=self._loop, args=(name, gpu),
                                                                    name=f"worker-{name}", daemon=True))
            self._workers.setdefault(gpu, []).append(w)
        w.thread.start()

    def resize(self, n: int) -> None:
        if self._stop.is_set():
            return
        with self._lock:
            if self._flow is None:
                return  # the workers do not exist yet: start() spawns the new target
            for g in range(self._n_gpus):
                alive = [w for w in self._workers.get(g, []) if not w.dead and not w.retire]
                if len(alive) < n:
                    for _ in range(n - len(alive)):
                        self._spawn(g)
                else:
                    for w in alive[n:]:
                        w.retire = True
        self._queue.wake()

    def supervise(self) -> None:
        """Respawn dead workers up to the target (not while stopping or draining)."""
        if self._stop.is_set() or self._draining.is_set():
            return
        target = self._controller.snapshot().workers_per_gpu
        with self._lock:
            for g in range(self._n_gpus):
                ws = self._workers.get(g, [])
                ws[:] = [w for w in ws if not (w.dead and not w.thread.is_alive())]
                alive = [w for w in ws if not w.dead and not w.retire]
                for _ in range(target - len(alive)):
                    self._spawn(g)

    def join(self, timeout: float) -> None:
        with self._lock:
            workers = [w for ws in self._workers.values() for w in ws]
        for w in workers:
            w.thread.join(timeout=timeout)

    def _me(self, name: str, gpu: int) -> _Worker | None:
        with self._lock:
            for w in self._workers.get(gpu, []):
                if w.name == name:
                    return w
        return None

    def _loop(self, name: str, gpu: int) -> None:
        self._emit(ev.WorkerStarted, gpu=gpu, worker=name)
        reason = "stopped"
        try:
            reason = self._work(name, gpu)
        except WorkerDeath:
            reason = "died: injected fault"
        except Exception as exc:  # a bug: say so, the supervisor respawns
            reason = f"crashed: {type(exc).__name__}: {exc}"
            self._emit(ev.Note, level="error", text=f"worker {name} crashed: {traceback.format_exc(limit=6)}")
        finally:
            me = self._me(name, gpu)
            if me is not None:
                me.dead = True
            assert self._flow is not None
            self._flow.current.pop(name, None)
            if self._host_ram is not None:
                self._host_ram.release(name)
            self._emit(ev.WorkerStopped, gpu=gpu, worker=name, reason=reason)

    def _work(self, name: str, gpu: int) -> str:
        """Take and prove partitions until told otherwise; returns why this worker stopped."""
        while not self._stop.is_set():
            me = self._me(name, gpu)
            if me is not None and me.retire:
                return "scaled down"
            if not self._controller.wait_unpaused(self._stop):
                break
            if self._draining.is_set():
                return "drained"
            if self._faults.worker_dies():
                raise WorkerDeath()
            if self._host_ram is not None and not self._host_ram.admit(name, lambda: self._leaving(name, gpu)):
                continue  # stopped, draining or retired while held back: the checks above say which
            p = self._queue.take(gpu)
            if p is None:
                continue
            try:
                self._prove(name, gpu, p)
            except Stopped:
                break
        return "stopped"

    def _leaving(self, name: str, gpu: int) -> bool:
        me = self._me(name, gpu)
        return self._draining.is_set() or (me is not None and me.retire)

    def _prove(self, name: str, gpu: int, p: Partition) -> None:
        assert self._flow is not None
        res = self._flow.run(name, gpu, p)
        self._flow.jobs.drop(p.id)  # a flag that came too late (the partition got through) is spent
        if res.outcome is Outcome.requeued:
            self._queue.requeue(p, gpu)
            return
        if res.outcome is Outcome.failed and p.attempts < self._retries:
            p.attempts += 1
            self._emit(ev.Note, level="warn", text=f"{p.id} failed ({res.reason}); retry {p.attempts}")
            self._queue.requeue(p, gpu)
            return
        if res.outcome is Outcome.failed:
            self._emit(ev.PartitionDone, part=p.id, ok=False, seconds=max(0.0, self._flow.clock() - p.queued_t),
                       reason=res.reason)
        self._queue.finished(p)


class Monitor:
    """One thread: VRAM samples every vram_sample_s, the watchdog's Stall events, the supervisor."""

    def __init__(self, config: RunConfig, emit: Emit, clock: Callable[[], float], stop: threading.Event,
                 seats: dict[int, Seat], pool: WorkerPool, current: dict[str, tuple[str, str, int | None, float]]) -> None:
        self._period = config.vram_sample_s
        self._lock_s, self._phase_s = config.faults.watchdog_lock_s, config.faults.watchdog_phase_s
        self._emit, self._clock, self._stop = emit, clock, stop
        self._seats, self._pool, self._current = seats, pool, current
        self._stalled: set[tuple] = set()
        self.thread = threading.Thread(target=self._loop, name="engine-monitor", daemon=True)

    def _loop(self) -> None:
        next_sample = 0.0
        while not self._stop.wait(min(self._period, 0.05)):
            now = self._clock()
            if now >= next_sample:
                next_sample = now + self._period
                for g, seat in self._seats.items():
                    try:
                        seat.device.sample()
                    except Exception as exc:  # pragma: no cover
                        self._emit(ev.Note, level="warn", text=f"gpu{g} sample failed: {exc}")
            self._watchdog(now)
            self._pool.supervise()

    def _stall(self, key: tuple, **fields: Any) -> None:
        if key not in self._stalled:
            self._stalled.add(key)
            self._emit(ev.Stall, **fields)

    def _watchdog(self, now: float) -> None:
        for g, seat in self._seats.items():
            for lname, (holder, part, since) in seat.locks.holders().items():
                if holder and now - since > self._lock_s:
                    self._stall(("lock", g, lname, holder, since), what="lock", gpu=g, worker=holder, part=part,
                                name=lname, seconds=round(now - since, 3))
        for w, (phase, part, gpu, t0) in list(self._current.items()):
            if now - t0 > self._phase_s:
                self._stall(("phase", w, part, phase, t0), what="phase", gpu=gpu, worker=w, part=part, name=phase,
                            seconds=round(now - t0, 3))
        if len(self._stalled) > _STALL_KEYS_KEPT:
            self._stalled.clear()
