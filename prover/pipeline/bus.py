"""The event bus: one lock, events stamped with seconds since start, handed to every sink in order.

Sinks are called from engine threads with the lock held (so events reach every sink in
timestamp order); they must be cheap and must not call back into the engine. Nothing is
emitted after RunEnded (late controller calls are dropped). A sink that raises never takes
the engine down: the failure is counted (`sink_failures`) and logged at debug with its
traceback (logger "prover.bus"), so a broken recorder or exporter can be found.
"""
from __future__ import annotations

import logging
import threading
from typing import Any, Callable

from prover import events as ev

Sink = Callable[[Any], None]
log = logging.getLogger("prover.bus")


class EventBus:
    def __init__(self, sinks: list[Sink] | None, clock: Callable[[], float]) -> None:
        self._sinks: list[Sink] = list(sinks or [])
        self._lock = threading.Lock()
        self._clock = clock
        self._t0 = clock()
        self._ended = False
        self.sink_failures = 0  # sink calls that raised (each logged at debug with its traceback)

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
                except Exception:  # a sink must never take the engine down; counted and kept for debugging
                    self.sink_failures += 1
                    log.debug("sink %r failed on a %s event (failure %d)", sink, e.kind, self.sink_failures,
                              exc_info=True)
            return e

    def add_sink(self, fn: Sink) -> None:
        with self._lock:
            self._sinks.append(fn)

    def remove_sink(self, fn: Sink) -> None:
        with self._lock:
            if fn in self._sinks:
                self._sinks.remove(fn)
