"""`two-lock`: the seed's Phase 10. prep_msm on a CPU thread; under `mem` the pre-stage makes
room as mem_sync says and uploads, then lets go; under `compute` the kernels and the free.
No room for the pre-stage -> a Fallback event and the slow path (alloc + upload under compute).

mem_sync=device: device sync + pool trim inside mem (they wait for the compute holder's
kernels: the seed's serialisation), room checked once; stream: a bounded stream-ordered wait
for room, no device-global call."""
from __future__ import annotations

from concurrent.futures import Future

from prover.device.base import OomError
from prover.events import Phase
from prover.disciplines.base import Discipline, GpuFlow, Section


class TwoLock(Discipline):
    name = "two-lock"
    locks = ("mem", "compute")
    summary = "pre-stage under mem, kernels under compute (seed Phase 10); no room -> fallback under compute"

    def section(self, flow: GpuFlow, s: Section) -> Future:
        prep_f = flow.start_prep(s)
        if s.knobs.prestage:
            with s.locks.hold("mem", s.w, s.part.id):
                self._prestage(flow, s)
        with s.locks.hold("compute", s.w, s.part.id):
            flow.compute(s, prep_f)
        return prep_f

    def _prestage(self, flow: GpuFlow, s: Section) -> None:
        reason = ""
        dev, need = s.dev, flow.partition_bytes
        with flow.phase(s, Phase.prestage):
            if s.knobs.mem_sync == "device":
                flow.device_sync(s)
                room = dev.free_room() >= need
                if not room:
                    reason = (f"no room after device sync + pool trim: {dev.free_room() >> 20} MiB free "
                              f"of {dev.budget >> 20} MiB budget, {need >> 20} MiB needed")
            else:
                room = dev.wait_room(need, flow.prestage_wait_s())
                if not room:
                    reason = f"no room within {flow.prestage_wait_s():g}s (stream-ordered wait)"
            if room:
                try:
                    s.bufs[:] = flow.upload(s, flow.T["prestage"])
                except OomError as exc:  # the partition goes on, on the fallback path
                    flow.oom(exc, "retried")
                    reason = f"pre-stage allocation failed: {exc}"
        if not s.bufs:
            flow.fallback(s, reason)
