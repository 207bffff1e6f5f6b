"""The fold's device-global syncs: the seed's cause, as the screen shows it.

Under mem_sync=device the mem holder calls a device-wide sync (+ pool trim) and waits for every
kernel queued on the GPU: in a two-lock run that is the compute holder's partition. The engine
records it as DeviceSyncStart / DeviceSyncEnd (prover/pipeline/gpu/device_sync.py); here it becomes
the GPU's current wait (`GpuState.device_sync`, None when nobody is syncing), the last one (kept
after it ended, so a 40 ms wait is still readable at 10 Hz), per-GPU and per-partition totals,
and a stretch of its own on the worker's timeline lane (its count per segment: prover/fold/segments.py).
It keeps no state of its own: what it changes is the GPUs' and the partitions' (the world).
"""
from __future__ import annotations

from prover import events as ev
from prover.fold.concept import Concept
from prover.fold.parts import DeviceSyncState, lane
from prover.fold.world import World

DEVICE_SYNC_LABEL = "device_sync"  # the timeline lane label while a worker waits in a device sync


def device_sync_start(w: World, e: ev.DeviceSyncStart, _: World) -> None:
    g = w.gpu(e.gpu)
    g.device_sync = DeviceSyncState(gpu=e.gpu, worker=e.worker, part=e.part, t0=e.t, behind_worker=e.behind_worker,
                                    behind_part=e.behind_part, trim=e.trim)
    lane(g, e.worker, DEVICE_SYNC_LABEL, e.t, detail=f"behind {g.device_sync.behind}")


def device_sync_end(w: World, e: ev.DeviceSyncEnd, _: World) -> None:
    g = w.gpu(e.gpu)
    done = DeviceSyncState(gpu=e.gpu, worker=e.worker, part=e.part, t0=e.start, behind_worker=e.behind_worker,
                           behind_part=e.behind_part, trim=e.trim, duration=e.duration)
    if g.device_sync is not None and g.device_sync.worker == e.worker:
        g.device_sync = None
    g.last_device_sync = done
    g.device_sync_total += e.duration
    g.device_syncs += 1
    if e.part is not None and e.part in w.partitions:
        p = w.partitions[e.part]
        p.device_sync_s += e.duration
        p.device_sync_behind = done.behind
    # back to the phase the sync interrupted (the pre-stage), on the same lane
    cur = w.partitions.get(e.part or "")
    lane(g, e.worker, cur.current if cur is not None and cur.current else "prestage", e.t)


CONCEPT = Concept("device_sync", None, {ev.DeviceSyncStart: device_sync_start, ev.DeviceSyncEnd: device_sync_end})
