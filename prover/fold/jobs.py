"""Job actions in the fold: cancelled partitions (counted as cancelled, never failed), the
cordoned GPUs, and the actions themselves with their sources (in the event log).
`DashboardState.jobs` is one of these; prover/state.py runs the handlers beside its own."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from prover import events as ev

CANCELLED = "cancelled"  # a cancelled partition's PartitionState.reason (the partition table reads it)


@dataclass
class JobsState:
    cancelled: int = 0
    cordoned: set[int] = field(default_factory=set)
    actions: int = 0


def _cancelled(s: Any, e: ev.PartitionCancelled) -> None:
    p = s.partitions.get(e.part)
    if p is None or p.done_t is not None:
        return
    p.done_t, p.current, p.reason = e.t, None, CANCELLED
    s.jobs.cancelled += 1
    q = s.queues
    name = q.part_cls.pop(e.part, None)
    if name is not None:
        c = q.cls(name)
        c.queued.pop(e.part, None)
        c.in_flight.discard(e.part)
    info = q.sectors.get(p.sector)
    if info is not None:
        info.left -= 1
        if info.left <= 0:
            del q.sectors[p.sector]
    if p.gpu is not None and p.worker is not None:
        g = s.gpu(p.gpu)
        for seg in reversed(g.timeline):  # close its lane (it stopped between phases)
            if seg.worker == p.worker:
                seg.t1 = seg.t1 if seg.t1 is not None else e.t
                break
    s.note("warn", f"{e.part} cancelled {e.where} ({e.source})", e)


def _action(s: Any, e: ev.JobAction) -> None:
    s.jobs.actions += 1
    if e.action in ("cordon", "uncordon"):
        gpu = int(e.target.removeprefix("gpu"))
        (s.jobs.cordoned.add if e.action == "cordon" else s.jobs.cordoned.discard)(gpu)
    s.note("info", f"{e.action} {e.target} ({e.source}): {e.detail}", e)


HANDLERS = {ev.PartitionCancelled: _cancelled, ev.JobAction: _action}
