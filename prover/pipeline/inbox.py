"""Per-GPU queues of partitions handed to an engine from outside (the fleet's driver).

An engine built with `Engine(config, inbox=Inbox(n))` proves only what is put here: it
submits no sectors of its own and never ends by itself (its owner stops it). The workers of
GPU g take from queue g, so whoever fills the queues decides placement; a partition whose
attempt fails goes back to the front of its GPU's queue (the engine's retries).
"""
from __future__ import annotations

import threading
from collections import deque
from typing import Any


class Inbox:
    def __init__(self, gpus: int) -> None:
        self._q: dict[int, deque[Any]] = {g: deque() for g in range(gpus)}
        self._cv = threading.Condition()

    def put(self, gpu: int, part: Any, front: bool = False) -> None:
        if gpu not in self._q:
            raise ValueError(f"no gpu {gpu} here (have 0..{len(self._q) - 1})")
        with self._cv:
            (self._q[gpu].appendleft if front else self._q[gpu].append)(part)
            self._cv.notify_all()

    def take(self, gpu: int, timeout: float) -> Any | None:
        """The next partition for `gpu`, or None after `timeout` seconds without one."""
        with self._cv:
            q = self._q[gpu]
            if not q:
                self._cv.wait(timeout)
            return q.popleft() if q else None

    def depth(self, gpu: int) -> int:
        with self._cv:
            return len(self._q[gpu])

    def wake(self) -> None:
        with self._cv:
            self._cv.notify_all()
