"""`reserved` (ours): pre-stage slots reserved from the budget ahead. A GPU's budget holds
budget // partition_bytes slots (at least one); a worker takes a slot before its GPU section
(first come, first served) and keeps it until its buffers are freed. Holding a slot, its
pre-stage always has room, so it needs no mem lock, no device-global call (whatever mem_sync
says) and never falls back: it uploads on its own stream beside the other slot holders and
the compute holder, then takes `compute` for the kernels and the free.

Aimed at two-lock + stream under a tight budget: there the pre-stage waits for room inside
`mem` (bounded, then a fallback), so one waiter holds up every later pre-stage. The slots are
the GPU's room's (pipeline/gpu/room.py); sections of other disciplines never
share the GPU with slot holders (a switch waits for them to leave), so a slot's room is there.
"""
from __future__ import annotations

import math
from concurrent.futures import Future

from prover.events import Phase
from prover.disciplines.base import Discipline
from prover.disciplines.blocks import Section, Work


class Reserved(Discipline):
    name = "reserved"
    locks = ("compute",)
    summary = "pre-stage slots reserved from the budget ahead: upload without mem or device sync, never a fallback"

    def section(self, s: Section, work: Work) -> Future:
        prep_f = work.start_prep(s)
        with s.slot():
            if s.knobs.prestage:
                with work.phase(s, Phase.prestage):
                    s.room(math.inf)  # the slot's: at once (waits only while a freed slot's bytes go back)
                    s.bufs[:] = s.upload(s.T["prestage"])
            with s.locks.hold("compute", s.w, s.part.id):
                work.compute(s, prep_f)
        return prep_f
