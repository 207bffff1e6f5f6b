"""Proof classes: what a sector is for, how urgent it is, how big, and by when it must be done.

`winning` > `window` > `c2` (priority 0 is served first). The scheduler (prover/pipeline/
class_queue.py) gives a free worker the oldest partition of the most urgent class that has
one, so a WinningPoSt submitted behind a full C2 queue is proved next, at the next partition
boundary (never mid-kernel: a partition in flight finishes). Deadlines are modelled seconds
from submission (x time_scale, like the phases), Filecoin-shaped: a WinningPoSt within the
~25 s of an epoch, a WindowPoSt within its 30-minute window, C2 without one.

Each class proves a circuit of its own size: the run's `constraints_log2` (and its modelled
size) plus the class's log2 offset (`class_log2_offset` in the config; winning -4 and window
-2 by default: PoSt circuits are smaller than a PoRep partition), never below MIN_LOG2 (classes
that meet there share a circuit and key). So a run holds keys of several sizes; prover/pipeline/keys/key_ring.py keeps them hot or cold under the
host-RAM budget and loads a cold one, with progress, when a partition of its size needs it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

MIN_LOG2 = 8  # the smallest circuit prover.groth16.circuit.make_circuit builds (a test checks)


@dataclass(frozen=True)
class ProofClass:
    name: str
    priority: int  # 0 first
    partitions: int | None  # a sector's partitions; None: the run's `partitions`
    deadline_s: float | None  # modelled seconds from submission; None: none
    help: str
    log2_offset: int = 0  # its circuit's size against the run's, by default (config: class_log2_offset)


CLASSES: dict[str, ProofClass] = {c.name: c for c in (
    ProofClass("winning", 0, 1, 25.0, "WinningPoSt: one partition, within an epoch (~25 s)", -4),
    ProofClass("window", 1, 2, 1800.0, "WindowPoSt: a few partitions within its 30-minute window", -2),
    ProofClass("c2", 2, None, None, "PoRep commit phase 2: a sector's partitions, no deadline", 0),
)}
DEFAULT = "c2"
BY_PRIORITY: tuple[str, ...] = tuple(sorted(CLASSES, key=lambda n: CLASSES[n].priority))
DEFAULT_OFFSETS: dict[str, int] = {n: c.log2_offset for n, c in CLASSES.items()}


def proof_class(name: str) -> ProofClass:
    """The class called `name`; ValueError naming the known ones otherwise."""
    c = CLASSES.get(name.strip().lower())
    if c is None:
        raise ValueError(f"unknown proof class {name!r}; known: {', '.join(BY_PRIORITY)}")
    return c


@dataclass(frozen=True)
class ClassSize:
    """A class's circuit: the size proved for real and the size the device models."""

    log2: int
    modelled_log2: int


def class_size(proved_log2: int, modelled_log2: int, offset: int) -> ClassSize:
    """The run's sizes moved by `offset`, the proved one never below MIN_LOG2. The modelled one
    moves as far as the proved one did, so classes that meet at MIN_LOG2 share one circuit,
    one key and one modelled size."""
    log2 = max(MIN_LOG2, proved_log2 + offset)
    return ClassSize(log2, modelled_log2 + (log2 - proved_log2))


def class_sizes(proved_log2: int, modelled_log2: int, offsets: Mapping[str, int] | None = None) -> dict[str, ClassSize]:
    """Every class's sizes, by class name (offsets: the config's, else each class's own)."""
    got = {**DEFAULT_OFFSETS, **(offsets or {})}
    return {n: class_size(proved_log2, modelled_log2, got[n]) for n in BY_PRIORITY}
