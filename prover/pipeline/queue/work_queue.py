"""The queue of partitions, the worker threads that take from it (one pool per GPU), and the
monitor thread (VRAM samples, watchdog, supervisor that respawns dead workers)."""
from __future__ import annotations

import threading
import traceback
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

from prover import events as ev
from prover.config import RunConfig
from prover.device.base import BaseDevice, Stopped
from prover.pipeline.control.controller import Controller
from prover.pipeline.faults import Faults, WorkerDeath
from prover.classes import DEFAULT, proof_class
from prover.pipeline.queue.class_queue import ClassQueues
from prover.pipeline.keys.host_ram import HostRam
from prover.pipeline.gpu.locks import LockSet
from prover.pipeline.queue.placing import Placing
from prover.pipeline.partition import Outcome, Partition, PartitionFlow

Emit = Callable[..., Any]
_STALL_KEYS_KEPT = 10000


LOOKAHEAD_SECTORS = 2  # sectors queued ahead of the workers: any --sectors starts at once


def sector_due(waiting: int, partitions: int, sectors_left: int | None) -> bool:
    """Whether a run should queue its next sector now: fewer than LOOKAHEAD_SECTORS' partitions
    wait, and sectors are left (None: no end). One host's WorkQueue and a fleet's driver alike."""
    return waiting < LOOKAHEAD_SECTORS * partitions and (sectors_left is None or sectors_left > 0)


