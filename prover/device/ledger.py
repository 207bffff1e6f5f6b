"""What a device's allocations are counted against: its *ledger*.

A ledger keeps one `Book` (the budget in force, the live bytes per owner, the room set aside
ahead of allocations) under one lock, and answers why an allocation finds no room. The device
counts every allocation and free there, under that lock, and asks it why when it refuses one;
it keeps no budget of its own and never changes one.

On an engine the ledger is the GPU's room (prover/pipeline/gpu/room.py), the one authority
over the budget: it decides who may set room aside, when a changed budget applies, and it is
the only writer of `Book.budget`. A device on its own (tests and benchmarks of one device)
counts against a `FixedBudget`.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Protocol


@dataclass
class Book:
    """The numbers of one device's memory, kept by its ledger under the ledger's lock."""

    budget: int  # bytes the live and earmarked bytes may not exceed
    used: int = 0  # bytes handed to live buffers
    owners: dict[str, int] = field(default_factory=dict)  # owner -> live bytes
    earmarked: dict[str, int] = field(default_factory=dict)  # owner -> room set aside, not yet allocated

    def free(self) -> int:
        """Room for an owner with no earmark: the budget less live and earmarked bytes."""
        return self.budget - self.used - sum(self.earmarked.values())

    def allowance(self, owner: str) -> int:
        """Room for `owner`'s next allocation: the free room and what is earmarked for it."""
        return self.free() + self.earmarked.get(owner, 0)

    def held(self) -> dict[str, int]:
        """owner -> live + earmarked bytes: who holds the budget."""
        out = dict(self.owners)
        for o, n in self.earmarked.items():
            out[o] = out.get(o, 0) + n
        return out

    def count(self, owner: str, nbytes: int) -> None:
        """An allocation made: live now, out of owner's earmark first."""
        mine = self.earmarked.get(owner, 0)
        if mine:
            left = mine - min(mine, nbytes)
            if left:
                self.earmarked[owner] = left
            else:
                self.earmarked.pop(owner, None)
        self.used += nbytes
        self.owners[owner] = self.owners.get(owner, 0) + nbytes

    def uncount(self, owner: str, nbytes: int) -> None:
        """A free: the bytes are room again."""
        self.used -= nbytes
        left = self.owners.get(owner, 0) - nbytes
        if left > 0:
            self.owners[owner] = left
        else:
            self.owners.pop(owner, None)


class Ledger(Protocol):
    """What a device counts its memory against (the GPU's room, or a FixedBudget). Every call
    is made with `lock` held; `count` and `uncount` wake whoever waits for room."""

    @property
    def lock(self) -> threading.Condition: ...
    @property
    def book(self) -> Book: ...
    def why(self, owner: str, nbytes: int) -> str: ...  # why owner found no room: one of base.OOM_CAUSES
    def count(self, owner: str, nbytes: int) -> None: ...
    def uncount(self, owner: str, nbytes: int) -> None: ...


class FixedBudget:
    """The ledger of a device on its own: a budget fixed when made, no room set aside ahead."""

    def __init__(self, budget: int) -> None:
        self._lock = threading.Condition()
        self._book = Book(budget=int(budget))

    @property
    def lock(self) -> threading.Condition:
        return self._lock

    @property
    def book(self) -> Book:
        return self._book

    def why(self, owner: str, nbytes: int) -> str:
        b = self._book
        return "budget" if b.used > b.budget or nbytes > b.budget else "unknown"

    def count(self, owner: str, nbytes: int) -> None:
        self._book.count(owner, nbytes)

    def uncount(self, owner: str, nbytes: int) -> None:
        self._book.uncount(owner, nbytes)
        self._lock.notify_all()
