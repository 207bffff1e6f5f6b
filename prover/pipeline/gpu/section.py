"""One GPU section as its seat lends it to a discipline (prover/disciplines/blocks.Section): who,
where, the knobs it read, and the GPU's building blocks bound to its ticket: room, claim,
slot, the pre-stage's alloc + upload, the device-global sync, the fallback and OOM events.
Its locks are the GPU's LockSet behind the room's gate (`GatedLocks`)."""
from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Protocol

from prover import events as ev
from prover.device.base import BaseDevice, Buffer, OomError, Stream
from prover.disciplines import COMPUTE
from prover.disciplines.blocks import Knobs, Part, Staged
from prover.pipeline.gpu.device_sync import device_sync
from prover.pipeline.gpu.locks import Handover, LockSet
from prover.pipeline.gpu.room import Grant, Room, Ticket


class SeatParts(Protocol):
    """What a section uses of its seat (prover/pipeline/gpu/seat.Seat, which opens it)."""

    index: int
    device: BaseDevice
    room: Room
    locks: LockSet
    emit: Callable[..., Any]
    clock: Callable[[], float]

    def holders(self, s: "SeatSection", held_by: dict[str, int]) -> str: ...


class GatedLocks:
    """A section's view of its GPU's LockSet: every acquisition passes the room's gate first,
    so a discipline (a new one too) cannot take a lock before its regime is alone on the GPU."""

    def __init__(self, locks: LockSet, room: Room, t: Ticket) -> None:
        self._locks, self._room, self._t = locks, room, t

    def hold(self, name: str, worker: str, part: str | None = None) -> AbstractContextManager[None]:
        self._room.gate(self._t)
        return self._locks.hold(name, worker, part)

    def hold_all(self, names: Iterable[str], worker: str, part: str | None = None) -> AbstractContextManager[None]:
        self._room.gate(self._t)
        return self._locks.hold_all(names, worker, part)

    def handover(self, first: str, then: str, worker: str, part: str | None = None) -> AbstractContextManager[Handover]:
        self._room.gate(self._t)
        return self._locks.handover(first, then, worker, part)

    def held_by(self, worker: str) -> list[str]:
        return self._locks.held_by(worker)


@dataclass(eq=False)
class SeatSection:
    seat: SeatParts
    w: str
    part: Part
    knobs: Knobs
    ticket: Ticket
    syn: Staged
    result: dict[str, Any]
    T: Mapping[str, float]
    prestage_wait_s: float
    bufs: list[Buffer] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.g, self.dev = self.seat.index, self.seat.device
        self.stream: Stream = self.dev.stream(self.w)
        self.locks = GatedLocks(self.seat.locks, self.seat.room, self.ticket)

    # --- the room, bound to this section's ticket ----------------------------------------------------
    def room(self, wait_s: float | None) -> Grant:
        return self.seat.room.room(self.ticket, wait_s)

    def claim(self) -> None:
        self.seat.room.claim(self.ticket)

    def slot(self) -> AbstractContextManager[None]:
        return self.seat.room.slot(self.ticket)

    # --- the device ------------------------------------------------------------------------------------
    def upload(self, modelled_s: float) -> list[Buffer]:
        """Its partition's buffers, room taken whole first (a pre-stage's is earmarked already),
        allocated and uploaded on its stream; on a failure every piece goes back at once."""
        dev, stream, room = self.dev, self.stream, self.seat.room
        bufs: list[Buffer] = []
        room.take(self.ticket, in_compute=COMPUTE in self.locks.held_by(self.w))
        try:
            for name, n in room.sizing.buffers.items():
                bufs.append(dev.alloc(self.w, self.part.id, name, n, stream))
            dev.wait(dev.upload(stream, bufs, [self.syn.a, self.syn.b, self.syn.c], modelled_s))
            return bufs
        except BaseException as exc:
            if isinstance(exc, OomError):  # said now, while the locks and the holders are as they were
                exc.explain(self.seat.holders(self, exc.held_by))
            for b in bufs:
                dev.free(b, stream)
            room.give_back(self.ticket)
            raise

    def device_sync(self) -> None:
        """The device-global calls of a pre-stage (cudaDeviceSynchronize + pool trim): every
        discipline makes them here, so what they wait behind is recorded in one place."""
        device_sync(self.seat.emit, self.seat.clock, self.dev, self.seat.locks, self.w, self.g, self.part.id)

    # --- what it says --------------------------------------------------------------------------------------
    def fallback(self, reason: str) -> None:
        self.seat.emit(ev.Fallback, gpu=self.g, part=self.part.id, worker=self.w, reason=reason)

    def oom(self, exc: OomError, outcome: str) -> None:
        """The Oom event, once per refusal, with what came of it (retried | failed)."""
        self.seat.emit(ev.Oom, **exc.event(outcome))
