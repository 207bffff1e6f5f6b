"""What a discipline builds a GPU section from, typed: the `Section` its GPU's seat opens for it
(who, where, the knobs it read, and the GPU's building blocks bound to it: room, claim, slot,
upload, the device-global sync, the fallback and OOM events; prover/pipeline/gpu/section.py)
and the partition's own `Work` it places around the locks (phases, prep_msm, the compute
section; prover/pipeline/partition.py). Protocols only: this package sits below the pipeline
and imports none of it."""
from __future__ import annotations

from concurrent.futures import Future
from contextlib import AbstractContextManager
from typing import Any, Iterable, Mapping, Protocol

from prover.device.base import BaseDevice, Buffer, OomError, Stream
from prover.events import Phase


class Knobs(Protocol):
    """The knobs a section read as it began (prover/pipeline/control/controller.Knobs)."""

    @property
    def lock_mode(self) -> str: ...
    @property
    def mem_sync(self) -> str: ...
    @property
    def prestage(self) -> bool: ...
    @property
    def b_g2(self) -> str: ...


class Part(Protocol):
    """The partition a section runs (prover/pipeline/queue/part.Partition)."""

    @property
    def id(self) -> str: ...
    @property
    def key(self) -> Any: ...  # its proving key while it runs (the compute section's MSMs read it)


class Staged(Protocol):
    """What a GPU section uploads: the synthesis's a, b, c (host arrays; None where the GPU makes
    them, abc gpu: then z's upload form goes up (its `zpack`), read by the section where present)."""

    @property
    def a(self) -> Any: ...
    @property
    def b(self) -> Any: ...
    @property
    def c(self) -> Any: ...


class Handover(Protocol):
    def next(self) -> None: ...


class Locks(Protocol):
    """The GPU's locks as a section takes them (the LockSet behind the room's gate,
    prover/pipeline/gpu/locks.py): every acquisition waits its regime's turn first."""

    def hold(self, name: str, worker: str, part: str | None = None) -> AbstractContextManager[None]: ...
    def hold_all(self, names: Iterable[str], worker: str, part: str | None = None) -> AbstractContextManager[None]: ...
    def handover(self, first: str, then: str, worker: str,
                 part: str | None = None) -> AbstractContextManager[Handover]: ...
    def held_by(self, worker: str) -> list[str]: ...


class Grant(Protocol):
    """The room's answer to a request for a partition's room (prover/pipeline/gpu/room.Grant)."""

    @property
    def ok(self) -> bool: ...
    @property
    def why(self) -> str: ...


class Section(Protocol):
    """One GPU section, as its seat lends it to the discipline. `bufs` holds what is pre-staged
    and not yet handed to the compute section: the seat frees whatever is left there on every
    exit path."""

    @property
    def w(self) -> str: ...
    @property
    def g(self) -> int: ...
    @property
    def part(self) -> Part: ...
    @property
    def knobs(self) -> Knobs: ...
    @property
    def locks(self) -> Locks: ...
    @property
    def bufs(self) -> list[Buffer]: ...
    @property
    def T(self) -> Mapping[str, float]: ...  # its partition's modelled phase times
    @property
    def prestage_wait_s(self) -> float: ...
    # what the compute section (Work.compute) runs on: the device, the worker's stream on it,
    # what it uploads and where its results go
    @property
    def dev(self) -> BaseDevice: ...
    @property
    def stream(self) -> Stream: ...
    @property
    def syn(self) -> Staged: ...
    @property
    def result(self) -> dict[str, Any]: ...

    def room(self, wait_s: float | None) -> Grant: ...  # a partition's room outside compute (earmarked if ok)
    def claim(self) -> None: ...  # it will allocate under compute: later pre-stages leave it room
    def slot(self) -> AbstractContextManager[None]: ...  # a pre-stage slot (reserved)
    def upload(self, modelled_s: float) -> list[Buffer]: ...  # alloc + upload its partition's buffers
    def device_sync(self) -> None: ...  # the device-global calls (recorded with whom they waited behind)
    def fallback(self, reason: str) -> None: ...
    def oom(self, exc: OomError, outcome: str) -> None: ...


class Work(Protocol):
    """The partition's own work, placed by the discipline around the locks."""

    def phase(self, s: Section, phase: Phase) -> AbstractContextManager[None]: ...
    def start_prep(self, s: Section) -> Future[Any]: ...
    def barrier(self, fut: Future[Any]) -> Any: ...
    def compute(self, s: Section, prep_f: Future[Any]) -> None: ...
