"""One GPU section as its seat lends it to a discipline (prover/disciplines/blocks.Section): who,
where, the knobs it read, and the GPU's building blocks bound to its ticket: room, claim,
slot, the pre-stage's alloc + upload, the device-global sync, the fallback and OOM events.
Its locks are the GPU's LockSet behind the room's gate (`GatedLocks`).

The pre-stage (`upload`) allocates the partition's plan (`Sizing.buffers`) and fills it, as
the run's `abc` says: host, a, b, c (synthesis made them) into d_a and d_bc's halves; gpu, z's
upload form (prover/host/zpack.py: its field values into z, its table of classes and ranks into
z_cls), then the flow's r1cs sub-phase makes a, b, c into d_a and d_bc on the same stream (the R1CS kernel over the circuit's matrices resident on this GPU). Either way
the compute section finds a, b, c in the buffers (`abc_in_bufs`), or, where the GPU could not
make them, on the host (`abc_host`)."""
from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Protocol

from prover import events as ev
from prover.backend import Host
from prover.device.base import BaseDevice, Buffer, OomError, Put, Stream
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
    # abc gpu: the flow's r1cs sub-phase (a, b, c made from the uploaded z; True: into the buffers)
    make_abc: Callable[["SeatSection", list[Buffer]], bool] | None = None
    abc_in_bufs: bool = False  # a, b, c lie in the buffers (uploaded, or made there by the R1CS kernel)
    abc_host: Host | None = None  # a, b, c on the host (made there), when the GPU could not make them

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
        allocated and filled on its stream (the module docstring: a, b, c, or z's upload form and
        the r1cs sub-phase); on a failure every piece goes back at once."""
        dev, stream, room = self.dev, self.stream, self.seat.room
        bufs: list[Buffer] = []
        room.take(self.ticket, in_compute=COMPUTE in self.locks.held_by(self.w))
        try:
            for name, n in room.sizing.buffers.items():
                bufs.append(dev.alloc(self.w, self.part.id, name, n, stream))
            dev.wait(dev.upload(stream, self._puts(bufs), modelled_s))
            if room.sizing.abc == "gpu" and self.make_abc is not None:
                self.abc_in_bufs = self.make_abc(self, bufs)
            else:
                self.abc_in_bufs = True
            return bufs
        except BaseException as exc:
            if isinstance(exc, OomError):  # said now, while the locks and the holders are as they were
                exc.explain(self.seat.holders(self, exc.held_by))
            for b in bufs:
                dev.free(b, stream)
            room.give_back(self.ticket)
            raise

    def _puts(self, bufs: list[Buffer]) -> list[Put]:
        """What goes up, where: z's upload form (abc gpu: the field values written, the table), or
        a, b, c (a at d_a + 0, b at d_bc + 0, c at d_bc + nbytes/2); arrays a stand-in synthesis
        lacks are left out."""
        by = {b.name: b for b in bufs}
        syn = self.syn
        if self.seat.room.sizing.abc == "gpu":
            zp = getattr(syn, "zpack", None)
            vals, tab = (zp.vals[: min(zp.count, len(zp.vals))], zp.tab) if zp is not None else (None, None)
            pieces = [("z", 0, vals), ("z_cls", 0, tab)]
        else:
            half = by["d_bc"].nbytes // 2
            pieces = [("d_a", 0, syn.a), ("d_bc", 0, syn.b), ("d_bc", half, syn.c)]
        return [(by[name], off, arr) for name, off, arr in pieces if arr is not None]

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
