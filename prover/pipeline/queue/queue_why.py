"""Why a proof class's oldest partition waits, in words an operator acts on (QueueWait).

Pure: the queue (workers.py) hands it what it knows under its lock, a few times a second, and
emits the answer when it changes. In order of what to look at first: paused; no GPU the class
may run on (placement, prover/placement.py); its GPUs cordoned; a more urgent class ahead on
the same GPUs; the free workers there kept for another class; every worker busy.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from prover.classes import BY_PRIORITY
from prover.placement import Placement

EXPLAIN_AFTER_S = 0.25  # a partition taken sooner than this did not wait: nothing to say


@dataclass
class QueueView:
    """What the queue knows at one moment (under its lock)."""

    gpus: range
    placement: Placement
    workers: int
    paused: bool = False
    cordoned: set[int] = field(default_factory=set)
    waiting: dict[str, int] = field(default_factory=dict)  # class -> partitions queued
    busy: dict[int, dict[str, int]] = field(default_factory=dict)  # gpu -> class -> in flight


def _names(gpus: list[int]) -> str:
    return "+".join(f"gpu{g}" for g in gpus)


def why_waits(cls: str, v: QueueView) -> tuple[str, list[int]]:
    """(reason, GPUs the class may run on now)."""
    may = v.placement.gpus_for(cls, v.gpus)
    open_ = [g for g in may if g not in v.cordoned]
    pinned = v.placement.pin(cls) is not None
    if not may:
        return "no GPU: every GPU is dedicated to another class (class_gpus)", []
    if not open_:
        return f"its GPU{'s are' if len(may) > 1 else ' is'} cordoned ({_names(may)})", []
    if v.paused:
        return "paused", open_
    for hi in BY_PRIORITY[:BY_PRIORITY.index(cls)]:
        if v.waiting.get(hi) and v.placement.gpus_for(hi, open_):
            return f"behind {v.waiting[hi]} {hi} partition(s) on {_names(v.placement.gpus_for(hi, open_))}", open_
    kept = [g for g in open_ if not v.placement.may_take(cls, g, v.workers, v.busy.get(g, {}))]
    if kept:
        owners = sorted({c for g in kept for c in v.placement.reserved(g)})
        free = [g for g in kept if sum(v.busy.get(g, {}).values()) < v.workers]
        if free:
            return f"the free workers of {_names(free)} are kept for {', '.join(owners)} (class_gpus)", open_
    where = _names(open_) + (" (pinned)" if pinned else "")
    return f"every worker of {where} is busy", open_
