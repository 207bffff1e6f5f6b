"""`narrow`: one lock per GPU (mem+compute taken together, as `single` takes them), held only
for pre-stage + kernels + free. prep_msm finishes before the lock is taken and a CPU b_g2
runs after it is released: nothing but GPU work under the lock. Against `single` it measures
what narrowing the lock buys; against `two-lock` what a second lock buys."""
from __future__ import annotations

from concurrent.futures import Future

from prover.disciplines.base import Discipline, prestage_inside
from prover.disciplines.blocks import Section, Work


class Narrow(Discipline):
    name = "narrow"
    locks = ("mem", "compute")
    summary = "one lock for pre-stage + kernels + free only: prep_msm before it, CPU b_g2 after it"

    def section(self, s: Section, work: Work) -> Future:
        prep_f = work.start_prep(s)
        work.barrier(prep_f)  # off the lock: the GPU never waits for the CPU's prep
        with s.locks.hold_all(self.locks, s.w, s.part.id):
            prestage_inside(s, work)
            work.compute(s, prep_f)
        return prep_f
