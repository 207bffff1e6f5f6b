"""Proof classes: what a sector is for, how urgent it is, how big, and by when it must be done.

`winning` > `window` > `c2` (priority 0 is served first). The scheduler (prover/pipeline/
class_queue.py) gives a free worker the oldest partition of the most urgent class that has
one, so a WinningPoSt submitted behind a full C2 queue is proved next, at the next partition
boundary (never mid-kernel: a partition in flight finishes). Deadlines are modelled seconds
from submission (x time_scale, like the phases), Filecoin-shaped: a WinningPoSt within the
~25 s of an epoch, a WindowPoSt within its 30-minute window, C2 without one.

All classes prove the run's circuit (one key); their own circuit sizes (several keys kept
hot/cold under the host budget) are not modelled yet, so `partitions` is their size here.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProofClass:
    name: str
    priority: int  # 0 first
    partitions: int | None  # a sector's partitions; None: the run's `partitions`
    deadline_s: float | None  # modelled seconds from submission; None: none
    help: str


CLASSES: dict[str, ProofClass] = {c.name: c for c in (
    ProofClass("winning", 0, 1, 25.0, "WinningPoSt: one partition, within an epoch (~25 s)"),
    ProofClass("window", 1, 2, 1800.0, "WindowPoSt: a few partitions within its 30-minute window"),
    ProofClass("c2", 2, None, None, "PoRep commit phase 2: a sector's partitions, no deadline"),
)}
DEFAULT = "c2"
BY_PRIORITY: tuple[str, ...] = tuple(sorted(CLASSES, key=lambda n: CLASSES[n].priority))


def proof_class(name: str) -> ProofClass:
    """The class called `name`; ValueError naming the known ones otherwise."""
    c = CLASSES.get(name.strip().lower())
    if c is None:
        raise ValueError(f"unknown proof class {name!r}; known: {', '.join(BY_PRIORITY)}")
    return c
