"""`single`: the seed's Phase 8. mem then compute, held together for the whole GPU section;
prep_msm starts inside (the kernels that need its output wait for the CPU). With b_g2 on the
CPU this is close to where Curio's cuzk ended (one mutex per GPU, prep_msm beside the kernels
inside it, b_g2 after release)."""
from __future__ import annotations

from concurrent.futures import Future

from prover.disciplines.base import Discipline, prestage_inside
from prover.disciplines.blocks import Section, Work


class Single(Discipline):
    name = "single"
    locks = ("mem", "compute")
    summary = "mem+compute held for the whole GPU section, prep_msm started inside (seed Phase 8; ~cuzk with b_g2=cpu)"

    def section(self, s: Section, work: Work) -> Future:
        with s.locks.hold_all(self.locks, s.w, s.part.id):
            prep_f = work.start_prep(s)
            prestage_inside(s, work)
            work.compute(s, prep_f)
        return prep_f
