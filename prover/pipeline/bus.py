"""The event bus: one lock, events stamped with seconds since start, handed to every sink in order.

Sinks are called from engine threads with the lock held (so events reach every sink in
timestamp order); they must be cheap and must not call back into the engine. Nothing is
emitted after RunEnded (late controller calls are dropped).
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from prover import events as ev

Sink = Callable[[Any], None]


class EventBus:
    def __init__(self, sinks: list[Sink] | None, clock: Callable[[], float]) -> None:
        self._sinks: list[Sink] = list(sinks or [])
        self._lock = threading.Lock()
        self._clock = clock
        self._t0 = clock()
        self._ended = False

    def restart_clock(self) -> None:
        """t = 0 is the run's start, not the engine's construction."""
        self._t0 = self._clock()

    def emit(self, cls: type, **fields: Any) -> Any:
        """Build one event (t = seconds since start) and hand it to every sink, in order."""
        with self._lock:
            if self._ended:
                return None
            e = cls(t=max(0.0, self._clock() - self._t0), **fields)
            if cls is ev.RunEnded:
                self._ended = True
            for sink in self._sinks:
                try:
                    sink(e)
                except Exception:  # a sink must never take the engine down
                    pass
            return e

    def add_sink(self, fn: Sink) -> None:
        with self._lock:
            self._sinks.append(fn)

    def remove_sink(self, fn: Sink) -> None:
        with self._lock:
            if fn in self._sinks:
                self._sinks.remove(fn)
