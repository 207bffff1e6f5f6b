"""The device-global sync under the mem lock (mem_sync=device), recorded as its own event.

`cudaDeviceSynchronize` + pool trim wait for every kernel queued on the GPU, so a mem holder
calling them waits behind whoever holds `compute` (the seed's serialisation). This is the one
place that does it: DeviceSyncStart names that compute holder and its partition as they are
at the call, DeviceSyncEnd the time waited, so the screen can say "mem g0w2 device sync
behind g0w0 s3p1 41 ms" instead of leaving it inside the pre-stage's time.
"""
from __future__ import annotations

from typing import Any, Callable

from prover import events as ev
from prover.device.base import BaseDevice
from prover.pipeline.gpu.locks import LockSet


def device_sync(emit: Callable[..., Any], clock: Callable[[], float], device: BaseDevice, lockset: LockSet,
                worker: str, gpu: int, part: str | None) -> float:
    """device_sync() + pool_trim() on `device`, between a DeviceSyncStart and a DeviceSyncEnd
    (emitted on every exit path); returns the seconds waited."""
    holder, holder_part, _ = lockset.holders().get("compute", (None, None, 0.0))
    if holder == worker:  # under `single` the caller holds compute itself: it waits behind nobody
        holder, holder_part = None, None
    who = dict(gpu=gpu, worker=worker, part=part, behind_worker=holder, behind_part=holder_part, trim=True)
    start = emit(ev.DeviceSyncStart, **who)
    t0 = clock()
    try:
        device.device_sync()
        device.pool_trim()
    finally:
        waited = max(0.0, clock() - t0)
        emit(ev.DeviceSyncEnd, **who, start=start.t if start is not None else 0.0, duration=waited)
    return waited
