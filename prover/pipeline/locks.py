"""The per-GPU LockSet: a FIFO mutex per lock the disciplines declare (`mem`, `compute`), in
one global order (prover.disciplines.lock_order: mem -> compute).

Every acquisition is a context manager that emits LockRequested, LockAcquired (with the wait)
and LockReleased (with the hold), and releases on every exit path, exceptions included.
LockAcquired is emitted while the lock is held and LockReleased before it is let go, so the
event stream nests exactly like the real holders (the tests check invariants from events).

Order rule: a worker holding a lock may never request one earlier in the order
(LockOrderError): every discipline takes its locks in that order, so switching disciplines
live can never deadlock.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from contextlib import AbstractContextManager, ExitStack, contextmanager
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

    def acquire(self, stop: threading.Event | None, poll: float = 0.1) -> None:
        me = object()
        with self._cv:
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

    @contextmanager
    def hold(self, name: str, worker: str, part: str | None = None) -> Iterator[None]:
        lk = self.locks[name]
        with self._meta:
            mine = self._held.get(worker, [])
            if name in mine:
                raise LockOrderError(f"{worker} already holds {name} on gpu{self.gpu}")
            if any(self.order.index(h) > self.order.index(name) for h in mine):
                raise LockOrderError(f"{worker} requests {name} while holding {mine} on gpu{self.gpu}: "
                                     f"order is {' -> '.join(self.order)}")
        self.emit(ev.LockRequested, gpu=self.gpu, lock=name, worker=worker, part=part)
        t0 = self.clock()
        lk.acquire(self.stop)
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

    def both(self, worker: str, part: str | None = None) -> AbstractContextManager[None]:
        """Every lock of this GPU, held together."""
        return self.hold_all(self.order, worker, part)

    def all_free(self) -> bool:
        return all(lk.holder is None for lk in self.locks.values())
