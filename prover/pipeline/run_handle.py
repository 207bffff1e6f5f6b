"""What a caller waits on, the same for one host's Engine and a FleetEngine: drain, wait,
finished. The class provides `stop` and sets `_finished` when its run has ended.

EngineHandle is what a caller holds of either (c2tui's commands, sources and servers): its
config, its controller, its events, start, stop, drain, wait. Both engines are one
structurally, and the type checker holds them to it where c2tui makes either
(c2tui/cli/cluster.py: make_engine)."""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable, Protocol

if TYPE_CHECKING:
    from prover.config import RunConfig
    from prover.pipeline.control.knob_facade import KnobFacade


class EngineHandle(Protocol):
    """A running prover, one host's (Engine) or a fleet's (FleetEngine), as a caller holds it."""

    @property
    def config(self) -> RunConfig: ...
    @property
    def controller(self) -> KnobFacade: ...
    @property
    def finished(self) -> bool: ...

    def add_sink(self, fn: Callable[[Any], None]) -> None: ...
    def emit(self, cls: type, **fields: Any) -> Any: ...
    def start(self) -> object: ...
    def stop(self, timeout: float | None = 30.0, drain: bool = False, reason: str | None = None) -> bool: ...
    def drain(self, timeout: float | None = 60.0) -> bool: ...
    def wait(self, timeout: float | None = None) -> bool: ...


class RunHandle:
    _finished: threading.Event

    def stop(self, timeout: float | None = 30.0, drain: bool = False, reason: str | None = None) -> bool:
        raise NotImplementedError

    def drain(self, timeout: float | None = 60.0) -> bool:
        return self.stop(timeout=timeout, drain=True, reason="done (drained)")

    def wait(self, timeout: float | None = None) -> bool:
        return self._finished.wait(timeout)

    @property
    def finished(self) -> bool:
        return self._finished.is_set()
