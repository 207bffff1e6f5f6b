"""The runner's one interface to a live prover, the same for the embedded engine and for a
`--listen` prover reached through attach: events in, knob changes out, events of its own added
to the stream.

    link = EmbeddedLink(engine)                       # before engine.start()
    link = AttachLink(client, RemoteController(client), sinks=[writer.write])

Both see the prover only through its events (`Live`: the knobs in force, the event clock, whether
a GPU section has begun, whether the run ended) and steer it through a controller face
(KnobFacade.set: the engine's Controller or attach's RemoteController), so the runner and tune
cannot tell them apart. `now()` is the prover's event clock: embedded, the engine's clock
(its events reach the sink as they are made); over attach, the t of the latest event that has
arrived (the prover samples VRAM every 0.15 s, so it moves), so a hold ends only once the
prover's own events have passed its end, and this side's events (stamped with it) keep the
recording in time order.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable, Protocol

from prover import events as ev
from prover.knobs import KNOBS

Sink = Callable[[Any], None]
SOURCE = "experiment"


class Link(Protocol):
    def set(self, knob: str, value: Any) -> None: ...  # ValueError: refused, in the prover's words
    def knobs(self) -> dict[str, str]: ...
    def now(self) -> float: ...
    def emit(self, cls: type, **fields: Any) -> Any: ...
    def add_sink(self, sink: Sink) -> None: ...
    def ready(self) -> bool: ...
    def ended(self) -> str | None: ...


class Live:
    """What the link knows of the prover from its events (a sink; thread-safe)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._lock = threading.Lock()
        self._clock = clock
        self._offset: float | None = None  # event t - local clock, the largest seen
        self._last_t = 0.0
        self._knobs: dict[str, str] = {}
        self._ready = False
        self._ended: str | None = None
        self._sinks: list[Sink] = []
        self.simulated: bool | None = None
        self.run: ev.RunStarted | None = None

    def __call__(self, e: Any) -> None:
        with self._lock:
            off = e.t - self._clock()
            if self._offset is None or off > self._offset:
                self._offset = off
            self._last_t = max(self._last_t, e.t)
            self._see(e)
            sinks = list(self._sinks)
        for s in sinks:
            s(e)

    def _see(self, e: Any) -> None:
        if isinstance(e, ev.RunStarted):
            self.run, self.simulated = e, e.simulated
            self._knobs.update({k: str(e.config[k]) for k in KNOBS if k in e.config})
        elif isinstance(e, ev.ModeChange) and e.gpu is None:
            self._knobs[e.knob] = e.new
        elif isinstance(e, ev.LockAcquired):
            self._ready = True  # a GPU section has begun: start-up is over
        elif isinstance(e, ev.RunEnded):
            self._ended = e.reason

    def add_sink(self, sink: Sink) -> None:
        with self._lock:
            self._sinks.append(sink)

    def prime(self, knobs: dict[str, str], ready: bool) -> None:
        """What a link made after the run began has missed (the knobs of its RunStarted, its
        first GPU section): from the dashboard's fold, say, or the controller."""
        with self._lock:
            self._knobs = {**knobs, **self._knobs}
            self._ready = self._ready or ready

    def knobs(self) -> dict[str, str]:
        with self._lock:
            return dict(self._knobs)

    def now(self) -> float:
        with self._lock:
            return 0.0 if self._offset is None else max(0.0, self._clock() + self._offset)

    def ready(self) -> bool:
        return self._ready

    def ended(self) -> str | None:
        return self._ended


class EmbeddedLink(Live):
    """The engine run in this process. Made before engine.start() it sees everything; made
    later (a dashboard key), it takes the knobs from the controller and `prime`s readiness."""

    def __init__(self, engine: Any) -> None:
        super().__init__(getattr(engine, "clock", time.monotonic))
        self.engine = engine
        controller = getattr(engine, "controller", None)
        if controller is not None and hasattr(controller, "snapshot"):
            now = controller.snapshot()
            self._knobs = {k: str(getattr(now, k)) for k in KNOBS if hasattr(now, k)}
        engine.add_sink(self)

    def set(self, knob: str, value: Any) -> None:
        self.engine.controller.set(knob, value, source=SOURCE)

    def emit(self, cls: type, **fields: Any) -> Any:
        return self.engine.emit(cls, **fields)


class AttachLink(Live):
    """A prover served with --listen: its events come through the client (history first, then
    live), knob changes go through its RemoteController (recorded there as attach:NAME), and
    the experiment's own events go to this side's sinks (a local recording, the tally), stamped
    on the prover's clock as seen here."""

    def __init__(self, client: Any, controller: Any, sinks: list[Sink] | None = None) -> None:
        super().__init__()
        self.client, self.controller = client, controller
        self._emit_lock = threading.Lock()
        for s in sinks or ():
            self.add_sink(s)

    def start(self) -> None:
        """Begin reading the prover's stream (after the sinks are in place)."""
        self.client.start(self._remote, lambda reason: self._gone(reason))

    def ready(self) -> bool:
        """A GPU section has begun and the server's history is all here (its `live` line): the
        knobs are those in force now, not those of the history's first lock event (a prover
        changed by attach since its start was once "restored" to its first minute's knobs)."""
        return self._ready and self.client.live

    def _remote(self, e: Any) -> None:
        with self._emit_lock:
            self(e)

    def now(self) -> float:
        with self._lock:
            return self._last_t

    def _gone(self, reason: str) -> None:
        if self._ended is None:
            self._ended = f"detached: {reason}"

    def set(self, knob: str, value: Any) -> None:
        self.controller.set(knob, value)

    def emit(self, cls: type, **fields: Any) -> Any:
        with self._emit_lock:
            e = cls(t=self.now(), **fields)
            self(e)
            return e
