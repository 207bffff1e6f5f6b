"""Which segment a GPU section belongs to: the one whose knobs it began under (issue 33).

A switch takes effect at the next GPU section each worker enters; the sections already on
the GPU finish under the old knobs. So a segment's figures (proofs, fallbacks, OOMs, device
syncs, mem waits) count the sections begun under its knobs, and what such a section does
after the next switch is shown again as that later segment's *transitional* figures, never
as its own (prover/fold/segments.py keeps both).

When a section began:
- its SectionBegan, where the engine says it (emitted as the section reads its knobs, under
  the lock every ModeChange is emitted under: exact). The rules below are for recordings made
  before it:
- its first GPU event (a lock request or grant, a GPU phase, an allocation, a device sync):
  before that it was on the CPU and had read no GPU knob yet;
- after a switch of a GPU's *regime* (its lock_mode and the knobs its discipline takes room
  by: two-lock's mem_sync and prestage, prover/pipeline/gpu/room.py), the admission gate lets
  no new-regime section onto the GPU before every old one has left, and says so with a
  SwitchSettled. Until then a section that shows itself began under the old regime (a
  reserved section that waited for its slot across the switch, say): it is charged to the
  segment in force before the switch. After SwitchSettled every new section is the new one's.
- no SwitchSettled seen yet in this run (a recording made before the gate, or a run's first
  switch): the old regime is over on a GPU once every section running there at the switch has
  ended. Before the gate (older recordings) sections begun in that drain overlapped the old
  ones and are charged to the old segment (at most one section's time); with the gate, an old
  section that showed itself only after that drain (a reserved slot-waiter) is charged to the
  new one (the first switch of a run only).
- a knob outside the regime (b_g2, workers, a mem_sync the discipline ignores, the budget)
  applies at the next section with no wait: the first GPU event's time decides.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from prover import events as ev
from prover.disciplines import regime as discipline_regime

GPU_PHASES = frozenset({ev.Phase.prestage, ev.Phase.ntt_h, ev.Phase.msm, ev.Phase.b_g2_msm})
MAX_OPEN = 4096  # sections tracked at once (a recording that never ends its partitions stays bounded)
# a section's GPU events: the first of them says it began, in recordings made before SectionBegan
FIRST_GPU_EVENTS = (ev.LockRequested, ev.LockAcquired, ev.Alloc, ev.DeviceSyncStart, ev.Fallback, ev.Oom)


def section_begun(e: Any) -> tuple[str, int | None, bool] | None:
    """The one definition of "a partition's GPU section began" (the segments and the experiments'
    tally both read it): (part, gpu, exact) when e says so: its SectionBegan (exact: said as the
    section reads its knobs), else any of its GPU events (the first one is the start: see the
    module's docstring). None for every other event."""
    cls = type(e)  # a third of the fold's events come here: one look-up by type, not isinstance chains
    kind = _KIND.get(cls)
    if kind is None:
        kind = _KIND[cls] = _kind(cls)
    if kind is _NONE or (kind is _PHASE and e.phase not in GPU_PHASES):
        return None
    part = e.part  # every type _kind admits has part and gpu
    if part is None:
        return None
    return part, e.gpu, kind is _EXACT


_NONE, _GPU_EVENT, _PHASE, _EXACT = "none", "gpu event", "phase start", "exact"
_KIND: dict[type, str] = {}  # an event type -> which of the rule's cases it is, found once a type


def _kind(cls: type) -> str:
    if issubclass(cls, ev.SectionBegan):
        return _EXACT
    if issubclass(cls, FIRST_GPU_EVENTS):
        return _GPU_EVENT
    return _PHASE if issubclass(cls, ev.PhaseStart) else _NONE


def starts_over(e: object) -> str | None:
    """The partition whose next GPU section is a new one: a synthesis starts (a retried partition
    runs its whole flow again, under the knobs of its new section)."""
    return e.part if isinstance(e, ev.PhaseStart) and e.phase is ev.Phase.synthesis else None


def regime(knobs: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """A GPU's regime from the fold's knobs (event text): Discipline.regime, as the GPU's room
    keys its epochs (a lock_mode this build does not know: its lock_mode alone)."""
    return discipline_regime(lambda k: knobs.get(k, ""))


@dataclass
class _Pending:
    """A GPU between a regime switch and its SwitchSettled."""

    segment: int  # the segment index its sections are still charged to
    regime: tuple[tuple[str, str], ...]  # the regime they run under
    running: set[str] = field(default_factory=set)  # sections on the GPU at the switch (the drain waits for them)


@dataclass
class SectionBook:
    """Each running section's segment, and the GPUs still draining an old regime."""

    owner: dict[str, tuple[int, int | None]] = field(default_factory=dict)  # part -> (its segment's index, its GPU)
    pending: dict[int, _Pending] = field(default_factory=dict)  # gpu -> its old regime, until settled
    says_settled: bool = False  # a SwitchSettled was seen in this run (else a drain ends the old regime)

    def copy(self) -> "SectionBook":
        pending = {g: _Pending(p.segment, p.regime, set(p.running)) for g, p in self.pending.items()}
        return SectionBook(dict(self.owner), pending, self.says_settled)

    def begin(self, part: str | None, gpu: int | None, open_index: int) -> None:
        """Note part's section as begun (its first GPU event; later ones change nothing)."""
        if part is None or part in self.owner:
            return
        p = self.pending.get(gpu) if gpu is not None else None
        self.owner[part] = (p.segment if p is not None else open_index, gpu)
        if len(self.owner) > MAX_OPEN:
            del self.owner[next(iter(self.owner))]

    def announce(self, part: str, gpu: int, open_index: int) -> None:
        """A SectionBegan: the section read its knobs now, under the open segment's (exact)."""
        self.owner.pop(part, None)
        self.owner[part] = (open_index, gpu)
        if len(self.owner) > MAX_OPEN:
            del self.owner[next(iter(self.owner))]

    def of(self, part: str | None) -> int | None:
        got = None if part is None else self.owner.get(part)
        return None if got is None else got[0]

    def end(self, part: str) -> None:
        got = self.owner.pop(part, None)
        if got is not None and got[1] is not None:
            self._drained(got[1], part)

    def _drained(self, gpu: int, part: str | None = None) -> None:
        """No SwitchSettled seen: the old regime is over once the sections running at the switch are."""
        p = self.pending.get(gpu)
        if p is None:
            return
        p.running.discard(part or "")
        if not self.says_settled and not p.running:
            del self.pending[gpu]

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
                running = {part for part, (_, pg) in self.owner.items() if pg == g}
                self.pending[g] = _Pending(prev_index, old, running)
                self._drained(g)

    def settled(self, gpu: int) -> None:
        self.says_settled = True
        self.pending.pop(gpu, None)
