"""VRAM marks and the growth test, per GPU: each partition's GPU section ends with a mark
(BaseDevice.mark, after its own frees), fed to that GPU's GrowthDetector
(prover/health/vram_growth.py); a series that starts or stops growing is said once, as
VramGrowth, naming whose bytes grow. Called by the partition flow on the worker's thread:
the test is a few hundred comparisons over the last marks, under a lock of its own."""
from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any, Callable

from prover import events as ev
from prover.device.base import BaseDevice
from prover.health.vram_growth import GrowthDetector


class VramWatch:
    def __init__(self, emit: Callable[..., Any], make: Callable[[], GrowthDetector] = GrowthDetector) -> None:
        self._emit, self._make = emit, make
        self._lock = threading.Lock()
        self._det: dict[int, GrowthDetector] = {}

    def mark(self, dev: BaseDevice, worker: str, part: str) -> None:
        fields = dev.mark(worker, part)
        with self._lock:
            det = self._det.get(dev.index)
            if det is None:
                det = self._det[dev.index] = self._make()
            found = det.add(SimpleNamespace(**fields), dev.budget)
        for f in found:
            self._emit(ev.VramGrowth, **f)
