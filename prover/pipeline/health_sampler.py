"""The health sampler: one thread that reads each GPU's health (NVML, where the device has it)
and the host's CPUs and memory pressure every `health_sample_s` (1 s by default) and emits
GpuHealth / HostHealth. Off the hot path: NVML's PCIe counters take ~20 ms per direction and
/proc is read by no worker; a failing read is said once as a note and never stops the run.
A simulated GPU reports no health (BaseDevice.health is None): nothing invented.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

from prover import events as ev
from prover.device.base import BaseDevice
from prover.health.host import HostReader


class HealthSampler:
    def __init__(self, period: float, emit: Callable[..., Any], stop: threading.Event,
                 devices: dict[int, BaseDevice], host: HostReader | None = None) -> None:
        self._period, self._emit, self._stop, self._devices = period, emit, stop, devices
        self._host = host or HostReader()
        self._warned: set[str] = set()
        self.thread = threading.Thread(target=self._loop, name="engine-health", daemon=True)

    def start(self) -> None:
        if self._period > 0:
            self._host.cpu_busy()  # the first /proc/stat read: the first sample then has shares
            self.thread.start()

    def join(self, timeout: float) -> None:
        if self.thread.is_alive():
            self.thread.join(timeout)

    def _loop(self) -> None:
        while True:
            self.sample()
            if self._stop.wait(self._period):
                return

    def sample(self) -> None:
        """One round: every GPU that reports health, then the host."""
        for g, d in sorted(self._devices.items()):
            try:
                got = d.health()
            except Exception as exc:  # a read that fails (GPU lost): said once, never fatal
                self._warn(f"gpu{g}", f"gpu{g} health read failed: {type(exc).__name__}: {exc}")
                continue
            if got is not None:
                self._emit(ev.GpuHealth, gpu=g, source="nvml", **got)
        try:
            self._emit(ev.HostHealth, **self._host.read())
        except Exception as exc:
            self._warn("host", f"host health read failed: {type(exc).__name__}: {exc}")

    def _warn(self, key: str, text: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self._emit(ev.Note, level="warn", text=text)
