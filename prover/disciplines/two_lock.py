"""`two-lock`: the seed's Phase 10. prep_msm on a CPU thread; under `mem` the pre-stage makes
room as mem_sync says and uploads, then takes its place in compute's queue and lets mem go;
under `compute` the kernels and the free. No room for the pre-stage -> a Fallback event and the
slow path (alloc + upload under compute), its room claimed first so the pre-stages after it
leave it that room at its turn (pipeline/gpu/room.py).

How it makes room is the mem_sync strategy's (prover/disciplines/mem_sync.py): device: device
sync + pool trim inside mem (they wait for the compute holder's kernels: the seed's
serialisation), room checked once; stream: a bounded stream-ordered wait for room, no
device-global call. Both change how a section takes room, so a switch between them (or of
prestage) is a boundary: the new sections start when the old have left the GPU."""
from __future__ import annotations

from concurrent.futures import Future

from prover.device.base import OomError
from prover.events import Phase
from prover.disciplines import mem_sync
from prover.disciplines.base import Discipline
from prover.disciplines.blocks import Section, Work


class TwoLock(Discipline):
    name = "two-lock"
    locks = ("mem", "compute")
    admission_knobs = ("mem_sync", "prestage")
    summary = "pre-stage under mem, kernels under compute (seed Phase 10); no room -> fallback under compute"

    def section(self, s: Section, work: Work) -> Future:
        prep_f = work.start_prep(s)
        if not s.knobs.prestage:
            s.claim()  # every allocation under compute
            with s.locks.hold("compute", s.w, s.part.id):
                work.compute(s, prep_f)
            return prep_f
        with s.locks.handover("mem", "compute", s.w, s.part.id) as h:
            self._prestage(s, work)
            h.next()  # compute is served in mem order: a fallback's claim counts on it
            work.compute(s, prep_f)
        return prep_f

    def _prestage(self, s: Section, work: Work) -> None:
        with work.phase(s, Phase.prestage):
            reason = mem_sync.get(s.knobs.mem_sync).room(s)  # "": room
            if not reason:
                try:
                    s.bufs[:] = s.upload(s.T["prestage"])
                except OomError as exc:  # the partition goes on, on the fallback path
                    s.oom(exc, "retried")
                    reason = f"pre-stage allocation failed: {exc}"
        if not s.bufs:
            s.claim()
            s.fallback(reason)
