"""What a concept of the fold may see of the rest of it: the small surface that crosses
concepts. A concept's handler gets its own sub-state and this (`World`); the model
(prover/fold/model.py: DashboardState) is what implements it, but no concept imports the
model, so nothing under prover/fold/ imports back up (tests/unit/test_fold_package.py).

Leaf module: the parts' types (prover/fold/parts.py) and the rates' (rates.py) only.
"""
from __future__ import annotations

from typing import Protocol

from prover import events as ev
from prover.fold.parts import GpuState, PartitionState
from prover.fold.rates import OkTimes


class World(Protocol):
    """The fold's clock, knobs, rate window, GPUs, partitions, verified times and log."""

    t: float  # the fold's time (the latest event's)
    knobs: dict[str, str]  # the knobs as events write them (lock_mode, mem_sync, ...)
    rate_window_s: float
    gpus: dict[int, GpuState]
    partitions: dict[str, PartitionState]
    ok_times: OkTimes  # when the run's verified partitions finished (recent)

    def gpu(self, i: int) -> GpuState: ...  # made on first sight

    def note(self, level: str, text: str, event: ev.Event | None = None) -> None: ...  # a line of the event log
