"""A SimDevice that leaks: a planted VRAM leak for the growth test (faults.vram_leak_bytes).

Each time a partition's last buffer (d_bc) is freed, it keeps `leak` bytes of its own, owned
by the same worker, named `leak`, and never gives them back, as a library that forgets a
buffer per call would (the 2026 sppark leak, fixed in 0.1.15, surfaced as OOMs after hours).
When the budget has no room left for another kept buffer it keeps none: the partitions then
run into the budget themselves. Simulated like its parent; for tests and demos only.
"""
from __future__ import annotations

from typing import Any

from prover.device.base import Buffer, OomError, Stream
from prover.device.sim import SimDevice

LAST_BUFFER = "d_bc"


class LeakySimDevice(SimDevice):
    def __init__(self, *args: Any, leak: int, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.leak = int(leak)
        self.kept: list[Buffer] = []

    def free(self, buf: Buffer, stream: Stream) -> None:
        was_freed = buf.freed
        super().free(buf, stream)
        if was_freed or buf.name != LAST_BUFFER or self.leak <= 0:
            return
        try:
            self.kept.append(self.alloc(buf.owner, buf.part, "leak", self.leak, stream))
        except OomError:  # no room for another: the leak has eaten the budget
            pass
