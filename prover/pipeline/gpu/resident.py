"""A circuit's matrices resident on each GPU (abc gpu): what the R1CS kernel reads to make a
partition's a, b, c in its pre-stage. One set per circuit size and GPU, held in the GPU's room
(`Room.hold`, owner `r1cs:2^N`: the sections run beside it), allocated through the GPU's device
(its allocator counts every byte: one buffer a matrix, its arrays at 256-byte offsets), uploaded
once, and freed and let go when the key ring drops the circuit's device copies (its key made
cold) or the run ends. On a simulated GPU, or without the kernels, the bytes held are the same
(modelled) and the products are made on the host inside the GPU section.

    resident = ResidentR1cs(seats, gpu, scale)
    resident.place(log2, circuit)    # on every GPU: hold (waits for the room's boundary), allocate, upload
    resident.get(g, log2)            # what GpuCompute.r1cs reads there (None: the host makes a, b, c)
    resident.drop(log2)              # on every GPU: free, let go
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable

from prover.device.base import BaseDevice, Buffer, Stream
from prover.groth16.compose import GpuCompute
from prover.pipeline.gpu.seat import Seat

ALIGN = 256  # each array of a matrix's device form starts at a multiple of this (the pool's alignment)
ARRAYS = 8  # arrays a matrix's device form has (prover/kernels/r1cs.py NAMES): the alignment slack a matrix
STAND_IN_BYTES_PER_ROW = 35.5  # a circuit without matrices (NullPhases): the family's device form (2^16..2^22: 35.5-35.7)
MATRICES = ("A", "B", "C")


def owner_of(log2: int) -> str:
    """The room's owner of a circuit's resident matrices (its Alloc events' owner too)."""
    return f"r1cs:2^{log2}"


def _align(n: float) -> int:
    return -(-int(n) // ALIGN) * ALIGN


def matrix_bytes(circuit: Any, scale: float = 1.0) -> dict[str, int]:
    """Each matrix's device bytes by name (A, B, C), x `scale` (a modelled size over the proved one),
    with room for its arrays' alignment: what the room holds for a circuit on a GPU, known before
    the matrices are made."""
    plans = [getattr(getattr(circuit, m, None), "host_plan", None) for m in "abc"]
    sizes: list[float] = [p.device_bytes() for p in plans if p is not None]
    if len(sizes) < 3:  # no matrices to measure (the engine's stand-in phases)
        sizes = [STAND_IN_BYTES_PER_ROW * int(getattr(circuit, "domain_size", 0)) / 3] * 3
    f = max(1.0, scale)
    return {m: _align(n * f) + ARRAYS * ALIGN for m, n in zip(MATRICES, sizes)}


@dataclass
class Placed:
    """One circuit's matrices on one GPU."""

    owner: str
    bufs: list[Buffer]
    stream: Stream
    mats: tuple[Any, ...] | None  # the device matrices the kernel reads (None: the host makes a, b, c)

    @property
    def nbytes(self) -> int:
        return sum(b.nbytes for b in self.bufs)


class ResidentR1cs:
    """The resident matrices of a run, by (GPU, circuit size)."""

    def __init__(self, seats: dict[int, Seat], gpu: GpuCompute, scale: Callable[[int], float]) -> None:
        """`scale(log2)`: the modelled size over the proved one (the bytes counted are the modelled)."""
        self.seats, self.gpu, self.scale = seats, gpu, scale
        self._lock = threading.Lock()  # the table; a placement itself runs outside it (it waits for the room)
        self._placed: dict[tuple[int, int], Placed] = {}

    def place(self, log2: int, circuit: Any) -> int:
        """The circuit's matrices on every GPU where they are not yet; its bytes on one GPU."""
        counted = 0
        for g, seat in sorted(self.seats.items()):
            with self._lock:
                have = self._placed.get((g, log2))
            if have is None:
                have = self._place(seat, log2, circuit)
                with self._lock:
                    self._placed[(g, log2)] = have
            counted = have.nbytes
        return counted

    def get(self, g: int, log2: int) -> Placed | None:
        with self._lock:
            return self._placed.get((g, log2))

    def drop(self, log2: int) -> None:
        """Free the circuit's matrices on every GPU and give their room back (no partition of
        that size is in flight: the key ring drops only an unpinned key's copies)."""
        with self._lock:
            gone = [(g, self._placed.pop((g, lg))) for g, lg in list(self._placed) if lg == log2]
        for g, placed in gone:
            seat = self.seats[g]
            for b in placed.bufs:
                seat.device.free(b, placed.stream)
            seat.room.let_go(placed.owner)

    def close(self) -> None:
        """Everything freed and let go (the run ends)."""
        with self._lock:
            sizes = sorted({lg for _, lg in self._placed})
        for log2 in sizes:
            self.drop(log2)

    def held(self) -> dict[int, int]:
        """GPU -> resident bytes placed there."""
        with self._lock:
            out: dict[int, int] = {}
            for (g, _), p in self._placed.items():
                out[g] = out.get(g, 0) + p.nbytes
            return out

    def _place(self, seat: Seat, log2: int, circuit: Any) -> Placed:
        counted = matrix_bytes(circuit, self.scale(log2))
        owner, dev = owner_of(log2), seat.device
        seat.room.hold(owner, sum(counted.values()))  # a boundary for the sections, like a budget cut
        stream = dev.stream(owner)
        bufs: list[Buffer] = []
        try:
            for m, n in counted.items():
                bufs.append(dev.alloc(owner, None, m, n, stream))
            mats = self._upload(dev, stream, bufs, circuit) if self.gpu.r1cs_on_device else None
        except BaseException:
            for b in bufs:
                dev.free(b, stream)
            seat.room.let_go(owner)
            raise
        return Placed(owner, bufs, stream, mats)

    def _upload(self, dev: BaseDevice, stream: Stream, bufs: list[Buffer], circuit: Any) -> tuple[Any, ...] | None:
        """Each matrix's device form into its buffer (one upload, waited for), then the matrices
        over it; None where the device gives no views of its buffers (the host makes a, b, c)."""
        puts, layout = [], []
        for buf, m in zip(bufs, (circuit.a, circuit.b, circuit.c)):
            off, where = 0, {}
            for name, arr in self.gpu.r1cs_arrays(m.host_plan).items():
                puts.append((buf, off, arr))
                where[name] = (off, arr.shape, arr.dtype)
                off += _align(arr.nbytes)
            layout.append((m.host_plan, buf, where))
        dev.wait(dev.upload(stream, puts, 0.0))
        mats = []
        for plan, buf, where in layout:
            views = {name: dev.view(buf, shape, dtype, off) for name, (off, shape, dtype) in where.items()}
            if any(v is None for v in views.values()):
                return None
            mats.append(self.gpu.r1cs_matrix(plan, views))
        return tuple(mats)
