"""Which segment a GPU section belongs to: the one whose knobs it began under (issue 33).

A switch takes effect at the next GPU section each worker enters; the sections already on
the GPU finish under the old knobs. So a segment's figures (proofs, fallbacks, OOMs, device
syncs, mem waits) count the sections begun under its knobs, and what such a section does
after the next switch is shown again as that later segment's *transitional* figures, never
as its own (prover/fold/segments.py keeps both).

When a section began:
- its first GPU event (a lock request or grant, a GPU phase, an allocation, a device sync):
  before that it was on the CPU and had read no GPU knob yet;
- after a switch of a GPU's *regime* (its lock_mode and the knobs its discipline takes room
  by: two-lock's mem_sync and prestage, prover/pipeline/admission.py), the admission gate lets
  no new-regime section onto the GPU before every old one has left, and says so with a
  SwitchSettled. Until then a section that shows itself began under the old regime (a
  reserved section that waited for its slot across the switch, say): it is charged to the
  segment in force before the switch. After SwitchSettled every new section is the new one's.
- a knob outside the regime (b_g2, workers, a mem_sync the discipline ignores, the budget)
  applies at the next section with no wait: the first GPU event's time decides.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from prover import events as ev
from prover.disciplines import get as discipline

GPU_PHASES = frozenset({ev.Phase.prestage, ev.Phase.ntt_h, ev.Phase.msm, ev.Phase.b_g2_msm})
MAX_OPEN = 4096  # sections tracked at once (a recording that never ends its partitions stays bounded)


def regime(knobs: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """A GPU's regime from the fold's knobs (event text), as the admission gate keys its epochs."""
    mode = knobs.get("lock_mode", "")
    try:
        extra = discipline(mode).admission_knobs
    except ValueError:  # a discipline this build does not know (an older or newer recording)
        extra = ()
    return (("lock_mode", mode), *((k, knobs.get(k, "")) for k in extra))


@dataclass
class _Pending:
    """A GPU between a regime switch and its SwitchSettled."""

    segment: int  # the segment index its sections are still charged to
    regime: tuple[tuple[str, str], ...]  # the regime they run under


@dataclass
class SectionBook:
    """Each running section's segment, and the GPUs still draining an old regime."""

    owner: dict[str, int] = field(default_factory=dict)  # part -> index of the segment it began in
    pending: dict[int, _Pending] = field(default_factory=dict)  # gpu -> its old regime, until settled

    def copy(self) -> "SectionBook":
        return SectionBook(dict(self.owner), dict(self.pending))

    def begin(self, part: str | None, gpu: int | None, open_index: int) -> None:
        """Note part's section as begun (its first GPU event; later ones change nothing)."""
        if part is None or part in self.owner:
            return
        p = self.pending.get(gpu) if gpu is not None else None
        self.owner[part] = p.segment if p is not None else open_index
        if len(self.owner) > MAX_OPEN:
            del self.owner[next(iter(self.owner))]

    def of(self, part: str | None) -> int | None:
        return None if part is None else self.owner.get(part)

    def end(self, part: str) -> None:
        self.owner.pop(part, None)

    def switch(self, gpus: list[int], before: dict[str, str], after: dict[str, str], prev_index: int) -> None:
        """A knob changed on these GPUs (knobs before and after): a regime change leaves them
        draining under the segment before (prev_index) until settled; a change back to the
        regime still draining ends that."""
        old, new = regime(before), regime(after)
        for g in gpus:
            p = self.pending.get(g)
            if p is not None:
                if new == p.regime:  # back where the GPU still is: nothing left to settle
                    del self.pending[g]
            elif new != old:
                self.pending[g] = _Pending(prev_index, old)

    def settled(self, gpu: int) -> None:
        self.pending.pop(gpu, None)
