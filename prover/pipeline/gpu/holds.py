"""Resident bytes held in a GPU's room beside its sections (rule 3 of prover/pipeline/gpu/room.py: a
circuit's matrices, abc gpu): who holds how much, in force (earmarked for its owner or allocated)
or pending (waiting for the sections admitted under the old figure to leave). Bookkeeping only,
under the room's lock: the room decides when a hold is granted and what it does to the budget."""
from __future__ import annotations

from dataclasses import dataclass, field

from prover.device.ledger import Book


@dataclass
class Holds:
    in_force: dict[str, int] = field(default_factory=dict)  # owner -> bytes earmarked or allocated for it
    pending: dict[str, int] = field(default_factory=dict)  # owner -> bytes waiting for the boundary

    def __contains__(self, owner: object) -> bool:
        return owner in self.in_force or owner in self.pending

    def total(self) -> int:
        """Bytes in force: what the sections on the GPU run beside."""
        return sum(self.in_force.values())

    def newest(self) -> int:
        """Bytes in force and pending: what sections that start now will run beside."""
        return self.total() + sum(self.pending.values())

    def figure(self) -> frozenset[tuple[str, int]]:
        """The holds in force and pending, as an epoch's figure (a new one opens a new epoch)."""
        return frozenset({**self.in_force, **self.pending}.items())

    def grant(self, book: Book) -> bool:
        """The pending holds in force: earmarked for their owners. True if there were any."""
        for owner, n in self.pending.items():
            book.earmarked[owner] = book.earmarked.get(owner, 0) + n
            self.in_force[owner] = n
        granted = bool(self.pending)
        self.pending.clear()
        return granted

    def drop(self, owner: str) -> int | None:
        """Owner's hold gone (in force or pending): its bytes, None if it held none."""
        n = self.in_force.pop(owner, None)
        return self.pending.pop(owner, None) if n is None else n
