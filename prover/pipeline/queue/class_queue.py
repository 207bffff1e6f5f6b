"""Partitions waiting, one FIFO per proof class (prover/classes.py), served most urgent class
first; and the sectors' deadlines, each reported once when it passes with the sector
unfinished (DeadlineMissed), or met or missed when its last partition finishes.

Not thread-safe by itself: WorkQueue calls it under its condition."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

from prover import events as ev
from prover.classes import BY_PRIORITY, DEFAULT


@dataclass
class _Sector:
    cls: str
    deadline_t: float | None  # on the queue's clock
    left: int
    missed: bool = False


class ClassQueues:
    def __init__(self, emit: Callable[..., Any]) -> None:
        self._emit = emit
        self._q: dict[str, deque] = {c: deque() for c in BY_PRIORITY}
        self._sectors: dict[int, _Sector] = {}

    def __len__(self) -> int:
        return sum(len(q) for q in self._q.values())

    def waiting(self, cls: str = DEFAULT) -> int:
        return len(self._q[cls])

    def add_sector(self, sector: int, cls: str, deadline_t: float | None, partitions: int) -> None:
        self._sectors[sector] = _Sector(cls, deadline_t, partitions)

    def append(self, p: Any) -> None:
        """At the back of its class, ahead of any waiting partition of lower `priority`."""
        q, pri = self._q[p.cls], getattr(p, "priority", 2)
        if not q or getattr(q[-1], "priority", 2) >= pri:
            q.append(p)
            return
        at = next(i for i, o in enumerate(q) if getattr(o, "priority", 2) < pri)
        q.insert(at, p)

    def position(self, part: str) -> int | None:
        """How many waiting partitions are served before `part` (None: it is not waiting)."""
        ahead = 0
        for c in BY_PRIORITY:
            for i, o in enumerate(self._q[c]):
                if o.id == part:
                    return ahead + i
            ahead += len(self._q[c])
        return None

    def appendleft(self, p: Any) -> None:
        self._q[p.cls].appendleft(p)

    def popleft(self, allowed: Callable[[str], bool] | None = None) -> Any:
        """The oldest partition of the most urgent class that has one and that `allowed` lets
        this worker take (placement: prover/placement.py); IndexError if none."""
        for c in BY_PRIORITY:
            if self._q[c] and (allowed is None or allowed(c)):
                return self._q[c].popleft()
        raise IndexError("no partition waiting")

    def oldest_t(self, cls: str) -> float | None:
        """When the class's next partition was queued (None: none waits)."""
        q = self._q[cls]
        return q[0].queued_t if q else None

    def remove(self, match: Any) -> list:
        """Take every waiting partition `match(p)` is true of out of the queues."""
        out = []
        for c, q in self._q.items():
            keep = deque(p for p in q if not match(p))
            out += [p for p in q if match(p)]
            self._q[c] = keep
        return out

    def finished(self, p: Any, now: float) -> None:
        s = self._sectors.get(p.sector)
        if s is None:
            return
        s.left -= 1
        if s.left <= 0:
            del self._sectors[p.sector]
            if s.deadline_t is not None and now > s.deadline_t and not s.missed:
                self._missed(p.sector, s, now, done=True)

    def check(self, now: float) -> None:
        """A deadline that passed with the sector unfinished: reported once, now."""
        for sector, s in self._sectors.items():
            if s.deadline_t is not None and not s.missed and now > s.deadline_t:
                self._missed(sector, s, now, done=False)

    def _missed(self, sector: int, s: _Sector, now: float, done: bool) -> None:
        s.missed = True
        self._emit(ev.DeadlineMissed, sector=sector, proof_class=s.cls, late_s=max(0.0, now - (s.deadline_t or 0.0)),
                   left=0 if done else s.left)
