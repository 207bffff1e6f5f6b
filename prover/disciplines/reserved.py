"""`reserved` (ours): pre-stage slots reserved from the budget ahead. A GPU's budget holds
budget // partition_bytes slots (at least one); a worker takes a slot before its GPU section
(first come, first served) and keeps it until its buffers are freed. Holding a slot, its
pre-stage always has room, so it needs no mem lock, no device-global call (whatever mem_sync
says) and never falls back: it uploads on its own stream beside the other slot holders and
the compute holder, then takes `compute` for the kernels and the free.

Aimed at two-lock + stream under a tight budget: there the pre-stage waits for room inside
`mem` (bounded, then a fallback), so one waiter holds up every later pre-stage. With live
switches, workers of other disciplines do not take slots and may hold room a slot counts on:
a slot holder then waits for room stream-ordered (unbounded, interruptible), still no sync
and no fallback.
"""
from __future__ import annotations

import threading
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Iterator

from prover.device.base import BaseDevice, Stopped
from prover.events import Phase
from prover.disciplines.base import Discipline, GpuFlow, Section


class Slots:
    """A counting reservation of one GPU's budget in partition-sized slots, FIFO, sized from
    the budget at each acquire (a live budget change applies to the next one)."""

    def __init__(self, dev: BaseDevice, slot_bytes: int) -> None:
        self.dev, self.slot_bytes = dev, slot_bytes
        self._cv = threading.Condition()
        self._queue: list[object] = []
        self.in_use = 0

    def capacity(self) -> int:
        return max(1, self.dev.budget // self.slot_bytes)

    @contextmanager
    def slot(self) -> Iterator[None]:
        me = object()
        with self._cv:
            self._queue.append(me)
            try:
                while self._queue[0] is not me or self.in_use >= self.capacity():
                    if self.dev.stop_event.is_set():
                        raise Stopped()
                    self._cv.wait(0.05)
            finally:
                self._queue.remove(me)
                self._cv.notify_all()
            self.in_use += 1
        try:
            yield
        finally:
            with self._cv:
                self.in_use -= 1
                self._cv.notify_all()


class Reserved(Discipline):
    name = "reserved"
    locks = ("compute",)
    summary = "pre-stage slots reserved from the budget ahead: upload without mem or device sync, never a fallback"

    def __init__(self) -> None:
        self._slots: dict[int, Slots] = {}
        self._guard = threading.Lock()

    def slots(self, dev: BaseDevice, slot_bytes: int) -> Slots:
        with self._guard:
            s = self._slots.get(id(dev))
            if s is None or s.dev is not dev:
                s = self._slots[id(dev)] = Slots(dev, slot_bytes)
            return s

    def section(self, flow: GpuFlow, s: Section) -> Future:
        prep_f = flow.start_prep(s)
        with self.slots(s.dev, flow.partition_bytes).slot():
            if s.knobs.prestage:
                with flow.phase(s, Phase.prestage):
                    while not s.dev.wait_room(flow.partition_bytes, flow.prestage_wait_s()):
                        pass  # room another discipline's worker still holds (a live switch)
                    s.bufs[:] = flow.upload(s, flow.T["prestage"])
            with s.locks.hold("compute", s.w, s.part.id):
                flow.compute(s, prep_f)
        return prep_f