class WorkQueue:
    """Sectors split into partitions, taken in order, queued lazily: at most LOOKAHEAD_SECTORS
    of the run's sectors wait at a time (--sectors 10^8 would otherwise be queued, and
    recorded, before the first partition starts)."""

    def __init__(self, config: RunConfig, emit: Emit, clock: Callable[[], float], stop: threading.Event,
                 draining: threading.Event, request_stop: Callable[[str], None],
                 knobs: Callable[[], Any] | None = None) -> None:
        """`knobs`: the controller's snapshot, read for placement (class_gpus) and why work waits."""
        self._partitions, self._bounded = config.partitions, config.sectors is not None
        self._sectors_left = config.sectors  # the run's sectors not queued yet; None: no end
        self._emit, self._clock, self._stop, self._draining = emit, clock, stop, draining
        self._request_stop = request_stop
        self._queue = ClassQueues(emit)  # one FIFO per proof class, most urgent first
        self._running: dict[str, Partition] = {}  # taken and not finished (job actions find them here)
        self.cordoned: set[int] = set()  # GPUs that take no new partition (prover/pipeline/queue/jobs.py)
        self._placing = Placing(config.n_gpus, emit, knobs)  # class_gpus, and why each class waits
        self._n_gpus = config.n_gpus  # a cordon names one of these, or it is refused
        self._time_scale = config.time_scale
        self._sizes = config.class_sizes  # each class's circuit size (prover/classes.py)
        self.cv = threading.Condition()
        self._count_lock = threading.Lock()
        self._next_sector = self._next_instance = 0
        self._queued_total = self._done_total = self._inflight = 0

    @property
    def inflight(self) -> int:
        with self._count_lock:
            return self._inflight

    def wake(self) -> None:
        with self.cv:
            self.cv.notify_all()

    def submit_sector(self, partitions: int | None = None, source: str = "controller", cls: str | None = None) -> int:
        """Queue one sector of `partitions` (default: its class's, else the config's) of proof
        class `cls` (default c2); returns its number."""
        pc = proof_class(cls or DEFAULT)
        n = partitions or pc.partitions or self._partitions
        with self.cv:
            sector = self._next_sector
            self._next_sector += 1
            self._queued_total += n
            now = self._clock()
            within = None if pc.deadline_s is None else pc.deadline_s * self._time_scale
            self._queue.add_sector(sector, pc.name, None if within is None else now + within, n)
            size = self._sizes[pc.name]
            self._emit(ev.SectorSubmitted, sector=sector, partitions=n, proof_class=pc.name, deadline_s=within,
                       source=source, log2=size.log2, modelled_log2=size.modelled_log2)
            for i in range(n):
                p = Partition(id=f"s{sector}p{i}", sector=sector, index=i, instance=self._next_instance,
                              queued_t=now, cls=pc.name, log2=size.log2)
                self._next_instance += 1
                self._queue.append(p)
                self._emit(ev.PartitionQueued, part=p.id, sector=sector, index=i, proof_class=pc.name)
            self.cv.notify_all()
        return sector

    def top_up(self) -> None:
        """Queue the run's next sectors while fewer than LOOKAHEAD_SECTORS' partitions wait."""
        with self.cv:
            while not self._stop.is_set() and sector_due(self._queue.waiting(), self._partitions, self._sectors_left):
                if self._sectors_left is not None:
                    self._sectors_left -= 1
                self.submit_sector(None, source="config" if self._bounded else "auto")

    def take(self, gpu: int) -> Partition | None:
        """The next partition `gpu`'s worker may take (placement: class_gpus), most urgent first;
        None after a short wait when there is none."""
        with self.cv:
            self.top_up()
            if self._stop.is_set() or self._draining.is_set():
                return None
            try:
                if gpu in self.cordoned:
                    raise IndexError("cordoned")
                p = self._queue.popleft(self._placing.allowed(gpu))
            except IndexError:
                self.cv.wait(0.1)
                return None
            self._running[p.id] = p
            self._placing.took(p, gpu, self._queue.waiting(p.cls))
            with self._count_lock:
                self._inflight += 1
            return p

    def requeue(self, p: Partition, gpu: int) -> None:
        """A failed partition goes back to the front for another attempt."""
        with self.cv:
            self._running.pop(p.id, None)
            self._placing.left(p)
            self._queue.appendleft(p)
            self._emit(ev.PartitionQueued, part=p.id, sector=p.sector, index=p.index, proof_class=p.cls)
            self.cv.notify_all()
        with self._count_lock:
            self._inflight -= 1

    def check_deadlines(self) -> None:
        """Deadlines passed, and why each class waits (the engine's main loop, every 50 ms)."""
        with self.cv:
            now = self._clock()
            self._queue.check(now)
            self._placing.explain(self._queue, self.cordoned, now)

    def running(self) -> list[Partition]:
        with self.cv:
            return list(self._running.values())

    def cordon(self, gpu: int, on: bool) -> str:
        action = "cordon" if on else "uncordon"
        if not 0 <= gpu < self._n_gpus:  # a typo ('cordon 10' for 1) must not pass as done
            have = "gpu0" if self._n_gpus == 1 else f"gpu0..gpu{self._n_gpus - 1}"
            raise ValueError(f"{action}: this run has no gpu{gpu} (it has {have})")
        with self.cv:
            was = gpu in self.cordoned
            (self.cordoned.add if on else self.cordoned.discard)(gpu)
            self.cv.notify_all()
        if was == on:
            return f"gpu{gpu} already {'cordoned' if on else 'uncordoned'}"
        return f"gpu{gpu} {'cordoned: no new work, in-flight work finishes' if on else 'uncordoned'}"

    def remove_queued(self, match: Callable[[Partition], bool]) -> list[Partition]:
        """Cancel the waiting partitions `match` picks: out of the queue, counted as finished."""
        with self.cv:
            gone = self._queue.remove(match)
        for p in gone:
            self._count_finished(p, inflight=False)
        return gone

    def finished(self, p: Partition) -> None:
        self._count_finished(p, inflight=True)

    def _count_finished(self, p: Partition, inflight: bool) -> None:
        with self.cv:
            self._running.pop(p.id, None)
            self._placing.left(p)
            self._queue.finished(p, self._clock())
        with self._count_lock:
            self._inflight -= inflight
            self._done_total += 1
            done = self._bounded and not self._sectors_left and self._done_total >= self._queued_total
        if done:
            with self.cv:
                empty = not self._queue
            if empty:
                self._request_stop("done")


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
                 controller: Controller, faults: Faults, queue: Any, host_ram: HostRam | None = None) -> None:
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
                 devices: dict[int, BaseDevice], locksets: dict[int, LockSet], pool: WorkerPool,
                 current: dict[str, tuple[str, str, int | None, float]]) -> None:
        self._period = config.vram_sample_s
        self._lock_s, self._phase_s = config.faults.watchdog_lock_s, config.faults.watchdog_phase_s
        self._emit, self._clock, self._stop = emit, clock, stop
        self._devices, self._locksets, self._pool, self._current = devices, locksets, pool, current
        self._stalled: set[tuple] = set()
        self.thread = threading.Thread(target=self._loop, name="engine-monitor", daemon=True)

    def _loop(self) -> None:
        next_sample = 0.0
        while not self._stop.wait(min(self._period, 0.05)):
            now = self._clock()
            if now >= next_sample:
                next_sample = now + self._period
                for d in self._devices.values():
                    try:
                        d.sample()
                    except Exception as exc:  # pragma: no cover
                        self._emit(ev.Note, level="warn", text=f"gpu{d.index} sample failed: {exc}")
            self._watchdog(now)
            self._pool.supervise()

    def _stall(self, key: tuple, **fields: Any) -> None:
        if key not in self._stalled:
            self._stalled.add(key)
            self._emit(ev.Stall, **fields)

    def _watchdog(self, now: float) -> None:
        for g, ls in self._locksets.items():
            for lname, (holder, part, since) in ls.holders().items():
                if holder and now - since > self._lock_s:
                    self._stall(("lock", g, lname, holder, since), what="lock", gpu=g, worker=holder, part=part,
                                name=lname, seconds=round(now - since, 3))
        for w, (phase, part, gpu, t0) in list(self._current.items()):
            if now - t0 > self._phase_s:
                self._stall(("phase", w, part, phase, t0), what="phase", gpu=gpu, worker=w, part=part, name=phase,
                            seconds=round(now - t0, 3))
        if len(self._stalled) > _STALL_KEYS_KEPT:
            self._stalled.clear()
