"""One GPU's health from NVML (nvidia-ml-py's `pynvml`), as GpuHealth's fields.

`read(m, handle, my_pid)` takes the module as an argument, so tests pass a fake one and a
machine without NVML never imports it. Each figure is read on its own: a card or a driver
that does not report one (NVMLError: not supported, no permission) leaves that field None
and the others stand. PCIe throughput is NVML's own 20 ms window per direction, so a read
costs ~40 ms of the sampler's thread (never a worker's).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

# nvml.h's clocks-event (formerly throttle) reason bits, by the names GpuHealth.throttle uses
THROTTLE_BITS: dict[int, str] = {
    0x1: "gpu_idle", 0x2: "app_clocks", 0x4: "sw_power_cap", 0x8: "hw_slowdown", 0x10: "sync_boost",
    0x20: "sw_thermal", 0x40: "hw_thermal", 0x80: "hw_power_brake", 0x100: "display_clocks",
}
QUIET = ("gpu_idle",)  # an idle card's clocks drop by design: not a reason anyone acts on


def throttle_names(mask: int | None) -> list[str]:
    """The active reasons in `mask` by name, bit order, the quiet ones left out."""
    if mask is None:
        return []
    return [name for bit, name in sorted(THROTTLE_BITS.items()) if mask & bit and name not in QUIET]


def _try(fn: Callable[[], Any]) -> Any:
    try:
        return fn()
    except Exception:  # pynvml.NVMLError (not supported, no permission, GPU lost): this figure is unknown
        return None


def _throttle_mask(m: Any, h: Any) -> int | None:
    for name in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
        fn = getattr(m, name, None)  # renamed in NVML 12.2; older bindings have only the old name
        if fn is not None:
            got = _try(lambda: fn(h))
            if got is not None:
                return int(got)
    return None


def _proc_name(pid: int, proc: Path) -> str:
    try:
        return (proc / str(pid) / "comm").read_text().strip()[:64]
    except OSError:  # another pid namespace (a container), or gone
        return ""


def _procs(m: Any, h: Any, my_pid: int, proc: Path) -> list[dict[str, Any]]:
    got = _try(lambda: m.nvmlDeviceGetComputeRunningProcesses(h)) or []
    out = []
    for p in got[:32]:  # bounded: a shared card can list many
        used = getattr(p, "usedGpuMemory", None)
        out.append({"pid": int(p.pid), "bytes": int(used) if isinstance(used, int) and used >= 0 else None,
                    "name": _proc_name(int(p.pid), proc), "mine": int(p.pid) == my_pid})
    return out


def _mw_to_w(v: Any) -> float | None:
    return None if v is None else round(float(v) / 1000.0, 1)


def _kbs(v: Any) -> float | None:
    return None if v is None else float(v) * 1024.0  # NVML's PCIe throughput is in KB/s


def read(m: Any, h: Any, my_pid: int, proc: Path = Path("/proc")) -> dict[str, Any]:
    """GpuHealth's fields (gpu, t and source left to the caller) read from handle `h`."""
    mask = _throttle_mask(m, h)
    return {
        "temp_c": _try(lambda: float(m.nvmlDeviceGetTemperature(h, m.NVML_TEMPERATURE_GPU))),
        "power_w": _mw_to_w(_try(lambda: m.nvmlDeviceGetPowerUsage(h))),
        "power_limit_w": _mw_to_w(_try(lambda: m.nvmlDeviceGetEnforcedPowerLimit(h))),
        "sm_clock_mhz": _try(lambda: int(m.nvmlDeviceGetClockInfo(h, m.NVML_CLOCK_SM))),
        "sm_clock_max_mhz": _try(lambda: int(m.nvmlDeviceGetMaxClockInfo(h, m.NVML_CLOCK_SM))),
        "mem_clock_mhz": _try(lambda: int(m.nvmlDeviceGetClockInfo(h, m.NVML_CLOCK_MEM))),
        "throttle": throttle_names(mask),
        "throttle_mask": mask,
        "pcie_rx_bps": _kbs(_try(lambda: m.nvmlDeviceGetPcieThroughput(h, m.NVML_PCIE_UTIL_RX_BYTES))),
        "pcie_tx_bps": _kbs(_try(lambda: m.nvmlDeviceGetPcieThroughput(h, m.NVML_PCIE_UTIL_TX_BYTES))),
        "procs": _procs(m, h, my_pid, proc),
    }
