"""One seat per GPU: the room (the VRAM authority, and the device it made to count against it),
the locks, and the GPU sections running there. The partition flow holds the seats; a section
opened here is what a discipline builds from (prover/pipeline/gpu/section.py).

    seats = open_seats(config, backend, sizing, spec, knobs, emit, stop, clock)
    with seats[g].section(w, part, syn, result, T) as s:    # its knobs read, its ticket taken
        disciplines[s.knobs.lock_mode].section(s, work)
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Mapping, Protocol

from prover import disciplines
from prover import events as ev
from prover.config import RunConfig
from prover.device.base import BaseDevice, Buffer
from prover.device.budget import Sizing, gib
from prover.device.ledger import Ledger
from prover.disciplines.blocks import Knobs, Part, Staged
from prover.pipeline.gpu.locks import LockSet
from prover.pipeline.gpu.room import Room
from prover.pipeline.gpu.section import SeatSection
from prover.pipeline.gpu.vram_holders import Holder, explain
from prover.pipeline.gpu.vram_watch import VramWatch


class KnobSource(Protocol):
    """Where a section reads its knobs (the controller, prover/pipeline/control/controller.py)."""

    def snapshot(self, gpu: int | None = None) -> Any: ...
    def snapshot_then(self, gpu: int, then: Callable[[Any], Any]) -> Any: ...


class Seat:
    """One GPU: its room and device, its locks, and who sits in a GPU section there now."""

    def __init__(self, room: Room, locks: LockSet, knobs: KnobSource, emit: Callable[..., Any],
                 clock: Callable[[], float], prestage_wait_s: float) -> None:
        self.room, self.device, self.locks = room, room.device, locks
        self.index = self.device.index
        self.knobs, self.emit, self.clock = knobs, emit, clock
        self.prestage_wait_s = prestage_wait_s
        self.vram = VramWatch(emit)  # the VRAM marks at each section's end and the growth test over them
        self._sitting: dict[str, tuple[str, str]] = {}  # worker -> (part, lock_mode) while in a GPU section

    @contextmanager
    def section(self, w: str, part: Part, syn: Staged, result: dict[str, Any], T: Mapping[str, float],
                make_abc: Callable[[SeatSection, list[Buffer]], bool] | None = None) -> Iterator[SeatSection]:
        """w's next GPU section here: its knobs read and its place among the regimes taken in one
        step; whatever it pre-staged and did not hand on is freed, and its room given back, on
        every exit path; a VRAM mark after a section that ended well. `make_abc`: the flow's r1cs
        sub-phase, run by the pre-stage where a, b, c are made on the GPU (abc gpu)."""
        g = self.index

        def read() -> tuple[Knobs, disciplines.Regime]:
            # the section says it began in the same step as it reads its knobs: exactly ordered
            # against every ModeChange, so the fold charges it to the right segment (issue 33)
            k = self.knobs.snapshot_then(g, lambda k: self.emit(ev.SectionBegan, gpu=g, worker=w, part=part.id,
                                                                  lock_mode=str(k.lock_mode)))
            return k, disciplines.regime(lambda name: getattr(k, name))

        with self.room.section(w, read) as (knobs, ticket):
            s = SeatSection(self, w, part, knobs, ticket, syn, result, T, self.prestage_wait_s, make_abc=make_abc)
            self._sitting[w] = (part.id, knobs.lock_mode)
            try:
                yield s
            finally:
                for b in s.bufs:  # exception or stop between the sections: give the pre-staged buffers back
                    self.device.free(b, s.stream)
                s.bufs.clear()
                self._sitting.pop(w, None)
        self.vram.mark(self.device, w, part.id)  # the same point of every partition: the growth test's series

    def holders(self, s: SeatSection, held_by: dict[str, int]) -> str:
        """Who held the budget s found no room in, with their sections and locks (vram_holders)."""
        hs = []
        resident = self.room.resident()  # a circuit's matrices: there all run long, not whom it waited for
        for w, n in sorted(held_by.items()):
            if w != s.w and w not in resident:
                part, mode = self._sitting.get(w, (None, None))
                hs.append(Holder(w, n, part, mode, tuple(self.locks.held_by(w))))
        return explain(s.knobs.lock_mode, tuple(self.locks.held_by(s.w)), hs,
                       now=self.knobs.snapshot(self.index).lock_mode)


def open_seats(config: RunConfig, backend: str, sizing: Sizing, spec: int | str, knobs: KnobSource,
               emit: Callable[..., Any], stop: threading.Event, clock: Callable[[], float],
               install: Callable[[BaseDevice], None] = lambda dev: None, resident: int = 0) -> dict[int, Seat]:
    """A seat per GPU of the run, numbered 0..n-1 in events (what the fold expects); with
    `gpus = [2, 3]` the CUDA device ids are 2 and 3 (named in GpuInfo). Each room resolves the
    budget spec against its own device, checked to hold a partition beside `resident` bytes (the
    circuits' matrices, abc gpu). `install`: fault injection on each device."""
    seats: dict[int, Seat] = {}
    for g, dev_id in enumerate(config.gpu_ids):
        room = Room(sizing, spec, stop, _maker(config, backend, sizing, g, dev_id, emit, stop, clock), resident)
        dev = room.device
        emit(ev.Note, level="info", text=(
            f"gpu{g}: VRAM budget {gib(dev.budget)}" + (f" ({spec})" if isinstance(spec, str) else "")
            + f", {gib(sizing.need)} a partition's pre-stage ("
            + " + ".join(f"{name} {gib(n)}" for name, n in sizing.buffers.items()) + ")"))
        install(dev)
        seats[g] = Seat(room, LockSet(g, emit, stop, clock), knobs, emit, clock, config.prestage_wait_s)
        dev.announce()
        if backend == "cuda" and not dev.nvml:
            emit(ev.Note, level="warn", text=f"gpu{g}: NVML unavailable ({getattr(dev, 'nvml_error', '')}); "
                 "memory from the CUDA runtime, utilisation modelled")
    return seats


def _maker(cfg: RunConfig, backend: str, sizing: Sizing, g: int, dev_id: int, emit: Callable[..., Any],
           stop: threading.Event, clock: Callable[[], float]) -> Callable[[Ledger], BaseDevice]:
    """How GPU g's device is made, counting against its room."""
    if backend == "sim":
        from prover.device.sim import SimDevice

        if cfg.faults.vram_leak_bytes:  # a planted leak (tests, demos of the growth warning)
            from prover.device.leaky import LeakySimDevice

            return lambda ledger: LeakySimDevice(g, sizing.profile, ledger, emit, stop, cfg.time_scale, clock,
                                                 leak=cfg.faults.vram_leak_bytes)
        return lambda ledger: SimDevice(g, sizing.profile, ledger, emit, stop, cfg.time_scale, clock)
    from prover.device.cuda import CudaDevice

    return lambda ledger: CudaDevice(g, sizing.profile, ledger, emit, stop, cfg.time_scale, clock,
                                     nvml=not cfg.faults.nvml_missing, device_id=dev_id,
                                     pinned_host=cfg.kernels.pinned_host)
