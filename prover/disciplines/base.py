"""What every discipline is: the `Discipline` strategy (a partition's whole GPU section: which
locks, in what order, what runs under each, what a pre-stage does without room) and its
*regime* (the knobs that decide how its sections take room).

A discipline builds its section from what its GPU's seat lends it (`Section`,
prover/disciplines/blocks.py: room, claim, slot, upload, the device-global sync) and the
partition's `Work` (phases, prep_msm, the compute section). It never reaches into the device's
device-global calls itself: it asks `s.device_sync()`, the one place those are made (and
recorded). Nor does it decide room itself: it asks the GPU's room through `s.room` / `s.slot`
/ `s.claim` (prover/pipeline/gpu/room.py), and its first lock, slot or room waits there until
the sections begun under other knobs have left the GPU.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from concurrent.futures import Future
from typing import Any, Callable, ClassVar

from prover.disciplines import mem_sync
from prover.disciplines.blocks import Section, Work
from prover.events import Phase

Regime = tuple[tuple[str, str], ...]  # (knob, value) pairs, lock_mode first: the text events carry


class Discipline(ABC):
    """A lock discipline. Subclasses set `name` (the lock_mode value), `locks` (what they take,
    in the order they take it: the global order is merged from every discipline's) and
    `summary` (one line for --help, the help screen and docs), and register with
    `prover.disciplines.register`."""

    name: ClassVar[str]
    locks: ClassVar[tuple[str, ...]]
    summary: ClassVar[str]
    # the knobs besides lock_mode that change how its sections take room: a change of one of them
    # is a boundary its sections do not cross (pipeline/gpu/room.py); the rest apply at once
    admission_knobs: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def regime(cls, value: Callable[[str], object]) -> Regime:
        """Its regime under the knobs `value(name)` reads (a Knobs' attribute, or the fold's event
        text): lock_mode and its admission knobs, as text. The GPU's room keys its epochs by it,
        the fold its segments' drains (one definition)."""
        return (("lock_mode", cls.name), *((k, str(value(k))) for k in cls.admission_knobs))

    @abstractmethod
    def section(self, s: Section, work: Work) -> Future[Any]:
        """Run s's GPU section; returns the prep_msm future (finished or not)."""


def prestage_inside(s: Section, work: Work) -> None:
    """A pre-stage under locks that already exclude every other GPU section on this GPU
    (single, narrow): device-global calls where mem_sync says so, then alloc + upload. The
    room is its own: sections begun under other knobs (two-lock's or reserved's pre-stages
    outside these locks) have left the GPU before this one took its first lock."""
    if not s.knobs.prestage:
        return
    with work.phase(s, Phase.prestage):
        mem_sync.get(s.knobs.mem_sync).inside(s)
        s.bufs[:] = s.upload(s.T["prestage"])
