"""The queue of one host's run: its sectors split into partitions, queued a few sectors ahead,
taken most urgent class first by the workers of each GPU (placement: class_gpus), with the
sectors' deadlines and the operators' cordons."""
from __future__ import annotations

import threading
from functools import partial
from typing import Any, Callable

from prover import events as ev
from prover.config import RunConfig
from prover.classes import DEFAULT, proof_class
from prover.pipeline.queue.class_queue import ClassQueues
from prover.pipeline.queue.part import Partition
from prover.pipeline.queue.placing import Placing

Emit = Callable[..., Any]

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

    def submit_sector(self, partitions: int | None = None, source: str = "controller", cls: str | None = None,
                      *, instances: list[int] | None = None, priority: int = 2,
                      on_proof: Callable[[str, bytes], None] | None = None) -> int:
        """Queue one sector of `partitions` (default: its class's, else the config's) of proof
        class `cls` (default c2); returns its number. A cuzk job (prover/cuzk) gives each
        partition's witness seed (`instances`), its priority within the class, and a callback
        for each partition's proof bytes (part id, bytes)."""
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
                pid = f"s{sector}p{i}"
                p = Partition(id=pid, sector=sector, index=i, instance=self._next_instance if instances is None
                              else instances[i], queued_t=now, cls=pc.name, log2=size.log2, priority=priority,
                              on_proof=None if on_proof is None else partial(on_proof, pid))
                self._next_instance += instances is None
                self._queue.append(p)
                self._emit(ev.PartitionQueued, part=p.id, sector=sector, index=i, proof_class=pc.name)
            self.cv.notify_all()
        return sector

    def serve_only(self) -> None:
        """Queue none of the run's own sectors and never end for lack of them: the work comes
        from outside (a cuzk client, prover/cuzk). Before the engine starts."""
        with self.cv:
            self._sectors_left, self._bounded = 0, False

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

    def position(self, part: str) -> int | None:
        """Partitions served before `part` while it waits (None: not waiting)."""
        with self.cv:
            return self._queue.position(part)

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
