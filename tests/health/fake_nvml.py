"""A fake `pynvml` for tests: the calls prover/health/gpu.py makes, with figures set per test,
and NVMLError for what a card 'does not support'."""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

NVML_TEMPERATURE_GPU, NVML_CLOCK_SM, NVML_CLOCK_MEM = 0, 1, 2
NVML_PCIE_UTIL_TX_BYTES, NVML_PCIE_UTIL_RX_BYTES = 0, 1


class NVMLError(Exception):
    pass


class FakeNvml:
    """Module-shaped: attributes are the pynvml names; `figures` says what each returns (an
    exception instance there is raised)."""

    NVMLError = NVMLError
    NVML_TEMPERATURE_GPU, NVML_CLOCK_SM, NVML_CLOCK_MEM = NVML_TEMPERATURE_GPU, NVML_CLOCK_SM, NVML_CLOCK_MEM
    NVML_PCIE_UTIL_TX_BYTES, NVML_PCIE_UTIL_RX_BYTES = NVML_PCIE_UTIL_TX_BYTES, NVML_PCIE_UTIL_RX_BYTES

    def __init__(self, **figures: Any) -> None:
        self.figures = {"temp": 61, "power_mw": 412_345, "limit_mw": 700_000, "sm": 1755, "sm_max": 1980,
                        "mem": 2619, "reasons": 0x1 | 0x4 | 0x20, "rx_kbs": 1_000_000, "tx_kbs": 2_000,
                        "procs": [SimpleNamespace(pid=4242, usedGpuMemory=12 << 30),
                                  SimpleNamespace(pid=7, usedGpuMemory=None)], **figures}
        self.calls: list[str] = []

    def _get(self, key: str) -> Any:
        self.calls.append(key)
        v = self.figures[key]
        if isinstance(v, Exception):
            raise v
        return v

    def nvmlDeviceGetTemperature(self, h: Any, sensor: int) -> int:
        return self._get("temp")

    def nvmlDeviceGetPowerUsage(self, h: Any) -> int:
        return self._get("power_mw")

    def nvmlDeviceGetEnforcedPowerLimit(self, h: Any) -> int:
        return self._get("limit_mw")

    def nvmlDeviceGetClockInfo(self, h: Any, clock: int) -> int:
        return self._get("sm" if clock == NVML_CLOCK_SM else "mem")

    def nvmlDeviceGetMaxClockInfo(self, h: Any, clock: int) -> int:
        return self._get("sm_max")

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, h: Any) -> int:  # the old name only (older bindings)
        return self._get("reasons")

    def nvmlDeviceGetPcieThroughput(self, h: Any, counter: int) -> int:
        return self._get("rx_kbs" if counter == NVML_PCIE_UTIL_RX_BYTES else "tx_kbs")

    def nvmlDeviceGetComputeRunningProcesses(self, h: Any) -> list:
        return self._get("procs")
