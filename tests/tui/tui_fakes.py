"""A stand-in engine for TUI tests: the real Controller (prover.pipeline.controller) over a
tiny event emitter, so a key press goes through the same code path as in a real run
(Controller -> ModeChange event -> sink -> fold -> screen) without the prover's timing."""
from __future__ import annotations

import threading
import time

from prover import events as ev
from prover.pipeline.controller import Controller, Knobs

GiB = 1 << 30


class FakeEngine:
    def __init__(self, gpus: int = 1, workers: int = 2) -> None:
        self.sinks = []
        self.t0 = time.monotonic()
        self.emitted: list = []
        self.gpus, self.workers = gpus, workers
        self.sectors = 0
        self._lock = threading.Lock()
        self.controller = Controller(Knobs("two-lock", "stream", workers, True, "cpu", False), self.emit, self)

    def add_sink(self, fn) -> None:
        self.sinks.append(fn)

    def now(self) -> float:
        return time.monotonic() - self.t0

    def emit(self, cls, **fields) -> None:
        with self._lock:
            e = cls(t=self.now(), **fields)
            self.emitted.append(e)
            for s in self.sinks:
                s(e)

    def start(self) -> None:
        k = self.controller.knobs
        self.emit(ev.RunStarted, backend="sim", simulated=True, profile="rtx5070ti-16g", proved_log2=8,
                  modelled_log2=27, gpus=self.gpus,
                  config={"lock_mode": k.lock_mode, "mem_sync": k.mem_sync, "workers_per_gpu": k.workers_per_gpu,
                          "prestage": "on" if k.prestage else "off", "b_g2": k.b_g2, "paused": "off"})
        for g in range(self.gpus):
            self.emit(ev.GpuInfo, gpu=g, name="fake", total_bytes=16 * GiB, budget_bytes=16 * GiB, simulated=True)
            for w in range(self.workers):
                self.emit(ev.WorkerStarted, gpu=g, worker=f"g{g}w{w}")

    def stop(self, timeout: float = 1.0) -> None:
        pass

    # what the Controller calls on its engine
    def _resize_workers(self, n: int) -> None:
        pass

    def _submit_sector(self, partitions, source: str = "controller") -> int:
        s = self.sectors
        self.sectors += 1
        self.emit(ev.SectorSubmitted, sector=s, partitions=partitions or 10)
        return s

    def _request_stop(self, reason: str = "") -> None:
        pass
