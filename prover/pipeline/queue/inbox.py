"""Per-GPU queues of partitions placed on an engine from outside (the fleet's driver).

`Engine(config, external=True)` takes its work from `engine.inbox` instead of a WorkQueue of
its own sectors: it submits nothing and never ends by itself (its owner stops it). The workers
of GPU g take from queue g, so whoever fills the queues decides placement; a failed attempt
goes back to the front of its GPU's queue (the engine's retries stay local). The interface is
WorkQueue's (take, requeue, finished, wake, inflight), so the worker pool does not care.
"""
from __future__ import annotations

import threading
from collections import deque
from typing import Any, Callable

from prover import events as ev
from prover.pipeline.queue.part import Partition


class Inbox:
    def __init__(self, gpus: int, emit: Callable[..., Any], stop: threading.Event, draining: threading.Event) -> None:
        self._q: dict[int, deque[Partition]] = {g: deque() for g in range(gpus)}
        self._emit, self._stop, self._draining = emit, stop, draining
        self.cv = threading.Condition()
        self._inflight = 0

    @property
    def inflight(self) -> int:
        with self.cv:
            return self._inflight

    def put(self, gpu: int, p: Partition) -> None:
        if gpu not in self._q:
            raise ValueError(f"no gpu {gpu} here (have 0..{len(self._q) - 1})")
        with self.cv:
            self._q[gpu].append(p)
            self.cv.notify_all()

    def depth(self, gpu: int) -> int:
        with self.cv:
            return len(self._q[gpu])

    def wake(self) -> None:
        with self.cv:
            self.cv.notify_all()

    def submit_sector(self, partitions: int | None = None, source: str = "controller") -> int:
        raise RuntimeError("this engine proves what its fleet driver places; submit sectors to the fleet")

    # --- the worker pool's side (WorkQueue's interface) ---------------------------------------
    def take(self, gpu: int) -> Partition | None:
        with self.cv:
            q = self._q[gpu]
            if not q and not (self._stop.is_set() or self._draining.is_set()):
                self.cv.wait(0.1)
            if not q or self._stop.is_set() or self._draining.is_set():
                return None
            self._inflight += 1
            return q.popleft()

    def requeue(self, p: Partition, gpu: int) -> None:
        with self.cv:
            self._q[gpu].appendleft(p)
            self._inflight -= 1
            self._emit(ev.PartitionQueued, part=p.id, sector=p.sector, index=p.index)
            self.cv.notify_all()

    def finished(self, p: Partition) -> None:
        with self.cv:
            self._inflight -= 1
