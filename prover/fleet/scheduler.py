"""The driver's placement: which GPU of which host proves the next partition.

Pure bookkeeping (no Ray, no threads), fed by the driver from the event stream:
- every GPU has a bound on pending work (assigned, not yet done): its workers plus `depth`
  queued behind them. A GPU at its bound gets nothing more: backpressure, so a slow or
  stuck host never hoards the queue, and a partition waits in the driver (where any host
  can take it) rather than on one host's queue.
- among GPUs under their bound, the least loaded (pending / workers) wins; ties go to the
  most free VRAM budget (budget - pool used, from VramSample), then the lowest number.
- a cordoned GPU ((host, gpu) in `cordoned`) gets nothing new; what is pending there finishes
  and is counted as usual (an operator taking a GPU out of service without losing work).
- placement (`placement`, the class_gpus knob with fleet-wide GPU numbers, prover/placement.py):
  a class goes only where it may run, and a GPU's kept share stays free for its class.
A whole sector need not stay on one host: each partition is placed on its own. A slow GPU
needs no rule of its own: it sits at its bound longer, so it is offered less (tested under
random schedules in tests/pipeline/test_fleet_placement.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from prover.placement import NONE, Placement


@dataclass
class GpuSlot:
    host: str
    gpu: int  # fleet-wide number
    workers: int
    budget: int
    used: int = 0
    pending: set[str] = field(default_factory=set)

    @property
    def free(self) -> int:
        return self.budget - self.used


class Scheduler:
    def __init__(self, depth: int = 1) -> None:
        if depth < 0:
            raise ValueError("depth must be >= 0")
        self.depth = depth
        self.slots: dict[int, GpuSlot] = {}
        self.where: dict[str, int] = {}  # partition -> gpu it is pending on
        self.cordoned: set[tuple[str, int]] = set()  # (host, fleet-wide gpu): no new work there
        self.placement: Placement = NONE  # class_gpus, fleet-wide numbers (FleetController sets it)

    # --- the fleet's shape ------------------------------------------------------------------
    def add_host(self, host: str, gpu_offset: int, gpus: int, workers: int, budget: int) -> None:
        for g in range(gpu_offset, gpu_offset + gpus):
            self.slots[g] = GpuSlot(host=host, gpu=g, workers=workers, budget=budget)

    def remove_host(self, host: str) -> list[str]:
        """Forget a host's GPUs; returns the partitions that were pending there (to requeue)."""
        lost: list[str] = []
        for g in [g for g, s in self.slots.items() if s.host == host]:
            lost += sorted(self.slots.pop(g).pending)
        for p in lost:
            self.where.pop(p, None)
        self.cordoned = {c for c in self.cordoned if c[0] != host}
        return lost

    def cordon(self, gpu: int, on: bool = True) -> tuple[str, int]:
        """Keep new work off `gpu` (fleet-wide number), or (on=False) let it back; its pending
        partitions finish. Returns its (host, gpu); ValueError for a GPU the fleet lacks."""
        s = self.slots.get(gpu)
        if s is None:
            raise ValueError(f"no GPU {gpu} in the fleet (GPUs: {', '.join(map(str, sorted(self.slots))) or 'none'})")
        key = (s.host, gpu)
        if on:
            self.cordoned.add(key)
        else:
            self.cordoned.discard(key)
        return key

    def set_workers(self, host: str, workers: int) -> None:
        for s in self.slots.values():
            if s.host == host:
                s.workers = workers

    def vram(self, gpu: int, budget: int, used: int) -> None:
        s = self.slots.get(gpu)
        if s is not None:
            s.budget, s.used = budget, used

    # --- placing ----------------------------------------------------------------------------
    def bound(self, s: GpuSlot) -> int:
        return s.workers + self.depth

    def pick(self, cls: str = "c2") -> GpuSlot | None:
        best: GpuSlot | None = None
        best_key: tuple[float, int, int] | None = None
        for s in self.slots.values():
            if len(s.pending) >= self.bound(s) or (s.host, s.gpu) in self.cordoned:
                continue
            if self.placement and not self.placement.may_take(cls, s.gpu, s.workers, {"c2": len(s.pending)}):
                continue  # the fleet's sectors are c2: everything pending on a GPU is c2
            key = (len(s.pending) / max(1, s.workers), -s.free, s.gpu)
            if best_key is None or key < best_key:
                best, best_key = s, key
        return best

    def place(self, part: str, cls: str = "c2") -> GpuSlot | None:
        """Reserve a GPU for `part` (of proof class `cls`), or None when every GPU it may run
        on is at its bound."""
        s = self.pick(cls)
        if s is not None:
            s.pending.add(part)
            self.where[part] = s.gpu
        return s

    def done(self, part: str) -> str | None:
        """`part` finished; returns the host it was pending on (None if it was not)."""
        g = self.where.pop(part, None)
        s = self.slots.get(g) if g is not None else None
        if s is None:
            return None
        s.pending.discard(part)
        return s.host

    def host_of(self, part: str) -> str | None:
        g = self.where.get(part)
        return self.slots[g].host if g is not None and g in self.slots else None

    @property
    def pending(self) -> int:
        return len(self.where)
