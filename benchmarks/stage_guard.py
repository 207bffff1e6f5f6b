"""A one-shot device call's guard rails (benchmarks/experiment_native.py): the script's clock
against its budget, the host's MemAvailable, and a watchdog that stops the running stage (its
`stop` event: an experiment or a tune ends "stopped", keeping what it counted) before an OOM
kill or the call's time limit can lose it whole."""
from __future__ import annotations

import threading
import time
from pathlib import Path


def mem_available() -> int | None:
    """The host's MemAvailable in bytes (None where /proc/meminfo is not)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


class Clock:
    def __init__(self, budget_s: float) -> None:
        self.t0, self.budget = time.monotonic(), budget_s

    def left(self) -> float:
        return self.budget - (time.monotonic() - self.t0)

    def at(self) -> str:
        return f"+{time.monotonic() - self.t0:5.0f}s"


class Guard:
    """Stops the running experiment or tune (its `stop` event) when the host's MemAvailable falls
    under the floor, or when the script's budget is nearly spent: what was counted is kept and
    saved, where an OOM kill or the call's limit would lose the whole stage."""

    def __init__(self, clock: Clock, floor_bytes: int, margin_s: float) -> None:
        self.clock, self.floor, self.margin = clock, floor_bytes, margin_s
        self.stop = threading.Event()
        self.why: str | None = None
        self.low: int | None = None  # the least MemAvailable seen
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="guard", daemon=True)
        self._thread.start()

    def arm(self) -> threading.Event:
        """A fresh stop event for the next stage (the guard's reason is kept until then)."""
        self.stop = threading.Event()
        self.why = None
        return self.stop

    def _watch(self) -> None:
        while not self._done.wait(0.25):
            avail = mem_available()
            if avail is not None:
                self.low = avail if self.low is None else min(self.low, avail)
            why = None
            if avail is not None and avail < self.floor:
                why = f"host MemAvailable {avail / 2**30:.1f} GiB under the {self.floor / 2**30:.1f} GiB floor"
            elif self.clock.left() < self.margin:
                why = f"{self.clock.left():.0f} s of the budget left"
            if why is not None and not self.stop.is_set():
                self.why = why
                print(f"{self.clock.at()} guard: stopping the running stage ({why})", flush=True)
                self.stop.set()

    def close(self) -> None:
        self._done.set()
