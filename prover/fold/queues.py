"""Proof classes in the fold: partitions queued and in flight per class (prover/classes.py),
the oldest waiting, sectors' deadlines met or missed, and each class's sector latency
(submitted to its last partition done). The state's `queues` is one of these (its concept:
CONCEPT below); its handlers run first for their events (a cancel is seen before the jobs'
handler closes the partition)."""
from __future__ import annotations

import copy
from collections import deque
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from prover import events as ev
from prover.classes import BY_PRIORITY, DEFAULT
from prover.fold.concept import Concept
from prover.fold.world import World


FINISHED_KEPT = 256  # finished sectors kept (more than the view's partitions show)


@dataclass
class ClassQueue:
    queued: dict[str, float] = field(default_factory=dict)  # part -> queued at (not started)
    in_flight: set[str] = field(default_factory=set)
    done: int = 0
    sectors_done: int = 0
    latency_total: float = 0.0  # sectors: submitted -> last partition done
    latency_max: float = 0.0
    missed: int = 0

    def oldest(self, now: float) -> float:
        return max(0.0, now - min(self.queued.values())) if self.queued else 0.0


@dataclass
class SectorInfo:
    cls: str
    t: float
    deadline_t: float | None
    left: int
    missed: bool = False


@dataclass
class QueueState:
    classes: dict[str, ClassQueue] = field(default_factory=lambda: {c: ClassQueue() for c in BY_PRIORITY})
    part_cls: dict[str, str] = field(default_factory=dict)  # unfinished partitions only
    sectors: dict[int, SectorInfo] = field(default_factory=dict)  # unfinished sectors only
    missed: deque[tuple[float, int, str, float]] = field(default_factory=lambda: deque(maxlen=20))
    classed: bool = False  # a sector of a class other than c2 was submitted (the queue line shows)
    # the latest finished sectors (the sector rows name their class and deadline; bounded)
    finished: dict[int, SectorInfo] = field(default_factory=dict)

    def finish(self, sector: int) -> SectorInfo:
        """The sector is over (its last partition done or cancelled): kept, the oldest dropped."""
        info = self.sectors.pop(sector)
        self.finished[sector] = info
        if len(self.finished) > FINISHED_KEPT:
            del self.finished[next(iter(self.finished))]
        return info

    def cls(self, name: str) -> ClassQueue:
        return self.classes.setdefault(name, ClassQueue())

    def overdue(self, now: float) -> list[tuple[int, str, float]]:
        """(sector, class, seconds past) of unfinished sectors past their deadline."""
        return [(n, s.cls, now - s.deadline_t) for n, s in self.sectors.items()
                if s.deadline_t is not None and now > s.deadline_t]


def _submitted(q: QueueState, e: ev.SectorSubmitted, w: World) -> None:
    q.classed = q.classed or e.proof_class != DEFAULT
    q.sectors[e.sector] = SectorInfo(e.proof_class, e.t, None if e.deadline_s is None else e.t + e.deadline_s,
                                     e.partitions)
    q.cls(e.proof_class)


def _queued(q: QueueState, e: ev.PartitionQueued, w: World) -> None:
    c = q.cls(e.proof_class)
    c.in_flight.discard(e.part)  # a retry comes back to the queue
    c.queued[e.part] = e.t
    q.part_cls[e.part] = e.proof_class


def _started(q: QueueState, e: ev.PhaseStart, w: World) -> None:
    name = q.part_cls.get(e.part)
    if name is not None and e.part in q.cls(name).queued:
        del q.cls(name).queued[e.part]
        q.cls(name).in_flight.add(e.part)


def _done(q: QueueState, e: ev.PartitionDone, w: World) -> None:
    name = q.part_cls.pop(e.part, None)
    if name is None:
        return
    c = q.cls(name)
    c.queued.pop(e.part, None)
    c.in_flight.discard(e.part)
    c.done += 1
    sector = w.partitions[e.part].sector if e.part in w.partitions else None
    info = q.sectors.get(sector) if sector is not None else None
    if sector is None or info is None:
        return
    info.left -= 1
    if info.left <= 0:
        q.finish(sector)
        took = e.t - info.t
        c.sectors_done += 1
        c.latency_total += took
        c.latency_max = max(c.latency_max, took)


def _cancelled(q: QueueState, e: ev.PartitionCancelled, w: World) -> None:
    """A cancelled partition leaves its class's queue and its sector's count (before the jobs'
    handler marks it done: a partition already done is not counted twice)."""
    p = w.partitions.get(e.part)
    if p is None or p.done_t is not None:
        return
    name = q.part_cls.pop(e.part, None)
    if name is not None:
        c = q.cls(name)
        c.queued.pop(e.part, None)
        c.in_flight.discard(e.part)
    info = q.sectors.get(p.sector)
    if info is not None:
        info.left -= 1
        if info.left <= 0:
            q.finish(p.sector)


def _missed(q: QueueState, e: ev.DeadlineMissed, w: World) -> None:
    q.cls(e.proof_class).missed += 1
    q.missed.append((e.t, e.sector, e.proof_class, e.late_s))
    info = q.sectors.get(e.sector)
    if info is not None:
        info.missed = True
    what = f"{e.left} partition(s) left" if e.left else f"done {e.late_s:.1f}s late"
    w.note("error", f"{e.proof_class} sector {e.sector} missed its deadline: {what}", e)


class ClassSummary(BaseModel):
    partitions_done: int
    sectors_done: int
    sector_latency_mean_s: float = Field(description="submitted -> last partition done")
    sector_latency_max_s: float
    deadlines_missed: int
    waiting_at_end: int


def summarize_queues(q: QueueState) -> dict[str, ClassSummary]:
    return {n: ClassSummary(partitions_done=c.done, sectors_done=c.sectors_done,
                            sector_latency_mean_s=c.latency_total / c.sectors_done if c.sectors_done else 0.0,
                            sector_latency_max_s=c.latency_max, deadlines_missed=c.missed,
                            waiting_at_end=len(c.queued) + len(c.in_flight))
            for n, c in q.classes.items() if c.done or c.queued or c.in_flight or c.missed}


CONCEPT = Concept("queues", QueueState, {
    ev.SectorSubmitted: _submitted, ev.PartitionQueued: _queued, ev.PhaseStart: _started, ev.PartitionDone: _done,
    ev.DeadlineMissed: _missed, ev.PartitionCancelled: _cancelled,
}, view=lambda q, now: copy.deepcopy(q))
