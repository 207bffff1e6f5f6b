"""`two-lock`: the seed's Phase 10. prep_msm on a CPU thread; under `mem` the pre-stage makes
room as mem_sync says and uploads, then lets go; under `compute` the kernels and the free.
No room for the pre-stage -> a Fallback event and the slow path (alloc + upload under compute).

How it makes room is the mem_sync strategy's (prover/disciplines/mem_sync.py): device: device
sync + pool trim inside mem (they wait for the compute holder's kernels: the seed's
serialisation), room checked once; stream: a bounded stream-ordered wait for room, no
device-global call."""
from __future__ import annotations

from concurrent.futures import Future

from prover.device.base import OomError
from prover.events import Phase
from prover.disciplines import mem_sync
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
        with flow.phase(s, Phase.prestage):
            reason = mem_sync.get(s.knobs.mem_sync).room(flow, s, flow.partition_bytes)  # "": room
            if not reason:
                try:
                    s.bufs[:] = flow.upload(s, flow.T["prestage"])
                except OomError as exc:
                    reason = f"pre-stage allocation failed: {exc}"
        if not s.bufs:
            flow.fallback(s, reason)
