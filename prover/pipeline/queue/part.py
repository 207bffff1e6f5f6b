"""What waits in a queue: a partition, and the face a worker takes partitions through (one
host's WorkQueue, or a fleet host's Inbox placed from outside)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol


@dataclass
class Partition:
    id: str
    sector: int
    index: int
    instance: int
    queued_t: float
    attempts: int = 0
    cls: str = "c2"  # proof class (prover/classes.py)
    log2: int | None = None  # its class's circuit size (None: the run's)
    key: Any = None  # while it runs: its key, pinned (keys/key_ring.RingKey: circuit, pk, vk)
    priority: int = 2  # within its class, higher first (cuzk's LOW 1 .. CRITICAL 4; prover/cuzk)
    on_proof: Callable[[bytes], None] | None = None  # given its proof's bytes once made (a cuzk job's)


class Queue(Protocol):
    """What the worker pool and the engine use of a queue (queue/work_queue.WorkQueue, queue/inbox.Inbox)."""

    @property
    def inflight(self) -> int: ...
    def take(self, gpu: int) -> Partition | None: ...
    def requeue(self, p: Partition, gpu: int) -> None: ...
    def finished(self, p: Partition) -> None: ...
    def wake(self) -> None: ...
