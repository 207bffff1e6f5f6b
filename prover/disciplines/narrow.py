"""`narrow`: one lock per GPU (mem+compute taken together, as `single` takes them), held only
for pre-stage + kernels + free. prep_msm finishes before the lock is taken and a CPU b_g2
runs after it is released: nothing but GPU work under the lock. Against `single` it measures
what narrowing the lock buys; against `two-lock` what a second lock buys."""
from __future__ import annotations

from concurrent.futures import Future

from prover.disciplines.base import Discipline, GpuFlow, Section, prestage_inside


class Narrow(Discipline):
    name = "narrow"
    locks = ("mem", "compute")
    summary = "one lock for pre-stage + kernels + free only: prep_msm before it, CPU b_g2 after it"

    def section(self, flow: GpuFlow, s: Section) -> Future:
        prep_f = flow.start_prep(s)
        flow.barrier(prep_f)  # off the lock: the GPU never waits for the CPU's prep
        with s.locks.hold_all(self.locks, s.w, s.part.id):
            prestage_inside(flow, s)
            flow.compute(s, prep_f)
        return prep_f
