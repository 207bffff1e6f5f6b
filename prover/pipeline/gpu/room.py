"""One GPU's room: the one authority over its VRAM. It owns the budget (one door changes it:
`set_budget`), the live and earmarked bytes (the device counts its allocations here, under
the room's one lock, and asks the room why it refuses one), and decides who may take room in
the budget and when sections begun under new knobs may start on the GPU (docs/disciplines.md,
"Switching").

Two rules.

1. Regimes never share a GPU. A section registers as it starts (`enter`, with the knobs it
   read) under its *regime* (`prover.disciplines.regime`: its lock_mode and the knobs its
   discipline takes room by, `Discipline.admission_knobs`: two-lock's mem_sync and prestage),
   and a budget cut not yet in force. Sections of one regime form an epoch. At its first
   acquisition (a slot, a lock, room) a section waits until every older epoch's sections have
   left the GPU (buffers freed, locks and slot let go). After a switch the old knobs' sections
   drain and the new ones start on a budget nobody else holds: no OOM and no fallback that
   neither setting would have had alone, for every pair, by construction. A budget cut applies
   at that boundary, a raise at once. Knobs outside the regime (b_g2, workers, mem_sync and
   prestage where the discipline does not take room by them) apply at the next section, with
   no wait.

2. Room is taken whole and ahead. A partition's room (all its buffers, `Sizing.buffers`) is
   earmarked in one step before any of it is allocated, never checked and then taken piece by
   piece. Who may: `slot` (reserved: budget // partition slots), `room` (a pre-stage outside
   compute: checked once, waited for with a bound, or waited for), `take` (an allocation under
   the locks: single and narrow's pre-stage, a fallback, prestage off). A section that will
   allocate under compute while others pre-stage outside it (two-lock's fallback) `claim`s its
   room first, under mem; a later pre-stage is refused what a claimant ahead of it in the
   compute queue will need when its turn comes. So an allocation under compute always finds its
   room, and nobody it could wait for holds it.

3. Resident bytes are held beside the sections (`hold` / `let_go`: a circuit's matrices; the book
   in holds.py), and the sections run under the budget less them (slots, claims, an OOM's cause).
   A hold is a budget cut (a new epoch; earmarked once the old figure's sections have left, at
   once on an idle GPU; refused if a partition no longer fits beside it), a let-go a raise; a
   scenario (`two-prestage`) is resolved beside them.

Everything here runs under the room's one lock (`lock`, the device's ledger lock too), so a
decision and the accounting are one step, and every free wakes whoever waits for room.
"""
from __future__ import annotations

import math
import threading
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from prover import events as ev
from prover.device.base import BaseDevice, Stopped
from prover.device.budget import Sizing
from prover.device.ledger import Book, Ledger
from prover.disciplines import Regime
from prover.pipeline.gpu.holds import Holds

_POLL_S = 0.05  # the stop flag is looked at this often while waiting
MANY_PARTITIONS = 64  # `card` on a simulated device of a profile with no card: room for this many


@dataclass(eq=False)
class _Epoch:
    """The sections that began under one regime, in a row."""

    key: Regime
    word: int  # the budget it runs under (a cut waits for the older epochs to leave)
    held: frozenset[tuple[str, int]] = frozenset()  # the resident holds it runs beside (a hold waits for the older epochs)
    members: int = 0
    arrived: float | None = None  # when its first section reached the gate while older ones ran
    drained: int = 0  # older sections that left while it waited
    passed: bool = False


@dataclass(eq=False)
class Ticket:
    """One GPU section's registration: its epoch, whether it passed the gate, its claim."""

    worker: str
    epoch: _Epoch
    passed: bool = False
    claimed: bool = False
    claims_before: list["Ticket"] = field(default_factory=list)  # claimants whose `after` counts this one's room


@dataclass
class Grant:
    """The answer to a pre-stage's request for room: granted, or why not (for the Fallback)."""

    ok: bool
    why: str = ""


