"""The event bus: one lock, events stamped with seconds since start, handed to every sink in order.

Sinks are called from engine threads with the lock held (so events reach every sink in
timestamp order); they must be cheap and must not call back into the engine. Nothing is
emitted after RunEnded (late controller calls are dropped). A sink that raises never takes
the engine down: the failure is counted (`sink_failures`) and logged at debug with its
traceback (logger "prover.bus"), so a broken recorder or exporter can be found.

The fleet's driver uses the same bus: it `emit`s its own events and `forward`s its hosts'
merged batches (events made elsewhere, already stamped); with `in_order` an event older than
the newest handed out is restamped to it (a host's batch can arrive a poll round after another
host's later events), so readers see one stream in time order.
"""
from __future__ import annotations

import logging
import threading
from typing import Any, Callable

from prover import events as ev

Sink = Callable[[Any], None]
log = logging.getLogger("prover.bus")


class EventBus:
    def __init__(self, sinks: list[Sink] | None, clock: Callable[[], float], in_order: bool = False) -> None:
        self._sinks: list[Sink] = list(sinks or [])
        self._lock = threading.Lock()
        self._clock = clock
        self._t0 = clock()
        self._ended = False
        self._in_order = in_order
        self._last_t = 0.0  # the newest t handed out (in_order)
        self.sink_failures = 0  # sink calls that raised (each logged at debug with its traceback)

    def now(self) -> float:
        """Seconds since the run's start on this bus's clock."""
        return max(0.0, self._clock() - self._t0)

    @property
    def ended(self) -> bool:
        return self._ended

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
            return self._deliver(e)

    def forward(self, events: list[Any]) -> None:
        """Hand events made elsewhere (already stamped) to every sink, in order."""
        with self._lock:
            if not self._ended:
                for e in events:
                    self._deliver(e)

    def _deliver(self, e: Any) -> Any:
        if self._in_order:
            if e.t < self._last_t:  # its own durations and waits are kept: only its stamp moves
                e = e.model_copy(update={"t": self._last_t})
            self._last_t = e.t
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
