"""Job actions on a running engine: cancel a partition or a sector, requeue a partition,
cordon / uncordon a GPU; each through the Controller, recorded with its source (JobAction),
never mid-kernel.

- cancel: a queued partition leaves the queue at once; one in flight stops at its next CPU
  phase boundary (synthesis, b_g2 on the CPU, assemble, verify) or before its GPU section,
  with its locks and buffers given back on the usual exit paths (PartitionCancelled: counted
  as cancelled, never as failed).
- requeue: an in-flight partition stops at that same kind of boundary and goes back to the
  front of its class's queue (e.g. to move it off a slow GPU).
- cordon: the GPU's workers take no new partition; what runs there finishes. uncordon undoes it.

Targets: `s3p2` (a partition), `s3` (a sector: every partition of it), `gpu1` or `1` (a GPU).
"""
from __future__ import annotations

import re
import threading
from typing import Any, Callable

from prover import events as ev

ACTIONS = ("cancel", "requeue", "cordon", "uncordon")
_PART, _SECTOR, _GPU = re.compile(r"^s(\d+)p(\d+)$"), re.compile(r"^s(\d+)$"), re.compile(r"^(?:gpu)?(\d+)$")


class Cancelled(Exception):
    """Raised in a partition's flow at a boundary where a job action stops it."""

    def __init__(self, part: str, requeue: bool, source: str, where: str) -> None:
        super().__init__(f"{part} {'requeued' if requeue else 'cancelled'} by {source} before {where}")
        self.part, self.requeue, self.source, self.where = part, requeue, source, where


def parse_target(action: str, text: str) -> tuple[str, Any]:
    """('part', 's3p2') | ('sector', 3) | ('gpu', 1); ValueError naming what is accepted."""
    t = text.strip().lower()
    if action in ("cordon", "uncordon"):
        m = _GPU.match(t)
        if not m:
            raise ValueError(f"{action} takes a GPU (gpu1 or 1), got {text!r}")
        return "gpu", int(m.group(1))
    if _PART.match(t):
        return "part", t
    if action == "cancel" and _SECTOR.match(t):
        return "sector", int(t[1:])
    what = "a partition (s3p2) or a sector (s3)" if action == "cancel" else "a partition (s3p2)"
    raise ValueError(f"{action} takes {what}, got {text!r}")


class JobBoard:
    """In-flight partitions flagged to stop, read by the flow at its boundaries."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._flags: dict[str, tuple[bool, str]] = {}  # part -> (requeue, source)

    def flag(self, part: str, requeue: bool, source: str) -> None:
        with self._lock:
            self._flags[part] = (requeue, source)

    def check(self, part: str, where: str) -> None:
        """Raise Cancelled if `part` was flagged (the flag is used up)."""
        with self._lock:
            flag = self._flags.pop(part, None)
        if flag is not None:
            raise Cancelled(part, flag[0], flag[1], where)

    def drop(self, part: str) -> None:
        with self._lock:
            self._flags.pop(part, None)


def act(queue: Any, board: JobBoard, emit: Callable[..., Any], action: str, target: str, source: str) -> str:
    """Do `action` on `target` (a WorkQueue's partitions / GPUs); returns what was done, in
    words; ValueError when there is nothing of that name to act on."""
    if action not in ACTIONS:
        raise ValueError(f"unknown job action {action!r}; use {', '.join(ACTIONS)}")
    if not hasattr(queue, "remove_queued"):
        raise ValueError(f"{action}: not on a fleet host (its driver places the work)")
    kind, key = parse_target(action, target)
    if kind == "gpu":
        return queue.cordon(key, action == "cordon")
    match = (lambda p: p.id == key) if kind == "part" else (lambda p: p.sector == key)
    running = [p for p in queue.running() if match(p)]
    if action == "requeue":
        if not running:
            raise ValueError(f"requeue: {target} is not in flight (a queued partition is already queued)")
        board.flag(running[0].id, True, source)
        return f"{running[0].id} requeued at its next boundary"
    removed = queue.remove_queued(match)
    for p in removed:
        emit(ev.PartitionCancelled, part=p.id, where="queued", source=source)
    for p in running:
        board.flag(p.id, False, source)
    if not removed and not running:
        raise ValueError(f"cancel: no partition {target} queued or in flight")
    return f"{len(removed)} queued cancelled, {len(running)} in flight to stop at their next boundary"
