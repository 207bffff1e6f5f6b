"""The fold's device-global syncs: the seed's cause, as the screen shows it.

Under mem_sync=device the mem holder calls a device-wide sync (+ pool trim) and waits for every
kernel queued on the GPU: in a two-lock run that is the compute holder's partition. The engine
records it as DeviceSyncStart / DeviceSyncEnd (prover/pipeline/device_sync.py); here it becomes
the GPU's current wait (`GpuState.device_sync`, None when nobody is syncing), the last one (kept
after it ended, so a 40 ms wait is still readable at 10 Hz), per-GPU and per-partition totals,
and a stretch of its own on the worker's timeline lane.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from prover import events as ev

if TYPE_CHECKING:  # pragma: no cover
    from prover.state import DashboardState

DEVICE_SYNC_LABEL = "device_sync"  # the timeline lane label while a worker waits in a device sync


@dataclass
class DeviceSyncState:
    """One device-global sync by a mem holder, in progress (duration None) or finished."""

    gpu: int
    worker: str
    part: str | None
    t0: float
    behind_worker: str | None = None  # the compute holder when it started (None: nobody else)
    behind_part: str | None = None
    trim: bool = True
    duration: float | None = None  # None while it still waits

    def waited(self, now: float) -> float:
        """Seconds waited so far (the whole wait once it ended)."""
        return self.duration if self.duration is not None else max(0.0, now - self.t0)

    @property
    def behind(self) -> str:
        """"g0w0 s3p1", or "nobody" when no other worker held compute."""
        if self.behind_worker is None:
            return "nobody"
        return f"{self.behind_worker} {self.behind_part}" if self.behind_part else self.behind_worker

    def label(self, now: float) -> str:
        """The lane's words: "mem g0w2 device sync behind g0w0 s3p1 41 ms"."""
        return f"mem {self.worker} device sync behind {self.behind} {self.waited(now) * 1000:.0f} ms"


def device_sync_start(s: "DashboardState", e: ev.DeviceSyncStart) -> None:
    from prover.state import lane  # the timeline helper lives with the fold

    g = s.gpu(e.gpu)
    g.device_sync = DeviceSyncState(gpu=e.gpu, worker=e.worker, part=e.part, t0=e.t, behind_worker=e.behind_worker,
                                    behind_part=e.behind_part, trim=e.trim)
    lane(g, e.worker, DEVICE_SYNC_LABEL, e.t, detail=f"behind {g.device_sync.behind}")


def device_sync_end(s: "DashboardState", e: ev.DeviceSyncEnd) -> None:
    from prover.state import lane

    g = s.gpu(e.gpu)
    done = DeviceSyncState(gpu=e.gpu, worker=e.worker, part=e.part, t0=e.start, behind_worker=e.behind_worker,
                           behind_part=e.behind_part, trim=e.trim, duration=e.duration)
    if g.device_sync is not None and g.device_sync.worker == e.worker:
        g.device_sync = None
    g.last_device_sync = done
    g.device_sync_total += e.duration
    g.device_syncs += 1
    if e.part is not None and e.part in s.partitions:
        p = s.partitions[e.part]
        p.device_sync_s += e.duration
        p.device_sync_behind = done.behind
    s.segments[-1].device_sync_s += e.duration
    s.segments[-1].device_syncs += 1
    # back to the phase the sync interrupted (the pre-stage), on the same lane
    cur = s.partitions.get(e.part or "")
    lane(g, e.worker, cur.current if cur is not None and cur.current else "prestage", e.t)
