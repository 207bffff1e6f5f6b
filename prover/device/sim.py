"""SimDevice: a CPU emulation of one GPU (the embedded default when no GPU is visible).

The real math runs on the CPU at the proved size (the worker hands it to `launch`); the
device charges the modelled time of the named profile for that work (x time_scale) and keeps
the device-global semantics: `device_sync` waits for every stream's queued work, `pool_trim`
needs an idle device, the VRAM budget is enforced by the allocator. Everything it reports is
labelled simulated (GpuInfo.simulated, RunStarted.simulated, impl="sim").
"""
from __future__ import annotations

import threading
import time
from typing import Callable

from prover.device.base import BaseDevice, Emit
from prover.device.ledger import Ledger
from prover.device.profiles import Profile


class SimDevice(BaseDevice):
    simulated = True
    impl_label = "sim"

    def __init__(self, index: int, profile: Profile, budget: int | Ledger, emit: Emit, stop: threading.Event,
                 time_scale: float = 1.0, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(index, budget, emit, stop, time_scale, clock)
        self.profile = profile
        self.name = profile.card_name
        self.nvml = False

    @property
    def total_bytes(self) -> int:
        """The profile's card, or as much as the budget where that is more (or there is none)."""
        return max(self.profile.card_bytes, self.budget)