class Room:
    """The room of one GPU (one per seat). It makes its device, counting against itself:
    `make_device(ledger)` (a SimDevice or CudaDevice given the room as its budget)."""

    def __init__(self, sizing: Sizing, spec: int | str, stop: threading.Event,
                 make_device: Callable[[Ledger], BaseDevice], resident: int = 0) -> None:
        """`resident`: bytes the run will hold beside the partitions (abc gpu's matrices): checked now."""
        self.sizing, self.need, self._stop = sizing, sizing.need, stop
        self._cv = threading.Condition()
        self._book = Book(budget=0)  # the budget is the door's, once the device says what `card` is here
        self.device = make_device(self)
        self._clock = self.device.clock
        # enter() reads the controller's knobs under this, not under the room's lock: a budget change
        # holds the controller's lock while it takes the room's (controller -> room, never back)
        self._entering = threading.Lock()
        self._epochs: deque[_Epoch] = deque()
        self._tickets: dict[str, Ticket] = {}  # worker -> its section's ticket
        # an open claim (its section's ticket) -> room granted outside compute since it was made
        self._claims: dict[Ticket, int] = {}
        self._slot_queue: list[object] = []
        self.slots_in_use = 0
        self._settled: Regime | None = None  # the regime last let onto the GPU (None: none yet)
        self._holds = Holds()  # resident bytes beside the sections (rule 3)
        self._spec = spec  # as given: a scenario is resolved again beside what is held
        self._bytes(spec, resident)  # BudgetError: a partition does not fit beside what the run will hold
        self._newest = self._bytes(spec)  # the newest word on the budget (a cut is in force once at the front)
        with self._cv:
            self._apply(self._newest, say=False)  # the device says it when announced

    # --- the ledger the device counts against (prover/device/ledger.py) --------------------------
    @property
    def lock(self) -> threading.Condition:
        return self._cv

    @property
    def book(self) -> Book:
        return self._book

    @property
    def budget(self) -> int:
        """The budget in force."""
        return self._book.budget

    def count(self, owner: str, nbytes: int) -> None:
        self._book.count(owner, nbytes)

    def uncount(self, owner: str, nbytes: int) -> None:
        self._book.uncount(owner, nbytes)
        self._cv.notify_all()

    def why(self, owner: str, nbytes: int) -> str:
        """Why `owner` found no room (the device asks, under the lock): the budget fell below
        what was held; room held by a section of another epoch (a switch), by nobody's section
        (a leak), or by sections of the same regime (contention)."""
        book = self._book
        beside = 0 if owner in self._holds else self._holds.total()  # a section's room is the budget less the resident
        if book.used + sum(book.earmarked.values()) > book.budget or nbytes > book.budget - beside:
            return "budget"
        mine = self._tickets.get(owner)
        holders = [o for o, n in book.held().items() if n > 0 and o != owner and o not in self._holds]
        if not holders:
            return "unknown"
        if any(o not in self._tickets for o in holders):
            return "leak"
        if mine is not None and any(self._tickets[o].epoch is not mine.epoch for o in holders):
            return "switch"
        return "contention"

    # --- the budget: one door --------------------------------------------------------------------
    def set_budget(self, spec: int | str) -> tuple[int, int]:
        """The one door to the VRAM budget: the spec resolved and checked (BudgetError, with the
        numbers, before anything changes), then the newest word for every section not yet on the
        GPU. A raise applies at once (to all); a cut once the sections admitted under the old
        budget have left (sections that start meanwhile open a new epoch, which waits for them
        and applies it). Returns (the budget in force before, the new word)."""
        with self._cv:
            n = self._bytes(spec, self._holds.newest())
            old = self._book.budget
            self._spec = spec
            self._word(n)
        return old, n

    def _word(self, n: int) -> None:
        """The newest word on the budget (lock held): a raise at once, a cut once the older sections left."""
        self._newest = n
        raise_ = n >= self._book.budget
        for e in self._epochs:
            if raise_ or not e.passed:
                e.word = n
        if raise_ or not self._epochs:
            self._apply(n)
        self._cv.notify_all()

    def _bytes(self, spec: int | str, resident: int = 0) -> int:
        """A spec in bytes on this device (`card`: its memory, or room for many partitions on a
        simulated one of a profile with no card), checked to hold a partition beside `resident`."""
        return self.sizing.bytes(spec, self.device.card() or MANY_PARTITIONS * self.need + resident, resident) or 0

    def _apply(self, nbytes: int, say: bool = True) -> None:
        """The budget in force changes (under the lock): said (VramSample) before anyone can
        allocate under it, so the event stream never shows live bytes above the budget in force."""
        self._book.budget = int(nbytes)
        self._cv.notify_all()
        if say:
            self.device.sample()

    # --- rule 1: regimes -------------------------------------------------------------------------
    @contextmanager
    def section(self, worker: str, read: Callable[[], tuple[Any, Regime]]) -> Iterator[tuple[Any, Ticket]]:
        """A GPU section's registration, held for the whole section: (its knobs, its ticket) on
        entry (`enter`), everything it holds here given back on every exit path (`leave`)."""
        knobs, t = self.enter(worker, read)
        try:
            yield knobs, t
        finally:
            self.leave(t)

    def enter(self, worker: str, read: Callable[[], tuple[Any, Regime]]) -> tuple[Any, Ticket]:
        """Register worker's next section: read its knobs (and regime) and join the newest epoch
        if that is the same regime, else open one. One step, so epochs follow the order the
        knobs were read in."""
        with self._entering:
            knobs, key = read()
            with self._cv:
                last = self._epochs[-1] if self._epochs else None
                if last is None or last.key != key or last.word != self._newest or last.held != self._holds.figure():
                    last = _Epoch(key, self._newest, self._holds.figure())
                    self._epochs.append(last)
                last.members += 1
                t = self._tickets[worker] = Ticket(worker, last)
                return knobs, t

    def gate(self, t: Ticket) -> None:
        """Wait until every older epoch's sections have left the GPU (the first acquisition of a
        section; a no-op after). Stopped if the engine stops meanwhile."""
        if t.passed:
            return
        with self._cv:
            e = t.epoch
            if self._epochs[0] is not e and e.arrived is None:
                e.arrived = self._clock()
            while self._epochs[0] is not e:
                if self._stop.is_set():
                    raise Stopped()
                self._cv.wait(_POLL_S)
            if not e.passed:
                e.passed = True
                self._settle(e)
            t.passed = True

    def _settle(self, e: _Epoch) -> None:
        """The epoch is alone on the GPU: its budget applies (a cut waited for this), and a new
        regime is said."""
        applied = e.word if e.word != self._book.budget else None
        if applied is not None:
            self._apply(applied)
        self._grant()
        if (self._settled is not None and e.key != self._settled) or applied is not None:
            self.device.emit(ev.SwitchSettled, gpu=self.device.index, regime=dict(e.key),
                             waited=max(0.0, self._clock() - e.arrived) if e.arrived is not None else 0.0,
                             drained=e.drained, budget=applied)
        self._settled = e.key

    def leave(self, t: Ticket) -> None:
        """The section is over (every path): its room and claim go back, its epoch may end."""
        with self._cv:
            if self._tickets.get(t.worker) is t:
                del self._tickets[t.worker]
            self._release(t.worker)
            self._close_claim(t)
            for c in t.claims_before:  # conservative until here: such a section frees before its claimant computes
                if c in self._claims:  # still open (a ticket is one section: never a later claim of that worker)
                    self._claims[c] -= self.need
            e = t.epoch
            e.members -= 1
            if t.passed:  # it held GPU resources: count it for the epochs that waited for it
                for later in list(self._epochs)[self._epochs.index(e) + 1:]:
                    if later.arrived is not None:
                        later.drained += 1
            if e.members <= 0:
                self._epochs.remove(e)
            if not self._epochs and self._newest < self._book.budget:  # a cut nobody was left to wait for
                self._apply(self._newest)
            if not self._epochs:
                self._grant()  # a hold nobody was left to wait for
            self._cv.notify_all()

    # --- rule 2: room -------------------------------------------------------------------------
    @contextmanager
    def slot(self, t: Ticket) -> Iterator[None]:
        """A pre-stage slot (reserved): budget // partition slots, first come first served, sized
        from the budget at each acquire; held until the section's room is given back."""
        self.gate(t)
        me = object()
        with self._cv:
            self._slot_queue.append(me)
            try:
                while self._slot_queue[0] is not me or self.slots_in_use >= self.slot_capacity():
                    if self._stop.is_set():
                        raise Stopped()
                    self._cv.wait(_POLL_S)
            finally:
                self._slot_queue.remove(me)
                self._cv.notify_all()
            self.slots_in_use += 1
        try:
            yield
        finally:
            with self._cv:
                self.slots_in_use -= 1
                self._cv.notify_all()

    def slot_capacity(self) -> int:
        return max(1, (self._book.budget - self._holds.total()) // self.need)

    def room(self, t: Ticket, wait_s: float | None) -> Grant:
        """A whole partition's room for a pre-stage outside compute, earmarked: at once
        (`wait_s` None), within `wait_s` modelled seconds, or whenever it comes (inf). Refused
        what a claimant ahead of it will need."""
        self.gate(t)
        deadline = None if wait_s is None or math.isinf(wait_s) else self._clock() + self.device.wall(wait_s)
        with self._cv:
            while True:
                why = self._refusal()
                if not why:
                    self._earmark(t.worker)
                    t.claims_before.extend(self._claims)
                    for c in self._claims:
                        self._claims[c] += self.need
                    return Grant(True)
                left = 0.0 if wait_s is None else (math.inf if deadline is None else deadline - self._clock())
                if left <= 0:
                    return Grant(False, why)
                if self._stop.is_set():
                    raise Stopped()
                self._cv.wait(min(left, _POLL_S))

    def _refusal(self) -> str:
        """Why a pre-stage outside compute cannot have a partition's room now ('' if it can)."""
        free, budget = self._book.free(), self._book.budget
        if free < self.need:
            return f"{max(0, free) >> 20} MiB free of {budget >> 20} MiB budget, {self.need >> 20} MiB needed"
        worst = max(self._claims.values(), default=None)
        if worst is not None and worst + 2 * self.need > budget - self._holds.total():
            return (f"{free >> 20} MiB free, but a fallback queued for compute ahead of it needs "
                    f"{self.need >> 20} MiB when its turn comes")
        return ""

    def claim(self, t: Ticket) -> None:
        """t will allocate under compute: from now on, pre-stages leave it room at its turn."""
        self.gate(t)  # a claim binds its own epoch's pre-stages, never an older one's
        with self._cv:
            if not t.claimed:
                t.claimed = True
                self._claims[t] = 0

    def take(self, t: Ticket, in_compute: bool) -> None:
        """Room for an allocation made under the section's locks (single and narrow's pre-stage, a
        fallback, prestage off), earmarked if it fits; if not, the allocation itself is refused
        (and says why). Under compute a claim does not hold it back: every claimant is behind
        the compute holder, which frees its room before they compute."""
        self.gate(t)
        with self._cv:
            if self._book.earmarked.get(t.worker, 0) >= self.need:
                return
            if in_compute:
                self._close_claim(t)
                self._earmark(t.worker)
            elif not self._refusal():
                self._earmark(t.worker)

    def _earmark(self, owner: str) -> None:
        """A partition's room set aside for owner, if it fits now (under the lock)."""
        if self._book.free() >= self.need:
            self._book.earmarked[owner] = self._book.earmarked.get(owner, 0) + self.need

    def _release(self, owner: str) -> None:
        """What is left of owner's earmark goes back (under the lock)."""
        if self._book.earmarked.pop(owner, 0):
            self._cv.notify_all()

    def _close_claim(self, t: Ticket) -> None:
        if t.claimed:
            t.claimed = False
            self._claims.pop(t, None)
            self._cv.notify_all()

    def give_back(self, t: Ticket) -> None:
        """An allocation failed half-way: what is left of t's earmark goes back now, not at the
        section's end (the next compute holder counts on it)."""
        with self._cv:
            self._release(t.worker)

    def wait_room(self, wait_s: float) -> bool:
        """Wait (bounded, modelled seconds) until a partition's room is free; True if it is (an
        OOM's retry waits here before its GPU section runs again)."""
        deadline = self._clock() + self.device.wall(wait_s)
        with self._cv:
            while self._book.free() < self.need:
                left = deadline - self._clock()
                if left <= 0:
                    return False
                if self._stop.is_set():
                    raise Stopped()
                self._cv.wait(min(left, _POLL_S))
            return True

    # --- rule 3: resident bytes (prover/pipeline/gpu/holds.py keeps the book) -------------------
    def hold(self, owner: str, nbytes: int) -> None:
        """Set `nbytes` aside for `owner` beside the sections until `let_go(owner)`; returns once
        they are earmarked for it (it then allocates them under its name). A budget cut (rule 3):
        BudgetError if a partition would no longer fit beside it; Stopped if the engine stops."""
        with self._cv:
            if owner in self._holds:
                raise ValueError(f"{owner} already holds VRAM on gpu{self.device.index}")
            word = self._bytes(self._spec, self._holds.newest() + int(nbytes))  # BudgetError: nothing changed
            self._holds.pending[owner] = int(nbytes)
            for e in self._epochs:
                if not e.passed:
                    e.held = self._holds.figure()
            self._word(word)
            if not any(e.passed for e in self._epochs):  # nobody on the GPU: nothing to wait for
                self._grant()
            while owner in self._holds.pending:
                if self._stop.is_set():
                    self._holds.drop(owner)
                    raise Stopped()
                self._cv.wait(_POLL_S)

    def let_go(self, owner: str) -> None:
        """`owner`'s resident bytes are room again, at once (a raise): it has freed its buffers
        first; what is left of its earmark goes back here."""
        with self._cv:
            n = self._holds.drop(owner)
            if n is None:
                return
            self._book.earmarked.pop(owner, None)
            for e in self._epochs:
                e.held = e.held - {(owner, n)}
            self._word(self._bytes(self._spec, self._holds.newest()))

    def resident(self) -> dict[str, int]:  # resident owner -> bytes held in force (a copy)
        with self._cv:
            return dict(self._holds.in_force)

    def _grant(self) -> None:
        """The pending holds in force (under the lock, nothing admitted under the old figure left)."""
        if self._holds.grant(self._book):
            self._cv.notify_all()

    # --- for tests and the docs ---------------------------------------------------------------------
    def waiting(self) -> int:
        """Sections registered behind an epoch still on the GPU."""
        with self._cv:
            return sum(e.members for e in list(self._epochs)[1:])

    def epochs(self) -> list[tuple[Regime, int]]:
        with self._cv:
            return [(e.key, e.members) for e in self._epochs]
