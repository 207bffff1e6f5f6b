"""The per-GPU LockSet: a FIFO mutex per lock the disciplines declare (`mem`, `compute`), in
one global order (prover.disciplines.lock_order: mem -> compute).

Every acquisition is a context manager that emits LockRequested, LockAcquired (with the wait)
and LockReleased (with the hold), and releases on every exit path, exceptions included.
LockAcquired is emitted while the lock is held and LockReleased before it is let go, so the
event stream nests exactly like the real holders (the tests check invariants from events).

Order rule: a worker holding a lock may never request one earlier in the order
(LockOrderError): every discipline takes its locks in that order, so switching disciplines
live can never deadlock.

`handover(first, then)` holds `first`, and on `next()` takes its place in `then`'s queue
before letting `first` go: `then` is served in the order `first` was (two-lock's compute in
mem order, which the room's claims count on).
"""
from __future__ import annotations

import threading
import time
from collections import deque
from contextlib import AbstractContextManager, ExitStack, contextmanager
from types import TracebackType
from typing import Callable, Iterable, Iterator

from prover import events as ev
from prover.device.base import Emit, Stopped
from prover.disciplines import lock_order


class LockOrderError(RuntimeError):
    pass


class FifoLock:
    """A fair mutex: waiters are served in arrival order. Acquire is interruptible by `stop`."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._cv = threading.Condition(threading.Lock())
        self._queue: deque[object] = deque()
        self.holder: str | None = None
        self.holder_part: str | None = None
        self.since = 0.0

    def enqueue(self) -> object:
        """A place at the end of the queue (acquire(place=...) waits for it; withdraw() gives it up)."""
        me = object()
        with self._cv:
            self._queue.append(me)
        return me

    def withdraw(self, place: object) -> None:
        with self._cv:
            if place in self._queue:
                self._queue.remove(place)
                self._cv.notify_all()

    def acquire(self, stop: threading.Event | None, poll: float = 0.1, place: object | None = None) -> None:
        with self._cv:
            me = place
            if me is None:
                me = object()
                self._queue.append(me)
            try:
                while self.holder is not None or self._queue[0] is not me:
                    if stop is not None and stop.is_set():
                        raise Stopped()
                    self._cv.wait(poll)
            except BaseException:
                self._queue.remove(me)
                self._cv.notify_all()
                raise
            self._queue.popleft()
            self.holder = "?"

    def release(self) -> None:
        with self._cv:
            self.holder = None
            self.holder_part = None
            self._cv.notify_all()

    @property
    def waiting(self) -> int:
        return len(self._queue)


class LockSet:
    """Every declared lock of one GPU."""

    def __init__(self, gpu: int, emit: Emit, stop: threading.Event | None = None,
                 clock: Callable[[], float] = time.monotonic, order: tuple[str, ...] | None = None) -> None:
        self.gpu = gpu
        self.emit = emit
        self.stop = stop
        self.clock = clock
        self.order = order or lock_order()
        self.locks = {n: FifoLock(n) for n in self.order}
        self._held: dict[str, list[str]] = {}  # worker -> lock names held, in order
        self._meta = threading.Lock()
        self.acquisitions = 0

    def held_by(self, worker: str) -> list[str]:
        with self._meta:
            return list(self._held.get(worker, ()))

    def holders(self) -> dict[str, tuple[str | None, str | None, float]]:
        """lock name -> (worker, part, since) for the watchdog and tests."""
        return {n: (lk.holder if lk.holder != "?" else None, lk.holder_part, lk.since) for n, lk in self.locks.items()}

    def _request(self, name: str, worker: str, part: str | None) -> float:
        """Check the order rule and say the request (LockRequested); returns when it was made."""
        with self._meta:
            mine = self._held.get(worker, [])
            if name in mine:
                raise LockOrderError(f"{worker} already holds {name} on gpu{self.gpu}")
            if any(self.order.index(h) > self.order.index(name) for h in mine):
                raise LockOrderError(f"{worker} requests {name} while holding {mine} on gpu{self.gpu}: "
                                     f"order is {' -> '.join(self.order)}")
        self.emit(ev.LockRequested, gpu=self.gpu, lock=name, worker=worker, part=part)
        return self.clock()

    @contextmanager
    def hold(self, name: str, worker: str, part: str | None = None, place: "_Place | None" = None) -> Iterator[None]:
        """Hold `name`; with `place` (from a handover) the request was made and queued already."""
        lk = self.locks[name]
        t0 = place.t0 if place is not None else self._request(name, worker, part)
        lk.acquire(self.stop, place=place.token if place is not None else None)
        t1 = self.clock()
        lk.holder, lk.holder_part, lk.since = worker, part, t1
        with self._meta:
            self._held.setdefault(worker, []).append(name)
            self.acquisitions += 1
        try:
            self.emit(ev.LockAcquired, gpu=self.gpu, lock=name, worker=worker, part=part, wait=max(0.0, t1 - t0))
            yield
        finally:
            try:
                self.emit(ev.LockReleased, gpu=self.gpu, lock=name, worker=worker, part=part,
                          hold=max(0.0, self.clock() - t1))
            finally:
                with self._meta:
                    mine = self._held.get(worker, [])
                    if name in mine:
                        mine.remove(name)
                    if not mine:
                        self._held.pop(worker, None)
                lk.release()

    @contextmanager
    def hold_all(self, names: Iterable[str], worker: str, part: str | None = None) -> Iterator[None]:
        """Several locks held together, taken in the global order, released in reverse."""
        with ExitStack() as stack:
            for name in sorted(names, key=self.order.index):
                stack.enter_context(self.hold(name, worker, part))
            yield

    @contextmanager
    def handover(self, first: str, then: str, worker: str, part: str | None = None) -> Iterator["Handover"]:
        """Hold `first`; `h.next()` queues for `then`, lets `first` go and waits for `then`. Whatever
        is held or queued is let go on every exit path."""
        with ExitStack() as stack:
            h = Handover(self, stack, then, worker, part)
            h.first = stack.enter_context(_Closing(self.hold(first, worker, part)))
            yield h

    def both(self, worker: str, part: str | None = None) -> AbstractContextManager[None]:
        """Every lock of this GPU, held together."""
        return self.hold_all(self.order, worker, part)

    def all_free(self) -> bool:
        return all(lk.holder is None for lk in self.locks.values())


class _Place:
    """A place in a lock's queue, taken by a handover before it lets the earlier lock go."""

    def __init__(self, token: object, t0: float) -> None:
        self.token, self.t0 = token, t0


class _Closing:
    """A context manager that can also be left early (close()), once."""

    def __init__(self, cm: AbstractContextManager[None]) -> None:
        self._cm, self._open = cm, False

    def __enter__(self) -> "_Closing":
        self._cm.__enter__()
        self._open = True
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._open:
            self._open = False
            self._cm.__exit__(kind, exc, tb)

    def close(self) -> None:
        self.__exit__(None, None, None)


class Handover:
    """LockSet.handover's handle: `next()` moves from the held lock to the next one."""

    def __init__(self, locks: LockSet, stack: ExitStack, then: str, worker: str, part: str | None) -> None:
        self._locks, self._stack, self._then, self._worker, self._part = locks, stack, then, worker, part
        self.first: _Closing | None = None

    def next(self) -> None:
        ls, lk = self._locks, self._locks.locks[self._then]
        assert self.first is not None
        t0 = ls._request(self._then, self._worker, self._part)  # the order rule holds: first comes before then
        token = lk.enqueue()
        self._stack.callback(lk.withdraw, token)  # if it is never acquired (a stop, an error)
        self.first.close()
        self._stack.enter_context(ls.hold(self._then, self._worker, self._part, place=_Place(token, t0)))
