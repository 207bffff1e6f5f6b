"""What every discipline is and gets: the `Discipline` strategy (a partition's whole GPU
section: which locks, in what order, what runs under each, what a pre-stage does without
room) and the `Section` it runs over (one worker, one partition, one GPU, the knobs read at
entry).

A discipline calls the flow's building blocks (`GpuFlow`: phases, prep_msm, pre-stage upload,
the compute section) and never reaches into the device's device-global calls itself: it asks
`flow.device_sync(section)`, the one place those are made (and recorded). Nor does it decide
room itself: it asks the GPU's admission authority through `flow.room` / `flow.slot` /
`flow.claim` (prover/pipeline/gpu/room.py), and its first lock, slot or room waits there
until the sections begun under other knobs have left the GPU.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from concurrent.futures import Future
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from prover.device.base import BaseDevice, Buffer, Stream
from prover.disciplines import mem_sync
from prover.events import Phase


@dataclass
class Section:
    """One GPU section: who runs it, where, under which knobs. `bufs` holds what is
    pre-staged and not yet handed to the compute section: the flow frees whatever is left
    there on every exit path."""

    w: str
    g: int
    part: Any  # prover.pipeline.partition.Partition
    syn: Any  # the synthesis result (a, b, c, public inputs)
    knobs: Any  # prover.pipeline.control.controller.Knobs
    dev: BaseDevice
    locks: Any  # prover.pipeline.gpu.locks.LockSet
    stream: Stream
    result: dict[str, Any]
    bufs: list[Buffer] = field(default_factory=list)
    ticket: Any = None  # its registration with the GPU's admission authority (pipeline/gpu/room.py)


class GpuFlow(Protocol):
    """The building blocks PartitionFlow lends a discipline."""

    partition_bytes: int
    T: dict[str, float]

    def phase(self, s: Section, phase: Phase) -> AbstractContextManager[None]: ...
    def start_prep(self, s: Section) -> Future: ...
    def barrier(self, fut: Future) -> Any: ...
    def device_sync(self, s: Section) -> None: ...
    def fallback(self, s: Section, reason: str) -> None: ...
    def oom(self, exc: Any, outcome: str) -> None: ...
    def upload(self, s: Section, modelled_s: float) -> list[Buffer]: ...
    def compute(self, s: Section, prep_f: Future) -> None: ...
    def prestage_wait_s(self) -> float: ...
    def room(self, s: Section, wait_s: float | None) -> Any: ...  # admission.Room: .ok, .why
    def claim(self, s: Section) -> None: ...
    def slot(self, s: Section) -> AbstractContextManager[None]: ...


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

    @abstractmethod
    def section(self, flow: GpuFlow, s: Section) -> Future:
        """Run s's GPU section; returns the prep_msm future (finished or not)."""


def prestage_inside(flow: GpuFlow, s: Section) -> None:
    """A pre-stage under locks that already exclude every other GPU section on this GPU
    (single, narrow): device-global calls where mem_sync says so, then alloc + upload. The
    room is its own: sections begun under other knobs (two-lock's or reserved's pre-stages
    outside these locks) have left the GPU before this one took its first lock."""
    if not s.knobs.prestage:
        return
    with flow.phase(s, Phase.prestage):
        mem_sync.get(s.knobs.mem_sync).inside(flow, s)
        s.bufs[:] = flow.upload(s, flow.T["prestage"])
