"""What a caller waits on, the same for one host's Engine and a FleetEngine: drain, wait,
finished. The class provides `stop` and sets `_finished` when its run has ended."""
from __future__ import annotations

import threading


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
