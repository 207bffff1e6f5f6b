"""Job actions in the fold: cancelled partitions (counted as cancelled, never failed), the
cordoned GPUs, and the actions themselves with their sources (in the event log).
The state's `jobs` is one of these (its concept: CONCEPT below); a cancelled partition leaves the
queues by their own handler (prover/fold/queues.py), which runs before this one."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from prover import events as ev
from prover.fold.concept import Concept
from prover.fold.world import World

CANCELLED = "cancelled"  # a cancelled partition's PartitionState.reason (the partition table reads it)


@dataclass
class JobsState:
    cancelled: int = 0
    cordoned: set[int] = field(default_factory=set)
    actions: int = 0


def _cancelled(jobs: JobsState, e: ev.PartitionCancelled, w: World) -> None:
    p = w.partitions.get(e.part)
    if p is None or p.done_t is not None:
        return
    p.done_t, p.current, p.reason = e.t, None, CANCELLED
    jobs.cancelled += 1
    if p.gpu is not None and p.worker is not None:
        g = w.gpu(p.gpu)
        for seg in reversed(g.timeline):  # close its lane (it stopped between phases)
            if seg.worker == p.worker:
                seg.t1 = seg.t1 if seg.t1 is not None else e.t
                break
    w.note("warn", f"{e.part} cancelled {e.where} ({e.source})", e)


def _action(jobs: JobsState, e: ev.JobAction, w: World) -> None:
    jobs.actions += 1
    number = e.target.removeprefix("gpu")
    if e.action in ("cordon", "uncordon") and number.isascii() and number.isdigit():  # a target that names no GPU: noted only
        (jobs.cordoned.add if e.action == "cordon" else jobs.cordoned.discard)(int(number))
    w.note("info", f"{e.action} {e.target} ({e.source}): {e.detail}", e)


CONCEPT = Concept("jobs", JobsState, {ev.PartitionCancelled: _cancelled, ev.JobAction: _action},
                  view=lambda j, now: copy.deepcopy(j))
